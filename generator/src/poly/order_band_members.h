#pragma once
#include "poly/poly_model.h"

namespace akg {

// isl's scheduler orders the members of a fully parallel band without looking at memory: a
// global average pool over [N, C, 7, 7] came out as channel-outer, batch-inner, jumping
// C*49 elements between consecutive iterations. In every outermost band whose members are all
// coincident (so any order is legal), this pass orders the members by the stride they give the
// largest tensor the band accesses: largest stride outermost, so that consecutive iterations
// touch consecutive memory. Copies that move whole rows order by the larger of the stride in
// the input and in the output (see order_members); `options`: whether outputs will stream.
void order_band_members(PolyModel &model, const ScheduleOptions &options);

// The cost model's locality term: for the statement with the most iterations, the number of
// pairs of its loops (in schedule order) where an outer loop has a smaller stride over its
// largest tensor than an inner one (0: consecutive iterations of every loop walk memory in
// order); an outer loop of stride 1 does not count (sink-columns makes it the inner one). compute_schedule uses it to choose between the fused and the unfused schedule.
int64_t loop_order_inversions(const PolyModel &model);

// The number of (elementwise statement, sequential loop) pairs where the loop walks the
// statement's largest tensor contiguously (stride 1). Such a loop cannot be a vector loop: an
// elementwise producer fused into the loop of a row reduction (softmax's exponentials into
// their sum) then runs scalar. Reduction updates in such loops are fine (lane reductions).
int64_t sequential_contiguous_loops(const PolyModel &model);

// Per member of `band` (kept), the distance in elements between the addresses of the largest
// buffer the band's statements access at consecutive values of that member (0 where unknown);
// `among`: only these accesses (the writes, say) instead of all; `prefer_written`: of buffers
// of the largest size, a written one (else the first).
std::vector<int64_t> member_strides(const PolyModel &model, isl_schedule_node *band, const isl::union_map *among = nullptr, bool prefer_written = false);

} // namespace akg
