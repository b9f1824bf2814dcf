// The machine a kernel variant is generated for: the one place that knows the hardware.
//
// A Target names an instruction-set level (the x86-64 psABI levels, Armv8 ASIMD) together
// with the machine facts the schedule and the emitter need: vector width, cache line and
// cache sizes, the cores the schedule plans for, and the costs the cost model weighs.
// ScheduleOptions::for_target (poly/poly_model.h) turns these facts into schedule
// parameters; no pass or emitter code holds a machine constant of its own.
//
// The same facts reach the build: `akg-gen targets` prints each target's compiler flags and
// the CPU features the runtime checks before it runs that variant (kernellib's AKG_CPU_*).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace akg {

enum class Arch { X86_64, AArch64 };

struct Target {
    std::string name;           // "x86-64-v4", the name users pass to --target and AKG_MAX_ISA
    Arch arch = Arch::X86_64;
    // The C identifier that tells this variant's symbols apart: akg_kernel_fn_<kernel>__<suffix>.
    std::string symbol_suffix;
    // kernellib's AKG_CPU_* flags the CPU must have to run this variant (akg_kernel_def.h).
    std::vector<std::string> cpu_features;
    // Compiler flags of this variant's kernels, beside the common ones (-O3, -fopenmp, ...).
    std::vector<std::string> compile_flags;
    // The ISA's own features, for the schedule and the emitter.
    int vector_bits = 128;
    bool fma = false;              // fused multiply-add instructions
    bool float16_conversion = false; // vector float16 <-> float32 (F16C, AVX-512, ASIMD)
    bool masked_vectors = false;   // per-lane masks on loads and stores (AVX-512)
    bool nontemporal_stores = true; // stores that bypass the caches (movnt*, stnp)
    int fma_units = 2;             // vector FMA pipes per core
    int vector_registers = 16;     // architectural vector registers (the GEMM micro-tile)
    // The memory system the schedule plans for (typical parts of the ISA level's era).
    int64_t cache_line_bytes = 64;
    int64_t l1d_bytes = 32 * 1024;      // per core
    int l1d_ways = 8;                   // associativity: the GEMM blocking model's unit of cache
    int64_t l2_bytes = 1024 * 1024;     // per core
    int l2_ways = 16;
    int64_t llc_bytes = int64_t{32} << 20; // shared
    // Pages of the L1 data TLB: a kernel that reads a page per row of a tensor (B read in place)
    // keeps the rows it revisits to this many pages.
    int64_t page_bytes = 4096;
    int l1_dtlb_entries = 64;
    int cores = 2;                 // threads the schedule divides its work among
    // Costs for the cost model, in nanoseconds.
    double fork_join_ns = 1000;    // an OpenMP parallel region that does nothing
    double float16_convert_ns = 0.5; // one vector of float16 -> float32 and back

    // Lanes of one vector register for elements of `bits` bits.
    int lanes(int bits) const { return vector_bits / bits; }
    bool operator==(const Target &o) const { return name == o.name; }
};

// The named targets, best first within each architecture.
const std::vector<Target> &all_targets();
// The target called `name`; throws UserError naming the known targets otherwise.
const Target &target_named(const std::string &name);
// The targets of one architecture, best first (what a default build compiles).
std::vector<const Target *> targets_of(Arch arch);
// The best named target the machine running the generator supports (the default of --target).
const Target &host_target();
// The target whose schedule decisions the pipeline takes when no target is named: the first
// x86-64 one, so that results do not depend on the machine that generates.
const Target &default_target();

} // namespace akg
