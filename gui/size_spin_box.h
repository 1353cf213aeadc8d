// SizeSpinBox: a spin box of bytes that reads sizes as people type them, with the units the
// runner's --sram accepts ("100KiB", "192KB", "4096B", "4,096"), and shows whole bytes with
// group separators ("232,448 B"). A plain QSpinBox with the suffix " B" read "100KiB" as 100.
#pragma once
#include <QSpinBox>

namespace flashio::gui {

class SizeSpinBox : public QSpinBox {
  Q_OBJECT
 public:
  using QSpinBox::QSpinBox;

 protected:
  QString textFromValue(int value) const override;
  int valueFromText(const QString& text) const override;
  QValidator::State validate(QString& text, int& pos) const override;
};

// The bytes `text` spells (units as sim::parse_byte_size reads them, group separators and a
// trailing " B" of the box's own display allowed), or -1 when it spells none.
int64_t size_box_bytes(const QString& text);

}  // namespace flashio::gui
