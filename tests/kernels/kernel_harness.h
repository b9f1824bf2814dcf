// Runs a kernel of a table on reference inputs and compares with the reference evaluator.
#pragma once

#include <string>
#include <vector>

#include "akg_kernel_def.h"
#include "reference_evaluator.h"

namespace akg::test {

struct KernelCheck {
    bool ok = true;
    std::string message;
};

// Loads the composite JSON at `json_path`, runs `kernel` through akg_run on
// random_inputs(seed) and compares every output and every in-place updated input.
KernelCheck check_kernel_against_reference(const akg_kernel *kernel, const std::string &json_path, uint64_t seed);

} // namespace akg::test
