#pragma once
#include "target/target.h"
#include <cstdint>
#include <string>
#include <vector>

#include "driver/compile_shared.h"

namespace akg {

struct CheckOptions {
    std::vector<std::string> paths;  // files or folders (searched recursively for *.json, *.info)
    std::vector<uint64_t> seeds{1};
    int batch = 24;                  // kernels per shared object (one compile/link per batch)
    int64_t max_elements = 64 << 20; // kernels with more input+output elements are scaled down (said so)
    int64_t scaled_elements = 16 << 20; // ... to about this many elements (see scale_shapes.h)
    bool unsupported_is_failure = false;
    bool skip_missing = false;       // exit 77 (skipped) when no path exists
    bool unfused = false;            // check the fusion ablation's kernels (one loop nest per op)
    bool no_row_epilogues = false;   // row parts after a GEMM run apart (the ablation)
    bool all_parallel = false;       // every loop nest in a parallel region, however small (ScheduleOptions::serial_accesses = 0)
    std::string work_dir;            // scratch folder (default: a fresh one under /tmp)
    std::string float16_intermediates; // "float16" / "float32" override the kernels' own (CompositeKernel::float16_per_op)
    bool time_passes = false;        // print the time spent in each pass
    bool generate_only = false;      // generate and report, compile and run nothing
    bool special_values = false;     // NaN and ±Inf sprinkled into the float inputs (reference::CheckOptions)
    bool threads_agree = false;      // also run each passing kernel at 1 thread: the bytes must equal the run at OMP_NUM_THREADS
};

// `akg-gen check`: generates, compiles and runs every kernel under the paths on random inputs
// and compares it with the reference evaluator. One line per kernel (PASS / FAIL with the
// worst error / UNSUPPORTED with the reason / SKIPPED with why), then a summary with the
// generation time (total, largest, kernels per second) and the ill-conditioned elements: those
// where the graph evaluated per op in its dtypes and in double disagree (reference/README.md),
// which are compared with the per-op result and counted, not failed.
// Returns the process exit status: non-zero when a kernel failed.
int check_kernels(const CheckOptions &options, const Toolchain &toolchain, const Target &target);

} // namespace akg
