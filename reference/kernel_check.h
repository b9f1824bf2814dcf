// Runs a generated kernel on random inputs and compares it with the reference evaluator.
// Used by the tests and by `akg-gen check`; the kernel is run through an akg_run entry point
// given by the caller (the linked library's, or that of a shared object made on demand).
#pragma once

#include <string>
#include <vector>

#include "akg_kernel_def.h"
#include "reference_evaluator.h"

namespace akg::reference {

struct KernelCheck {
    bool ok = true;
    std::string message;     // the mismatches, one line each
    double worst_abs_error = 0;
};

using RunFn = akg_status (*)(const akg_kernel *, const akg_tensor *, size_t, const akg_tensor *, size_t);

// Runs `kernel` through `run` on random_inputs(kernel_json, seed) and compares every output
// and every in-place updated input with evaluate().
KernelCheck check_kernel(const akg_kernel *kernel, const nlohmann::json &kernel_json, uint64_t seed, RunFn run);

// Runs `kernel` on the same inputs without evaluating the reference: ok when akg_run returns
// AKG_STATUS_OK. For the sanitized build at the catalog's real shapes, where the instrumented
// double-precision reference would take 20x the kernel's time (values are checked by the main
// build).
KernelCheck run_kernel(const akg_kernel *kernel, const nlohmann::json &kernel_json, uint64_t seed, RunFn run);


} // namespace akg::reference
