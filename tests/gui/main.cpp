// Catch2 main with a QApplication: the widgets need one. Listing the tests (catch_discover_tests
// at build time) must work with no display, so offscreen is the default here too.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <QApplication>

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  int qt_argc = 1;
  QApplication app(qt_argc, argv);
  return Catch::Session().run(argc, argv);
}
