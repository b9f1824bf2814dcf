#pragma once
#include "lower/tensor_graph.h"

namespace akg {

// Folds adjacent reduced dimensions that every access uses together, e.g. the H and W of an
// NCHW BatchNorm statistic:
//   sum[c] = Σ_{n,h,w} x[n, c, h, w]   →   sum[c] = Σ_{n,hw} x[n, c, hw]
// so that the innermost reduction loop is long (3136 instead of 56; 49 instead of 7 for a
// global average pool). A fold is kept only with its closure: every stage that reads a buffer
// whose view changes folds the matching pair of its own loops (elementwise or reduced), and
// every other access of those loops' variables must index two adjacent dimensions of the same
// extents; otherwise nothing changes.
void fold_reduction_dimensions(TensorGraph &graph);

} // namespace akg
