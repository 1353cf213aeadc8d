#include "sim/counts.h"

#include <sstream>

namespace flashio::sim {

int64_t Counts::io_read_bytes() const {
  int64_t s = 0;
  for (const auto& b : bytes) s = checked_add(s, b.read_bytes);
  return s;
}

int64_t Counts::io_write_bytes() const {
  int64_t s = 0;
  for (const auto& b : bytes) s = checked_add(s, b.write_bytes);
  return s;
}

Counts& Counts::operator+=(const Counts& o) {
  for (int i = 0; i < kTensorCount; ++i) {
    bytes[i].read_bytes = checked_add(bytes[i].read_bytes, o.bytes[i].read_bytes);
    bytes[i].write_bytes = checked_add(bytes[i].write_bytes, o.bytes[i].write_bytes);
  }
  flops += o.flops;
  return *this;
}

Counts Counts::scaled(int64_t k) const {
  Counts c;
  for (int i = 0; i < kTensorCount; ++i) {
    c.bytes[i].read_bytes = checked_mul(bytes[i].read_bytes, k);
    c.bytes[i].write_bytes = checked_mul(bytes[i].write_bytes, k);
  }
  c.flops = flops.scaled(k);
  return c;
}

std::string describe(const Counts& c) {
  std::ostringstream out;
  for (int i = 0; i < kTensorCount; ++i) {
    const auto& b = c.bytes[i];
    if (b.read_bytes == 0 && b.write_bytes == 0) continue;
    out << to_string(static_cast<Tensor>(i)) << " r " << b.read_bytes << " w " << b.write_bytes
        << ", ";
  }
  out << "flops tensor " << c.flops.tensor << " exp " << c.flops.exp << " other "
      << c.flops.other;
  return out.str();
}

}  // namespace flashio::sim
