// The Qt-Core bridge without any widgets: display formatting, the node table model and the threaded loader.
#include <QAbstractItemModelTester>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include "model_loader.h"
#include "node_table_model.h"
#include "recent_files.h"
#include "value_format.h"

using namespace kiln;
using namespace kiln::bridge;

namespace {

constexpr int kLoadTimeoutMs = 30000;

QString tinyCnnPath() { return QStringLiteral(KILN_TEST_MODELS_DIR "/tiny_cnn.onnx"); }

ValueMetadata makeValue(std::string name, DataType type, std::vector<Dimension> shape, bool hasShape = true) {
  ValueMetadata value;
  value.name = std::move(name);
  value.dtype = type;
  value.hasShape = hasShape;
  value.shape = std::move(shape);
  return value;
}

Dimension fixed(int64_t size) { return {size, {}}; }
Dimension symbolic(std::string name) { return {-1, std::move(name)}; }

// A two-node graph: x -> Conv(x, w, <omitted>) -> y -> Relu -> z, where z has no known type.
std::shared_ptr<ModelInfo> makeModelInfo() {
  auto info = std::make_shared<ModelInfo>();
  info->path = "/models/toy.onnx";
  info->nodes.push_back({"conv0", "Conv", "", {"x", "w", ""}, {"y"}, {"pads"}, {}});
  info->nodes.push_back({"", "Relu", "com.example", {"y"}, {"z"}, {}, {}});
  info->values["x"] = makeValue("x", DataType::FLOAT, {symbolic("N"), fixed(3), fixed(8), fixed(8)});
  info->values["w"] = makeValue("w", DataType::FLOAT, {fixed(4), fixed(3), fixed(3), fixed(3)});
  info->values["y"] = makeValue("y", DataType::FLOAT, {symbolic("N"), fixed(4), fixed(6), fixed(6)});
  return info;
}

}  // namespace

class TestBridge : public QObject {
  Q_OBJECT

 private slots:
  void formatsElementTypes_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<QString>("expected");
    QTest::newRow("fixed") << int(DataType::FLOAT) << QStringLiteral("float32[1,3,640,640]");
    QTest::newRow("float16") << int(DataType::FLOAT16) << QStringLiteral("float16[1,3,640,640]");
    QTest::newRow("int64") << int(DataType::INT64) << QStringLiteral("int64[1,3,640,640]");
    QTest::newRow("double") << int(DataType::DOUBLE) << QStringLiteral("float64[1,3,640,640]");
    QTest::newRow("bool") << int(DataType::BOOL) << QStringLiteral("bool[1,3,640,640]");
  }
  void formatsElementTypes() {
    QFETCH(int, type);
    QFETCH(QString, expected);
    const ValueMetadata value =
        makeValue("v", static_cast<DataType>(type), {fixed(1), fixed(3), fixed(640), fixed(640)});
    QCOMPARE(kiln::bridge::formatValueType(value), expected);
  }

  void formatsShapeEdgeCases() {
    QCOMPARE(kiln::bridge::formatValueType(makeValue("v", DataType::FLOAT, {symbolic("batch"), fixed(3), {}, fixed(0)})),
             QStringLiteral("float32[batch,3,?,0]"));
    QCOMPARE(kiln::bridge::formatValueType(makeValue("v", DataType::INT64, {})), QStringLiteral("int64[]"));
    QCOMPARE(kiln::bridge::formatValueType(makeValue("v", DataType::UINT8, {}, false)), QStringLiteral("uint8[...]"));
    QCOMPARE(kiln::bridge::formatValueType(makeValue("v", DataType::UNDEFINED, {}, false)), QStringLiteral("?[...]"));
  }

  void formatsByteSizes() {
    QCOMPARE(kiln::bridge::formatByteSize(0), QStringLiteral("0 B"));
    QCOMPARE(kiln::bridge::formatByteSize(1023), QStringLiteral("1023 B"));
    QCOMPARE(kiln::bridge::formatByteSize(1536), QStringLiteral("1.50 KiB"));
    QCOMPARE(kiln::bridge::formatByteSize(int64_t{25} * 1024 * 1024), QStringLiteral("25.0 MiB"));
    QCOMPARE(kiln::bridge::formatByteSize(int64_t{3} << 40), QStringLiteral("3.00 TiB"));
  }

  void formatsOpsets() {
    QCOMPARE(kiln::bridge::formatOpsets({{"", 17}, {"com.microsoft", 1}}),
             QStringLiteral("ai.onnx 17, com.microsoft 1"));
    QCOMPARE(kiln::bridge::formatOpsets({}), QString());
  }

  void nodeTableModelRendersNodes() {
    NodeTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    model.setModelInfo(makeModelInfo());
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.columnCount(), int(NodeTableModel::ColumnCount));

    auto cell = [&](int row, int column) { return model.data(model.index(row, column)).toString(); };
    QCOMPARE(cell(0, NodeTableModel::Name), QStringLiteral("conv0"));
    QCOMPARE(cell(0, NodeTableModel::OpType), QStringLiteral("Conv"));
    QCOMPARE(cell(0, NodeTableModel::Domain), QStringLiteral("ai.onnx"));
    QCOMPARE(cell(0, NodeTableModel::Inputs), QStringLiteral("x, w, (omitted)"));
    QCOMPARE(cell(0, NodeTableModel::OutputTypes), QStringLiteral("float32[N,4,6,6]"));
    QCOMPARE(cell(1, NodeTableModel::Domain), QStringLiteral("com.example"));
    QCOMPARE(cell(1, NodeTableModel::OutputTypes), QStringLiteral("?"));
    const QString tip = model.data(model.index(0, NodeTableModel::Inputs), Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains(QStringLiteral("x: float32[N,3,8,8]")), qPrintable(tip));
    QCOMPARE(model.headerData(1, Qt::Vertical).toInt(), 1);

    model.setModelInfo(nullptr);
    QCOMPARE(model.rowCount(), 0);
  }

  void loaderReportsMissingFile() {
    ModelLoader loader;
    QSignalSpy failed(&loader, &ModelLoader::failed);
    QSignalSpy loaded(&loader, &ModelLoader::loaded);
    loader.load(QStringLiteral("/nonexistent/missing.onnx"));
    QVERIFY(loader.isBusy());
    QVERIFY(failed.wait(kLoadTimeoutMs));
    QVERIFY(!loader.isBusy());
    QCOMPARE(loaded.count(), 0);
    QCOMPARE(failed.first().at(0).toString(), QStringLiteral("/nonexistent/missing.onnx"));
    QVERIFY(!failed.first().at(1).toString().isEmpty());
  }

  void loaderLoadsOffTheCallingThread() {
    QVERIFY(QFile::exists(tinyCnnPath()));
    ModelLoader loader;
    QSignalSpy loaded(&loader, &ModelLoader::loaded);
    loader.load(tinyCnnPath());
    QVERIFY(loaded.wait(kLoadTimeoutMs));
    const auto info = qvariant_cast<ModelInfo>(loaded.first().at(0));
    QVERIFY(!info.nodes.empty());
    QVERIFY(loaded.first().at(1).toDouble() >= 0.0);
  }

  void destroyingLoaderWhileBusyIsSafe() {
    auto loader = std::make_unique<ModelLoader>();
    QSignalSpy loaded(loader.get(), &ModelLoader::loaded);
    loader->load(tinyCnnPath());
    loader.reset();  // waits for the worker; the result is dropped with the object
    QCoreApplication::processEvents();
    QCOMPARE(loaded.count(), 0);
  }

  // Newest first, no duplicates however the path is spelled, capped, persisted; missing files are hidden but kept.
  void recentFilesOrderAndPersist() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    auto touch = [&dir](const QString& name) {
      QFile file(dir.filePath(name));
      if (!file.open(QIODevice::WriteOnly)) return QString();
      return QFileInfo(file).absoluteFilePath();
    };
    const QString a = touch(QStringLiteral("a.onnx"));
    const QString b = touch(QStringLiteral("b.onnx"));
    const QString settingsFile = dir.filePath(QStringLiteral("settings.ini"));
    {
      QSettings settings(settingsFile, QSettings::IniFormat);
      kiln::bridge::RecentFiles recent(settings, QStringLiteral("recent"), 3);
      recent.add(a);
      recent.add(b);
      recent.add(dir.path() + QStringLiteral("/./a.onnx"));  // the same file as `a`
      QCOMPARE(recent.all(), (QStringList{a, b}));
      recent.add(dir.filePath(QStringLiteral("gone.onnx")));
      recent.add(dir.filePath(QStringLiteral("gone2.onnx")));
      QCOMPARE(recent.all().size(), 3);  // capped: `b` fell off
      QCOMPARE(recent.existingFiles(), (QStringList{a}));
    }
    QSettings settings(settingsFile, QSettings::IniFormat);
    kiln::bridge::RecentFiles reread(settings, QStringLiteral("recent"), 3);
    QCOMPARE(reread.all().size(), 3);
    QCOMPARE(reread.existingFiles(), (QStringList{a}));
    reread.remove(a);
    QVERIFY(reread.existingFiles().isEmpty());
  }

  // Open Recent tells two models of one name apart by their folder: home as ~, long folders cut at the start.
  void recentFileLabelsShowTheFolder() {
    using kiln::bridge::recentFileLabel;
    const QString home = QDir::homePath();
    QCOMPARE(recentFileLabel(0, home + QStringLiteral("/models/v1/det.onnx")), QStringLiteral("&1 det.onnx  (~/models/v1)"));
    QCOMPARE(recentFileLabel(1, QStringLiteral("/srv/models/v2/det.onnx")), QStringLiteral("&2 det.onnx  (/srv/models/v2)"));
    const QString deep = QStringLiteral("/data/") + QString(60, QLatin1Char('x')) + QStringLiteral("/last");
    const QString label = recentFileLabel(2, deep + QStringLiteral("/m.onnx"));
    QVERIFY2(label.startsWith(QStringLiteral("&3 m.onnx  (\u2026")) && label.endsWith(QStringLiteral("x/last)")),
             qPrintable(label));
    QCOMPARE(label.size(), QStringLiteral("&3 m.onnx  ()").size() + 48);
  }
};

QTEST_GUILESS_MAIN(TestBridge)
#include "tst_bridge.moc"
