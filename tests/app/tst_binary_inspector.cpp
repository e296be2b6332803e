// BinaryInspector end to end: tiny_cnn.onnx compiled on the live device (lavapipe in CI), the binary and the ctx
// models inspected through the real worker and engine, every table checked against kiln::inspectContextBinary, the
// hex view against the file's bytes, the verdict against the device and a profile, and corrupt binaries reported
// with the engine's message. Set KILN_STUDIO_SCREENSHOTS=<folder> to save what the inspector looks like.
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QListWidget>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "binary_inspection.h"
#include "binary_inspector.h"
#include "kiln/compiler.h"
#include "kiln/context_binary.h"
#include "studio_test_files.h"

using kiln::bridge::formatHexLine;
using kiln::studio::BinaryInspector;
using kiln::testing::fileBytes;
using kiln::testing::saveScreenshot;

namespace {

constexpr int kTimeoutMs = 60000;

QString tinyCnnPath() { return QStringLiteral(KILN_TEST_MODELS_DIR "/tiny_cnn.onnx"); }
QString minimalProfilePath() { return QStringLiteral(KILN_TEST_MODELS_DIR "/../profiles/vulkan11_minimal.json"); }

QString text(const QTableWidget* table, int row, int column) {
  const QTableWidgetItem* item = table->item(row, column);
  return item ? item->text() : QString();
}

// The Value column of the Header tab's row named `field`.
QString headerValue(const QTableWidget* table, const QString& field) {
  for (int row = 0; row < table->rowCount(); ++row) {
    if (text(table, row, 0) == field) return text(table, row, 1);
  }
  return QStringLiteral("<no row %1>").arg(field);
}

}  // namespace

class TestBinaryInspector : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    ctxPath_ = dir_.filePath(QStringLiteral("tiny_ctx.onnx"));
    binPath_ = dir_.filePath(QStringLiteral("tiny_vulkan.bin"));
    embeddedPath_ = dir_.filePath(QStringLiteral("embedded_ctx.onnx"));
    kiln::ModelCompilationOptions options;
    options.setInputModelPath(tinyCnnPath().toStdString()).setOutputModelPath(ctxPath_.toStdString());
    auto compiled = kiln::compileModel(options);
    QVERIFY2(compiled.isOk(), compiled.status().toString().c_str());
    QCOMPARE(QString::fromStdString(compiled->binaryPath), binPath_);
    kiln::ModelCompilationOptions embedded;
    embedded.setInputModelPath(tinyCnnPath().toStdString())
        .setOutputModelPath(embeddedPath_.toStdString())
        .setEpContextEmbedMode(true);
    auto compiledEmbedded = kiln::compileModel(embedded);
    QVERIFY2(compiledEmbedded.isOk(), compiledEmbedded.status().toString().c_str());
    QVERIFY(compiledEmbedded->binaryPath.empty());
  }

  void hexLineFormat() {
    QByteArray bytes("KILNVKCB\x01\x00\x7f\x20" "Az", 14);
    QCOMPARE(formatHexLine(0x40, bytes),
             QStringLiteral("00000040  4b 49 4c 4e 56 4b 43 42  01 00 7f 20 41 7a        |KILNVKCB... Az|"));
    // Short lines keep the ASCII column where full ones have it.
    QCOMPARE(formatHexLine(0, QByteArray(16, 'a')).indexOf(QLatin1Char('|')),
             formatHexLine(0, bytes).indexOf(QLatin1Char('|')));
    QCOMPARE(kiln::bridge::formatHexDump(16, QByteArray(33, '\xff')).size(), 3);
    QVERIFY(kiln::bridge::formatHexDump(16, QByteArray(33, '\xff')).last().startsWith(QStringLiteral("00000030  ff   ")));
  }

  void inspectsBinary() {
    const auto expected = kiln::inspectContextBinary(binPath_.toStdString());
    QVERIFY2(expected.isOk(), expected.status().toString().c_str());

    BinaryInspector inspector;
    inspector.resize(1000, 700);
    QSignalSpy inspected(&inspector, &BinaryInspector::inspected);
    QSignalSpy verdict(&inspector, &BinaryInspector::verdictShown);
    inspector.inspect(binPath_);
    QVERIFY(inspected.wait(kTimeoutMs));
    QVERIFY2(inspector.lastError().isEmpty(), qPrintable(inspector.lastError()));
    QVERIFY(inspector.inspection().has_value());
    QVERIFY(!inspector.inspection()->ctxModel);

    auto* header = inspector.findChild<QTableWidget*>(QStringLiteral("headerTable"));
    QVERIFY(header);
    QCOMPARE(headerValue(header, QStringLiteral("Format version")), QString::fromStdString(expected->formatVersion));
    QCOMPARE(headerValue(header, QStringLiteral("Written by engine")), QString::fromStdString(expected->producerEngineVersion));
    QCOMPARE(headerValue(header, QStringLiteral("Readable by engines")), QString::fromStdString(expected->readableEngineVersions));
    QCOMPARE(headerValue(header, QStringLiteral("Device")), QString::fromStdString(expected->deviceName));
    QCOMPARE(headerValue(header, QStringLiteral("Pipeline cache UUID")), QString::fromStdString(expected->pipelineCacheUuid));
    QCOMPARE(headerValue(header, QStringLiteral("Vulkan API version")), QString::fromStdString(expected->apiVersion));
    QCOMPARE(headerValue(header, QStringLiteral("Subgroup size")), QString::number(expected->subgroupSize));
    QCOMPARE(headerValue(header, QStringLiteral("File size")), QStringLiteral("%1 bytes").arg(expected->fileSize));
    for (int row = 0; row < header->rowCount(); ++row) QVERIFY2(!text(header, row, 2).isEmpty(), qPrintable(text(header, row, 0)));

    auto* sections = inspector.findChild<QTableWidget*>(QStringLiteral("sectionTable"));
    QVERIFY(sections);
    QCOMPARE(sections->rowCount(), static_cast<int>(expected->sections.size()));
    QVERIFY(sections->rowCount() >= 4);
    for (int row = 0; row < sections->rowCount(); ++row) {
      const auto& s = expected->sections[static_cast<size_t>(row)];
      QCOMPARE(text(sections, row, 0), QString::fromStdString(s.kind));
      QCOMPARE(text(sections, row, 1), QString::number(s.offset));
      QCOMPARE(text(sections, row, 2), QString::number(s.size));
      QCOMPARE(text(sections, row, 3), QString::number(s.items));
      QCOMPARE(text(sections, row, 4), QString::fromStdString(s.hash));
    }

    auto* graphs = inspector.findChild<QTableWidget*>(QStringLiteral("graphTable"));
    QCOMPARE(graphs->rowCount(), static_cast<int>(expected->graphs.size()));
    QCOMPARE(text(graphs, 0, 0), QString::fromStdString(expected->graphs[0].name));
    QCOMPARE(text(graphs, 0, 2), QString::number(expected->graphs[0].nodes));
    QVERIFY(text(graphs, 0, 8).contains(QStringLiteral("Conv")));
    auto* spirv = inspector.findChild<QTableWidget*>(QStringLiteral("spirvTable"));
    QCOMPARE(spirv->rowCount(), static_cast<int>(expected->spirvModules.size()));
    QVERIFY(spirv->rowCount() > 0);
    QCOMPARE(text(spirv, 0, 0), QString::fromStdString(expected->spirvModules[0]));
    auto* weights = inspector.findChild<QTableWidget*>(QStringLiteral("weightsTable"));
    QCOMPARE(text(weights, 0, 1), QString::number(expected->weightBlobs));
    QCOMPARE(text(weights, 1, 1), QString::number(expected->weightReferences));
    QVERIFY(text(weights, 4, 1).endsWith(QStringLiteral("%)")));

    // Every section's hex view starts with the file's bytes at the section's offset, and ends at its end.
    const QByteArray file = fileBytes(binPath_);
    QCOMPARE(static_cast<uint64_t>(file.size()), expected->fileSize);
    for (int row = 0; row < sections->rowCount(); ++row) {
      const auto& s = expected->sections[static_cast<size_t>(row)];
      inspector.selectSection(row);
      auto* hex = inspector.hexView();
      QCOMPARE(hex->lineCount(), static_cast<qint64>((s.size + 15) / 16));
      const auto offset = static_cast<qsizetype>(s.offset);
      QCOMPARE(hex->lineText(0), formatHexLine(offset, file.mid(offset, std::min<qsizetype>(16, s.size))));
      const qint64 last = hex->lineCount() - 1;
      const qsizetype lastStart = offset + last * 16;
      QCOMPARE(hex->lineText(last), formatHexLine(lastStart, file.mid(lastStart, offset + s.size - lastStart)));
      QVERIFY(hex->errorText().isEmpty());
    }
    // The visible window is what gets formatted: it starts at the scroll position.
    inspector.findChild<QTabWidget*>(QStringLiteral("inspectorTabs"))->setCurrentIndex(1);
    inspector.show();
    for (int row = 0; row < sections->rowCount(); ++row) {
      if (expected->sections[static_cast<size_t>(row)].kind == "graphs") inspector.selectSection(row);
    }
    QVERIFY(QTest::qWaitForWindowExposed(&inspector));
    const QStringList visible = inspector.hexView()->visibleLines();
    QVERIFY(!visible.isEmpty());
    QVERIFY(visible.size() < inspector.hexView()->lineCount() || inspector.hexView()->lineCount() < 40);
    QCOMPARE(visible.first(), inspector.hexView()->lineText(0));
    saveScreenshot(&inspector, QStringLiteral("inspector_sections.png"));

    // Compiled here on this device: the driver cache and every identity field match.
    if (verdict.isEmpty()) QVERIFY(verdict.wait(kTimeoutMs));
    QCOMPARE(inspector.verdictText(), QStringLiteral("optimal"));
    QVERIFY(inspector.verdictReasons().isEmpty());
    inspector.findChild<QTabWidget*>(QStringLiteral("inspectorTabs"))->setCurrentIndex(5);
    saveScreenshot(&inspector, QStringLiteral("inspector_verdict.png"));

    // A profile without the optional features this binary's SPIR-V uses: not optimal, and says why.
    verdict.clear();
    inspector.checkAgainst({}, minimalProfilePath());
    QVERIFY(verdict.wait(kTimeoutMs));
    const auto againstProfile = kiln::checkContextBinaryAgainstProfile(binPath_.toStdString(), minimalProfilePath().toStdString());
    QVERIFY2(againstProfile.isOk(), againstProfile.status().toString().c_str());
    QCOMPARE(inspector.verdictText(), QString::fromLatin1(kiln::compatibilityName(againstProfile->compatibility)));
    QVERIFY(inspector.verdictText() != QStringLiteral("optimal"));
    QCOMPARE(inspector.verdictReasons().size(), static_cast<qsizetype>(againstProfile->reasons.size()));
    QVERIFY(!inspector.verdictReasons().isEmpty());
  }

  void inspectsCtxModelWithFileBinary() {
    BinaryInspector inspector;
    QSignalSpy inspected(&inspector, &BinaryInspector::inspected);
    inspector.inspect(ctxPath_);
    QVERIFY(inspected.wait(kTimeoutMs));
    const auto& inspection = *inspector.inspection();
    QVERIFY(inspection.ctxModel);
    QCOMPARE(inspection.binaries.size(), 1);
    QVERIFY(!inspection.binaries[0].embedded);
    QCOMPARE(QFileInfo(inspection.binaries[0].key).canonicalFilePath(), QFileInfo(binPath_).canonicalFilePath());
    auto* nodes = inspector.findChild<QTableWidget*>(QStringLiteral("nodeTable"));
    QCOMPARE(nodes->rowCount(), static_cast<int>(inspection.model->nodes.size()));
    QVERIFY(nodes->rowCount() >= 1);
    QCOMPARE(inspector.findChild<QTabWidget*>(QStringLiteral("inspectorTabs"))->tabText(0), QStringLiteral("EPContext nodes"));
  }

  void inspectsEmbeddedBinaryInPlace() {
    BinaryInspector inspector;
    QSignalSpy inspected(&inspector, &BinaryInspector::inspected);
    QSignalSpy verdict(&inspector, &BinaryInspector::verdictShown);
    inspector.inspect(embeddedPath_);
    QVERIFY(inspected.wait(kTimeoutMs));
    const auto& inspection = *inspector.inspection();
    QCOMPARE(inspection.binaries.size(), 1);
    const auto& binary = inspection.binaries[0];
    QVERIFY(binary.embedded);
    QVERIFY2(binary.sourceProblem.isEmpty(), qPrintable(binary.sourceProblem));
    QCOMPARE(binary.source.filePath, embeddedPath_);
    QCOMPARE(binary.source.length, static_cast<qint64>(binary.info.fileSize));
    // The located payload is a context binary: its magic sits at the located offset of the .onnx file.
    const QByteArray onnx = fileBytes(embeddedPath_);
    QCOMPARE(onnx.mid(binary.source.base, 8), QByteArray("KILNVKCB"));
    inspector.selectSection(0);
    const auto& first = binary.info.sections[0];
    const qsizetype at = binary.source.base + static_cast<qsizetype>(first.offset);
    QCOMPARE(inspector.hexView()->lineText(0), formatHexLine(static_cast<qint64>(first.offset), onnx.mid(at, 16)));
    // Judged from a temporary copy of the payload: the same device, so optimal too.
    if (verdict.isEmpty()) QVERIFY(verdict.wait(kTimeoutMs));
    QCOMPARE(inspector.verdictText(), QStringLiteral("optimal"));
  }

  void corruptBinaryShowsEngineMessage() {
    const QByteArray good = fileBytes(binPath_);
    QVERIFY(good.size() > 1024);
    const QString truncated = dir_.filePath(QStringLiteral("truncated_vulkan.bin"));
    const QString flipped = dir_.filePath(QStringLiteral("flipped_vulkan.bin"));
    {
      QFile out(truncated);
      QVERIFY(out.open(QIODevice::WriteOnly));
      out.write(good.left(good.size() / 2));
    }
    {
      QByteArray bad = good;
      bad[bad.size() - 100] = static_cast<char>(bad[bad.size() - 100] ^ 0x5a);
      QFile out(flipped);
      QVERIFY(out.open(QIODevice::WriteOnly));
      out.write(bad);
    }
    for (const QString& path : {truncated, flipped}) {
      const auto expected = kiln::inspectContextBinary(path.toStdString());
      QVERIFY(!expected.isOk());
      BinaryInspector inspector;
      QSignalSpy failed(&inspector, &BinaryInspector::failed);
      QSignalSpy inspected(&inspector, &BinaryInspector::inspected);
      inspector.inspect(path);
      QVERIFY(failed.wait(kTimeoutMs));
      QCOMPARE(inspected.count(), 0);
      const QString message = failed.first().first().toString();
      QVERIFY2(message.startsWith(QStringLiteral("INVALID_GRAPH: ")), qPrintable(message));
      QCOMPARE(message, QString::fromStdString(expected.status().toString()));
      QCOMPARE(inspector.lastError(), message);
      QVERIFY(inspector.findChild<QLabel*>(QStringLiteral("summaryLabel"))->text().contains(message));
      // A Kiln binary that fails validation keeps a partial view that names the failed part (tst_binary_damage).
      QVERIFY(inspector.inspection().has_value());
      QVERIFY(inspector.inspection()->binaries.first().damage.has_value());
    }
  }

  void failureKeepsPreviousBinary() {
    BinaryInspector inspector;
    QSignalSpy inspected(&inspector, &BinaryInspector::inspected);
    QSignalSpy failed(&inspector, &BinaryInspector::failed);
    inspector.inspect(binPath_);
    QVERIFY(inspected.wait(kTimeoutMs));
    inspector.inspect(dir_.filePath(QStringLiteral("missing_vulkan.bin")));
    QVERIFY(failed.wait(kTimeoutMs));
    QVERIFY(inspector.lastError().startsWith(QStringLiteral("NO_SUCHFILE")));
    QVERIFY(inspector.inspection().has_value());
    QVERIFY(inspector.findChild<QTableWidget*>(QStringLiteral("sectionTable"))->rowCount() > 0);
  }

 private:
  QTemporaryDir dir_;
  QString ctxPath_, binPath_, embeddedPath_;
};

QTEST_MAIN(TestBinaryInspector)
#include "tst_binary_inspector.moc"
