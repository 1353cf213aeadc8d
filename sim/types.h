// The vocabulary of the model (docs/architecture.md, "Vocabulary"): element types, passes,
// algorithms. Parsing and printing live here so the CLI, the GUI and the rows agree.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flashio::sim {

enum class DType { fp16, bf16, fp32 };
enum class Pass { fwd, bwd, fwdbwd };
enum class Algo { standard, flash1, flash2, blocksparse };

// Bytes of one element of the type: the one place elements become bytes.
int64_t element_bytes(DType dtype);

std::string to_string(DType dtype);
std::string to_string(Pass pass);
std::string to_string(Algo algo);

std::optional<DType> parse_dtype(std::string_view text);
std::optional<Pass> parse_pass(std::string_view text);
std::optional<Algo> parse_algo(std::string_view text);

// The allowed spellings, for error messages ("fp16, bf16, fp32").
std::string allowed_dtypes();
std::string allowed_passes();
std::string allowed_algos();

bool has_forward(Pass pass);   // fwd or fwdbwd
bool has_backward(Pass pass);  // bwd or fwdbwd

}  // namespace flashio::sim
