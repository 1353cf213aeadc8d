// flashio-gui: the desktop workbench (docs/gui.md). A thin main over gui/: parse the runner's
// options, open the window, or render it offscreen to a PNG with --screenshot FILE.
#include <iostream>

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QSaveFile>
#include <QTemporaryDir>
#include <QTimer>

#include "gui/command_line.h"
#include "gui/main_window.h"
#include "gui/parameter_panel.h"
#include "gui/tiling_view.h"

namespace {

// --screenshot renders offscreen, where Qt's offscreen platform says it ignores a window's size
// hints each time a dock or splitter sets them; that is what an offscreen window is, not a
// problem of the run, so only that message is dropped. Every other message is printed as Qt
// would print it.
void screenshot_messages(QtMsgType type, const QMessageLogContext& context, const QString& message) {
  if (message == QLatin1String("This plugin does not support propagateSizeHints()")) return;
  std::cerr << qFormatLogMessage(type, context, message).toLocal8Bit().constData() << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace flashio::gui;
  QStringList arguments;
  for (int k = 1; k < argc; ++k) arguments << QString::fromLocal8Bit(argv[k]);
  const ParseResult parsed = parse_command_line(arguments);
  if (!parsed.error.empty()) {
    std::cerr << "flashio-gui: " << parsed.error << "\n";
    return 2;
  }
  const CommandLine& cl = parsed.line;
  if (cl.help) {
    std::cout << usage_text();
    return 0;
  }
  const bool screenshot = !cl.screenshot_path.isEmpty();
  if (screenshot && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  // Qt wants a private runtime directory and warns when XDG_RUNTIME_DIR names none: give it one
  // of its own (mode 0700) rather than let it warn on every run without a desktop session.
  QTemporaryDir runtime_dir;
  if (qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR") && runtime_dir.isValid()) {
    QFile::setPermissions(runtime_dir.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    qputenv("XDG_RUNTIME_DIR", runtime_dir.path().toLocal8Bit());
  }
  if (screenshot) qInstallMessageHandler(screenshot_messages);
  int qt_argc = 1;  // our options are parsed above; Qt sees only the program name
  QApplication app(qt_argc, argv);
  QApplication::setOrganizationName("flashio");
  QApplication::setApplicationName("flashio-gui");

  WindowOptions options;
  options.use_settings = !screenshot;
  // A screenshot computes only what its view draws: the L2-model curves are the block-size
  // view's (the first tab, shown when no --view is given).
  options.cache_curves = !cl.no_cache && (!screenshot || cl.view.isEmpty() || cl.view == "block");
  MainWindow window(options);
  if (cl.params_given || screenshot) window.set_params(cl.params);
  for (const QString& path : cl.results_paths) {
    QString error;
    if (!window.load_results_file(path, &error)) {
      std::cerr << "flashio-gui: --results " << error.toStdString() << "\n";
      return 2;
    }
  }
  if (!cl.view.isEmpty()) window.show_view(cl.view);

  if (!screenshot) {
    window.show();
    return QApplication::exec();
  }
  window.resize(1680, 1050);
  window.show();
  // Wait until the drawn data is the requested configuration's, and the L2-model curves are
  // part of the picture when they arrive within three minutes.
  QElapsedTimer waited;
  waited.start();
  auto ready = [&] {
    return window.data() && window.data()->params == window.panel()->params() &&
           (!options.cache_curves || window.cache_ready());
  };
  std::pair<int, int> reported{-1, -1};
  while (!ready() && waited.elapsed() < 180000) {
    QEventLoop loop;
    QTimer::singleShot(100, &loop, &QEventLoop::quit);
    loop.exec();
    // Progress on stderr while the L2 model replays the sweep (the slow part).
    const auto progress = window.cache_progress();
    if (progress.second > 0 && progress != reported) {
      std::cerr << "flashio-gui: L2 model " << progress.first << "/" << progress.second << " configurations, "
                << waited.elapsed() / 1000 << " s\n";
      reported = progress;
    }
  }
  if (!window.data()) {
    std::cerr << "flashio-gui: --screenshot: the closed-form data never arrived\n";
    return 1;
  }
  if (cl.view == "tiling") {
    TilingView* tiling = window.tiling_view();
    tiling->reset();
    const int target = cl.tiling_step >= 0 ? cl.tiling_step : tiling->step_count() - 1;
    while (tiling->step_index() < target && tiling->step_index() + 1 < tiling->step_count())
      tiling->step();
  }
  QApplication::processEvents();
  const QPixmap pixmap = window.grab();
  QSaveFile file(cl.screenshot_path);
  if (!file.open(QIODevice::WriteOnly) || !pixmap.save(&file, "PNG") || !file.commit()) {
    std::cerr << "flashio-gui: --screenshot cannot write " << cl.screenshot_path.toStdString() << "\n";
    return 1;
  }
  std::cout << "wrote " << cl.screenshot_path.toStdString() << "\n";
  return 0;
}
