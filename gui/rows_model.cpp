#include "gui/rows_model.h"

namespace flashio::gui {

void RowsModel::set_rows(std::vector<sim::Row> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

int RowsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int RowsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(sim::row_columns().size());
}

QVariant RowsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || (role != Qt::DisplayRole && role != Qt::ToolTipRole)) return {};
  const auto& column = sim::row_columns()[static_cast<size_t>(index.column())];
  return QString::fromStdString(sim::cell(rows_[static_cast<size_t>(index.row())], column));
}

QVariant RowsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Horizontal)
    return QString::fromStdString(sim::row_columns()[static_cast<size_t>(section)]);
  return section + 1;
}

}  // namespace flashio::gui
