#include "profiler/range_profiler.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>

#include "profiler/driver_api.h"
#include "profiler/profiler_error.h"

namespace flashio::profiler {
namespace {

std::string cupti_text(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s ? s : ("CUPTI error " + std::to_string(static_cast<int>(r)));
}

// Sorts a CUPTI failure into the user's situation (exit 2) or a failure while measuring.
[[noreturn]] void fail(CUptiResult r, const char* call) {
  const std::string what = std::string(call) + ": " + cupti_text(r);
  switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      throw ProfilerError(ErrorKind::insufficient_privileges,
                          "GPU performance counters need more privileges here (" + what +
                              "); run as root or load the driver with "
                              "NVreg_RestrictProfilingToAdminUsers=0");
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      throw ProfilerError(ErrorKind::other_client,
                          "another CUPTI client is attached (" + what +
                              "); do not run flashio profile under ncu or nsys: use flashio bench "
                              "under ncu instead");
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_NOT_SUPPORTED:
      throw ProfilerError(ErrorKind::unsupported_device,
                          "this GPU cannot be profiled (" + what +
                              "); a MIG instance, a vGPU without profiling, or compute capability "
                              "< 7.0 is not supported");
    default:
      throw ProfilerError(ErrorKind::cuda_failure, what);
  }
}

#define FLASHIO_CUPTI(call)                     \
  do {                                          \
    const CUptiResult flashio_r_ = (call);      \
    if (flashio_r_ != CUPTI_SUCCESS) fail(flashio_r_, #call); \
  } while (0)

void check_cuda(cudaError_t e, const char* call) {
  if (e != cudaSuccess)
    throw ProfilerError(ErrorKind::cuda_failure, std::string(call) + ": " + cudaGetErrorString(e));
}

// CUPTI's parameter structs: every field zero (pPriv and whatever a call does not use must be
// NULL or 0) and structSize set. Braces with only the size left the other fields to implicit
// zeroing, which -Wextra reports field by field.
template <typename T>
T cupti_params(size_t struct_size) {
  T p{};
  p.structSize = struct_size;
  return p;
}
#define FLASHIO_CUPTI_PARAMS(T) cupti_params<T>(T##_STRUCT_SIZE)

// One CUPTI host object: turns metric names into a configuration image and evaluates counter
// data into metric values.
class HostObject {
 public:
  HostObject(const std::string& chip, const std::vector<uint8_t>& availability) {
    auto p = FLASHIO_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability.data();
    FLASHIO_CUPTI(cuptiProfilerHostInitialize(&p));
    host_ = p.pHostObject;
  }
  ~HostObject() {
    auto p = FLASHIO_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    p.pHostObject = host_;
    cuptiProfilerHostDeinitialize(&p);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  CUptiResult add(const std::vector<const char*>& names) {
    auto p = FLASHIO_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
    p.pHostObject = host_;
    p.ppMetricNames = const_cast<const char**>(names.data());
    p.numMetrics = names.size();
    return cuptiProfilerHostConfigAddMetrics(&p);
  }
  std::vector<uint8_t> config_image() {
    auto s = FLASHIO_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
    s.pHostObject = host_;
    FLASHIO_CUPTI(cuptiProfilerHostGetConfigImageSize(&s));
    std::vector<uint8_t> image(s.configImageSize);
    auto g = FLASHIO_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
    g.pHostObject = host_;
    g.configImageSize = image.size();
    g.pConfigImage = image.data();
    FLASHIO_CUPTI(cuptiProfilerHostGetConfigImage(&g));
    return image;
  }
  static size_t passes(std::vector<uint8_t>& image) {
    auto p = FLASHIO_CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
    p.configImageSize = image.size();
    p.pConfigImage = image.data();
    FLASHIO_CUPTI(cuptiProfilerHostGetNumOfPasses(&p));
    return p.numOfPasses;
  }
  std::vector<double> evaluate(const std::vector<uint8_t>& data, size_t range,
                               const std::vector<const char*>& names) {
    std::vector<double> values(names.size(), std::numeric_limits<double>::quiet_NaN());
    auto p = FLASHIO_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
    p.pHostObject = host_;
    p.pCounterDataImage = data.data();
    p.counterDataImageSize = data.size();
    p.rangeIndex = range;
    p.ppMetricNames = const_cast<const char**>(names.data());
    p.numMetrics = names.size();
    p.pMetricValues = values.data();
    FLASHIO_CUPTI(cuptiProfilerHostEvaluateToGpuValues(&p));
    return values;
  }

 private:
  CUpti_Profiler_Host_Object* host_ = nullptr;
};

// One configuration image holding a list of metrics, and the host object that evaluates it.
struct MetricConfig {
  std::vector<std::string> metrics;  // owns the strings `names` points to
  std::vector<const char*> names;
  std::unique_ptr<HostObject> host;
  std::vector<uint8_t> image;
  size_t passes = 0;  // hardware passes CUPTI needs for it (user replays per measurement)
};

CUcontext current_context() {
  check_cuda(cudaFree(nullptr), "cudaFree(0) (context creation)");
  CUcontext context = nullptr;
  if (FLASHIO_DRIVER(cuCtxGetCurrent)(&context) != CUDA_SUCCESS || context == nullptr)
    throw ProfilerError(ErrorKind::cuda_failure, "cuCtxGetCurrent: no current context");
  return context;
}

// The process's CUPTI range-profiling session on one CUDA context: cuptiProfilerInitialize,
// the chip's counter availability, and one range profiler enabled on the context. Every
// RangeProfiler alive shares it; the last one to end disables the range profiler and
// deinitialises CUPTI, so a long-lived process can profile again later.
//
// Why shared: the counter availability cannot be read while a profiling session is active on
// the context (cupti_profiler_target.h: cuptiProfilerGetCounterAvailability "may fail, if any
// profiling or sampling session is active on the specified context or its device"). A second
// RangeProfiler that enabled its own range profiler beside a live one failed there on the
// H200 with CUPTI_ERROR_INVALID_PARAMETER (docs/profiler.md, "Several profilers in one
// process").
class Session {
 public:
  // The live session, or a new one on the current device's primary context. Throws
  // ProfilerError.
  static std::shared_ptr<Session> acquire();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::string& chip() const { return chip_; }
  // The range profiler, ready for a measurement of `config`: enabled anew (disabled, then
  // enabled) when the last measurement used another configuration or did not finish (see
  // docs/profiler.md, "Several profilers in one process").
  CUpti_RangeProfiler_Object* object_for(const MetricConfig& config);
  // Ends the measurement object_for began; one that did not finish (an exception) leaves the
  // range profiler to be enabled anew.
  void measurement_done(bool finished);
  // Whether the chip knows `metric` (asked once per session).
  bool supported(const std::string& metric);
  // The configuration of exactly these metrics, made once per session and list.
  const MetricConfig& config(const std::vector<std::string>& metrics);

  // Set while a measurement runs: CUPTI's range profiler takes one at a time.
  std::atomic<bool> measuring{false};

 private:
  explicit Session(CUcontext context);
  void enable();
  void disable() noexcept;
  void release() noexcept;

  CUcontext context_ = nullptr;
  bool initialized_ = false;
  std::string chip_;
  std::vector<uint8_t> availability_;
  CUpti_RangeProfiler_Object* object_ = nullptr;
  const MetricConfig* configured_ = nullptr;  // the configuration of the last measurement
  bool clean_ = true;                         // the last measurement finished
  std::map<std::string, bool> supported_;
  // Host objects stay alive until the session ends: CUPTI's host objects share state, and
  // deinitialising one early left the others evaluating NaN (seen on the H200, CUDA 13.0).
  std::vector<std::unique_ptr<HostObject>> probes_;
  std::map<std::vector<std::string>, std::unique_ptr<MetricConfig>> configs_;
};

// Guards the one session: its creation, its caches and its end. Recursive, because a session
// can end inside acquire() when its last owner lets go there.
std::recursive_mutex g_session_mutex;
std::weak_ptr<Session> g_session;

std::shared_ptr<Session> Session::acquire() {
  std::lock_guard<std::recursive_mutex> lock(g_session_mutex);
  const CUcontext context = current_context();
  if (std::shared_ptr<Session> live = g_session.lock()) {
    if (live->context_ != context)
      throw ProfilerError(ErrorKind::cuda_failure,
                          "a RangeProfiler is alive on another CUDA context: one process profiles "
                          "one context at a time; end the profilers of the other device first");
    return live;
  }
  std::shared_ptr<Session> made(new Session(context));
  g_session = made;
  return made;
}

Session::Session(CUcontext context) : context_(context) {
  try {
    int device = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    auto init = FLASHIO_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
    FLASHIO_CUPTI(cuptiProfilerInitialize(&init));
    initialized_ = true;

    auto sup = FLASHIO_CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params);
    sup.cuDevice = device;
    sup.api = CUPTI_PROFILER_RANGE_PROFILING;
    FLASHIO_CUPTI(cuptiProfilerDeviceSupported(&sup));
    if (sup.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
      std::string why;
      if (sup.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why += " architecture (cc < 7.0)";
      if (sup.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why += " vGPU";
      if (sup.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why += " confidential computing";
      if (sup.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why += " CMP";
      if (sup.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why += " SLI";
      if (sup.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why += " WSL";
      throw ProfilerError(ErrorKind::unsupported_device,
                          "this GPU configuration cannot be profiled by CUPTI (unsupported:" +
                              (why.empty() ? std::string(" unknown") : why) + ")");
    }

    auto chip = FLASHIO_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
    chip.deviceIndex = static_cast<size_t>(device);
    FLASHIO_CUPTI(cuptiDeviceGetChipName(&chip));
    chip_ = chip.pChipName;

    // Before the range profiler is enabled (see the class comment). First the size, with no
    // image, then the image.
    auto avail = FLASHIO_CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
    avail.ctx = context_;
    avail.pCounterAvailabilityImage = nullptr;
    FLASHIO_CUPTI(cuptiProfilerGetCounterAvailability(&avail));
    availability_.resize(avail.counterAvailabilityImageSize);
    avail.pCounterAvailabilityImage = availability_.data();
    FLASHIO_CUPTI(cuptiProfilerGetCounterAvailability(&avail));

    enable();
  } catch (...) {
    release();
    throw;
  }
}

Session::~Session() {
  std::lock_guard<std::recursive_mutex> lock(g_session_mutex);
  release();
}

void Session::enable() {
  auto p = FLASHIO_CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
  p.ctx = context_;
  FLASHIO_CUPTI(cuptiRangeProfilerEnable(&p));
  object_ = p.pRangeProfilerObject;
}

void Session::disable() noexcept {
  if (object_ == nullptr) return;
  auto p = FLASHIO_CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
  p.pRangeProfilerObject = object_;
  cuptiRangeProfilerDisable(&p);
  object_ = nullptr;
}

CUpti_RangeProfiler_Object* Session::object_for(const MetricConfig& config) {
  std::lock_guard<std::recursive_mutex> lock(g_session_mutex);
  if (object_ == nullptr || !clean_ || (configured_ != nullptr && configured_ != &config)) {
    disable();
    enable();
  }
  configured_ = &config;
  clean_ = false;  // until measurement_done(true)
  return object_;
}

void Session::measurement_done(bool finished) {
  std::lock_guard<std::recursive_mutex> lock(g_session_mutex);
  clean_ = finished;
}

void Session::release() noexcept {
  configs_.clear();  // host objects before the range profiler and CUPTI itself
  probes_.clear();
  disable();
  if (initialized_) {
    auto p = FLASHIO_CUPTI_PARAMS(CUpti_Profiler_DeInitialize_Params);
    cuptiProfilerDeInitialize(&p);
    initialized_ = false;
  }
}

bool Session::supported(const std::string& metric) {
  std::lock_guard<std::recursive_mutex> lock(g_session_mutex);
  if (const auto it = supported_.find(metric); it != supported_.end()) return it->second;
  auto probe = std::make_unique<HostObject>(chip_, availability_);
  const bool known = probe->add({metric.c_str()}) == CUPTI_SUCCESS;
  probes_.push_back(std::move(probe));
  supported_[metric] = known;
  return known;
}

const MetricConfig& Session::config(const std::vector<std::string>& metrics) {
  std::lock_guard<std::recursive_mutex> lock(g_session_mutex);
  std::unique_ptr<MetricConfig>& slot = configs_[metrics];
  if (!slot) {
    auto made = std::make_unique<MetricConfig>();
    made->metrics = metrics;
    for (const std::string& m : made->metrics) made->names.push_back(m.c_str());
    made->host = std::make_unique<HostObject>(chip_, availability_);
    FLASHIO_CUPTI(made->host->add(made->names));
    made->image = made->host->config_image();
    made->passes = HostObject::passes(made->image);
    slot = std::move(made);
  }
  return *slot;
}

// Marks the session busy for one measurement; a second one at the same time is refused.
class MeasuringGuard {
 public:
  explicit MeasuringGuard(std::atomic<bool>& flag) : flag_(flag) {
    if (flag_.exchange(true))
      throw std::logic_error("RangeProfiler::measure: another measurement is running in this "
                             "process (CUPTI's range profiler takes one at a time)");
  }
  ~MeasuringGuard() { flag_ = false; }
  MeasuringGuard(const MeasuringGuard&) = delete;
  MeasuringGuard& operator=(const MeasuringGuard&) = delete;

 private:
  std::atomic<bool>& flag_;
};

}  // namespace

struct RangeProfiler::Impl {
  std::shared_ptr<Session> session;
  std::vector<std::string> metrics, unsupported;
  size_t max_ranges = 0;
  const MetricConfig* config = nullptr;  // the session's; null when the chip knows no metric asked
};

void check_profiling_possible() {
  // ncu and nsys inject themselves through this variable; a second client would fail later
  // with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED.
  const char* injected = std::getenv("CUDA_INJECTION64_PATH");
  if (injected != nullptr && *injected != '\0')
    throw ProfilerError(ErrorKind::other_client,
                        std::string("another CUPTI client is injected (CUDA_INJECTION64_PATH=") +
                            injected + "): do not run flashio profile under ncu or nsys; use "
                                       "flashio bench under ncu instead");
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0)
    throw ProfilerError(ErrorKind::no_gpu,
                        std::string("no usable CUDA GPU found (") +
                            (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") +
                            "); profiling needs one (run it on the GPU machine)");
}

RangeProfiler::RangeProfiler(const std::vector<std::string>& metrics, size_t max_ranges)
    : impl_(std::make_unique<Impl>()) {
  check_profiling_possible();
  Impl& m = *impl_;
  m.max_ranges = max_ranges;
  m.session = Session::acquire();
  // Keep the metrics the chip knows, all in one configuration: CUPTI's passes are replayed by
  // measure(). Seen on the H200 (CUDA 13.0, docs/profiler.md): splitting the metrics into
  // single-pass configurations evaluated NaN for all but one metric.
  for (const std::string& name : metrics)
    (m.session->supported(name) ? m.metrics : m.unsupported).push_back(name);
  if (!m.metrics.empty()) m.config = &m.session->config(m.metrics);
}

RangeProfiler::~RangeProfiler() = default;

const std::vector<std::string>& RangeProfiler::metrics() const { return impl_->metrics; }
const std::vector<std::string>& RangeProfiler::unsupported() const { return impl_->unsupported; }
size_t RangeProfiler::passes() const { return impl_->config ? impl_->config->passes : 0; }
std::string RangeProfiler::chip_name() const { return impl_->session->chip(); }

std::vector<RangeRecord> RangeProfiler::measure(const std::function<void()>& work,
                                               const std::function<void()>& prepare) {
  Impl& m = *impl_;
  if (m.config == nullptr) return {};
  const MetricConfig& g = *m.config;
  const MeasuringGuard busy(m.session->measuring);
  CUpti_RangeProfiler_Object* const object = m.session->object_for(g);
  bool finished = false;
  struct Done {
    Session& session;
    const bool& finished;
    ~Done() { session.measurement_done(finished); }
  } done{*m.session, finished};

  auto size = FLASHIO_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
  size.pRangeProfilerObject = object;
  size.pMetricNames = const_cast<const char**>(g.names.data());
  size.numMetrics = g.names.size();
  size.maxNumOfRanges = m.max_ranges;
  size.maxNumRangeTreeNodes = static_cast<uint32_t>(m.max_ranges);
  FLASHIO_CUPTI(cuptiRangeProfilerGetCounterDataSize(&size));
  std::vector<uint8_t> data(size.counterDataSize);
  auto di = FLASHIO_CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  di.pRangeProfilerObject = object;
  di.counterDataSize = data.size();
  di.pCounterData = data.data();
  FLASHIO_CUPTI(cuptiRangeProfilerCounterDataImageInitialize(&di));

  auto cfg = FLASHIO_CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
  cfg.pRangeProfilerObject = object;
  cfg.configSize = g.image.size();
  cfg.pConfig = g.image.data();
  cfg.counterDataImageSize = data.size();
  cfg.pCounterDataImage = data.data();
  cfg.range = CUPTI_AutoRange;
  // User replay: we run the work once per hardware pass ourselves, with `prepare` (the L2
  // flush) before each pass. CUPTI's kernel replay would run the later passes with the L2
  // warm from the first (seen on the H200: a 16 MiB re-read after a flush hit the L2).
  cfg.replayMode = CUPTI_UserReplay;
  cfg.maxRangesPerPass = m.max_ranges;
  cfg.numNestingLevels = 1;
  cfg.minNestingLevel = 1;
  cfg.passIndex = 0;
  cfg.targetNestingLevel = 1;
  FLASHIO_CUPTI(cuptiRangeProfilerSetConfig(&cfg));

  bool all_submitted = false;
  for (size_t pass = 0; !all_submitted; ++pass) {
    if (pass > 4 * g.passes + 8)
      throw ProfilerError(ErrorKind::cuda_failure, "CUPTI asked for more replay passes than the "
                                                   "configuration needs (" + std::to_string(g.passes) + ")");
    if (prepare) {
      prepare();
      check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize (after the unprofiled preparation)");
    }
    auto start = FLASHIO_CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
    start.pRangeProfilerObject = object;
    FLASHIO_CUPTI(cuptiRangeProfilerStart(&start));
    auto stop = FLASHIO_CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
    stop.pRangeProfilerObject = object;
    try {
      work();
      check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize (after the profiled work)");
    } catch (...) {
      cuptiRangeProfilerStop(&stop);
      throw;
    }
    FLASHIO_CUPTI(cuptiRangeProfilerStop(&stop));
    all_submitted = stop.isAllPassSubmitted != 0;
  }

  auto decode = FLASHIO_CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  decode.pRangeProfilerObject = object;
  FLASHIO_CUPTI(cuptiRangeProfilerDecodeData(&decode));
  if (decode.numOfRangeDropped != 0)
    throw ProfilerError(ErrorKind::cuda_failure,
                        std::to_string(decode.numOfRangeDropped) +
                            " ranges were dropped: more kernel launches than max_ranges (" +
                            std::to_string(m.max_ranges) + ")");

  auto info = FLASHIO_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  info.pCounterDataImage = data.data();
  info.counterDataImageSize = data.size();
  FLASHIO_CUPTI(cuptiRangeProfilerGetCounterDataInfo(&info));
  std::vector<RangeRecord> records(info.numTotalRanges);
  for (size_t r = 0; r < info.numTotalRanges; ++r) {
    auto ri = FLASHIO_CUPTI_PARAMS(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params);
    ri.pCounterDataImage = data.data();
    ri.counterDataImageSize = data.size();
    ri.rangeIndex = r;
    ri.rangeDelimiter = "/";
    if (cuptiRangeProfilerCounterDataGetRangeInfo(&ri) == CUPTI_SUCCESS && ri.rangeName)
      records[r].name = ri.rangeName;
    // One metric per call: a metric CUPTI cannot evaluate leaves only its own value NaN.
    records[r].values.reserve(g.names.size());
    for (const char* name : g.names) records[r].values.push_back(g.host->evaluate(data, r, {name})[0]);
  }
  finished = true;
  return records;
}

}  // namespace flashio::profiler
