// StridedSlice's attributes (begin/end/strides and the five masks, numpy/TensorFlow semantics as
// docs/OPS.md states them) resolved into one affine map from output to input indices.
#pragma once

#include "frontend/composite_kernel.h"

namespace akg {

struct SliceDim {
    int input_dim = -1; // -1: a new axis of size 1
    int64_t begin = 0;
    int64_t stride = 1;
};

struct SlicePlan {
    Shape out_shape;
    std::vector<SliceDim> out_dims;                 // one per output dimension
    std::vector<std::pair<int, int64_t>> fixed;     // shrunk input dimensions and their index
};

// Throws UserError (through op_error) for a zero stride, an index a shrink bit makes out of
// range, or more slice entries than the input has dimensions.
SlicePlan strided_slice_plan(const CompositeKernel &kernel, const OpDesc &op, const Shape &in);

} // namespace akg
