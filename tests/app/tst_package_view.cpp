// kiln-studio on a model package (issue 36, items 2 and 4): tiny_cnn.onnx packaged for the lavapipe profile and the
// minimal Vulkan 1.1 profile (fp32 and fp16); opening the folder (or its manifest.json) shows the variant table with
// the one this machine loads starred, a variant's reasons when selected, and opens a variant's graph in the main
// window. A tampered binary turns its row UNSUPPORTED and the star moves. Set KILN_STUDIO_SCREENSHOTS=<folder> to
// save the window.
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>

#include "kiln/model_package.h"
#include "main_window.h"
#include "package_view.h"
#include "studio_test_files.h"

using kiln::studio::MainWindow;
using kiln::studio::PackageView;

namespace {

constexpr int kTimeoutMs = 120000;

bool waitJudged(PackageView& view) {
  QSignalSpy judged(&view, &PackageView::judged);
  return !view.isBusy() || judged.wait(kTimeoutMs);
}

QString cellText(const PackageView& view, int row, int column) {
  const QTableWidgetItem* item = view.table()->item(row, column);
  return item ? item->text() : QString();
}

}  // namespace

class TestPackageView : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    kiln::testing::isolateStudioSettings(QStringLiteral("tst_package_view"));
    kiln::PackageOptions options;
    options.sourceModel = KILN_TEST_MODELS_DIR "/tiny_cnn.onnx";
    options.profiles = {KILN_SOURCE_DIR "/resources/profiles/lavapipe.json",
                        KILN_SOURCE_DIR "/resources/profiles/vulkan11_minimal.json"};
    options.precisions = {"fp32", "fp16"};
    options.outputFolder = dir_.filePath(QStringLiteral("tiny.kilnpkg")).toStdString();
    auto package = kiln::packageModel(options);
    QVERIFY2(package.isOk(), package.status().toString().c_str());
    folder_ = QString::fromStdString(package->path);
  }

  void showsTheVariantsAndTheOneThisMachineLoads() {
    MainWindow window;
    PackageView* view = window.openPackage(folder_);
    QVERIFY(waitJudged(*view));
    QCOMPARE(view->table()->rowCount(), 4);
    QCOMPARE(cellText(*view, 0, PackageView::Variant), QStringLiteral("lavapipe-fp32"));
    QCOMPARE(cellText(*view, 0, PackageView::Chosen), QStringLiteral("\u2605"));
    for (int row = 1; row < 4; ++row) QVERIFY(cellText(*view, row, PackageView::Chosen).isEmpty());
    QCOMPARE(cellText(*view, 0, PackageView::Here), QStringLiteral("SUPPORTED_PREFER_RECOMPILATION"));
    QCOMPARE(cellText(*view, 3, PackageView::Precision), QStringLiteral("fp16"));
    QVERIFY2(view->summaryText().contains(QStringLiteral("lavapipe-fp32")), qPrintable(view->summaryText()));
    view->selectRow(2);
    QVERIFY2(view->reasonsText().contains(QStringLiteral("compiled for Minimal Vulkan 1.1")), qPrintable(view->reasonsText()));
    QVERIFY2(view->reasonsText().contains(QStringLiteral("Compile identity")), qPrintable(view->reasonsText()));
    kiln::testing::saveScreenshot(view, QStringLiteral("package_view.png"), QSize(980, 420));

    // Open Variant's Graph: the main window loads that variant's ctx model.
    QSignalSpy loaded(&window, &MainWindow::modelLoaded);
    view->selectRow(1);
    view->findChild<QPushButton*>(QStringLiteral("openVariant"))->click();
    QVERIFY(loaded.wait(kTimeoutMs));
    QVERIFY(window.modelInfo());
    QVERIFY2(QString::fromStdString(window.modelInfo()->path).endsWith(QStringLiteral("lavapipe-fp16/tiny_cnn_ctx.onnx")),
             window.modelInfo()->path.c_str());
  }

  void manifestOpensThePackageAndATamperedVariantLosesTheStar() {
    QTemporaryDir copy;
    const QString folder = copy.filePath(QStringLiteral("tampered.kilnpkg"));
    std::filesystem::copy(folder_.toStdString(), folder.toStdString(), std::filesystem::copy_options::recursive);
    const std::string binary = folder.toStdString() + "/models/tiny_cnn/lavapipe-fp32/tiny_cnn_vulkan.bin";
    {
      std::fstream edit(binary, std::ios::in | std::ios::out | std::ios::binary);
      edit.seekp(static_cast<std::streamoff>(std::filesystem::file_size(binary) / 2));
      edit.put('\x42');
    }
    MainWindow window;
    window.openModel(folder + QStringLiteral("/manifest.json"));
    auto* view = window.findChild<PackageView*>();
    QVERIFY(view);
    QVERIFY(waitJudged(*view));
    QCOMPARE(view->folder(), folder);
    QCOMPARE(cellText(*view, 0, PackageView::Here), QStringLiteral("UNSUPPORTED"));
    QVERIFY(cellText(*view, 0, PackageView::Chosen).isEmpty());
    view->selectRow(0);
    QVERIFY2(view->reasonsText().contains(QStringLiteral("does not match its digest")), qPrintable(view->reasonsText()));
    QCOMPARE(cellText(*view, 2, PackageView::Chosen), QStringLiteral("\u2605"));  // vulkan11_minimal-fp32
  }

  void aFolderThatIsNotAPackageSaysSo() {
    QTemporaryDir empty;
    PackageView view;
    QSignalSpy failed(&view, &PackageView::failed);
    view.open(empty.path());
    QVERIFY(failed.wait(kTimeoutMs));
    QVERIFY2(view.summaryText().contains(QStringLiteral("manifest.json is missing")), qPrintable(view.summaryText()));
  }

 private:
  QTemporaryDir dir_;
  QString folder_;
};

QTEST_MAIN(TestPackageView)
#include "tst_package_view.moc"
