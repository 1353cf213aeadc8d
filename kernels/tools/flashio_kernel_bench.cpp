// flashio_kernel_bench: times the CUDA attention kernels with the one timer (time_pass: CUDA
// events, warm-up, median of ≥ 10 runs, L2 flushed before each) and writes measured rows in the
// row schema (sim/row.h), the same columns as shared/gpu/peers.py, so `flashio compare` and the
// GUI join them. TFLOP/s = convention_flops / time: 4·B·H·N²·d forward, ×2.5 bwd, ×3.5 fwdbwd,
// ×0.5 causal (the field's convention, not the FLOPs the kernels execute).
//
//   flashio_kernel_bench --algo flash2 --pass fwd,fwdbwd --shapes "16,16,4096,64;64,16,1024,64" \
//       --causal 0,1 --tiling default --csv out.csv
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <algorithm>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/attention.h"

namespace po = boost::program_options;
namespace fk = flashio::kernels;

namespace {

struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, sep))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

struct Shape {
  int64_t batch, heads, seqlen, headdim;
};

std::vector<Shape> parse_shapes(const std::string& text) {
  std::vector<Shape> shapes;
  for (const std::string& s : split(text, ';')) {
    const std::vector<std::string> f = split(s, ',');
    if (f.size() != 4) throw BadInput("--shapes: '" + s + "' is not B,H,N,d (shapes are separated by ';')");
    try {
      shapes.push_back({std::stoll(f[0]), std::stoll(f[1]), std::stoll(f[2]), std::stoll(f[3])});
    } catch (const std::exception&) {
      throw BadInput("--shapes: '" + s + "' is not four integers B,H,N,d");
    }
  }
  if (shapes.empty()) throw BadInput("--shapes: give at least one B,H,N,d");
  return shapes;
}

// "RxC" → {R, C}; "default" → {0, 0}.
std::pair<int, int> parse_tiling(const std::string& text, const char* option) {
  if (text == "default") return {0, 0};
  const size_t x = text.find('x');
  try {
    if (x != std::string::npos) return {std::stoi(text.substr(0, x)), std::stoi(text.substr(x + 1))};
  } catch (const std::exception&) {
  }
  throw BadInput(std::string(option) + ": '" + text + "' is not RxC (e.g. 128x64), 'default' or 'all'");
}

std::string fmt(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description opts("flashio_kernel_bench options");
  opts.add_options()("help", "this text")
      ("algo", po::value<std::string>()->default_value("flash2"), "standard,flash1,flash2 (list)")
      ("pass", po::value<std::string>()->default_value("fwd,fwdbwd"), "fwd,bwd,fwdbwd (list)")
      ("shapes", po::value<std::string>()->default_value("16,16,4096,64;16,16,4096,128;64,16,1024,64"),
       "B,H,N,d;B,H,N,d...")
      ("dtype", po::value<std::string>()->default_value("fp16"), "fp16 or bf16")
      ("causal", po::value<std::string>()->default_value("0"), "0, 1 or 0,1")
      ("tiling", po::value<std::string>()->default_value("default"),
       "forward (and bwd-pass) tiling: RxC list, 'default' or 'all' (every registered one)")
      ("bwd-tiling", po::value<std::string>()->default_value("same"),
       "backward tiling inside fwdbwd: RxC, 'default' or 'same' (as --tiling)")
      ("repeats", po::value<int>()->default_value(20), "timed runs per row (≥ 10; the median is reported)")
      ("warmup", po::value<int>()->default_value(3), "untimed runs first")
      ("seed", po::value<uint64_t>()->default_value(1), "input seed")
      ("hw", po::value<std::string>()->default_value("h200"), "the hw column")
      ("csv", po::value<std::string>(), "write rows here (written only when every row succeeded)");
  po::variables_map vm;
  std::vector<std::string> algos, passes, causals, tilings;
  std::vector<Shape> shapes;
  fk::DType dtype = fk::DType::fp16;
  std::pair<int, int> bwd_tiling{-1, -1};  // -1: same as the forward
  try {
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << opts << "\n";
      return 0;
    }
    algos = split(vm["algo"].as<std::string>(), ',');
    passes = split(vm["pass"].as<std::string>(), ',');
    causals = split(vm["causal"].as<std::string>(), ',');
    shapes = parse_shapes(vm["shapes"].as<std::string>());
    try {
      dtype = fk::parse_dtype(vm["dtype"].as<std::string>());
      for (const std::string& a : algos) fk::parse_algo(a);
      for (const std::string& p : passes) fk::parse_pass(p);
    } catch (const std::invalid_argument& e) {
      throw BadInput(std::string("--") + e.what());
    }
    for (const std::string& c : causals)
      if (c != "0" && c != "1") throw BadInput("--causal: '" + c + "' is not 0 or 1");
    tilings = split(vm["tiling"].as<std::string>(), ',');
    for (const std::string& t : tilings)
      if (t != "all") parse_tiling(t, "--tiling");
    const std::string bt = vm["bwd-tiling"].as<std::string>();
    if (bt != "same") bwd_tiling = parse_tiling(bt, "--bwd-tiling");
    if (vm["repeats"].as<int>() < 10) throw BadInput("--repeats: must be ≥ 10 (got " + std::to_string(vm["repeats"].as<int>()) + ")");
    if (vm["warmup"].as<int>() < 0) throw BadInput("--warmup: must be ≥ 0");
  } catch (const BadInput& e) {
    std::cerr << "flashio_kernel_bench: " << e.what() << "\n";
    return 2;
  } catch (const po::error& e) {
    std::cerr << "flashio_kernel_bench: " << e.what() << " (see --help)\n";
    return 2;
  }
  if (!fk::gpu_available()) {
    std::cerr << "flashio_kernel_bench: no CUDA device present\n";
    return 1;
  }

  bool sweep_all = false;
  for (const std::string& t : tilings) sweep_all = sweep_all || t == "all";
  std::ostringstream csv;
  csv << "source,algo,pass,kernel,batch,heads,seqlen,headdim,dtype,causal,sram_bytes,block_r,block_c,hw,mask,"
         "dropout,flops,time_ms,tflops\n";
  std::printf("%-8s %-6s %4s %4s %6s %4s %-4s %6s %9s %9s %10s %8s\n", "algo", "pass", "B", "H", "N", "d", "dtype",
              "causal", "fwd_tile", "bwd_tile", "time_ms", "TFLOP/s");
  try {
    for (const std::string& algo_name : algos)
      for (const Shape& shape : shapes)
        for (const std::string& causal : causals)
          for (const std::string& pass_name : passes) {
            const fk::Algo algo = fk::parse_algo(algo_name);
            const fk::Pass pass = fk::parse_pass(pass_name);
            // Which tilings: standard has none; 'all' expands to the registry's for this pass.
            std::vector<std::pair<int, int>> tiles;
            for (const std::string& t : tilings) {
              if (algo == fk::Algo::standard) {
                tiles = {{0, 0}};
                break;
              }
              if (t == "all") {
                const fk::Pass reg_pass = pass == fk::Pass::bwd ? fk::Pass::bwd : fk::Pass::fwd;
                for (const fk::KernelEntry& e : fk::registry())
                  if (e.algo == algo && e.pass == reg_pass && e.headdim == shape.headdim && e.dtype == dtype)
                    tiles.push_back({e.block_r, e.block_c});
              } else {
                tiles.push_back(parse_tiling(t, "--tiling"));
              }
            }
            for (const auto& [br, bc] : tiles) {
              fk::AttentionConfig cfg;
              cfg.batch = shape.batch, cfg.heads = shape.heads, cfg.seqlen = shape.seqlen;
              cfg.headdim = shape.headdim;
              cfg.dtype = dtype;
              cfg.algo = algo;
              cfg.causal = causal == "1";
              cfg.block_r = br, cfg.block_c = bc;
              if (algo != fk::Algo::standard) {
                // bwd rows: the asked tiling is the backward's; fwdbwd: --bwd-tiling when given.
                std::pair<int, int> b = pass == fk::Pass::bwd ? std::pair{br, bc} : bwd_tiling;
                if (b.first == 0) {
                  const fk::KernelEntry& d = fk::default_entry(algo, fk::Pass::bwd, int(shape.headdim), dtype);
                  b = {d.block_r, d.block_c};
                }
                if (b.first > 0) cfg.bwd_block_r = b.first, cfg.bwd_block_c = b.second;
                if (pass == fk::Pass::bwd) cfg.block_r = cfg.block_c = 0;  // forward: default tiling
              }
              std::unique_ptr<fk::AttentionRun> run_ptr;
              try {
                run_ptr = std::make_unique<fk::AttentionRun>(cfg);
              } catch (const std::invalid_argument& e) {
                if (!sweep_all) throw;
                std::fprintf(stderr, "skipped (%s)\n", e.what());  // e.g. a forward-only tiling in fwdbwd
                continue;
              }
              fk::AttentionRun& run = *run_ptr;
              run.fill_inputs(vm["seed"].as<uint64_t>());
              fk::TimingOptions topt;
              topt.repeats = vm["repeats"].as<int>();
              topt.warmup = vm["warmup"].as<int>();
              const fk::Timing t = fk::time_pass(run, pass, topt);
              const double flops = fk::convention_flops(cfg, pass);
              const double tflops = flops / (t.time_ms * 1e-3) / 1e12;
              const fk::KernelEntry* fe = run.forward_entry();
              const fk::KernelEntry* be = run.backward_entry();
              // The row's tiling columns: the kernel of the pass (fwdbwd: the forward's).
              const fk::KernelEntry* row_entry = pass == fk::Pass::bwd ? be : fe;
              int sram = 0;
              if (fe && pass != fk::Pass::bwd) sram = std::max(sram, fe->smem_bytes);
              if (be && pass != fk::Pass::fwd) sram = std::max(sram, be->smem_bytes);
              const std::string tile_f = fe ? std::to_string(fe->block_r) + "x" + std::to_string(fe->block_c) : "-";
              const std::string tile_b = be ? std::to_string(be->block_r) + "x" + std::to_string(be->block_c) : "-";
              std::printf("%-8s %-6s %4lld %4lld %6lld %4lld %-4s %6s %9s %9s %10.4f %8.1f\n", algo_name.c_str(),
                          pass_name.c_str(), (long long)cfg.batch, (long long)cfg.heads, (long long)cfg.seqlen,
                          (long long)cfg.headdim, fk::to_string(dtype).c_str(), causal.c_str(),
                          pass == fk::Pass::bwd ? "-" : tile_f.c_str(), pass == fk::Pass::fwd ? "-" : tile_b.c_str(),
                          t.time_ms, tflops);
              std::fflush(stdout);
              csv << "measured," << algo_name << "," << pass_name << ",total," << cfg.batch << "," << cfg.heads << ","
                  << cfg.seqlen << "," << cfg.headdim << "," << fk::to_string(dtype) << "," << causal << ","
                  << (row_entry ? std::to_string(sram) : "") << ","
                  << (row_entry ? std::to_string(row_entry->block_r) : "") << ","
                  << (row_entry ? std::to_string(row_entry->block_c) : "") << "," << vm["hw"].as<std::string>()
                  << ",0,0," << fmt(flops) << "," << fmt(t.time_ms) << "," << fmt(tflops) << "\n";
            }
          }
  } catch (const std::invalid_argument& e) {
    std::cerr << "flashio_kernel_bench: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "flashio_kernel_bench: " << e.what() << "\n";
    return 1;
  }
  if (vm.count("csv")) {
    std::ofstream out(vm["csv"].as<std::string>());
    out << csv.str();
    if (!out) {
      std::cerr << "flashio_kernel_bench: --csv: cannot write " << vm["csv"].as<std::string>() << "\n";
      return 1;
    }
  }
  return 0;
}
