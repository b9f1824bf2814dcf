#pragma once
#include "lower/tensor_graph.h"

#include <optional>

namespace akg {

// A comparison of a value rounded to float16 with a float16 constant, `round16(x) <= c`, is a
// comparison of x itself with a threshold: the largest float that rounds to c or below is the
// midpoint between c and the next float16, included when round-half-even sends the midpoint
// to c. Dropout masks (`round16(u) <= keep_probability`) then compare each element without
// rounding it. NaN compares false either way. This pass rewrites every such comparison.
void compare_rounded_float16(TensorGraph &graph);

// The comparison of x that is equivalent to `round16(x) OP c` for OP one of "akg_flt",
// "akg_fle", "akg_fgt", "akg_fge" and a finite float16 value c: the comparison function and its
// float32 threshold; nothing when c is not a finite float16 value.
struct Float16Threshold {
    std::string compare; // akg_flt / akg_fle / akg_fgt / akg_fge
    float threshold;
};
std::optional<Float16Threshold> float16_threshold(const std::string &compare, float c);

} // namespace akg
