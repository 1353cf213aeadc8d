// The parameter panel and the window's controls as a user meets them: M typed with units, standard
// attention kept when M < d, Cancel ending the L2 model's "computing…", and the whole panel on
// screen at the default window size.
#include <catch2/catch.hpp>

#include <QApplication>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>

#include "gui/block_size_view.h"
#include "gui/main_window.h"
#include "gui/parameter_panel.h"
#include "gui/size_spin_box.h"
#include "gui_test_support.h"

using namespace flashio;
using namespace flashio::gui;

TEST_CASE("the M box reads sizes with units as --sram does: 100KiB is 102,400 B, 192KB 192,000 B", "[gui][controls]") {
  CHECK(size_box_bytes("100KiB") == 102400);
  CHECK(size_box_bytes("192KB") == 192000);
  CHECK(size_box_bytes("4,096 B") == 4096);  // the box's own display
  CHECK(size_box_bytes("227 KiB") == 232448);
  CHECK(size_box_bytes("12 parsecs") == -1);
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  QSpinBox* m = window->panel()->sram_box();
  m->findChild<QLineEdit*>()->setText("100KiB");
  m->interpretText();
  CHECK(m->value() == 102400);
  CHECK(m->text() == "102,400 B");
  m->findChild<QLineEdit*>()->setText("3MiB");
  m->interpretText();
  CHECK(m->value() == 3 * 1024 * 1024);
  REQUIRE(test::wait_data(*window));
  CHECK(window->data()->params.sram_bytes == 3 * 1024 * 1024);
}

TEST_CASE("with M smaller than d standard attention (which has no tiles) stays in the block-size sweep",
          "[gui][controls]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  WorkbenchParams params = window->panel()->params();
  params.problem.headdim = 64;
  params.sram_bytes = 64;  // 32 fp16 elements < d = 64: no FlashAttention tiling fits
  window->panel()->set_params(params);
  REQUIRE(test::wait_data(*window));
  int standard = 0, tiled = 0;
  for (const PlotRow& p : window->data()->block_rows)
    if (p.row.source == sim::RowSource::model) {
      standard += p.row.algo == sim::RowAlgo::standard;
      tiled += p.row.algo != sim::RowAlgo::standard;
    }
  CHECK(standard > 0);
  CHECK(tiled == 0);
}

TEST_CASE("Cancel on the L2 model's curves ends their 'computing…' note", "[gui][controls]") {
  auto window = test::make_window(/*cache=*/true);
  REQUIRE(test::wait_data(*window));
  QApplication::processEvents();
  const auto note_text = [&] {
    for (QLabel* l : window->block_view()->findChildren<QLabel*>())
      if (l->text().contains("L2-model curves")) return l->text();
    return QString();
  };
  // The default problem (B = 64, H = 16, N = 1024) replays for seconds (its flash1 16 x 16
  // configuration alone takes several), so the curves are still being computed here.
  REQUIRE_FALSE(window->cache_ready());
  REQUIRE(note_text().contains("computing"));
  QPushButton* cancel = nullptr;
  for (QPushButton* b : window->findChildren<QPushButton*>())
    if (b->text() == "Cancel") cancel = b;
  REQUIRE(cancel != nullptr);
  cancel->click();
  QApplication::processEvents();
  CHECK_FALSE(note_text().contains("computing"));
  CHECK_FALSE(cancel->isVisible());
}

TEST_CASE("at the default window size the whole parameter panel, down to its tiling row, is on screen",
          "[gui][controls]") {
  WindowOptions options;
  options.use_settings = false;
  options.cache_curves = false;
  MainWindow window(options);  // its own default size
  window.show();
  QApplication::processEvents();
  QScrollArea* scroll = nullptr;
  for (QScrollArea* s : window.findChildren<QScrollArea*>())
    if (s->widget() == window.panel()) scroll = s;
  REQUIRE(scroll != nullptr);
  for (QWidget* w : {static_cast<QWidget*>(window.panel()->block_r_box()), static_cast<QWidget*>(window.panel()->block_c_box())}) {
    const QRect in_viewport(w->mapTo(scroll->viewport(), QPoint(0, 0)), w->size());
    INFO("bottom " << in_viewport.bottom() << " of a viewport " << scroll->viewport()->height() << " high");
    CHECK(scroll->viewport()->rect().contains(in_viewport));
  }
}
