#include "gui/rows_model.h"

#include <string>
#include <unordered_set>

namespace flashio::gui {

void RowsModel::set_rows(std::vector<sim::Row> rows) {
  beginResetModel();
  rows_.clear();
  std::unordered_set<std::string> seen;
  for (sim::Row& r : rows)
    if (seen.insert(sim::to_csv_line(r)).second) rows_.push_back(std::move(r));
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
