// kiln-studio: the desktop workbench. `kiln-studio [model.onnx]` opens the window, optionally with a model.
#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include <cstdio>

#include "kiln/version.h"
#include "main_window.h"

namespace {

// --screenshot FILE: grab the window to a PNG once the model has loaded (or failed) and exit. Used to check the
// layout headless (QT_QPA_PLATFORM=offscreen) and to produce documentation images; hidden from --help.
void scheduleScreenshot(kiln::studio::MainWindow& window, const QString& file, bool waitForModel) {
  auto grabAndExit = [&window, file] {
    // Let layouts and the table's column sizing settle before grabbing.
    QTimer::singleShot(200, &window, [&window, file] {
      const bool saved = window.grab().save(file, "PNG");
      if (!saved) std::fprintf(stderr, "kiln-studio: could not write screenshot '%s'\n", qPrintable(file));
      if (!window.lastError().isEmpty()) std::fprintf(stderr, "kiln-studio: %s\n", qPrintable(window.lastError()));
      QCoreApplication::exit(saved && window.lastError().isEmpty() ? 0 : 1);
    });
  };
  if (!waitForModel) {
    grabAndExit();
    return;
  }
  QObject::connect(&window, &kiln::studio::MainWindow::modelLoaded, &window, grabAndExit);
  QObject::connect(&window, &kiln::studio::MainWindow::loadFailed, &window, grabAndExit);
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QCoreApplication::setOrganizationName(QStringLiteral("Kiln"));
  QCoreApplication::setApplicationName(QStringLiteral("kiln-studio"));
  QCoreApplication::setApplicationVersion(QString::fromLatin1(kiln::engineVersion()));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Kiln Studio: inspect ONNX models."));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("model"), QStringLiteral("ONNX model to open."),
                               QStringLiteral("[model.onnx]"));
  QCommandLineOption screenshotOption(QStringLiteral("screenshot"),
                                      QStringLiteral("Save the window as PNG after loading, then exit."),
                                      QStringLiteral("file"));
  screenshotOption.setFlags(QCommandLineOption::HiddenFromHelp);
  parser.addOption(screenshotOption);
  parser.process(app);

  kiln::studio::MainWindow window;
  window.resize(1280, 760);
  window.show();

  const QStringList models = parser.positionalArguments();
  if (parser.isSet(screenshotOption)) scheduleScreenshot(window, parser.value(screenshotOption), !models.isEmpty());
  if (!models.isEmpty()) window.openModel(models.first());
  return QApplication::exec();
}
