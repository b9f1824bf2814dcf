#pragma once
#include "lower/tensor_graph.h"

namespace akg {

// Folds adjacent loop dimensions that every access uses together, e.g. the H and W of an
// NCHW BatchNorm apply whose scale is per channel:
//   out[n, c, h, w] = x[n, c, h, w] * scale[c]   →   out[n, c, hw] = x[n, c, hw] * scale[c]
// so that inner loops are long (784 instead of 28: whole vectors, no remainder).
// Applies to kernels whose stages are all elementwise over one common shape; a pair (d, d+1)
// folds when each read either indexes two adjacent buffer dimensions of the same extents with
// exactly i_d, i_{d+1}, or uses neither. Buffers read that way are viewed with the two
// dimensions merged.
void fold_dimensions(TensorGraph &graph);

// `s` with dimensions k and k+1 merged into one (row-major: their product).
Shape merge_dimensions(const Shape &s, int k);

} // namespace akg
