#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "codegen/emit_cpp.h"

namespace akg {

extern const char *const kGeneratorVersion;

// The passes, in the order run_pipeline runs them.
const std::vector<std::string> &pipeline_pass_names();

struct PipelineOptions {
    ScheduleOptions schedule;
    EmitOptions emit;
    // Print the IR after this pass ("all" for every pass) to `dump`.
    std::string dump_after;
    std::ostream *dump = nullptr;
};

// Composite kernel → C++ source of the kernel (see emit_cpp.h).
std::string run_pipeline(const CompositeKernel &kernel, const PipelineOptions &options);

} // namespace akg
