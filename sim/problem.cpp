#include "sim/problem.h"

#include "sim/errors.h"

namespace flashio::sim {

void validate(const Problem& p) {
  auto positive = [](int64_t v, Field field) {
    if (v <= 0)
      throw InvalidInput(field, "must be a positive integer (got " + std::to_string(v) + ")");
  };
  positive(p.batch, Field::batch);
  positive(p.heads, Field::heads);
  positive(p.seqlen, Field::seqlen);
  positive(p.headdim, Field::headdim);
  if (!(p.dropout >= 0.0 && p.dropout < 1.0))
    throw InvalidInput(Field::dropout, "must be a probability in [0, 1) (got " +
                                           std::to_string(p.dropout) + ")");
}

double convention_flops(const Problem& p) {
  const double forward = 4.0 * static_cast<double>(p.batch) * static_cast<double>(p.heads) *
                         static_cast<double>(p.seqlen) * static_cast<double>(p.seqlen) *
                         static_cast<double>(p.headdim);
  double factor = 0.0;
  if (has_forward(p.pass)) factor += 1.0;
  if (has_backward(p.pass)) factor += 2.5;  // five N²d GEMMs, the recomputation of S included
  return forward * factor * (p.causal ? 0.5 : 1.0);
}

}  // namespace flashio::sim
