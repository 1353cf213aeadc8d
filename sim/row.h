// One row schema for everything (docs/rows.md): sim output, measured rows, peers
// (experiments/peers.py) and bounds all use these columns, so they join.
// An empty cell (std::nullopt) means "not known", never 0.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/kernel_catalog.h"
#include "sim/key_band.h"
#include "sim/kernel_kind.h"
#include "sim/row_identity.h"
#include "sim/types.h"

namespace flashio::sim {

struct SimResult;

struct Row {
  // Key columns. The identity columns are typed (sim/row_identity.h); cell() spells them.
  RowSource source = RowSource::model;
  RowAlgo algo = RowAlgo::standard;
  Pass pass = Pass::fwd;
  std::optional<KernelKind> kernel;  // one kernel of the model; nullopt: the total ("total")
  int64_t batch = 0, heads = 0, seqlen = 0, headdim = 0;
  DType dtype = DType::fp16;
  int causal = 0;
  std::optional<int64_t> sram_bytes, block_r, block_c;  // peers have no tiling
  std::string hw;
  // Variant columns (added on purpose to the key columns, docs/rows.md: sweeps over them must not
  // collide).
  int mask = 0;
  double dropout = 0.0;
  std::string block_mask;
  // Shapes people serve (docs/shapes.md): K/V heads and keys per head, resolved (equal to heads
  // and seqlen when the problem does not set them; a file without the columns reads so), and
  // whether the kernels per query head take a group's rows (sim/config.h, gqa_pack).
  int64_t kv_heads = 0, seqlen_k = 0;
  int gqa_pack = 1;
  // Split-KV's key splits of flash2's forward (sim/config.h, splits); 1 in a file without the column.
  int64_t splits = 1;
  // A paged KV cache's page size (sim/config.h, page_size); 0 (contiguous) in a file without the column.
  int64_t page_size = 0;
  // Per-sequence key lengths (sim/problem.h, KeyLengths::source): the lengths file as given;
  // empty (every sequence Nk keys) in a file without the column.
  std::string lengths;
  // Whether the sequences of `lengths` are packed without padding (sim/problem.h, Problem::varlen;
  // docs/shapes.md, "Variable-length batches"): 1, or 0 (the padded layout) in a file without the column.
  int varlen = 0;
  // A sliding window's sides (sim/problem.h; kNoWindow, written `none`, in a file without the columns).
  int64_t window_left = kNoWindow, window_right = kNoWindow;
  // The family of the kernel the row's pass times (sim/kernel_choice.h, row_kernel_impl): the
  // backward's for pass bwd, else the forward's (`--kernel`): written empty where no built kernel
  // applies (standard, a tiling not built, peers), and read so from a file without the column.
  std::optional<MmaKind> kernel_impl;
  // Value columns.
  std::optional<double> flops, flops_tensor, flops_exp, flops_other;
  std::optional<double> io_read_bytes, io_write_bytes, dram_read_bytes, dram_write_bytes;
  std::optional<double> extra_memory_bytes, time_ms, tflops;
  // Read and written together, where only the total is known (the measured side of `flashio
  // compare` output, read_rows_csv): not columns of the schema, empty otherwise.
  std::optional<double> io_total_bytes, dram_total_bytes;

  // Whether the row is the configuration's whole pass (kernel=total), not one kernel.
  bool is_total() const { return !kernel; }
};

// The kernel column's spelling: to_string(KernelKind), or "total" for nullopt (read_rows_csv
// reads both back).
std::string kernel_text(const std::optional<KernelKind>& kernel);

// Column names in order: key columns, then value columns.
const std::vector<std::string>& row_columns();
const std::vector<std::string>& key_columns();
// A window side as rows spell it: its keys, or `none` (kNoWindow).
std::string window_text(int64_t side);

// A row whose key columns are the configuration's (value columns empty): the one place a
// Config becomes key columns, for model, measured and bound rows alike.
struct Config;
Row config_row(const Config& config, RowSource source);

// Rows of a result: one per kernel, then kernel=total. source defaults to model (closed form,
// walk, execute) or cache (the L2 model, which fills dram_*); a given source overrides.
std::vector<Row> rows_from_result(const SimResult& result,
                                  std::optional<RowSource> source = std::nullopt);

std::string csv_header();
// A csv cell as RFC 4180 writes it: quoted when it holds a comma, a quote or a line break, its
// quotes doubled; other text as it is (what to_csv_line does to every cell; read_rows_csv reads it).
std::string csv_field(const std::string& text);
std::string to_csv_line(const Row& row);
nlohmann::json to_json(const Row& row);

// Cell access by column name (empty string when unknown); used by writers, the GUI's table.
std::string cell(const Row& row, const std::string& column);

// Reads rows written by to_csv_line or by experiments/peers.py: a header line, columns in any
// order, lines starting with '#' skipped, columns outside the schema ignored. The identity
// columns (source, algo, pass, kernel, dtype) are required; of the others a subset is allowed
// (missing ones stay empty or 0). `flashio compare` output (no `source` column, a
// `predicted_source` one) is read as its measured rows (source=measured; see row.cpp).
// Throws InvalidInput, one line naming `name`, the line number and the problem, for a header
// without an identity column, a line with the wrong field count, a number that does not parse,
// or an identity cell that is not one of its spellings (the message lists them).
std::vector<Row> read_rows_csv(std::istream& in, const std::string& name);
// The `--format json` output of a flashio subcommand ({"context": ..., "rows": [...]}): its
// rows, checked as read_rows_csv checks a csv's (the same messages, naming `name`).
std::vector<Row> read_rows_json(const std::string& text, const std::string& name);
// A results file of any of the formats flashio writes: json (it starts with '{'), else csv
// (rows, or `flashio compare` output).
std::vector<Row> read_rows_file(const std::string& path);

}  // namespace flashio::sim
