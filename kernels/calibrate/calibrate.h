// The microbenchmarks of `flashio calibrate` (docs/calibration.md has each one's method), for
// host-only C++ callers: no CUDA header is needed (cudaStream_t is declared as the runtime
// does). Each benchmark point is a Bench: it owns its device buffers, enqueue() launches one
// run of it on a stream (the caller times the runs: profiler::time_runs, the one timer), and
// check() verifies the checksum its kernels wrote over every run so far, so that no run's work
// can have been dropped. Built for sm_90a only (kernels/calibrate/CMakeLists.txt).
//
// Everything throws std::runtime_error when a CUDA call fails, and std::invalid_argument when
// a point cannot be built as asked (the occupancy it needs cannot be reached on this device).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

typedef struct CUstream_st* cudaStream_t;  // as in <driver_types.h>

namespace flashio::kernels::calibrate {

// The current device as cudaGetDeviceProperties describes it.
struct Device {
  std::string name;  // "NVIDIA H200"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int64_t l2_bytes = 0;
  int64_t smem_per_block_optin_bytes = 0;  // the most dynamic shared memory one block may ask for
  int64_t smem_per_sm_bytes = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
};
Device current_device();

class Bench {
 public:
  virtual ~Bench() = default;
  // One run, asynchronously on `stream`.
  virtual void enqueue(cudaStream_t stream) = 0;
  // Untimed work before each run (time_runs' `prepare`); nothing for most.
  virtual void prepare(cudaStream_t /*stream*/) {}
  // What one run does, in the unit of the figure it measures: bytes, FLOPs, results, barriers,
  // launches, waves (the figure is work() / time).
  virtual double work() const = 0;
  // Synchronises, then throws std::runtime_error naming the benchmark when the checksum of the
  // runs enqueued so far is not the expected one.
  virtual void check() = 0;
  // The tensor benchmarks: block 0's clock64() cycles ÷ %globaltimer ns over each run
  // enqueued so far (the most recent 256), in Hz. Empty for the others.
  virtual std::vector<double> clock_samples_hz() { return {}; }
};

// Memory streams: `blocks_per_sm` blocks of 128 threads on every SM (the occupancy is capped by
// dynamic shared memory and checked), each thread with `loads_per_thread` independent 16-byte
// loads (or stores) outstanding per iteration, grid-stride over a buffer of `buffer_bytes`,
// `passes` times per run. Bytes in flight per SM = blocks_per_sm × 128 × 16 × loads_per_thread.
// loads_per_thread is 1, 2 or 4, blocks_per_sm 1 to 16: at 16 × 4, half the register file
// holds load destinations (128 KiB in flight per SM), as much as 32 registers a thread allow.
enum class Stream { read, write, copy };
int64_t stream_bytes_in_flight_per_sm(int blocks_per_sm, int loads_per_thread);
// work(): bytes read (read), written (write), read + written (copy).
std::unique_ptr<Bench> stream_bench(Stream kind, int blocks_per_sm, int loads_per_thread, int64_t buffer_bytes,
                                    int passes);

// Tensor cores. mma.sync m16n8k16, fp32 accumulators, `warps_per_sm` warps (1..16) in one block
// per SM, 8 independent accumulators per warp, `iterations` × 8 instructions per warp.
enum class Elem { fp16, bf16 };
std::unique_ptr<Bench> mma_sync_bench(Elem elem, int warps_per_sm, int iterations);
// wgmma m64nNk16 (N = 64, 128, 256), A and B from shared memory, `warpgroups_per_sm` warpgroups
// (1..4; 1..3 at N = 256, whose 128 accumulator registers per thread leave room for no more) in
// one block per SM, `iterations` × 4 instructions per warpgroup.
int max_wgmma_warpgroups_per_sm(int n);
std::unique_ptr<Bench> wgmma_bench(Elem elem, int n, int warpgroups_per_sm, int iterations);
// The same with each iteration's commit group waited for (wgmma.wait_group 0) before the next
// is issued: a warpgroup that waits for every GEMM of 4 instructions (a 64 × N × 64 product).
std::unique_ptr<Bench> wgmma_waited_bench(Elem elem, int n, int warpgroups_per_sm, int iterations);

// The tensor cores and the SFU at once: one block per SM of three warpgroups, two streaming
// wgmma m64n128k16 fp16 (`mma_iterations` × 4 instructions each), one running 8 chains per thread
// (`exp_iterations`, 0 or at least 64) of ex2.approx alone (CorunSide::exp) or of a softmax's
// instructions per score, FFMA, ex2.approx, FMNMX and FADD (CorunSide::softmax); either side may
// have no work. work(): 1.
enum class CorunSide { exp, softmax };
std::unique_ptr<Bench> tensor_corun_bench(CorunSide side, int mma_iterations, int exp_iterations);

// Pipes, every SM full (as many 256-thread blocks as fit), `iterations` per thread.
std::unique_ptr<Bench> exp2_bench(int iterations);     // work: ex2.approx results
std::unique_ptr<Bench> fma_bench(int iterations);      // work: FLOPs (an FMA is 2)
std::unique_ptr<Bench> integer_bench(int iterations);  // work: 32-bit integer instructions (lane results)
std::unique_ptr<Bench> shuffle_bench(int iterations);  // work: lane results of shfl.sync
std::unique_ptr<Bench> ldmatrix_bench(int iterations); // work: bytes ldmatrix.x4 moved
// red.global.add.f32 to distinct addresses of a buffer of `buffer_bytes` (inside the L2).
std::unique_ptr<Bench> atomic_bench(int64_t buffer_bytes, int iterations);  // work: atomics

// Latencies. One thread chases a random cycle of 128-byte lines over a buffer of
// `buffer_bytes`, `steps` dependent loads per run, each run continuing where the last stopped.
// cp.async of 16 B, waited for; work: steps.
std::unique_ptr<Bench> cp_async_chase_bench(int64_t buffer_bytes, int steps);
// The same chase with cp.async.bulk.tensor (TMA): a 2D tensor map over the buffer (rows of
// 128 B), one 1-row × 128-byte box per step, waited for on its mbarrier. The tensor map is
// encoded through the driver's cuTensorMapEncodeTiled, which `driver_symbol` looks up (so that
// nothing here links libcuda; profiler::driver_symbol does it for the runner). work: steps.
using DriverSymbol = void* (*)(const char* symbol);
std::unique_ptr<Bench> tma_chase_bench(int64_t buffer_bytes, int steps, DriverSymbol driver_symbol);
// __syncthreads in a loop, one block of `threads_per_block` per SM; work: barriers (per block).
std::unique_ptr<Bench> barrier_bench(int threads_per_block, int iterations);
// `launches` back-to-back launches of a kernel of one 32-thread block; work: launches.
std::unique_ptr<Bench> launch_bench(int launches);
// One kernel of `waves` waves of 128-thread blocks that do nothing but count themselves, one
// block per SM at a time (capped by shared memory); work: waves.
std::unique_ptr<Bench> wave_bench(int waves);

}  // namespace flashio::kernels::calibrate
