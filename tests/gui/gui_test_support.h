// Helpers shared by the GUI tests: a window without settings, and waiting for its signals.
#pragma once
#include <memory>

#include <optional>

#include <string>

#include <catch2/catch.hpp>

#include <QFile>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QXYSeries>

#include "gui/field_label.h"
#include "gui/main_window.h"
#include "gui/params_settings.h"
#include "sim/errors.h"

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

// A problem every swept tiling of the sweep 16 … 128 fits (so every block-size job is sim's to
// accept or refuse, not left out for M), small enough to compute quickly: d = 64.
inline WorkbenchParams small_params(int64_t batch = 2, int64_t heads = 2, int64_t seqlen = 256) {
  WorkbenchParams p;
  p.problem.batch = batch;
  p.problem.heads = heads;
  p.problem.seqlen = seqlen;
  p.problem.headdim = 64;
  p.sweep_min = 16;
  p.sweep_max = 128;
  return p;
}

// sim's refusal of the panel's Config for `algo`, as the GUI words it (error_message: the field by
// the panel's label), prefixed with the algorithm as the block-size view's note lists it; empty
// when sim accepts it.
inline std::string refusal(const WorkbenchParams& p, sim::Algo algo) {
  try {
    sim::validate(current_config(p, algo));
  } catch (const sim::InvalidInput& e) {
    return sim::to_string(algo) + ": " + error_message(e);
  }
  return {};
}

// The real program refusing `args` as bad input: status 2, one line on stderr that contains
// `says`, and no screenshot written (it runs with --screenshot into a folder of its own).
inline void check_refused_in_one_line(const QStringList& args, const QString& says) {
  QTemporaryDir dir;
  const QString png = dir.filePath("shot.png");
  QProcess process;
  process.start(FLASHIO_GUI_EXE, QStringList{"--screenshot", png} + args);
  REQUIRE(process.waitForFinished(60000));
  CHECK(process.exitCode() == 2);
  const QString err = QString::fromLocal8Bit(process.readAllStandardError()).trimmed();
  INFO(err.toStdString());
  CHECK(err.count('\n') == 0);
  CHECK(err.contains(says));
  CHECK_FALSE(QFile::exists(png));
}

inline QList<QPointF> points(QAbstractSeries* series) {
  auto* xy = qobject_cast<QXYSeries*>(series);
  return xy ? xy->points() : QList<QPointF>{};
}

}  // namespace flashio::gui::test
