// The data behind the charts: slopes against Theorem 2, log axes, command line, sizes.
#include <catch2/catch.hpp>

#include <QLogValueAxis>
#include <QProcess>
#include <QTemporaryDir>

#include "gui/block_size_view.h"
#include "gui/chart_panel.h"
#include "gui/command_line.h"
#include "gui/main_window.h"
#include "gui/parameter_panel.h"
#include "gui/size_text.h"
#include "gui/workbench_data.h"
#include "gui_test_support.h"
#include "sim/cache_replay.h"

using namespace flashio;
using namespace flashio::gui;

TEST_CASE("the slope fit recovers a power law's exponent", "[gui][fit]") {
  std::vector<std::pair<double, double>> pts;
  for (double x = 3; x < 5000; x *= 1.7) pts.emplace_back(x, 5.0 * x * x);
  const SlopeFit fit = fit_log_slope(pts, 0, 1e9);
  CHECK(fit.points == static_cast<int>(pts.size()));
  CHECK(fit.slope == Approx(2.0).epsilon(1e-12));
  CHECK(fit_log_slope(pts, 10, 10).points == 0);  // one point cannot give a slope
}

TEST_CASE("io's fitted slopes approach Theorem 2's: 2 in N and -1 in M", "[gui][fit]") {
  WorkbenchParams p;
  p.algos = {sim::Algo::flash1, sim::Algo::flash2};
  p.problem.headdim = 64;
  p.problem.seqlen = 16384;  // M ≪ N·d, the range where the N²d²/M term dominates
  const WorkbenchData data = compute_workbench(p);
  for (const auto& f : data.seqlen_fits) {
    INFO(sim::to_string(f.algo));
    REQUIRE(f.points >= 3);
    CHECK(f.slope == Approx(2.0).margin(0.1));
  }
  for (const auto& f : data.sram_fits) {
    INFO(sim::to_string(f.algo));
    REQUIRE(f.points >= 3);
    CHECK(f.slope == Approx(-1.0).margin(0.1));
  }
  CHECK(data.crossover_sram_bytes == 64.0 * 64.0 * 2.0);
}

TEST_CASE("a value <= 0 never reaches a log axis", "[gui][chart]") {
  ChartPanel panel("t");
  panel.clear();
  std::vector<ChartPoint> pts = {{1, 0, {}, {}}, {2, 10, {}, {}}, {4, 1000, {}, {}},
                                 {8, -5, {}, {}}, {64, 1e6, {}, {}}};
  QAbstractSeries* s = panel.add_series("s", SeriesKind::model, Qt::black, pts);
  panel.finish({"x", AxisQuantity::count, {}}, {"y", AxisQuantity::bytes, {}});
  CHECK(panel.y_is_log());
  CHECK(panel.x_is_log());
  const auto kept = test::points(s);
  REQUIRE(kept.size() == 3);
  for (const auto& p : kept) CHECK(p.y() > 0);
  bool has_log_axis = false;
  for (auto* axis : s->attachedAxes()) has_log_axis |= qobject_cast<QLogValueAxis*>(axis) != nullptr;
  CHECK(has_log_axis);

  // A series with no drawable point is not added at all (no empty legend entry).
  panel.clear();
  CHECK(panel.add_series("none", SeriesKind::measured, Qt::black, {{4, 0, {}, {}}, {-1, 3, {}, {}}}) == nullptr);
  CHECK(panel.series_named("none") == nullptr);
}

TEST_CASE("the L2-model curves arrive off the GUI thread with sim's replay numbers",
          "[gui][cache]") {
  WindowOptions options;
  options.use_settings = false;
  options.cache_curves = true;
  MainWindow window(options);
  WorkbenchParams p;
  p.problem.batch = 1;
  p.problem.heads = 2;
  p.problem.seqlen = 300;
  p.algos = {sim::Algo::flash1, sim::Algo::flash2};
  p.sweep_min = 32;
  p.sweep_max = 128;
  p.sram_bytes = sim::hardware_preset(p.hw_name).sram_bytes;  // the panel always shows an M
  window.set_params(p);
  REQUIRE(window.panel()->params() == p);
  QSignalSpy cache(&window, &MainWindow::cache_ready_signal);
  for (int k = 0; k < 200 && !(window.cache_ready() && window.data()->params == p); ++k)
    cache.wait(1000);
  REQUIRE(window.cache_ready());
  REQUIRE(window.data()->params == p);
  for (const sim::Algo algo : p.algos) {
    const auto dram = test::points(window.block_view()->bytes_chart()->series_named(
        "dram L2 model " + QString::fromStdString(sim::to_string(algo))));
    REQUIRE(dram.size() == 3);
    for (const auto& pt : dram) {
      sim::Config c = current_config(p, algo);
      c.tiling = sweep_tiling(p, algo, static_cast<int64_t>(pt.x()));
      double expected = -1;
      for (const auto& row : sim::cache_rows(sim::replay_cache(c)))
        if (row.is_total()) expected = *row.dram_read_bytes + *row.dram_write_bytes;
      CHECK(pt.y() == expected);
    }
  }
}

TEST_CASE("sizes parse in the runner's units", "[gui][options]") {
  CHECK(parse_size_bytes("227KiB") == 232448);
  CHECK(parse_size_bytes("192KB") == 192000);
  CHECK(parse_size_bytes("1MiB") == 1048576);
  CHECK(parse_size_bytes("4096") == 4096);
  CHECK(parse_size_bytes("0") == std::nullopt);
  CHECK(parse_size_bytes("12 parsecs") == std::nullopt);
  CHECK(parse_size_bytes("") == std::nullopt);
}

TEST_CASE("the command line takes the runner's options and names the bad one", "[gui][options]") {
  const auto ok = parse_command_line({"--algo", "flash1,flash2", "--seqlen", "1025", "--headdim=40",
                                      "--causal", "--sram", "100KiB", "--block-r", "64",
                                      "--hw", "a100-40gb", "--view", "scaling"});
  REQUIRE(ok.error.empty());
  CHECK(ok.line.params.algos == std::vector<sim::Algo>{sim::Algo::flash1, sim::Algo::flash2});
  CHECK(ok.line.params.problem.seqlen == 1025);
  CHECK(ok.line.params.problem.headdim == 40);
  CHECK(ok.line.params.problem.causal);
  CHECK(ok.line.params.sram_bytes == 102400);
  CHECK(ok.line.params.block_r == 64);
  CHECK(ok.line.params.hw_name == "a100-40gb");
  CHECK(ok.line.view == "scaling");
  struct Bad { QStringList args; std::string names; };
  for (const Bad& bad : {Bad{{"--seqlen", "0"}, "--seqlen"}, Bad{{"--dtype", "fp8"}, "--dtype"},
                         Bad{{"--view", "pie"}, "--view"}, Bad{{"--hw", "tpu"}, "--hw"},
                         Bad{{"--sram", "lots"}, "--sram"}, Bad{{"--algo", "flash3"}, "--algo"},
                         Bad{{"--frobnicate"}, "--frobnicate"}, Bad{{"--seqlen"}, "--seqlen"}}) {
    const auto r = parse_command_line(bad.args);
    INFO(bad.args.join(" ").toStdString() << " -> " << r.error);
    CHECK(r.error.find(bad.names) != std::string::npos);
  }
}

TEST_CASE("flashio-gui exits 2 with one line for bad input and writes no screenshot",
          "[gui][options]") {
  QTemporaryDir dir;
  const QString png = dir.filePath("shot.png");
  QProcess process;
  process.start(FLASHIO_GUI_EXE, {"--screenshot", png, "--dtype", "fp8"});
  REQUIRE(process.waitForFinished(60000));
  CHECK(process.exitCode() == 2);
  const QString err = QString::fromLocal8Bit(process.readAllStandardError()).trimmed();
  CHECK(err.count('\n') == 0);
  CHECK(err.contains("--dtype"));
  CHECK_FALSE(QFile::exists(png));

  // A malformed --results file: same, naming the file's line.
  const QString csv = dir.filePath("bad.csv");
  QFile f(csv);
  REQUIRE(f.open(QIODevice::WriteOnly));
  f.write("source,algo,pass,kernel,dtype,seqlen\nmeasured,flash2,fwd,total,fp16,many\n");
  f.close();
  process.start(FLASHIO_GUI_EXE, {"--screenshot", png, "--no-cache", "--results", csv});
  REQUIRE(process.waitForFinished(60000));
  CHECK(process.exitCode() == 2);
  CHECK(QString::fromLocal8Bit(process.readAllStandardError()).contains("bad.csv:2:"));
  CHECK_FALSE(QFile::exists(png));
}

TEST_CASE("flashio-gui --screenshot renders the window to a PNG", "[gui][options]") {
  QTemporaryDir dir;
  const QString png = dir.filePath("shot.png");
  QProcess process;
  process.start(FLASHIO_GUI_EXE, {"--screenshot", png, "--no-cache", "--seqlen", "97",
                                  "--view", "tiling"});
  REQUIRE(process.waitForFinished(60000));
  CHECK(process.exitCode() == 0);
  const QImage image(png);
  CHECK(image.width() > 1000);
  CHECK(image.height() > 600);
}

TEST_CASE("flashio-gui --screenshot computes the L2-model curves only for the view that draws them, reports "
          "their progress, and prints no Qt warning",
          "[gui][options]") {
  QTemporaryDir dir;
  const QString png = dir.filePath("shot.png");
  const QStringList small = {"--batch", "1", "--heads", "2", "--seqlen", "97", "--headdim", "40"};
  QProcess process;
  // Without QT_QPA_PLATFORM or XDG_RUNTIME_DIR set, as a user's shell may be.
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.remove("QT_QPA_PLATFORM");
  env.remove("XDG_RUNTIME_DIR");
  process.setProcessEnvironment(env);
  process.start(FLASHIO_GUI_EXE, QStringList{"--screenshot", png, "--view", "scaling"} + small);
  REQUIRE(process.waitForFinished(120000));
  CHECK(process.exitCode() == 0);
  const QString scaling_err = QString::fromLocal8Bit(process.readAllStandardError());
  INFO(scaling_err.toStdString());
  CHECK_FALSE(scaling_err.contains("L2 model"));  // the scaling view draws no L2-model curve
  CHECK(scaling_err.trimmed().isEmpty());         // and Qt said nothing
  CHECK(QFile::exists(png));
  process.start(FLASHIO_GUI_EXE, QStringList{"--screenshot", png, "--view", "block"} + small);
  REQUIRE(process.waitForFinished(120000));
  CHECK(process.exitCode() == 0);
  const QString block_err = QString::fromLocal8Bit(process.readAllStandardError());
  INFO(block_err.toStdString());
  for (const QString& line : block_err.split('\n', Qt::SkipEmptyParts))
    CHECK(line.startsWith("flashio-gui: L2 model "));  // progress, and nothing else
}
