// The studio's color theme: System (follows the desktop), Light or Dark, chosen under View ▸ Theme and remembered
// in QSettings ("view/theme"). The desktop's preference is Qt's QStyleHints::colorScheme() where Qt has it (6.5+),
// else the lightness of the desktop palette's window color (Qt 6.4 on Debian 12). The graph canvas reads its colors
// from here so nodes, edges and labels stay readable on both.
#pragma once

#include <QColor>
#include <QString>

class QMenu;
class QWidget;

namespace kiln::studio {

enum class ThemeChoice { System, Light, Dark };

// "system", "light", "dark"; and back (System for anything else).
QString themeChoiceName(ThemeChoice choice);
ThemeChoice themeChoiceFromName(const QString& name);

// The choice remembered in QSettings (System when none is), and remembering one.
ThemeChoice savedThemeChoice();
void saveThemeChoice(ThemeChoice choice);

// True when the desktop asks for dark colors.
bool desktopPrefersDark();

// Applies `choice` to the application (palette; Fusion for the forced themes) and repaints the graph views. The
// first call records the desktop's own palette and style, which System restores.
void applyTheme(ThemeChoice choice);
ThemeChoice currentThemeChoice();
// True while the applied theme is dark (System: as the desktop says).
bool isDarkTheme();

// Graph canvas colors for the applied theme.
QColor graphCanvasColor();
QColor graphEdgeColor();

// Model diff node fills (under the nodes' black labels): added green, removed red, changed amber, the same in both
// themes (each reads on the white and the dark canvas); unchanged nodes a grey that recedes on the canvas of the
// applied theme.
QColor diffAddedColor();
QColor diffRemovedColor();
QColor diffChangedColor();
QColor diffUnchangedColor();

// View ▸ Theme: System, Light, Dark as exclusive entries; picking one applies and remembers it.
QMenu* createThemeMenu(QWidget* parent);

}  // namespace kiln::studio
