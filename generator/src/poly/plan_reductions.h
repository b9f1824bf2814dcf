#pragma once
#include "poly/poly_model.h"

namespace akg {

// Decides how every reduction accumulates, as data the emitter reads (PolyModel::reduction_plans,
// PolyModel::column_sum_block_rows, PolyModel::chunk_sums_block) and a tuner may change. Per
// update statement:
// - its accumulator between loop levels: double for float sums of
//   ScheduleOptions::double_lanes_from_terms terms or more, unsigned for int32 sums and products;
// - the explicit lanes of its innermost loop (below vectorize's mark::Reduction):
//   ScheduleOptions::reduction_lanes per block, reduction_wide_lanes where the loop has constant
//   bounds and at least reduction_wide_lanes_from iterations; float lanes for a double sum whose
//   lanes each add fewer than double_lanes_from_terms terms, and then groups of
//   float_lane_blocks blocks summed in float lanes between double additions;
// - a reduction of the whole kernel (a scalar, no loop around its nest) whose innermost loop has
//   at least whole_reduction_split_from iterations: split into whole_reduction_chunks ranges.
//
// Before: mark "reduction" over the band { S1[r0] -> [r0] } (S1: sum of 1048576 floats).
// After:  S1: accumulator double, 64 float lanes in groups of 32 blocks, 16 chunks.
void plan_reductions(PolyModel &model, const ScheduleOptions &options);

// The plans as text, one line per update statement (for --dump-after=plan-reductions).
std::string reduction_plans_text(const PolyModel &model);

} // namespace akg
