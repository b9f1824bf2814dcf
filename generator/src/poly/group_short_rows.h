#pragma once
#include "poly/poly_model.h"

#include <isl/schedule_node.h>

namespace akg {

// Sums over short rows (global average pooling: 65536 rows of 49 halves) pay, per row, for a
// lane reduction built for long rows: a block of lanes, a masked last block, and a halving tree
// that combines the lanes into one sum, then a scalar epilogue. About 45 instructions for 49
// elements: the kernel ran at 27% of the memory roofline.
//
// Under a parallel mark whose band's members are all coincident and whose body is a sequence
// with one sum of fewer than kShortRowElements terms per row, over a kernel input read as is
// (or widened from float16), where one iteration of the band reads exactly one row of it (a
// contiguous run of its terms; not the block of columns sink-columns makes an iteration of a
// column sum), this pass tiles the band's innermost member by kRowsPerGroup and moves the point
// loop into every pass, as pair-rows does with two rows: the initializations of 16 rows, their
// sums, then their epilogues, which vectorize across the rows. The emitter computes the 16
// sums with one call (akg_row_sums_f16 / akg_row_sums_f32): each row's terms are added in one
// vector, and the 16 vectors are combined by a transposing tree, four permute-and-add levels
// for all 16 rows instead of a tree per row. Legal because the band is coincident: no
// dependence crosses rows, so each pass may run for 16 rows before the next starts.
void group_short_rows(PolyModel &model);
// The sum whose rows the pass groups under `band` (the band under a parallel mark), or null;
// pair-rows leaves such bands alone.
const PolyStatement *groups_short_rows(const PolyModel &model, isl_schedule_node *band);

constexpr int64_t kRowsPerGroup = 16;     // one vector of float sums
constexpr int64_t kShortRowElements = 64; // longer rows amortize their lane reduction

// The kernel input read a sum adds up, when its term is the read itself or the read of a
// float16 input widened to float32 (global average pooling); null otherwise.
const Halide::Internal::Call *summed_input_read(const PolyModel &model, const Stage &sum);

} // namespace akg
