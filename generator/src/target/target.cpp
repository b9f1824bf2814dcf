#include "target/target.h"

#include "frontend/composite_kernel.h"

namespace akg {

namespace {

std::vector<Target> make_targets() {
    std::vector<Target> t;
    // AVX-512 F/BW/CD/DQ/VL (Skylake-X, Ice Lake, Sapphire Rapids, Zen 4/5). 512-bit vectors are
    // preferred: GCC's default of 256 bits for -march=x86-64-v4 halves the memory-bound kernels'
    // width for no gain on parts without a frequency penalty.
    Target v4;
    v4.name = "x86-64-v4";
    v4.symbol_suffix = "x86_64_v4";
    v4.cpu_features = {"AKG_CPU_X86_64_V2", "AKG_CPU_X86_64_V3", "AKG_CPU_X86_64_V4"};
    v4.compile_flags = {"-march=x86-64-v4", "-mtune=generic", "-mprefer-vector-width=512"};
    v4.vector_bits = 512;
    v4.fma = v4.float16_conversion = v4.masked_vectors = true;
    v4.vector_registers = 32;
    v4.l2_bytes = 1024 * 1024;
    t.push_back(v4);
    // AVX2, FMA, F16C, BMI1/2 (Haswell to Alder Lake, Zen 1-3).
    Target v3;
    v3.name = "x86-64-v3";
    v3.symbol_suffix = "x86_64_v3";
    v3.cpu_features = {"AKG_CPU_X86_64_V2", "AKG_CPU_X86_64_V3"};
    v3.compile_flags = {"-march=x86-64-v3", "-mtune=generic"};
    v3.vector_bits = 256;
    v3.fma = v3.float16_conversion = true;
    v3.l2_bytes = 512 * 1024;
    t.push_back(v3);
    // SSE4.2, POPCNT (Nehalem and later): the baseline every x86-64 server has.
    Target v2;
    v2.name = "x86-64-v2";
    v2.symbol_suffix = "x86_64_v2";
    v2.cpu_features = {"AKG_CPU_X86_64_V2"};
    v2.compile_flags = {"-march=x86-64-v2", "-mtune=generic"};
    v2.vector_bits = 128;
    v2.l2_bytes = 256 * 1024;
    v2.float16_convert_ns = 4;
    t.push_back(v2);
    // Armv8-A with ASIMD (Kunpeng 920, Graviton 2/3, Ampere): ASIMD, FMA and the float16
    // conversions are architectural, so the baseline needs no feature check.
    Target a64;
    a64.name = "aarch64";
    a64.arch = Arch::AArch64;
    a64.symbol_suffix = "aarch64";
    a64.cpu_features = {};
    a64.compile_flags = {"-march=armv8-a"};
    a64.vector_bits = 128;
    a64.fma = a64.float16_conversion = true;
    a64.fma_units = 2;
    a64.vector_registers = 32;
    a64.l1d_bytes = 64 * 1024;
    a64.l1_dtlb_entries = 48;
    t.push_back(a64);
    return t;
}

bool host_supports(const Target &t) {
#if defined(__x86_64__)
    if (t.arch != Arch::X86_64) return false;
    __builtin_cpu_init();
    bool v2 = __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt");
    bool v3 = v2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
    bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
              __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    if (t.name == "x86-64-v4") return v4;
    if (t.name == "x86-64-v3") return v3;
    return v2;
#elif defined(__aarch64__)
    return t.arch == Arch::AArch64;
#else
    (void)t;
    return false;
#endif
}

} // namespace

const std::vector<Target> &all_targets() {
    static const std::vector<Target> targets = make_targets();
    return targets;
}

const Target &target_named(const std::string &name) {
    std::string known;
    for (const auto &t : all_targets()) {
        if (t.name == name) return t;
        known += (known.empty() ? "" : ", ") + t.name;
    }
    throw UserError("unknown target '" + name + "'; the targets are: " + known);
}

std::vector<const Target *> targets_of(Arch arch) {
    std::vector<const Target *> out;
    for (const auto &t : all_targets())
        if (t.arch == arch) out.push_back(&t);
    return out;
}

const Target &host_target() {
    for (const auto &t : all_targets())
        if (host_supports(t)) return t;
    return default_target();
}

const Target &default_target() { return all_targets().front(); }

} // namespace akg
