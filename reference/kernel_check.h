// Runs a generated kernel on random inputs and compares it with the reference evaluator.
// Used by the tests and by `akg-gen check`; the kernel is run through an akg_run entry point
// given by the caller (the linked library's, or that of a shared object made on demand).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "akg_kernel_def.h"
#include "reference_evaluator.h"

namespace akg::reference {

struct KernelCheck {
    bool ok = true;
    std::string message;     // the mismatches, one line each
    double worst_abs_error = 0;
    // Compared elements where the reference evaluated per op in the tensors' dtypes disagrees
    // with the one in double beyond the tolerance (compare_conditioned), over all outputs and
    // updated inputs; `elements` counts every compared element. Counted only in kernels that
    // miss the double evaluation somewhere (check_kernel evaluates per op only then).
    size_t ill_conditioned = 0;
    size_t elements = 0;
};

struct CheckOptions {
    // How the reference rounds float16 intermediates; unset: as the kernel's JSON asks
    // (float16_rounding_of).
    std::optional<Float16Rounding> float16;
    // Replace about 2% of every float input's elements (at least its first and last) by NaN,
    // +Inf and -Inf in turn: the kernel must give NaN and infinities where the reference does.
    bool special_values = false;
};

using RunFn = akg_status (*)(const akg_kernel *, const akg_tensor *, size_t, const akg_tensor *, size_t);

// Runs `kernel` through `run` on random_inputs(kernel_json, seed) and compares every output
// and every in-place updated input with the reference: evaluate() in double (E) and, to tell
// ill-conditioned elements from failures, per op in the tensors' dtypes (D), by
// compare_conditioned; D only when some element misses E. Throws Error where the reference cannot evaluate the kernel.
KernelCheck check_kernel(const akg_kernel *kernel, const nlohmann::json &kernel_json, uint64_t seed, RunFn run,
                         const CheckOptions &options = {});

// Runs `kernel` on the same inputs without evaluating the reference: ok when akg_run returns
// AKG_STATUS_OK. For the sanitized build at the catalog's real shapes, where the instrumented
// double-precision reference would take 20x the kernel's time (values are checked by the main
// build).
KernelCheck run_kernel(const akg_kernel *kernel, const nlohmann::json &kernel_json, uint64_t seed, RunFn run);

// The bytes of every output and every input after running `kernel` once on
// random_inputs(kernel_json, seed) (what a run at another thread count must reproduce);
// nullopt when the run fails.
std::optional<std::vector<std::vector<unsigned char>>> kernel_result_bytes(const akg_kernel *kernel, const nlohmann::json &kernel_json,
                                                                          uint64_t seed, RunFn run);

} // namespace akg::reference
