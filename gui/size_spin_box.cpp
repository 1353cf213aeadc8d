#include "gui/size_spin_box.h"

#include <algorithm>

#include "gui/size_text.h"

namespace flashio::gui {

int64_t size_box_bytes(const QString& text) {
  QString t = text.trimmed();
  t.remove(',');  // the box's own group separators
  t.remove(' ');
  const auto bytes = parse_size_bytes(t.toStdString());
  return bytes ? *bytes : -1;
}

QString SizeSpinBox::textFromValue(int value) const { return format_exact(value) + " B"; }

int SizeSpinBox::valueFromText(const QString& text) const {
  const int64_t bytes = size_box_bytes(text);
  return bytes < 0 ? value() : static_cast<int>(std::clamp<int64_t>(bytes, minimum(), maximum()));
}

QValidator::State SizeSpinBox::validate(QString& text, int&) const {
  const int64_t bytes = size_box_bytes(text);
  if (bytes >= minimum() && bytes <= maximum()) return QValidator::Acceptable;
  // Digits, unit letters and separators may still become a size while being typed.
  for (const QChar c : text)
    if (!(c.isDigit() || c.isSpace() || c == ',' || c == '.' || QStringLiteral("KMGiBkb").contains(c)))
      return QValidator::Invalid;
  return QValidator::Intermediate;
}

}  // namespace flashio::gui
