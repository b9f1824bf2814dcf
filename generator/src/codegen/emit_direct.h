#pragma once

#include "codegen/emit_cpp.h"

namespace akg {

// The C++ of a part holding one direct op (kernel_parts.h): TensorScatterAdd and
// UnsortedSegmentSum walk the index rows in order, adding each row's slice into the element it
// names (rows × slice work; slices split across threads, so every element sums its rows in the
// same order at any thread count); CumSum and CumProd walk the axis in order, vectorized and
// split across threads over the other dimensions; Pool2D walks each window's rows and columns
// around a vector loop over the output's width (NCHW) or channels (NHWC). The same frame and
// entry point as emit_kernel_cpp's.
std::string emit_direct_cpp(const CompositeKernel &kernel, const EmitOptions &options);

} // namespace akg
