// kiln-studio: the desktop workbench. `kiln-studio [model.onnx]` opens the window, optionally with a model.
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QTimer>

#include <cstdio>
#include <string_view>

#include "binary_inspection.h"
#include "binary_inspector.h"
#include "environment_info.h"
#include "kiln/version.h"
#include "kiln_cli.h"
#include "main_window.h"
#include "screenshot_tour.h"
#include "theme.h"

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

// The command line, shared by the windowed run and the display-free --help/--version path.
struct CommandLine {
  QCommandLineParser parser;
  QCommandLineOption screenshot{QStringLiteral("screenshot"),
                                QStringLiteral("Save the window as PNG after loading, then exit."),
                                QStringLiteral("file")};
  // --screenshot-tour DIR: drive every panel on the model and save one PNG per panel into DIR, then exit
  // (tests/tools/studio_screenshots.sh runs it under Xvfb).
  QCommandLineOption paths{QStringLiteral("paths"),
                           QStringLiteral("Print where the kiln program and the sample model are found, then exit.")};
  QCommandLineOption tour{QStringLiteral("screenshot-tour"), QStringLiteral("Save a PNG of every panel, then exit."),
                          QStringLiteral("dir")};
  QCommandLineOption tourShapes{QStringLiteral("tour-shapes"),
                                QStringLiteral("Input shapes for the tour's benchmark."), QStringLiteral("shapes")};
  QCommandLineOption tourIfModel{QStringLiteral("tour-if-model"),
                                 QStringLiteral("A model with If bodies for the tour."), QStringLiteral("model")};
  QCommandLineOption tourBigModel{QStringLiteral("tour-big-model"), QStringLiteral("A large model for the tour."),
                                  QStringLiteral("model")};
  QCommandLineOption tourFunctionModel{QStringLiteral("tour-function-model"),
                                       QStringLiteral("A model calling a local function for the tour."),
                                       QStringLiteral("model")};
  QCommandLineOption tourDiffModels{QStringLiteral("tour-diff-models"),
                                    QStringLiteral("Two models to diff for the tour, separated by a comma."),
                                    QStringLiteral("a,b")};
  QCommandLineOption tourSteps{QStringLiteral("tour-steps"),
                               QStringLiteral("Comma-separated prefixes of the tour steps to run."),
                               QStringLiteral("prefixes")};
  CommandLine() {
    parser.setApplicationDescription(QStringLiteral("Kiln Studio: inspect ONNX models."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("model"), QStringLiteral("ONNX model to open."),
                                 QStringLiteral("[model.onnx]"));
    screenshot.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(screenshot);
    parser.addOption(paths);
    tour.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(tour);
    for (QCommandLineOption* option : {&tourShapes, &tourIfModel, &tourBigModel, &tourSteps, &tourFunctionModel,
                                       &tourDiffModels}) {
      option->setFlags(QCommandLineOption::HiddenFromHelp);
      parser.addOption(*option);
    }
  }
};

void setApplicationNames() {
  QCoreApplication::setOrganizationName(QStringLiteral("Kiln"));
  QCoreApplication::setApplicationName(QStringLiteral("kiln-studio"));
  QCoreApplication::setApplicationVersion(QString::fromLatin1(kiln::engineVersion()));
}

// --help and --version only print: answer them without a QApplication so they work with no display.
bool printsOnly(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "-v" || arg == "--version" || arg == "--help-all") return true;
  }
  return false;
}

// --paths: where this kiln-studio finds the kiln program (Benchmark, compare) and the sample model, with no window
// and no display; exit 1 when either is missing. What a user checks first when a panel says "cannot find".
bool printsPaths(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--paths") return true;
  }
  return false;
}

int printPaths(int argc, char** argv) {
  QCoreApplication core(argc, argv);
  setApplicationNames();
  const kiln::bridge::KilnCliLocation cli = kiln::bridge::locateKilnCli();
  const QString sample = kiln::bridge::sampleModelPath();
  std::printf("kiln: %s\n", qPrintable(cli.found() ? cli.path : QStringLiteral("not found: ") + cli.error));
  std::printf("sample model: %s\n", qPrintable(sample.isEmpty() ? QStringLiteral("not found") : sample));
  return cli.found() && !sample.isEmpty() ? 0 : 1;
}

// Qt aborts with "could not connect to display" when it has nowhere to draw; say what to do instead.
bool hasDisplay(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "-platform") return true;
  }
  return !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") || !qEnvironmentVariableIsEmpty("DISPLAY") ||
         !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY");
}

}  // namespace

int main(int argc, char** argv) {
  if (printsOnly(argc, argv)) {
    QCoreApplication core(argc, argv);
    setApplicationNames();
    CommandLine commandLine;
    commandLine.parser.process(core);  // prints and exits
    return 0;
  }
  if (printsPaths(argc, argv)) return printPaths(argc, argv);
  if (!hasDisplay(argc, argv)) {
    std::fprintf(stderr,
                 "kiln-studio: no display (DISPLAY and WAYLAND_DISPLAY are unset). Run it on a desktop, under "
                 "xvfb-run, or with QT_QPA_PLATFORM=offscreen; the kiln command line does everything headless.\n");
    return 1;
  }
  QApplication app(argc, argv);
  setApplicationNames();
  // Ties windows to the installed kiln-studio.desktop (task bars group them under its name and icon).
  QGuiApplication::setDesktopFileName(QStringLiteral("kiln-studio"));
  QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral("kiln-studio")));
  CommandLine commandLine;
  commandLine.parser.process(app);
  kiln::studio::applyTheme(kiln::studio::savedThemeChoice());  // View > Theme, remembered

  kiln::studio::MainWindow window;  // at the size the last session left it (MainWindow restores it)
  // Screenshots are taken at one fixed size, whatever the user's last window was.
  if (commandLine.parser.isSet(commandLine.screenshot) || commandLine.parser.isSet(commandLine.tour)) {
    window.resize(1280, 760);
  }
  window.show();

  const QStringList models = commandLine.parser.positionalArguments();
  if (commandLine.parser.isSet(commandLine.tour)) {
    if (models.isEmpty()) {
      std::fprintf(stderr, "kiln-studio: --screenshot-tour needs a model\n");
      return 2;
    }
    auto* tour = new kiln::studio::ScreenshotTour(window, commandLine.parser.value(commandLine.tour), models.first(),
                                                  commandLine.parser.value(commandLine.tourShapes));
    tour->addControlFlowAndLargeGraphSteps(commandLine.parser.value(commandLine.tourIfModel),
                                           commandLine.parser.value(commandLine.tourBigModel));
    tour->addFitAndEdgeShapeSteps();
    tour->addFunctionAndOverlaySteps(commandLine.parser.value(commandLine.tourFunctionModel));
    const QStringList diffModels = commandLine.parser.value(commandLine.tourDiffModels).split(u',');
    tour->addModelDiffStep(diffModels.value(0), diffModels.value(1));
    if (commandLine.parser.isSet(commandLine.tourSteps)) {
      tour->setStepFilter(commandLine.parser.value(commandLine.tourSteps).split(u',', Qt::SkipEmptyParts));
    }
    QObject::connect(tour, &kiln::studio::ScreenshotTour::finished, &window, [tour](bool ok) {
      for (const QString& file : tour->savedFiles()) std::printf("%s\n", qPrintable(file));
      for (const QString& error : tour->errors()) std::fprintf(stderr, "kiln-studio: tour: %s\n", qPrintable(error));
      QCoreApplication::exit(ok ? 0 : 1);
    });
    tour->start();
    return QApplication::exec();
  }
  if (commandLine.parser.isSet(commandLine.screenshot)) {
    // A context binary goes to the inspector: nothing loads as a model, so the grab waits for the inspection.
    const bool binary = !models.isEmpty() && kiln::bridge::isContextBinaryFile(models.first());
    if (binary) {
      auto grab = [&window, file = commandLine.parser.value(commandLine.screenshot)] {
        scheduleScreenshot(window, file, false);
      };
      QObject::connect(window.binaryInspector(), &kiln::studio::BinaryInspector::inspected, &window, grab);
      QObject::connect(window.binaryInspector(), &kiln::studio::BinaryInspector::failed, &window, grab);
    } else {
      scheduleScreenshot(window, commandLine.parser.value(commandLine.screenshot), !models.isEmpty());
    }
  }
  if (!models.isEmpty()) window.openModel(models.first());
  return QApplication::exec();
}
