// Every catalog kernel, at its real shapes and as its odd-shape twin (tests/patterns_small/),
// against the double-precision reference evaluator on several random seeds.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <omp.h>

#include "kernel_check.h"

extern "C" {
extern const akg_kernel *const akg_test_small_kernels[];
extern const size_t akg_test_small_kernel_count;
}

namespace {

std::string source_path(const std::string &relative) { return std::string(AKG_SOURCE_ROOT) + "/" + relative; }

// Runs `kernel` on the inputs its pattern's reference draws for `seed`, compared with that
// reference (reference::check_kernel) or run only (reference::run_kernel).
akg::reference::KernelCheck run_pattern_inputs(const akg_kernel *kernel, const std::string &json_path, uint64_t seed, bool compare) {
    std::ifstream in(json_path);
    if (!in) return {false, "cannot open " + json_path, 0};
    const nlohmann::json graph = nlohmann::json::parse(in);
    return compare ? akg::reference::check_kernel(kernel, graph, seed, akg_run) : akg::reference::run_kernel(kernel, graph, seed, akg_run);
}

std::vector<std::string> names(const akg_kernel *const *table, size_t count) {
    std::vector<std::string> out;
    for (size_t k = 0; k < count; ++k) out.push_back(table[k]->name);
    return out;
}

const akg_kernel *find(const akg_kernel *const *table, size_t count, const std::string &name) {
    for (size_t k = 0; k < count; ++k)
        if (name == table[k]->name) return table[k];
    return nullptr;
}

class CatalogKernel : public ::testing::TestWithParam<std::string> {};

// AKG_CATALOG_REAL_SHAPES=run-only (tools/ci-sanitized.sh): the kernels run at their real shapes
// without the reference, which under AddressSanitizer takes 20x the kernel's time; the main
// build checks the values.
bool real_shapes_run_only() {
    const char *mode = std::getenv("AKG_CATALOG_REAL_SHAPES");
    return mode && std::strcmp(mode, "run-only") == 0;
}

// Kernels with a matrix product run one seed at their real shapes: a second runs the same code
// on other values, and their double-precision reference takes seconds (the odd shapes run four).
bool has_matrix_product(const std::string &json_path) {
    std::ifstream in(json_path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.find("\"MatMul\"") != std::string::npos || text.find("\"BatchMatMul\"") != std::string::npos;
}

TEST_P(CatalogKernel, MatchesReferenceAtRealShapes) {
    const akg_kernel *k = akg_kernel_lookup(GetParam().c_str());
    ASSERT_NE(k, nullptr);
    const uint64_t seeds = has_matrix_product(source_path(k->pattern_file)) ? 1 : 2;
    for (uint64_t seed = 1; seed <= seeds; ++seed) {
        auto r = run_pattern_inputs(k, source_path(k->pattern_file), seed, !real_shapes_run_only());
        EXPECT_TRUE(r.ok) << GetParam() << " seed " << seed << ":\n" << r.message;
    }
}

// AKG_ODD_SHAPE_SEEDS=N caps the seeds of the odd-shape checks (the catalog_qemu_* tests: under
// qemu's emulated FMA, the long-K GEMM twins take a minute a seed; the native run of the same
// variant, catalog_max_isa_*, checks every seed).
uint64_t odd_shape_seeds(uint64_t wanted) {
    const char *cap = std::getenv("AKG_ODD_SHAPE_SEEDS");
    const long n = cap ? std::strtol(cap, nullptr, 10) : 0;
    return n > 0 ? std::min(wanted, static_cast<uint64_t>(n)) : wanted;
}

TEST_P(CatalogKernel, MatchesReferenceAtOddShapes) {
    const akg_kernel *k = find(akg_test_small_kernels, akg_test_small_kernel_count, GetParam());
    ASSERT_NE(k, nullptr) << "no odd-shape twin tests/patterns_small/" << GetParam() << ".json";
    for (uint64_t seed = 1; seed <= odd_shape_seeds(4); ++seed) {
        auto r = run_pattern_inputs(k, source_path(k->pattern_file), seed, true);
        EXPECT_TRUE(r.ok) << GetParam() << " (odd shapes) seed " << seed << ":\n" << r.message;
    }
}

// akg_run's signature over akg_pack_input and akg_run_packed: the packable input packed for the
// variant that runs here, the kernel run from it with that input's tensor zeroed (never read).
akg_status run_from_packed_weights(const akg_kernel *kernel, const akg_tensor *inputs, size_t num_inputs, const akg_tensor *outputs,
                                   size_t num_outputs) {
    const int64_t index = akg_kernel_packable_input(kernel);
    if (index < 0 || static_cast<size_t>(index) >= num_inputs) return AKG_STATUS_INVALID_ARGUMENT;
    akg_packed_input *packed = nullptr;
    akg_status st = akg_pack_input(kernel, &inputs[index], &packed);
    if (st != AKG_STATUS_OK) return st;
    std::vector<akg_tensor> rest(inputs, inputs + num_inputs);
    rest[static_cast<size_t>(index)] = akg_tensor{};
    st = akg_run_packed(kernel, packed, rest.data(), num_inputs, outputs, num_outputs);
    akg_packed_input_free(packed);
    return st;
}

// A GEMM whose weights can be packed ahead of time gives the reference's values from them too,
// on the variant this CPU (and AKG_MAX_ISA) picks.
TEST_P(CatalogKernel, PackedWeightsMatchReferenceAtOddShapes) {
    const akg_kernel *k = find(akg_test_small_kernels, akg_test_small_kernel_count, GetParam());
    ASSERT_NE(k, nullptr);
    if (akg_kernel_packable_input(k) < 0) GTEST_SKIP() << GetParam() << " has no input to pack ahead of time";
    std::ifstream in(source_path(k->pattern_file));
    const nlohmann::json graph = nlohmann::json::parse(in);
    for (uint64_t seed = 1; seed <= odd_shape_seeds(2); ++seed) {
        auto r = akg::reference::check_kernel(k, graph, seed, run_from_packed_weights);
        EXPECT_TRUE(r.ok) << GetParam() << " (odd shapes, packed weights) seed " << seed << ":\n" << r.message;
    }
}

// Which catalog kernels take packed weights is the plan's choice (b_packable_ahead): the
// GEMM patterns whose B is a weight input (with a LayerNorm part after the GEMM too), not the
// BatchMatMuls of attention or a weight gradient whose B is dY with its column sum.
TEST(Catalog, TheGemmsWithAWeightInputTakeItPacked) {
    for (size_t i = 0; i < akg_kernel_count(); ++i) {
        const akg_kernel *k = akg_kernel_at(i);
        const std::string name = akg_kernel_name(k);
        const bool gemm = name.rfind("gemm_", 0) == 0;
        const bool expected = gemm && name.find("_dw_") == std::string::npos;
        EXPECT_EQ(akg_kernel_packable_input(k) >= 0, expected) << name;
        if (expected) EXPECT_EQ(akg_kernel_packable_input(k), 1) << name << ": B is the second input";
    }
}

std::vector<std::string> catalog_names() {
    std::vector<std::string> out;
    for (size_t k = 0; k < akg_kernel_count(); ++k) out.push_back(akg_kernel_name(akg_kernel_at(k)));
    return out;
}

INSTANTIATE_TEST_SUITE_P(All, CatalogKernel, ::testing::ValuesIn(catalog_names()),
                         [](const auto &info) { return info.param; });

// Every output of `kernel` on fixed pseudo-random inputs, as bytes, run with `threads` OpenMP
// threads.
std::vector<std::vector<unsigned char>> outputs_with_threads(const akg_kernel *kernel, int threads) {
    auto bytes_of = [](akg_dtype t) -> size_t { return t == AKG_DTYPE_FLOAT16 ? 2 : t == AKG_DTYPE_FLOAT64 ? 8 : 4; };
    std::vector<std::vector<unsigned char>> in(akg_kernel_num_inputs(kernel)), out(akg_kernel_num_outputs(kernel));
    std::vector<akg_tensor> ins, outs;
    uint32_t state = 12345;
    for (size_t k = 0; k < in.size(); ++k) {
        akg_tensor_info info{};
        akg_kernel_input_info(kernel, k, &info);
        size_t n = 1;
        for (int d = 0; d < info.rank; ++d) n *= static_cast<size_t>(info.shape[d]);
        in[k].resize(n * bytes_of(info.dtype));
        for (size_t i = 0; i < n; ++i) {
            state = state * 1664525u + 1013904223u;
            float v = static_cast<float>(state >> 8) / 16777216.0f * 4.0f - 2.0f;
            if (info.dtype == AKG_DTYPE_FLOAT16) {
                uint16_t h = static_cast<uint16_t>(0x3c00u | ((state >> 9) & 0x3ffu)) ^ static_cast<uint16_t>((state & 1u) << 15); // +-[1, 2)
                std::memcpy(&in[k][2 * i], &h, 2);
            } else {
                std::memcpy(&in[k][4 * i], &v, 4);
            }
        }
        ins.push_back({in[k].data(), info.dtype, info.rank, info.shape, nullptr});
    }
    for (size_t k = 0; k < out.size(); ++k) {
        akg_tensor_info info{};
        akg_kernel_output_info(kernel, k, &info);
        size_t n = 1;
        for (int d = 0; d < info.rank; ++d) n *= static_cast<size_t>(info.shape[d]);
        out[k].assign(n * bytes_of(info.dtype), 0);
        outs.push_back({out[k].data(), info.dtype, info.rank, info.shape, nullptr});
    }
    int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    akg_status status = akg_run(kernel, ins.data(), ins.size(), outs.data(), outs.size());
    omp_set_num_threads(saved);
    EXPECT_EQ(status, AKG_STATUS_OK) << akg_kernel_name(kernel);
    return out;
}

// With one thread every parallel loop takes its serial twin, without an OpenMP region
// (akg_single_thread); with two, the OpenMP region. Both run the same iterations: every
// catalog kernel gives the same bits either way.
TEST(Catalog, OneThreadWithoutOpenMPRegionGivesTheSameBitsAsTwo) {
    for (size_t i = 0; i < akg_kernel_count(); ++i) {
        const akg_kernel *k = akg_kernel_at(i);
        ASSERT_NE(k, nullptr);
        EXPECT_TRUE(outputs_with_threads(k, 1) == outputs_with_threads(k, 2)) << akg_kernel_name(k);
    }
}

// Column sums split across threads combine in an order fixed by the generator (the chunks of
// rows of NHWC BatchNorm's statistics, the blocks of columns of the others), not by the thread
// count: 1, 2 and 3 threads give the same bits.
TEST(Catalog, ColumnSumsGiveTheSameBitsAtEveryThreadCount) {
    for (const char *name : {"bn_train_stats_nhwc_f16", "bn_train_stats_f16", "bias_gelu_grad_f16", "layernorm_bwd_dgamma_dbeta_f32"}) {
        const akg_kernel *k = akg_kernel_lookup(name);
        ASSERT_NE(k, nullptr) << name;
        auto one = outputs_with_threads(k, 1);
        for (int threads : {2, 3}) EXPECT_TRUE(outputs_with_threads(k, threads) == one) << name << " with " << threads << " threads";
    }
}

// ---- variants and dispatch ------------------------------------------------------------------

// The x86-64 level of this CPU, found with the compiler's own cpuid support rather than the
// runtime's, so that the runtime's choice is checked against an independent answer.
int host_x86_level() {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (!(__builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt"))) return 1;
    if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2"))) return 2;
    if (!(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
          __builtin_cpu_supports("avx512vl")))
        return 3;
    return 4;
#else
    return 0;
#endif
}

int level_of(const std::string &target) {
    if (target == "x86-64-v4") return 4;
    if (target == "x86-64-v3") return 3;
    if (target == "x86-64-v2") return 2;
    return 0;
}

// The variant every kernel must run here: the best compiled one within the CPU's level and
// AKG_MAX_ISA.
std::string expected_variant(const akg_kernel *k) {
    const char *cap = std::getenv("AKG_MAX_ISA");
    int limit = host_x86_level();
    if (cap && level_of(cap) > 0) limit = std::min(limit, level_of(cap));
    for (size_t v = 0; v < akg_kernel_num_variants(k); ++v) {
        std::string target = akg_kernel_variant_at(k, v);
        if (level_of(target) <= limit) return target;
    }
    return "";
}

// Every kernel runs the variant that the CPU and AKG_MAX_ISA allow, best first; the runtime's
// ISA agrees. Under qemu-x86_64 -cpu Haswell this is x86-64-v3, chosen by cpuid alone.
TEST(Variants, TheBestVariantTheCpuRunsIsChosen) {
    std::printf("akg_cpu_isa() = %s; AKG_MAX_ISA = %s\n", akg_cpu_isa(), std::getenv("AKG_MAX_ISA") ? std::getenv("AKG_MAX_ISA") : "(unset)");
    std::map<std::string, int> ran;
    for (const akg_kernel *const *table : {akg_catalog_kernels, akg_test_small_kernels}) {
        size_t count = table == akg_catalog_kernels ? akg_kernel_count() : akg_test_small_kernel_count;
        for (size_t i = 0; i < count; ++i) {
            const akg_kernel *k = table[i];
            ASSERT_GT(akg_kernel_num_variants(k), 0u) << k->name;
            const char *chosen = akg_kernel_variant(k);
            std::string expected = expected_variant(k);
            ASSERT_NE(chosen, nullptr) << k->name;
            EXPECT_EQ(std::string(chosen), expected) << k->name;
            ++ran[chosen];
        }
    }
#if defined(__x86_64__)
    const char *cap = std::getenv("AKG_MAX_ISA");
    int level = std::min(host_x86_level(), cap && level_of(cap) > 0 ? level_of(cap) : 4);
    EXPECT_EQ(std::string(akg_cpu_isa()), level >= 2 ? "x86-64-v" + std::to_string(level) : "x86-64");
#endif
    for (const auto &[target, n] : ran) std::printf("variant %s ran for %d kernels\n", target.c_str(), n);
}

// Every variant compiled into the build, not only the chosen one, matches the reference on the
// odd-shape twins: a variant this CPU can run is run directly through a descriptor that lists
// only it.
TEST(Variants, EveryVariantTheCpuRunsMatchesTheReference) {
    int checked = 0;
    for (size_t i = 0; i < akg_test_small_kernel_count; ++i) {
        const akg_kernel *k = akg_test_small_kernels[i];
        for (size_t v = 0; v < akg_kernel_num_variants(k); ++v) {
            if (level_of(k->variants[v].target) > host_x86_level()) continue;
            const akg_variant_def only[] = {k->variants[v], {nullptr, 0, nullptr, nullptr}};
            akg_kernel one = *k;
            one.variants = only;
            for (uint64_t seed : {1u, 2u}) {
                auto r = run_pattern_inputs(&one, source_path(k->pattern_file), seed, true);
                EXPECT_TRUE(r.ok) << k->name << " variant " << k->variants[v].target << " seed " << seed << ":\n" << r.message;
            }
            ++checked;
        }
    }
    std::printf("checked %d kernel variants\n", checked);
    EXPECT_GE(checked, static_cast<int>(akg_test_small_kernel_count));
}

TEST(Catalog, EveryKernelHasAnOddShapeTwin) {
    EXPECT_EQ(catalog_names(), names(akg_test_small_kernels, akg_test_small_kernel_count));
    EXPECT_GE(akg_kernel_count(), 20u);
}

} // namespace
