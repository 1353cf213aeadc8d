// RowsModel: the table of rows behind the current view's charts, in sim's row schema.
#pragma once
#include <vector>

#include <QAbstractTableModel>

#include "gui/plotted_row.h"
#include "sim/row.h"

namespace flashio::gui {

class RowsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  using QAbstractTableModel::QAbstractTableModel;
  // Shows `rows` with each distinct row once, in first-seen order (a view draws standard
  // attention and the bounds flat across its sweep, the same row at every x), the x values it
  // is drawn at in a first column, "drawn at".
  void set_rows(std::vector<PlottedRow> rows);
  void set_rows(std::vector<sim::Row> rows);
  // The "drawn at" cell of a table row: "16, 32, 64 (block size B, …)" or empty.
  QString drawn_at(int row) const { return drawn_at_[static_cast<size_t>(row)]; }
  const std::vector<sim::Row>& rows() const { return rows_; }
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::vector<sim::Row> rows_;
  std::vector<QString> drawn_at_;
};

}  // namespace flashio::gui
