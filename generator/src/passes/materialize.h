#pragma once
#include "lower/tensor_graph.h"

namespace akg {

// Decides which stages keep a buffer and inlines all others into their consumers.
//
// Kept: kernel inputs, reductions, stages bound to kernel outputs, in-place writes,
// elementwise stages that are expensive (transcendental math) and either read by several
// consumers or broadcast into a larger consumer (a LayerNorm's rsqrt(var+eps) per row, a
// softmax's exp), and stages that round to float16 and are broadcast into consumers at least
// 64 times larger (a float32 bias cast to float16 for every row), and, where the schedule
// fuses (`save_for_later_passes`), values costly to recompute that a reduction reads and the
// passes after it read again (a float16 residual sum or input row feeding a LayerNorm: one row
// buffer per parallel iteration once fused; unfused, a whole tensor written and read back, so
// the fusion ablation recomputes them as before). Everything else is recomputed where it is
// used, e.g.
//   t = x - mean[i]; y = t * t   →   y = (x[i,j] - mean[i]) * (x[i,j] - mean[i])  (CSE then shares it)
// Afterwards every tensor read names a buffer: in<k>, out<k> or t<k> (scratch).
void materialize_and_inline(TensorGraph &graph, bool save_for_later_passes = true);

// The materialized stages in execution order.
std::vector<const Stage *> materialized_stages(const TensorGraph &graph);

} // namespace akg
