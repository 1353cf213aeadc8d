// flashio-gui-bench: the speed figures of docs/gui.md ("Speed"), measured, not
// asserted. (1) window open: from constructing the window to its first frame with the
// closed-form curves drawn; (2) parameter change: from setting N in the panel to the
// closed-form curves redrawn and painted, over a series of N values (median and worst).
// (3) tiling map: the closed form of one map's 64 cells (compute_tiling_map), and a parameter
// change to the repainted map view (every map of the default problem); with --with-cache, also
// the L2 model's dram cells of a small problem, computed in the view's background pool.
// Run offscreen: QT_QPA_PLATFORM=offscreen ./flashio-gui-bench [--with-cache] [--repeats K]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QSpinBox>
#include <QThreadPool>
#include <QTimer>

#include "gui/block_size_view.h"
#include "gui/main_window.h"
#include "gui/parameter_panel.h"
#include "gui/tiling_map_data.h"
#include "gui/tiling_map_view.h"

namespace {

// CPU time of the whole process (all threads), to tell work from waiting on a loaded machine.
double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

bool wait_data(flashio::gui::MainWindow& window, int timeout_ms) {
  QEventLoop loop;
  bool fired = false;
  QObject::connect(&window, &flashio::gui::MainWindow::data_ready, &loop, [&] {
    fired = true;
    loop.quit();
  });
  QTimer::singleShot(timeout_ms, &loop, &QEventLoop::quit);
  loop.exec();
  return fired;
}

}  // namespace

int main(int argc, char** argv) {
  bool with_cache = false, blocksparse = false;
  int repeats = 20;
  for (int k = 1; k < argc; ++k) {
    if (std::strcmp(argv[k], "--with-cache") == 0) with_cache = true;
    else if (std::strcmp(argv[k], "--blocksparse") == 0) blocksparse = true;
    else if (std::strcmp(argv[k], "--repeats") == 0 && k + 1 < argc) repeats = std::atoi(argv[++k]);
  }
  QElapsedTimer process;
  process.start();
  QApplication app(argc, argv);
  const double app_ms = static_cast<double>(process.nsecsElapsed()) / 1e6;

  flashio::gui::WindowOptions options;
  options.use_settings = false;
  options.cache_curves = with_cache;
  QElapsedTimer open;
  const double open_cpu0 = cpu_ms();
  open.start();
  flashio::gui::MainWindow window(options);
  window.resize(1500, 950);
  window.show();
  if (!window.data() && !wait_data(window, 10000)) {
    std::fprintf(stderr, "flashio-gui-bench: the first data never arrived\n");
    return 1;
  }
  window.repaint();
  const double open_ms = static_cast<double>(open.nsecsElapsed()) / 1e6;
  const double open_cpu_ms = cpu_ms() - open_cpu0;

  std::vector<double> change_ms, change_cpu_ms;
  QSpinBox* seqlen = window.panel()->seqlen_box();
  const int values[] = {1025, 2048, 97, 4096, 1024};
  const int blocksparse_values[] = {4096, 8192, 16384, 6000, 12288};
  if (blocksparse) {
    // blocksparse ticked beside the default algorithms, its mask the panel's, at long N.
    flashio::gui::WorkbenchParams p = window.panel()->params();
    p.algos.push_back(flashio::sim::Algo::blocksparse);
    window.set_params(p);
    if (!wait_data(window, 60000)) return 1;
  }
  for (int r = 0; r < repeats; ++r) {
    QElapsedTimer change;
    const double cpu0 = cpu_ms();
    change.start();
    seqlen->setValue(blocksparse ? blocksparse_values[r % 5] : values[r % 5]);
    if (!wait_data(window, 60000)) {
      std::fprintf(stderr, "flashio-gui-bench: no redraw after a change\n");
      return 1;
    }
    window.repaint();  // paint the redrawn charts now, inside the measured time
    change_ms.push_back(static_cast<double>(change.nsecsElapsed()) / 1e6);
    change_cpu_ms.push_back(cpu_ms() - cpu0);
  }
  std::sort(change_ms.begin(), change_ms.end());
  std::sort(change_cpu_ms.begin(), change_cpu_ms.end());

  // (3) The tiling map. One map's 64 closed-form cells, on this thread, for the default problem.
  const flashio::gui::WorkbenchParams map_params = window.panel()->params();
  std::vector<double> map_ms, map_cpu_ms;
  size_t map_cells = 0;
  for (int r = 0; r < repeats; ++r) {
    QElapsedTimer t;
    const double cpu0 = cpu_ms();
    t.start();
    const auto map = flashio::gui::compute_tiling_map(map_params, flashio::sim::Algo::flash2,
                                                      flashio::sim::Pass::fwd);
    map_ms.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    map_cpu_ms.push_back(cpu_ms() - cpu0);
    map_cells = map.cells.size();
  }
  std::sort(map_ms.begin(), map_ms.end());
  std::sort(map_cpu_ms.begin(), map_cpu_ms.end());
  // The most the view computes at once: both passes of flash1, flash2 and blocksparse.
  flashio::gui::WorkbenchParams all_params = map_params;
  all_params.problem.pass = flashio::sim::Pass::fwdbwd;
  all_params.algos = {flashio::sim::Algo::flash1, flashio::sim::Algo::flash2, flashio::sim::Algo::blocksparse};
  QElapsedTimer bwd_timer;
  bwd_timer.start();
  (void)flashio::gui::compute_tiling_map(map_params, flashio::sim::Algo::flash2, flashio::sim::Pass::bwd);
  const double bwd_ms = static_cast<double>(bwd_timer.nsecsElapsed()) / 1e6;
  QElapsedTimer all_timer;
  all_timer.start();
  const auto all_maps = flashio::gui::compute_tiling_maps(all_params);
  const double all_ms = static_cast<double>(all_timer.nsecsElapsed()) / 1e6;
  // The map view shown: a change of N to the repainted maps (the view computes its cells when
  // the closed-form data arrives).
  window.show_view("map");
  flashio::gui::TilingMapView* map_view = window.map_view();
  std::vector<double> map_change_ms;
  for (int r = 0; r < repeats; ++r) {
    QElapsedTimer change;
    change.start();
    seqlen->setValue(values[(r + 1) % 5]);
    if (!wait_data(window, 10000)) {
      std::fprintf(stderr, "flashio-gui-bench: no map redraw after a change\n");
      return 1;
    }
    window.repaint();
    map_change_ms.push_back(static_cast<double>(change.nsecsElapsed()) / 1e6);
  }
  std::sort(map_change_ms.begin(), map_change_ms.end());
  size_t view_cells = 0;
  for (const auto& m : map_view->maps()) view_cells += m.cells.size();
  // The L2 model's dram cells of a small problem (B = H = 1, N = 1024), in the background.
  double l2_first_ms = -1, l2_all_ms = -1;
  int l2_cells = 0;
  if (with_cache) {
    flashio::gui::WorkbenchParams small = map_params;
    small.problem.batch = 1;
    small.problem.heads = 1;
    small.problem.seqlen = 1024;
    window.set_params(small);
    if (!wait_data(window, 10000)) return 1;
    QElapsedTimer l2;
    l2.start();
    map_view->set_quantity(flashio::gui::MapQuantity::dram);
    QEventLoop loop;
    QObject::connect(map_view, &flashio::gui::TilingMapView::cache_finished, &loop, &QEventLoop::quit);
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
      if (l2_first_ms < 0 && map_view->cache_cells_done() > 0)
        l2_first_ms = static_cast<double>(l2.nsecsElapsed()) / 1e6;
    });
    poll.start(5);
    QTimer::singleShot(600000, &loop, &QEventLoop::quit);
    if (!map_view->cache_done()) loop.exec();
    l2_all_ms = static_cast<double>(l2.nsecsElapsed()) / 1e6;
    l2_cells = map_view->cache_cells_done();
  }
  std::printf("platform %s, L2-model curves %s%s\n", qPrintable(QApplication::platformName()),
              with_cache ? "computing in the background" : "off",
              blocksparse ? "; blocksparse ticked, N changing over 4096-16384" : "");
  std::printf("QApplication start: %.1f ms\n", app_ms);
  std::printf("window open (construct, show, closed-form curves drawn, painted): %.1f ms wall, "
              "%.1f ms CPU\n", open_ms, open_cpu_ms);
  std::printf("parameter change to repainted closed-form curves over %d changes: median %.1f ms, "
              "worst %.1f ms (last compute %.1f ms, last redraw of all views %.1f ms)\n",
              repeats, change_ms[change_ms.size() / 2], change_ms.back(), window.last_compute_ms(),
              window.last_redraw_ms());
  std::printf("  CPU time per change (all threads; with --with-cache it includes the replays): "
              "median %.1f ms, worst %.1f ms\n",
              change_cpu_ms[change_cpu_ms.size() / 2], change_cpu_ms.back());
  std::printf("tiling map: closed form of one map (%zu cells, flash2 fwd) over %d runs: median "
              "%.1f ms wall, %.1f ms CPU; worst %.1f ms wall\n",
              map_cells, repeats, map_ms[map_ms.size() / 2], map_cpu_ms[map_cpu_ms.size() / 2],
              map_ms.back());
  std::printf("tiling map: one backward map (64 cells, flash2 bwd): %.1f ms wall\n", bwd_ms);
  std::printf("tiling map: every map of fwdbwd with flash1, flash2, blocksparse (%zu maps, %zu "
              "cells, in parallel on %d threads): %.1f ms wall\n", all_maps.size(),
              all_maps.size() * map_cells, QThreadPool::globalInstance()->maxThreadCount(), all_ms);
  std::printf("tiling map view shown: parameter change to repainted maps (%zu cells) over %d "
              "changes: median %.1f ms, worst %.1f ms\n",
              view_cells, repeats, map_change_ms[map_change_ms.size() / 2], map_change_ms.back());
  if (with_cache)
    std::printf("tiling map, L2 model (B=H=1, N=1024): %d dram cells in the background, first "
                "after %.0f ms, all after %.0f ms\n", l2_cells, l2_first_ms, l2_all_ms);
  return 0;
}
