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
  if (p.kv_heads < 0)
    throw InvalidInput(Field::kv_heads, "must be a positive integer dividing heads (got " + std::to_string(p.kv_heads) + ")");
  if (p.heads % p.kv_heads_count() != 0)
    throw InvalidInput(Field::kv_heads, "must divide heads = " + std::to_string(p.heads) + " (got " +
                                            std::to_string(p.kv_heads_count()) + "); 1 is multi-query attention");
  if (p.seqlen_k < 0)
    throw InvalidInput(Field::seqlen_k, "must be a positive integer (got " + std::to_string(p.seqlen_k) + ")");
  if (p.causal && p.keys() < p.seqlen)
    throw InvalidInput(Field::seqlen_k, "causal aligns the last query with the last key, so with Nk = " +
                                            std::to_string(p.keys()) + " < Nq = " + std::to_string(p.seqlen) +
                                            " the first queries see no key; allowed with causal: seqlen_k >= seqlen");
  if (!(p.dropout >= 0.0 && p.dropout < 1.0))
    throw InvalidInput(Field::dropout, "must be a probability in [0, 1) (got " +
                                           std::to_string(p.dropout) + ")");
}

double convention_flops(const Problem& p) {
  const double nq = static_cast<double>(p.seqlen), nk = static_cast<double>(p.keys());
  const double forward = 4.0 * static_cast<double>(p.batch) * static_cast<double>(p.heads) * nq * nk *
                         static_cast<double>(p.headdim);
  double factor = 0.0;
  if (has_forward(p.pass)) factor += 1.0;
  if (has_backward(p.pass)) factor += 2.5;  // five N²d GEMMs, the recomputation of S included
  return forward * factor * (p.causal ? 1.0 - nq / (2.0 * nk) : 1.0);
}

}  // namespace flashio::sim
