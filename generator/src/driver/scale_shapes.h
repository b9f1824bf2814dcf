#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace akg {

// A composite kernel shrunk so that a correctness check of it stays cheap.
struct ScaledKernel {
    std::string text;        // the rewritten composite JSON
    std::string description; // e.g. "dim 30522 -> 4803": every dimension of that extent was changed
};

// `akg-gen check` runs kernels on real shapes, except those whose input+output element count
// exceeds a limit: a real BERT vocabulary table (30522 x 1024) would dominate the run. Such a
// kernel is scaled by changing one dimension *extent* everywhere it occurs (tensor shapes and the
// `shape` attributes of Reshape/BroadcastTo), largest extents of the largest tensor first, until
// the kernel has at most `target_elements`. Extents are never scaled below 2 (1 would turn a
// real dimension into a broadcast one). A rewrite is kept only when the result still parses and
// validates (a reshape that multiplies the chosen extent with another would not), so the checked
// kernel is always a well-formed kernel of the same graph. Returns the smallest kernel reached
// (the caller checks its size), or nothing when no extent could be scaled.
std::optional<ScaledKernel> scale_kernel_shapes(const std::string &text, const std::string &source, int64_t target_elements);

} // namespace akg
