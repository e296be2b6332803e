// PackageView: a model package (kiln/model_package.h) opened in the studio: its variants as a table (precision,
// size, the device each was compiled for, its compatibility on this machine, the one a session here would load),
// the reasons a selected variant was not chosen, and buttons that open a variant's graph or the packaged source in
// the main window. Reading and judging the package (file digests, the compatibility API) runs on a worker thread,
// so a big package never freezes the window.
#pragma once

#include <QString>
#include <QWidget>

#include <memory>
#include <optional>

#include "kiln/model_package.h"

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTableWidget;

namespace kiln::studio {

class PackageView : public QWidget {
  Q_OBJECT

 public:
  enum Column { Chosen = 0, Variant, Precision, Size, Here, Device };

  explicit PackageView(QWidget* parent = nullptr);
  ~PackageView() override;

  // Reads and judges the package at `folder`; judged() or failed() follows. A newer open() replaces this one.
  void open(const QString& folder);
  bool isBusy() const { return busy_; }
  const QString& folder() const { return folder_; }
  QTableWidget* table() const { return table_; }
  // The package and the choice as last judged (empty before judged()).
  const std::optional<ModelPackage>& package() const { return package_; }
  const std::optional<PackageChoice>& choice() const { return choice_; }
  QString summaryText() const;
  QString reasonsText() const;
  // Selects variant `row` (shows its reasons), as a click on its row does.
  void selectRow(int row);
  // Asks the main window to open the selected variant's ctx model (or the packaged source).
  void openSelectedVariant();
  void openSource();

 signals:
  void judged();
  void failed(const QString& message);
  void openRequested(const QString& path);

 private:
  struct Outcome;
  void present(Outcome& outcome);
  QLabel* title_;
  QLabel* summary_;
  QTableWidget* table_;
  QPlainTextEdit* reasons_;
  QPushButton* openVariant_;
  QPushButton* openSource_;
  QString folder_;
  bool busy_ = false;
  int generation_ = 0;
  std::optional<ModelPackage> package_;
  std::optional<PackageChoice> choice_;
  std::shared_ptr<bool> alive_;
};

}  // namespace kiln::studio
