// Helpers shared by the GUI tests: a window without settings, and waiting for its signals.
#pragma once
#include <memory>

#include <optional>

#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QXYSeries>

#include "gui/main_window.h"
#include "gui/params_settings.h"

namespace flashio::gui::test {

inline std::unique_ptr<MainWindow> make_window(bool cache = false) {
  WindowOptions options;
  options.use_settings = false;
  options.cache_curves = cache;
  auto window = std::make_unique<MainWindow>(options);
  window->resize(1400, 900);
  window->show();
  return window;
}

// Waits until the closed-form data for the panel's current parameters is drawn. Two minutes: the
// sanitizer build (scripts/test_sanitized.sh) computes the time model many times slower.
inline bool wait_data(MainWindow& window, int timeout_ms = 120000) {
  QSignalSpy spy(&window, &MainWindow::data_ready);
  return spy.wait(timeout_ms);
}

// `params` saved to a fresh settings file in `dir` and read back (gui/params_settings.h).
inline std::optional<WorkbenchParams> settings_round_trip(const QTemporaryDir& dir, const WorkbenchParams& params) {
  {
    QSettings s(dir.filePath("round.ini"), QSettings::IniFormat);
    s.clear();
    save_params(s, params);
  }
  const QSettings read(dir.filePath("round.ini"), QSettings::IniFormat);
  return restore_params(read);
}

inline QList<QPointF> points(QAbstractSeries* series) {
  auto* xy = qobject_cast<QXYSeries*>(series);
  return xy ? xy->points() : QList<QPointF>{};
}

}  // namespace flashio::gui::test
