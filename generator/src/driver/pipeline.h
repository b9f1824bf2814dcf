#pragma once
#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "codegen/emit_cpp.h"

namespace akg {

extern const char *const kGeneratorVersion;

// The passes, in the order run_pipeline runs them.
const std::vector<std::string> &pipeline_pass_names();

// Seconds spent in each pass, summed over the kernels given to run_pipeline (any thread).
class PassTimes {
public:
    void add(const std::string &pass, double seconds);
    // One line per pass, slowest first, with its share of the total.
    std::string report() const;

private:
    mutable std::mutex mutex_;
    std::map<std::string, double> seconds_;
};

// What run_pipeline learns of a kernel that is one contraction whose B can be packed ahead of
// time (akg_pack_input): B's index among the inputs and the bytes of its packed form.
struct PackableB {
    bool packable = false;
    int input = -1;
    int64_t bytes = 0;
    std::string pack_function; // the packing function of the run with B packed ahead of time
};

struct PipelineOptions {
    ScheduleOptions schedule;
    EmitOptions emit;
    // Print the IR after this pass ("all" for every pass) to `dump`.
    std::string dump_after;
    std::ostream *dump = nullptr;
    PassTimes *times = nullptr; // when set, each pass's time is added to it
    // Set by run_parts for a contraction part followed by a row part: the row epilogue it
    // proposes. The GEMM path fills *row_epilogue_taken when it takes it, leaves its rows 0
    // when its blocking does not keep whole rows together.
    const RowEpilogue *row_epilogue = nullptr;
    struct RowEpilogueTaken {
        int rows = 0;                 // the rows of a panel (mr) it runs on
        bool streams_outputs = false; // RowEpilogue::streams_outputs as planned
    };
    RowEpilogueTaken *row_epilogue_taken = nullptr;
    // Set by the GEMM path of a kernel that is one contraction (run_pipeline's own use).
    PackableB *packable_b = nullptr;
    // false: row parts run after their GEMM as parts of their own (the ablation).
    bool row_epilogues = true;
    // Set for the packed twin of a kernel of parts: the symbol of the run whose part functions
    // it calls, emitting only its GEMM part (the other parts do not read the packed B).
    std::string parts_of;
};


// The formula IR as the dumps print it (one line per stage).
std::string dump_graph(const TensorGraph &g);

// Composite kernel → C++ source of the kernel (see emit_cpp.h), ending with its
// akg_prepack_<symbol> (akg_kernel_def.h): for a kernel whose B can be packed ahead of time, the
// kernel again as it reads B so packed (ScheduleOptions::prepacked_b) and B's packing function.
std::string run_pipeline(const CompositeKernel &kernel, const PipelineOptions &options, PackableB *packable = nullptr);

} // namespace akg
