// What the catalog checks that read the built library's machine code share
// (test_catalog_resources.cpp: registers and stack; test_step_loops.cpp: step-loop instructions):
// a function's demangled name, and the __global__ function template that a catalog entry's main
// kernel instantiates (kernels/*.cuh).
#pragma once
#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "sim/kernel_catalog.h"

namespace flashio::test {

inline std::string demangle(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> text(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                                   &std::free);
  return status == 0 && text ? std::string(text.get()) : mangled;
}

inline std::string main_function(const sim::BuiltKernel& k) {
  if (k.algo == sim::Algo::flash1) return k.pass == sim::Pass::fwd ? "flash1_fwd_kernel" : "flash1_bwd_kernel";
  if (k.pass == sim::Pass::bwd) return k.mma == sim::MmaKind::wgmma ? "flash2_bwd_wgmma_kernel" : "flash2_bwd_kernel";
  switch (k.mma) {
    case sim::MmaKind::wgmma: return "flash2_fwd_wgmma_kernel";
    case sim::MmaKind::wgmma_ws: return "flash2_fwd_ws_kernel";
    case sim::MmaKind::mma_sync: break;
  }
  return "flash2_fwd_kernel";
}

}  // namespace flashio::test
