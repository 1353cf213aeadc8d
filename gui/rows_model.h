// RowsModel: the table of rows behind the current view's charts, in sim's row schema.
#pragma once
#include <vector>

#include <QAbstractTableModel>

#include "sim/row.h"

namespace flashio::gui {

class RowsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  using QAbstractTableModel::QAbstractTableModel;
  // Shows `rows` with each distinct row once, in first-seen order: a view draws standard
  // attention and the bounds flat across its sweep, the same row at every x.
  void set_rows(std::vector<sim::Row> rows);
  const std::vector<sim::Row>& rows() const { return rows_; }
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::vector<sim::Row> rows_;
};

}  // namespace flashio::gui
