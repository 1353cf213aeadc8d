#include "profiler/captured_pass.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <string>

#include "profiler/driver_api.h"
#include "profiler/profiler_error.h"

namespace flashio::profiler {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw ProfilerError(ErrorKind::cuda_failure, std::string(what) + ": " + cudaGetErrorString(e));
}

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* s = nullptr;
    FLASHIO_DRIVER(cuGetErrorString)(r, &s);
    throw ProfilerError(ErrorKind::cuda_failure, std::string(what) + ": " + (s ? s : "CUDA driver error"));
  }
}

struct Step {
  CUgraphNode node = nullptr;
  CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
};

}  // namespace

struct CapturedPass::Impl {
  ~Impl() {
    if (graph) cudaGraphDestroy(graph);
  }
  cudaGraph_t graph = nullptr;
  std::vector<Step> steps;           // topological order (capture order on one stream)
  std::vector<size_t> kernel_steps;  // index into steps of each kernel node
};

CapturedPass::CapturedPass(const std::function<void(cudaStream_t)>& enqueue)
    : impl_(std::make_unique<Impl>()) {
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
  try {
    enqueue(stream);
  } catch (...) {
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(stream, &g);
    if (g) cudaGraphDestroy(g);
    cudaStreamDestroy(stream);
    throw;
  }
  const cudaError_t end = cudaStreamEndCapture(stream, &impl_->graph);
  cudaStreamDestroy(stream);
  check(end, "cudaStreamEndCapture (the pass could not be captured into a graph)");

  CUgraph g = reinterpret_cast<CUgraph>(impl_->graph);
  size_t n = 0;
  check(FLASHIO_DRIVER(cuGraphGetNodes)(g, nullptr, &n), "cuGraphGetNodes");
  std::vector<CUgraphNode> nodes(n);
  check(FLASHIO_DRIVER(cuGraphGetNodes)(g, nodes.data(), &n), "cuGraphGetNodes");
  size_t e = 0;
  check(FLASHIO_DRIVER(cuGraphGetEdges)(g, nullptr, nullptr, nullptr, &e), "cuGraphGetEdges");
  std::vector<CUgraphNode> from(e), to(e);
  check(FLASHIO_DRIVER(cuGraphGetEdges)(g, from.data(), to.data(), nullptr, &e), "cuGraphGetEdges");

  // Kahn's algorithm, taking ready nodes in capture (creation) order.
  std::map<CUgraphNode, size_t> index;
  for (size_t i = 0; i < n; ++i) index[nodes[i]] = i;
  std::vector<size_t> indegree(n, 0);
  std::vector<std::vector<size_t>> out(n);
  for (size_t k = 0; k < e; ++k) {
    out[index[from[k]]].push_back(index[to[k]]);
    ++indegree[index[to[k]]];
  }
  std::vector<bool> emitted(n, false);
  for (size_t round = 0; round < n; ++round) {
    size_t pick = n;
    for (size_t i = 0; i < n && pick == n; ++i)
      if (!emitted[i] && indegree[i] == 0) pick = i;
    if (pick == n) throw ProfilerError(ErrorKind::cuda_failure, "captured graph has a cycle");
    emitted[pick] = true;
    for (size_t j : out[pick]) --indegree[j];
    Step s;
    s.node = nodes[pick];
    check(FLASHIO_DRIVER(cuGraphNodeGetType)(s.node, &s.type), "cuGraphNodeGetType");
    switch (s.type) {
      case CU_GRAPH_NODE_TYPE_KERNEL:
        impl_->kernel_steps.push_back(impl_->steps.size());
        break;
      case CU_GRAPH_NODE_TYPE_MEMSET:
      case CU_GRAPH_NODE_TYPE_MEMCPY:
      case CU_GRAPH_NODE_TYPE_EMPTY:
        break;
      default:
        throw ProfilerError(ErrorKind::cuda_failure,
                            "the captured pass holds a graph node of type " +
                                std::to_string(static_cast<int>(s.type)) +
                                " that the profiler cannot replay one by one");
    }
    impl_->steps.push_back(s);
  }
}

CapturedPass::~CapturedPass() = default;

size_t CapturedPass::kernel_count() const { return impl_->kernel_steps.size(); }

namespace {

CUfunction function_of(const CUDA_KERNEL_NODE_PARAMS& p) {
  if (p.func != nullptr) return p.func;
  CUfunction f = nullptr;
  check(FLASHIO_DRIVER(cuKernelGetFunction)(&f, p.kern), "cuKernelGetFunction");
  return f;
}

void run_step(const Step& s, cudaStream_t stream) {
  CUstream cs = reinterpret_cast<CUstream>(stream);
  switch (s.type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      CUDA_KERNEL_NODE_PARAMS p{};
      check(FLASHIO_DRIVER(cuGraphKernelNodeGetParams)(s.node, &p), "cuGraphKernelNodeGetParams");
      CUlaunchAttribute attrs[2];
      unsigned n_attrs = 0;
      // A cluster shape given at launch (cuBLAS's sm_90 GEMMs use them) must be given again.
      CUlaunchAttributeValue v{};
      if (FLASHIO_DRIVER(cuGraphKernelNodeGetAttribute)(s.node, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &v) == CUDA_SUCCESS &&
          v.clusterDim.x * v.clusterDim.y * v.clusterDim.z > 1) {
        attrs[n_attrs].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attrs[n_attrs].value = v;
        ++n_attrs;
        CUlaunchAttributeValue policy{};
        if (FLASHIO_DRIVER(cuGraphKernelNodeGetAttribute)(s.node, CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
                                          &policy) == CUDA_SUCCESS) {
          attrs[n_attrs].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
          attrs[n_attrs].value = policy;
          ++n_attrs;
        }
      }
      CUlaunchConfig cfg{};
      cfg.gridDimX = p.gridDimX;
      cfg.gridDimY = p.gridDimY;
      cfg.gridDimZ = p.gridDimZ;
      cfg.blockDimX = p.blockDimX;
      cfg.blockDimY = p.blockDimY;
      cfg.blockDimZ = p.blockDimZ;
      cfg.sharedMemBytes = p.sharedMemBytes;
      cfg.hStream = cs;
      cfg.attrs = n_attrs ? attrs : nullptr;
      cfg.numAttrs = n_attrs;
      check(FLASHIO_DRIVER(cuLaunchKernelEx)(&cfg, function_of(p), p.kernelParams, p.extra), "cuLaunchKernelEx");
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      CUDA_MEMSET_NODE_PARAMS m{};
      check(FLASHIO_DRIVER(cuGraphMemsetNodeGetParams)(s.node, &m), "cuGraphMemsetNodeGetParams");
      const size_t pitch = m.height > 1 ? m.pitch : m.width * m.elementSize;
      if (m.elementSize == 1)
        check(FLASHIO_DRIVER(cuMemsetD2D8Async)(m.dst, pitch, static_cast<unsigned char>(m.value), m.width, m.height, cs), "cuMemsetD2D8Async");
      else if (m.elementSize == 2)
        check(FLASHIO_DRIVER(cuMemsetD2D16Async)(m.dst, pitch, static_cast<unsigned short>(m.value), m.width, m.height, cs), "cuMemsetD2D16Async");
      else
        check(FLASHIO_DRIVER(cuMemsetD2D32Async)(m.dst, pitch, m.value, m.width, m.height, cs), "cuMemsetD2D32Async");
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY: {
      CUDA_MEMCPY3D c{};
      check(FLASHIO_DRIVER(cuGraphMemcpyNodeGetParams)(s.node, &c), "cuGraphMemcpyNodeGetParams");
      check(FLASHIO_DRIVER(cuMemcpy3DAsync)(&c, cs), "cuMemcpy3DAsync");
      break;
    }
    default:
      break;
  }
}

}  // namespace

std::string CapturedPass::kernel_function(size_t k) const {
  CUDA_KERNEL_NODE_PARAMS p{};
  check(FLASHIO_DRIVER(cuGraphKernelNodeGetParams)(impl_->steps[impl_->kernel_steps.at(k)].node, &p),
        "cuGraphKernelNodeGetParams");
  const char* name = nullptr;
  if (FLASHIO_DRIVER(cuFuncGetName)(&name, function_of(p)) != CUDA_SUCCESS || name == nullptr) return "";
  return name;
}

CapturedPass::LaunchShape CapturedPass::launch_shape(size_t k) const {
  CUDA_KERNEL_NODE_PARAMS p{};
  check(FLASHIO_DRIVER(cuGraphKernelNodeGetParams)(impl_->steps[impl_->kernel_steps.at(k)].node, &p),
        "cuGraphKernelNodeGetParams");
  LaunchShape shape;
  shape.blocks = static_cast<long long>(p.gridDimX) * p.gridDimY * p.gridDimZ;
  shape.threads_per_block = static_cast<int>(p.blockDimX * p.blockDimY * p.blockDimZ);
  shape.dynamic_smem_bytes = static_cast<int>(p.sharedMemBytes);
  check(FLASHIO_DRIVER(cuOccupancyMaxActiveBlocksPerMultiprocessor)(
            &shape.blocks_per_sm, function_of(p), shape.threads_per_block, p.sharedMemBytes),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return shape;
}

void CapturedPass::run_prefix(size_t k, cudaStream_t stream) {
  const size_t limit = impl_->kernel_steps.at(k);
  for (size_t i = 0; i < limit; ++i) run_step(impl_->steps[i], stream);
}

void CapturedPass::launch_kernel(size_t k, cudaStream_t stream) {
  run_step(impl_->steps[impl_->kernel_steps.at(k)], stream);
}

void CapturedPass::run_remaining_steps(cudaStream_t stream) {
  const size_t first = impl_->kernel_steps.empty() ? 0 : impl_->kernel_steps.back() + 1;
  for (size_t i = first; i < impl_->steps.size(); ++i) run_step(impl_->steps[i], stream);
}

}  // namespace flashio::profiler
