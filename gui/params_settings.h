// The panel's parameters in QSettings (flashio/flashio-gui): the keys the window saves on close
// and restores on open (problem/*, hw/*, algos, blocks/*), in one place so that a field added to
// WorkbenchParams is saved and restored together, and tests can round-trip them in a file of
// their own.
#pragma once
#include <optional>

#include <QSettings>

#include "gui/workbench_params.h"

namespace flashio::gui {

void save_params(QSettings& settings, const WorkbenchParams& params);
// The saved parameters; nullopt when none were saved. Keys a settings file lacks (one written
// before they existed) take WorkbenchParams' defaults: problem/kv_heads and problem/seqlen_k 0
// (the same as H and N), problem/gqa_pack true, problem/dropout 0 (none), problem/mask false,
// problem/varlen false (the padded layout), blocks/kernel empty (the default family).
std::optional<WorkbenchParams> restore_params(const QSettings& settings);

}  // namespace flashio::gui
