// Every chart a window draws is freed with the window (docs/gui.md): a ChartPanel draws on the
// chart its QChartView made, which lives in the view's scene; none is left behind when a window
// closes (LeakSanitizer found the charts that setChart had replaced never deleted).
#include <catch2/catch.hpp>

#include <QChart>

#include "gui/chart_panel.h"
#include "gui_test_support.h"

using namespace flashio::gui;

TEST_CASE("each chart panel's chart is destroyed when its window is deleted", "[gui][charts]") {
  auto window = test::make_window();
  REQUIRE(test::wait_data(*window));
  const QList<ChartPanel*> panels = window->findChildren<ChartPanel*>();
  REQUIRE(panels.size() >= 5);  // the block-size view's three and the scaling view's two
  int destroyed = 0;
  for (ChartPanel* panel : panels) {
    // The panel draws on its view's own chart, the one the view's scene deletes.
    REQUIRE(panel->chart() != nullptr);
    CHECK(panel->scene()->items().contains(panel->chart()));
    QObject::connect(panel->chart(), &QObject::destroyed, [&destroyed] { ++destroyed; });
  }
  window.reset();
  CHECK(destroyed == panels.size());
}

TEST_CASE("a chart panel deleted on its own frees its chart", "[gui][charts]") {
  for (int i = 0; i < 3; ++i) {
    auto* panel = new ChartPanel(QString("panel %1 of N = 97").arg(i));
    bool gone = false;
    QObject::connect(panel->chart(), &QObject::destroyed, [&gone] { gone = true; });
    CHECK(panel->chart()->title() == QString("panel %1 of N = 97").arg(i));
    delete panel;
    CHECK(gone);
  }
}
