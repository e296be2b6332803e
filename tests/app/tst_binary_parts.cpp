// The binary inspector's deeper views on a real compile (tiny_cnn.onnx on the live device, lavapipe in CI): each
// SPIR-V pipeline with its size, the graphs and EPContext nodes that dispatch it and its disassembly through
// SPIRV-Tools; a damaged binary shown in part with the failing section and byte range marked; a ctx model whose
// .bin is missing says on the Verdict tab why no binary could be followed.
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
#include "kiln/context_binary_parts.h"
#include "studio_test_files.h"

using kiln::studio::BinaryInspector;
using kiln::testing::fileBytes;
using kiln::testing::saveScreenshot;

namespace {

constexpr int kTimeoutMs = 60000;
const QSize kShotSize(1100, 700);  // what saveScreenshot resizes the inspector to

bool writeFile(const QString& path, const QByteArray& bytes) {
  QFile out(path);
  return out.open(QIODevice::WriteOnly) && out.write(bytes) == bytes.size();
}

QString text(const QTableWidget* table, int row, int column) {
  const QTableWidgetItem* item = table->item(row, column);
  return item ? item->text() : QString();
}

}  // namespace

class TestBinaryParts : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    ctxPath_ = dir_.filePath(QStringLiteral("tiny_ctx.onnx"));
    binPath_ = dir_.filePath(QStringLiteral("tiny_vulkan.bin"));
    kiln::ModelCompilationOptions options;
    options.setInputModelPath(QStringLiteral(KILN_TEST_MODELS_DIR "/tiny_cnn.onnx").toStdString())
        .setOutputModelPath(ctxPath_.toStdString());
    auto compiled = kiln::compileModel(options);
    QVERIFY2(compiled.isOk(), compiled.status().toString().c_str());
    auto info = kiln::inspectContextBinary(binPath_.toStdString());
    QVERIFY(info.isOk());
    info_ = *info;
  }

  void pipelinesHaveSizesNodesAndDisassembly() {
    BinaryInspector inspector;
    QSignalSpy inspected(&inspector, &BinaryInspector::inspected);
    inspector.inspect(ctxPath_);
    QVERIFY(inspected.wait(kTimeoutMs));
    const auto& inspection = *inspector.inspection();
    const auto& binary = inspection.binaries.first();
    QCOMPARE(binary.pipelines.size(), static_cast<qsizetype>(info_.spirvModules.size()));
    qint64 total = 0;
    for (const auto& pipeline : binary.pipelines) total += pipeline.bytes();
    QCOMPARE(total, static_cast<qint64>(info_.spirvBytes));

    auto* table = inspector.findChild<QTableWidget*>(QStringLiteral("spirvTable"));
    QCOMPARE(table->rowCount(), static_cast<int>(info_.spirvModules.size()));
    const QString node = QString::fromStdString(inspection.model->nodes.front().name);
    const QString graph = QString::fromStdString(info_.graphs.front().name);
    for (int row = 0; row < table->rowCount(); ++row) {
      QCOMPARE(text(table, row, 0), QString::fromStdString(info_.spirvModules[static_cast<size_t>(row)]));
      QCOMPARE(table->item(row, 1)->toolTip(),
               QStringLiteral("%1 bytes, %2 words").arg(binary.pipelines[row].bytes()).arg(binary.pipelines[row].words.size()));
      QVERIFY2(text(table, row, 2).contains(graph), qPrintable(text(table, row, 2)));
      QVERIFY2(text(table, row, 3).contains(node), qPrintable(text(table, row, 3)));
    }

    QVERIFY(inspector.disassemblyText().isEmpty());
    inspector.selectPipeline(0);
    const QString assembly = inspector.disassemblyText();
    QVERIFY2(assembly.contains(QStringLiteral("OpEntryPoint GLCompute")), qPrintable(assembly.left(400)));
    QVERIFY(assembly.contains(QStringLiteral("OpCapability Shader")));
    saveScreenshot(&inspector, QStringLiteral("inspector_spirv.png"), kShotSize);
  }

  void invalidSpirvIsAnErrorNotACrash() {
    const auto result = kiln::bridge::disassembleSpirv({0xdeadbeef, 1, 2, 3});
    QVERIFY(!result.isOk());
    QCOMPARE(result.status().code(), kiln::StatusCode::INVALID_GRAPH);
    QVERIFY(!kiln::bridge::disassembleSpirv({}).isOk());
  }

  void validBinaryHasNoDiagnosis() {
    const QByteArray bytes = fileBytes(binPath_);
    const auto d = kiln::diagnoseContextBinary(
        {reinterpret_cast<const std::byte*>(bytes.constData()), static_cast<size_t>(bytes.size())}, "x");
    QVERIFY(d.problem.empty());
    QVERIFY(d.headerReadable);
    QCOMPARE(d.sections.size(), info_.sections.size());
  }

  void corruptSpirvSectionIsMarked() {
    const auto spirv = std::find_if(info_.sections.begin(), info_.sections.end(), [](const auto& s) { return s.kind == "spirv"; });
    QVERIFY(spirv != info_.sections.end());
    QByteArray bad = fileBytes(binPath_);
    const qsizetype at = static_cast<qsizetype>(spirv->offset + spirv->size / 2);
    bad[at] = static_cast<char>(bad[at] ^ 0x5a);
    const QString path = dir_.filePath(QStringLiteral("bad_spirv_vulkan.bin"));
    QVERIFY(writeFile(path, bad));

    BinaryInspector inspector;
    QSignalSpy failed(&inspector, &BinaryInspector::failed);
    inspector.inspect(path);
    QVERIFY(failed.wait(kTimeoutMs));
    QVERIFY(failed.first().first().toString().contains(QStringLiteral("spirv section content hash mismatch")));
    const auto& damage = *inspector.inspection()->binaries.first().damage;
    QCOMPARE(QString::fromStdString(damage.failedPart), QStringLiteral("spirv"));
    QCOMPARE(damage.failedOffset, spirv->offset);
    QCOMPARE(damage.failedSize, spirv->size);

    // The header still reads: its tab is whole, the device named.
    auto* header = inspector.findChild<QTableWidget*>(QStringLiteral("headerTable"));
    QVERIFY(header->rowCount() > 10);
    // The section table marks exactly the spirv row, and its bytes are on display.
    auto* sections = inspector.findChild<QTableWidget*>(QStringLiteral("sectionTable"));
    QCOMPARE(sections->rowCount(), static_cast<int>(info_.sections.size()));
    int marked = 0;
    for (int row = 0; row < sections->rowCount(); ++row) {
      const bool damaged = text(sections, row, 0).contains(QStringLiteral("damaged"));
      QCOMPARE(damaged, info_.sections[static_cast<size_t>(row)].kind == "spirv");
      marked += damaged ? 1 : 0;
      if (damaged) QCOMPARE(sections->currentRow(), row);
    }
    QCOMPARE(marked, 1);
    QCOMPARE(inspector.hexView()->lineCount(), static_cast<qint64>((spirv->size + 15) / 16));
    QVERIFY(inspector.hexView()->lineText(0).startsWith(QStringLiteral("%1").arg(spirv->offset, 8, 16, QLatin1Char('0'))));
    QCOMPARE(inspector.verdictText(), QStringLiteral("unreadable"));
    QVERIFY(inspector.findChild<QLabel*>(QStringLiteral("summaryLabel"))->text().contains(
        QStringLiteral("[%1, +%2)").arg(spirv->offset).arg(spirv->size)));
    saveScreenshot(&inspector, QStringLiteral("inspector_damaged.png"), kShotSize);
  }

  void truncatedBinaryMarksTheHeader() {
    const QByteArray good = fileBytes(binPath_);
    const QString path = dir_.filePath(QStringLiteral("short_vulkan.bin"));
    QVERIFY(writeFile(path, good.left(good.size() / 2)));
    BinaryInspector inspector;
    QSignalSpy failed(&inspector, &BinaryInspector::failed);
    inspector.inspect(path);
    QVERIFY(failed.wait(kTimeoutMs));
    const auto& damage = *inspector.inspection()->binaries.first().damage;
    QCOMPARE(QString::fromStdString(damage.failedPart), QStringLiteral("header"));
    QVERIFY(!damage.headerReadable);
    auto* header = inspector.findChild<QTableWidget*>(QStringLiteral("headerTable"));
    QCOMPARE(header->rowCount(), 1);
    QVERIFY(text(header, 0, 2).contains(QStringLiteral("truncated")));
    QCOMPARE(inspector.hexView()->lineText(0).left(8), QStringLiteral("00000000"));
  }

  void notABinaryStillFails() {
    const QString path = dir_.filePath(QStringLiteral("text_vulkan.bin"));
    QVERIFY(writeFile(path, QByteArray("this is not a context binary at all, just text\n")));
    BinaryInspector inspector;
    QSignalSpy failed(&inspector, &BinaryInspector::failed);
    inspector.inspect(path);
    QVERIFY(failed.wait(kTimeoutMs));
    QVERIFY(!inspector.inspection().has_value());
  }

  void missingBinarySaysWhyOnTheVerdictTab() {
    QTemporaryDir other;
    const QString ctx = QDir(other.path()).filePath(QStringLiteral("tiny_ctx.onnx"));
    QVERIFY(QFile::copy(ctxPath_, ctx));  // its tiny_vulkan.bin stays behind
    BinaryInspector inspector;
    QSignalSpy inspected(&inspector, &BinaryInspector::inspected);
    inspector.inspect(ctx);
    QVERIFY(inspected.wait(kTimeoutMs));
    QVERIFY(inspector.inspection()->binaries.isEmpty());
    QCOMPARE(inspector.verdictText(), QStringLiteral("No binary could be followed"));
    auto* reasons = inspector.findChild<QListWidget*>(QStringLiteral("reasonsList"));
    QVERIFY(reasons->count() >= 1);
    inspector.findChild<QTabWidget*>(QStringLiteral("inspectorTabs"))->setCurrentIndex(6);  // Verdict
    const QString reason = reasons->item(0)->text();
    QVERIFY2(reason.contains(QStringLiteral("tiny_vulkan.bin")), qPrintable(reason));
    QVERIFY2(reason.startsWith(QString::fromStdString(inspector.inspection()->model->nodes.front().name)), qPrintable(reason));
    saveScreenshot(&inspector, QStringLiteral("inspector_missing_bin.png"), kShotSize);
  }

 private:
  QTemporaryDir dir_;
  QString ctxPath_, binPath_;
  kiln::ContextBinaryInfo info_;
};

QTEST_MAIN(TestBinaryParts)
#include "tst_binary_parts.moc"
