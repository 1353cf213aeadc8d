#include "profiler/range_profiler.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

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

// One CUPTI host object: turns metric names into a configuration image and evaluates counter
// data into metric values.
class HostObject {
 public:
  HostObject(const std::string& chip, const std::vector<uint8_t>& availability) {
    CUpti_Profiler_Host_Initialize_Params p{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability.data();
    FLASHIO_CUPTI(cuptiProfilerHostInitialize(&p));
    host_ = p.pHostObject;
  }
  ~HostObject() {
    CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pHostObject = host_;
    cuptiProfilerHostDeinitialize(&p);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  CUptiResult add(const std::vector<const char*>& names) {
    CUpti_Profiler_Host_ConfigAddMetrics_Params p{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    p.pHostObject = host_;
    p.ppMetricNames = const_cast<const char**>(names.data());
    p.numMetrics = names.size();
    return cuptiProfilerHostConfigAddMetrics(&p);
  }
  std::vector<uint8_t> config_image() {
    CUpti_Profiler_Host_GetConfigImageSize_Params s{CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    s.pHostObject = host_;
    FLASHIO_CUPTI(cuptiProfilerHostGetConfigImageSize(&s));
    std::vector<uint8_t> image(s.configImageSize);
    CUpti_Profiler_Host_GetConfigImage_Params g{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    g.pHostObject = host_;
    g.configImageSize = image.size();
    g.pConfigImage = image.data();
    FLASHIO_CUPTI(cuptiProfilerHostGetConfigImage(&g));
    return image;
  }
  static size_t passes(std::vector<uint8_t>& image) {
    CUpti_Profiler_Host_GetNumOfPasses_Params p{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    p.configImageSize = image.size();
    p.pConfigImage = image.data();
    FLASHIO_CUPTI(cuptiProfilerHostGetNumOfPasses(&p));
    return p.numOfPasses;
  }
  std::vector<double> evaluate(const std::vector<uint8_t>& data, size_t range,
                               const std::vector<const char*>& names) {
    std::vector<double> values(names.size(), std::numeric_limits<double>::quiet_NaN());
    CUpti_Profiler_Host_EvaluateToGpuValues_Params p{CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
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

struct Group {
  std::vector<size_t> metric_index;  // into metrics_
  std::vector<const char*> names;
  std::unique_ptr<HostObject> host;
  std::vector<uint8_t> config;
};

}  // namespace

struct RangeProfiler::Impl {
  std::vector<std::string> metrics, unsupported;
  size_t max_ranges = 0;
  std::string chip;
  std::vector<uint8_t> availability;
  CUcontext context = nullptr;
  CUpti_RangeProfiler_Object* object = nullptr;
  bool initialized = false;
  std::vector<Group> groups;
  size_t passes = 0;  // hardware passes the configuration needs (measure() runs work per pass)
  // Host objects made while probing which metrics the chip knows. They stay alive until the
  // profiler ends: CUPTI's host objects share state, and deinitialising one early left the others
  // evaluating NaN (seen on the H200, CUDA 13.0).
  std::vector<std::unique_ptr<HostObject>> retired;
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
  check_cuda(cudaFree(nullptr), "cudaFree(0) (context creation)");
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  if (FLASHIO_DRIVER(cuCtxGetCurrent)(&m.context) != CUDA_SUCCESS || m.context == nullptr)
    throw ProfilerError(ErrorKind::cuda_failure, "cuCtxGetCurrent: no current context");

  CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  FLASHIO_CUPTI(cuptiProfilerInitialize(&init));
  m.initialized = true;

  CUpti_Profiler_DeviceSupported_Params sup{CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
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

  CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = static_cast<size_t>(device);
  FLASHIO_CUPTI(cuptiDeviceGetChipName(&chip));
  m.chip = chip.pChipName;

  CUpti_Profiler_GetCounterAvailability_Params avail{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  avail.ctx = m.context;
  FLASHIO_CUPTI(cuptiProfilerGetCounterAvailability(&avail));
  m.availability.resize(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = m.availability.data();
  FLASHIO_CUPTI(cuptiProfilerGetCounterAvailability(&avail));

  CUpti_RangeProfiler_Enable_Params enable{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  enable.ctx = m.context;
  FLASHIO_CUPTI(cuptiRangeProfilerEnable(&enable));
  m.object = enable.pRangeProfilerObject;

  // Keep the metrics the chip knows (each probed in a host object of its own).
  for (const std::string& name : metrics) {
    auto probe = std::make_unique<HostObject>(m.chip, m.availability);
    if (probe->add({name.c_str()}) == CUPTI_SUCCESS)
      m.metrics.push_back(name);
    else
      m.unsupported.push_back(name);
    m.retired.push_back(std::move(probe));
  }
  // All metrics in one configuration, which may need several hardware passes; measure() runs
  // the work once per pass (user replay, below). Seen on the H200 (CUDA 13.0, docs/profiler.md,
  // "Why split metric groups no longer?"): splitting the metrics into single-pass groups
  // evaluated NaN for all but one metric.
  if (!m.metrics.empty()) {
    Group g;
    for (size_t i = 0; i < m.metrics.size(); ++i) {
      g.names.push_back(m.metrics[i].c_str());
      g.metric_index.push_back(i);
    }
    g.host = std::make_unique<HostObject>(m.chip, m.availability);
    FLASHIO_CUPTI(g.host->add(g.names));
    g.config = g.host->config_image();
    m.passes = HostObject::passes(g.config);
    m.groups.push_back(std::move(g));
  }
}

RangeProfiler::~RangeProfiler() {
  if (!impl_) return;
  impl_->groups.clear();
  impl_->retired.clear();
  if (impl_->object != nullptr) {
    CUpti_RangeProfiler_Disable_Params p{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = impl_->object;
    cuptiRangeProfilerDisable(&p);
  }
  if (impl_->initialized) {
    CUpti_Profiler_DeInitialize_Params p{CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
    cuptiProfilerDeInitialize(&p);
  }
}

const std::vector<std::string>& RangeProfiler::metrics() const { return impl_->metrics; }
const std::vector<std::string>& RangeProfiler::unsupported() const { return impl_->unsupported; }
size_t RangeProfiler::passes() const { return impl_->passes; }
std::string RangeProfiler::chip_name() const { return impl_->chip; }

std::vector<RangeRecord> RangeProfiler::measure(const std::function<void()>& work,
                                               const std::function<void()>& prepare) {
  Impl& m = *impl_;
  std::vector<RangeRecord> records;
  bool first = true;
  for (Group& g : m.groups) {
    CUpti_RangeProfiler_GetCounterDataSize_Params size{CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    size.pRangeProfilerObject = m.object;
    size.pMetricNames = g.names.data();
    size.numMetrics = g.names.size();
    size.maxNumOfRanges = m.max_ranges;
    size.maxNumRangeTreeNodes = static_cast<uint32_t>(m.max_ranges);
    FLASHIO_CUPTI(cuptiRangeProfilerGetCounterDataSize(&size));
    std::vector<uint8_t> data(size.counterDataSize);
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params di{CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    di.pRangeProfilerObject = m.object;
    di.counterDataSize = data.size();
    di.pCounterData = data.data();
    FLASHIO_CUPTI(cuptiRangeProfilerCounterDataImageInitialize(&di));

    CUpti_RangeProfiler_SetConfig_Params cfg{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    cfg.pRangeProfilerObject = m.object;
    cfg.configSize = g.config.size();
    cfg.pConfig = g.config.data();
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
      if (pass > 4 * m.passes + 8)
        throw ProfilerError(ErrorKind::cuda_failure, "CUPTI asked for more replay passes than the "
                                                     "configuration needs (" + std::to_string(m.passes) + ")");
      if (prepare) {
        prepare();
        check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize (after the unprofiled preparation)");
      }
      CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
      start.pRangeProfilerObject = m.object;
      FLASHIO_CUPTI(cuptiRangeProfilerStart(&start));
      CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
      stop.pRangeProfilerObject = m.object;
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

    CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    decode.pRangeProfilerObject = m.object;
    FLASHIO_CUPTI(cuptiRangeProfilerDecodeData(&decode));
    if (decode.numOfRangeDropped != 0)
      throw ProfilerError(ErrorKind::cuda_failure,
                          std::to_string(decode.numOfRangeDropped) +
                              " ranges were dropped: more kernel launches than max_ranges (" +
                              std::to_string(m.max_ranges) + ")");

    CUpti_RangeProfiler_GetCounterDataInfo_Params info{CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = data.data();
    info.counterDataImageSize = data.size();
    FLASHIO_CUPTI(cuptiRangeProfilerGetCounterDataInfo(&info));
    if (first) {
      records.resize(info.numTotalRanges);
      for (auto& r : records)
        r.values.assign(m.metrics.size(), std::numeric_limits<double>::quiet_NaN());
    } else if (info.numTotalRanges != records.size()) {
      throw ProfilerError(ErrorKind::cuda_failure,
                          "the profiled work launched " + std::to_string(info.numTotalRanges) +
                              " kernels in one run and " + std::to_string(records.size()) +
                              " in another");
    }
    for (size_t r = 0; r < info.numTotalRanges; ++r) {
      if (first) {
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params ri{CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
        ri.pCounterDataImage = data.data();
        ri.counterDataImageSize = data.size();
        ri.rangeIndex = r;
        ri.rangeDelimiter = "/";
        if (cuptiRangeProfilerCounterDataGetRangeInfo(&ri) == CUPTI_SUCCESS && ri.rangeName)
          records[r].name = ri.rangeName;
      }
      // One metric per call: a metric CUPTI cannot evaluate leaves only its own value NaN.
      for (size_t k = 0; k < g.metric_index.size(); ++k)
        records[r].values[g.metric_index[k]] = g.host->evaluate(data, r, {g.names[k]})[0];
    }
    first = false;
  }
  return records;
}

}  // namespace flashio::profiler
