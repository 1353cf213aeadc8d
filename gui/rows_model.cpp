#include "gui/rows_model.h"

#include <string>
#include <unordered_map>

#include <QStringList>

namespace flashio::gui {

void RowsModel::set_rows(std::vector<PlottedRow> rows) {
  beginResetModel();
  rows_.clear();
  drawn_at_.clear();
  std::unordered_map<std::string, size_t> index;
  std::vector<std::pair<QString, QStringList>> xs;  // per table row: the x title and the x values
  for (PlottedRow& p : rows) {
    const std::string key = sim::to_csv_line(p.row);
    auto [it, added] = index.emplace(key, rows_.size());
    if (added) {
      rows_.push_back(std::move(p.row));
      xs.push_back({p.x_title, {}});
    }
    auto& [title, values] = xs[it->second];
    if (!p.x_title.isEmpty() && !values.contains(p.x_text)) values << p.x_text;
  }
  for (const auto& [title, values] : xs)
    drawn_at_.push_back(values.isEmpty() ? QString() : values.join(", ") + " (" + title + ")");
  endResetModel();
}

void RowsModel::set_rows(std::vector<sim::Row> rows) {
  std::vector<PlottedRow> plotted;
  for (sim::Row& r : rows) plotted.push_back({{}, {}, 0, std::move(r)});
  set_rows(std::move(plotted));
}

int RowsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int RowsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : 1 + static_cast<int>(sim::row_columns().size());
}

QVariant RowsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || (role != Qt::DisplayRole && role != Qt::ToolTipRole)) return {};
  if (index.column() == 0) return drawn_at_[static_cast<size_t>(index.row())];
  const auto& column = sim::row_columns()[static_cast<size_t>(index.column() - 1)];
  return QString::fromStdString(sim::cell(rows_[static_cast<size_t>(index.row())], column));
}

QVariant RowsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Horizontal)
    return section == 0 ? QStringLiteral("drawn at")
                        : QString::fromStdString(sim::row_columns()[static_cast<size_t>(section - 1)]);
  return section + 1;
}

}  // namespace flashio::gui
