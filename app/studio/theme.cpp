#include "theme.h"

#include <QActionGroup>
#include <QApplication>
#include <QMenu>
#include <QPalette>
#include <QSettings>
#include <QStyle>
#include <QStyleFactory>
#include <QStyleHints>


#include "graph_view.h"

namespace kiln::studio {

namespace {

const char* const kSettingsKey = "view/theme";

struct ThemeState {
  bool recorded = false;
  QPalette desktopPalette;
  QString desktopStyle;
  ThemeChoice choice = ThemeChoice::System;
  bool dark = false;
};

ThemeState& state() {
  static ThemeState s;
  return s;
}

// A dark palette for Fusion: light text on greys, blue selection, links readable on the dark base.
QPalette darkPalette() {
  QPalette p;
  const QColor window(0x2d, 0x2d, 0x30), base(0x1e, 0x1e, 0x1e), text(0xe6, 0xe6, 0xe6), disabled(0x80, 0x80, 0x80);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, QColor(0x26, 0x26, 0x29));
  p.setColor(QPalette::ToolTipBase, QColor(0x3c, 0x3c, 0x40));
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, QColor(0x9a, 0x9a, 0x9a));
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, window);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
  p.setColor(QPalette::Light, QColor(0x4a, 0x4a, 0x4e));
  p.setColor(QPalette::Midlight, QColor(0x3c, 0x3c, 0x40));
  p.setColor(QPalette::Mid, QColor(0x24, 0x24, 0x26));
  p.setColor(QPalette::Dark, QColor(0x18, 0x18, 0x1a));
  p.setColor(QPalette::Shadow, Qt::black);
  p.setColor(QPalette::Highlight, QColor(0x2f, 0x6f, 0xd0));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Link, QColor(0x6c, 0xb4, 0xff));
  p.setColor(QPalette::LinkVisited, QColor(0xb4, 0x8c, 0xff));
  for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText}) {
    p.setColor(QPalette::Disabled, role, disabled);
  }
  return p;
}

void record() {
  ThemeState& s = state();
  if (s.recorded) return;
  s.recorded = true;
  s.desktopPalette = QApplication::palette();
  s.desktopStyle = QApplication::style() ? QApplication::style()->name() : QString();
}

}  // namespace

QString themeChoiceName(ThemeChoice choice) {
  switch (choice) {
    case ThemeChoice::Light: return QStringLiteral("light");
    case ThemeChoice::Dark: return QStringLiteral("dark");
    case ThemeChoice::System: break;
  }
  return QStringLiteral("system");
}

ThemeChoice themeChoiceFromName(const QString& name) {
  if (name == QStringLiteral("light")) return ThemeChoice::Light;
  if (name == QStringLiteral("dark")) return ThemeChoice::Dark;
  return ThemeChoice::System;
}

ThemeChoice savedThemeChoice() {
  return themeChoiceFromName(QSettings().value(QLatin1String(kSettingsKey)).toString());
}

void saveThemeChoice(ThemeChoice choice) { QSettings().setValue(QLatin1String(kSettingsKey), themeChoiceName(choice)); }

bool desktopPrefersDark() {
#if QT_VERSION >= QT_VERSION_CHECK(6, 5, 0)
  const Qt::ColorScheme scheme = QGuiApplication::styleHints()->colorScheme();
  if (scheme != Qt::ColorScheme::Unknown) return scheme == Qt::ColorScheme::Dark;
#endif
  record();
  const QPalette& p = state().desktopPalette;
  return p.color(QPalette::Window).lightness() < p.color(QPalette::WindowText).lightness();
}

void applyTheme(ThemeChoice choice) {
  record();
  ThemeState& s = state();
  s.choice = choice;
  if (choice == ThemeChoice::System) {
    s.dark = desktopPrefersDark();
    // Back to the desktop's style when a forced theme replaced it (a style the factory cannot make stays as is).
    if (QApplication::style()->name() != s.desktopStyle) {
      if (QStyle* style = QStyleFactory::create(s.desktopStyle)) QApplication::setStyle(style);
    }
    QApplication::setPalette(s.desktopPalette);
  } else {
    s.dark = choice == ThemeChoice::Dark;
    // Fusion draws every widget from the palette, so a forced theme looks the same on every desktop.
    if (QApplication::style()->name().compare(QStringLiteral("fusion"), Qt::CaseInsensitive) != 0) {
      if (QStyle* style = QStyleFactory::create(QStringLiteral("Fusion"))) QApplication::setStyle(style);
    }
    QApplication::setPalette(s.dark ? darkPalette() : QApplication::style()->standardPalette());
  }
  for (QWidget* widget : QApplication::allWidgets()) {
    if (auto* view = qobject_cast<GraphView*>(widget)) {
      view->minimap()->refresh();
      view->viewport()->update();
    }
  }
}

ThemeChoice currentThemeChoice() { return state().choice; }

bool isDarkTheme() { return state().dark; }

QColor graphCanvasColor() { return isDarkTheme() ? QColor(0x26, 0x26, 0x28) : QColor(Qt::white); }

QColor graphEdgeColor() { return isDarkTheme() ? QColor(0xb8, 0xb8, 0xb8) : QColor(0x50, 0x50, 0x50); }

QColor diffAddedColor() { return QColor(0x7c, 0xc5, 0x7f); }

QColor diffRemovedColor() { return QColor(0xf0, 0x8a, 0x80); }

QColor diffChangedColor() { return QColor(0xf5, 0xbf, 0x4f); }

QColor diffUnchangedColor() { return isDarkTheme() ? QColor(0x8c, 0x8c, 0x8c) : QColor(0xe4, 0xe4, 0xe4); }

QMenu* createThemeMenu(QWidget* parent) {
  auto* menu = new QMenu(QObject::tr("&Theme"), parent);
  auto* group = new QActionGroup(menu);
  const std::pair<ThemeChoice, QString> entries[] = {{ThemeChoice::System, QObject::tr("&System")},
                                                     {ThemeChoice::Light, QObject::tr("&Light")},
                                                     {ThemeChoice::Dark, QObject::tr("&Dark")}};
  for (const auto& [choice, text] : entries) {
    QAction* action = menu->addAction(text);
    action->setCheckable(true);
    action->setChecked(choice == currentThemeChoice());
    action->setData(themeChoiceName(choice));
    group->addAction(action);
    QObject::connect(action, &QAction::triggered, menu, [choice] {
      saveThemeChoice(choice);
      applyTheme(choice);
    });
  }
#if QT_VERSION >= QT_VERSION_CHECK(6, 5, 0)
  // The desktop switched between light and dark: System follows it.
  QObject::connect(QGuiApplication::styleHints(), &QStyleHints::colorSchemeChanged, menu, [] {
    if (currentThemeChoice() == ThemeChoice::System) applyTheme(ThemeChoice::System);
  });
#endif
  return menu;
}

}  // namespace kiln::studio
