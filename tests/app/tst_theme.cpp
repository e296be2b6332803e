// Dark theme (issue 22, item 7): View ▸ Theme offers System, Light and Dark, applies the choice to the palette and
// the graph canvas, and remembers it in QSettings; System follows the desktop.
#include <QAction>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QStandardPaths>
#include <QtTest>

#include "main_window.h"
#include "theme.h"

using kiln::studio::ThemeChoice;

namespace {

QAction* themeAction(kiln::studio::MainWindow& window, const QString& name) {
  for (QMenu* menu : window.findChildren<QMenu*>()) {
    for (QAction* action : menu->actions()) {
      if (action->isCheckable() && action->data().toString() == name) return action;
    }
  }
  return nullptr;
}

}  // namespace

class TestTheme : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("KilnTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_theme"));
    QSettings().clear();
  }

  void namesRoundTrip() {
    for (ThemeChoice c : {ThemeChoice::System, ThemeChoice::Light, ThemeChoice::Dark}) {
      QCOMPARE(kiln::studio::themeChoiceFromName(kiln::studio::themeChoiceName(c)), c);
    }
    // Anything unknown (a hand-edited or older settings file) means System.
    QCOMPARE(kiln::studio::themeChoiceFromName(QStringLiteral("purple")), ThemeChoice::System);
    QCOMPARE(kiln::studio::themeChoiceFromName(QString()), ThemeChoice::System);
    QCOMPARE(kiln::studio::savedThemeChoice(), ThemeChoice::System);
  }

  void menuAppliesAndRemembers() {
    kiln::studio::applyTheme(kiln::studio::savedThemeChoice());
    kiln::studio::MainWindow window;
    QAction* dark = themeAction(window, QStringLiteral("dark"));
    QAction* light = themeAction(window, QStringLiteral("light"));
    QAction* system = themeAction(window, QStringLiteral("system"));
    QVERIFY(dark && light && system);
    QVERIFY(system->isChecked());

    dark->trigger();
    QVERIFY(kiln::studio::isDarkTheme());
    QCOMPARE(kiln::studio::savedThemeChoice(), ThemeChoice::Dark);
    QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 80);
    QVERIFY(kiln::studio::graphCanvasColor().lightness() < 80);
    // Edges contrast with the canvas in both themes.
    QVERIFY(kiln::studio::graphEdgeColor().lightness() - kiln::studio::graphCanvasColor().lightness() > 100);

    light->trigger();
    QVERIFY(!kiln::studio::isDarkTheme());
    QCOMPARE(kiln::studio::savedThemeChoice(), ThemeChoice::Light);
    QVERIFY(QApplication::palette().color(QPalette::Window).lightness() > 180);
    QVERIFY(kiln::studio::graphCanvasColor().lightness() - kiln::studio::graphEdgeColor().lightness() > 100);

    // System follows the desktop (offscreen: a light palette, or the color scheme where Qt reports one).
    system->trigger();
    QCOMPARE(kiln::studio::savedThemeChoice(), ThemeChoice::System);
    QCOMPARE(kiln::studio::isDarkTheme(), kiln::studio::desktopPrefersDark());

    // A new window shows the remembered choice checked.
    dark->trigger();
    kiln::studio::MainWindow second;
    QVERIFY(themeAction(second, QStringLiteral("dark"))->isChecked());
    system->trigger();
  }
};

QTEST_MAIN(TestTheme)
#include "tst_theme.moc"
