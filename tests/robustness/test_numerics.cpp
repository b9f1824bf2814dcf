// Numerics you can rely on (issue 5, item 5), through the public C ABI:
//  - NaN and ±Inf fed into every kernel (the odd-shape twins of tests/patterns_small/: every
//    generated code path, vector tiles and remainders, reductions, softmax, LayerNorm, GeLU)
//    propagate as in the double-precision reference evaluator, element by element;
//  - denormal and very large inputs of the softmax / LayerNorm / GeLU kernels never give NaN
//    where the reference has a number (and match it within tolerance where float32 can hold
//    the intermediate values);
//  - results are bitwise reproducible run to run (fixed OpenMP thread count), including on
//    NaN-laden inputs (the catalog's real shapes: tests/abi/test_guard_threads.c).
// The kernels are compiled with the library's own flags (kernel_cpp_args: no fast-math, see
// FlagsHaveNoFastMath), so these tests are the proof that the flags keep IEEE behaviour.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <functional>
#include <limits>
#include <random>

#include "kernel_check.h"

extern "C" {
extern const akg_kernel *const akg_test_small_kernels[];
extern const size_t akg_test_small_kernel_count;
}

namespace {

using akg::reference::Tensor;
namespace ref = akg::reference;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string source_path(const std::string &relative) { return std::string(AKG_SOURCE_ROOT) + "/" + relative; }

nlohmann::json load_json(const akg_kernel *k) {
    std::ifstream in(source_path(k->pattern_file));
    if (!in) throw std::runtime_error("cannot open " + source_path(k->pattern_file));
    return nlohmann::json::parse(in);
}

bool is_float(const std::string &dtype) { return dtype == "float32" || dtype == "float16"; }

// The value as the kernel sees it: rounded to the tensor's precision.
double to_dtype(double v, const std::string &dtype) {
    if (dtype == "float16") return ref::round_to_float16(v);
    if (dtype == "float32") return static_cast<double>(static_cast<float>(v));
    return v;
}

size_t dtype_size(akg_dtype t) {
    switch (t) {
    case AKG_DTYPE_FLOAT16: return 2;
    case AKG_DTYPE_BOOL: case AKG_DTYPE_UINT8: case AKG_DTYPE_INT8: return 1;
    case AKG_DTYPE_INT64: case AKG_DTYPE_FLOAT64: return 8;
    default: return 4;
    }
}

void store(akg_dtype t, void *dst, size_t i, double v) {
    switch (t) {
    case AKG_DTYPE_FLOAT32: static_cast<float *>(dst)[i] = static_cast<float>(v); break;
    case AKG_DTYPE_FLOAT16: static_cast<uint16_t *>(dst)[i] = akg::reference::float16_bits(v); break;
    case AKG_DTYPE_FLOAT64: static_cast<double *>(dst)[i] = v; break;
    case AKG_DTYPE_INT32: static_cast<int32_t *>(dst)[i] = static_cast<int32_t>(v); break;
    case AKG_DTYPE_INT64: static_cast<int64_t *>(dst)[i] = static_cast<int64_t>(v); break;
    case AKG_DTYPE_INT8: static_cast<int8_t *>(dst)[i] = static_cast<int8_t>(v); break;
    case AKG_DTYPE_BOOL: case AKG_DTYPE_UINT8: static_cast<uint8_t *>(dst)[i] = static_cast<uint8_t>(v); break;
    }
}

double load(akg_dtype t, const void *src, size_t i) {
    switch (t) {
    case AKG_DTYPE_FLOAT32: return static_cast<const float *>(src)[i];
    case AKG_DTYPE_FLOAT16: return akg::reference::float16_from_bits(static_cast<const uint16_t *>(src)[i]);
    case AKG_DTYPE_FLOAT64: return static_cast<const double *>(src)[i];
    case AKG_DTYPE_INT32: return static_cast<const int32_t *>(src)[i];
    case AKG_DTYPE_INT64: return static_cast<double>(static_cast<const int64_t *>(src)[i]);
    case AKG_DTYPE_INT8: return static_cast<const int8_t *>(src)[i];
    case AKG_DTYPE_BOOL: case AKG_DTYPE_UINT8: return static_cast<const uint8_t *>(src)[i];
    }
    return 0;
}

// One call's buffers, from reference tensors.
struct Buffers {
    std::vector<std::vector<unsigned char>> bytes; // inputs then outputs
    std::vector<akg_tensor> t;
    size_t n_in = 0;

    Buffers(const akg_kernel *k, const std::vector<Tensor> &inputs) {
        n_in = k->num_inputs;
        for (size_t i = 0; i < k->num_inputs + k->num_outputs; ++i) {
            const akg_tensor_def &d = i < n_in ? k->inputs[i] : k->outputs[i - n_in];
            size_t count = 1;
            for (int r = 0; r < d.rank; ++r) count *= static_cast<size_t>(d.shape[r]);
            bytes.emplace_back(std::max<size_t>(1, count * dtype_size(d.dtype)), 0xA5);
            if (i < n_in)
                for (size_t e = 0; e < count; ++e) store(d.dtype, bytes.back().data(), e, inputs[i].data[e]);
            akg_tensor tt{};
            tt.dtype = d.dtype;
            tt.rank = d.rank;
            tt.shape = d.shape;
            t.push_back(tt);
        }
        for (size_t i = 0; i < t.size(); ++i) t[i].data = bytes[i].data();
    }
    akg_status run(const akg_kernel *k, ref::RunFn fn = akg_run) { return fn(k, t.data(), n_in, t.data() + n_in, t.size() - n_in); }
    std::vector<double> values(size_t i) const {
        size_t count = bytes[i].size() / dtype_size(t[i].dtype);
        if (t[i].rank >= 0) {
            count = 1;
            for (int r = 0; r < t[i].rank; ++r) count *= static_cast<size_t>(t[i].shape[r]);
        }
        std::vector<double> v(count);
        for (size_t e = 0; e < count; ++e) v[e] = load(t[i].dtype, bytes[i].data(), e);
        return v;
    }
};

// Element-by-element comparison with the reference: NaN only against NaN, an infinity only
// against the same infinity, finite values within AKG's tolerance (float16 values also two
// float16 ulps, as in kernel_check.cpp). Returns a description of the first few mismatches.
std::string compare_values(const std::string &what, const std::vector<double> &actual, const Tensor &expected,
                           bool require_tolerance, size_t *nan_where_number) {
    std::string out;
    size_t bad = 0;
    bool is_f16 = expected.dtype == "float16";
    bool is_float32 = expected.dtype == "float32";
    for (size_t i = 0; i < actual.size() && i < expected.data.size(); ++i) {
        double a = actual[i], e = to_dtype(expected.data[i], expected.dtype);
        bool ok;
        if (std::isnan(e) || std::isnan(a)) {
            ok = std::isnan(e) && std::isnan(a);
            if (std::isnan(a) && !std::isnan(e)) ++*nan_where_number;
            if (!require_tolerance && std::isnan(e)) ok = true; // only NaN where a number is wrong here
        } else if (std::isinf(e) || std::isinf(a)) {
            ok = a == e || !require_tolerance;
        } else if (!is_f16 && !is_float32) {
            ok = a == e || !require_tolerance;
        } else {
            double tol = is_f16 ? 1e-3 + 1e-3 * std::fabs(e) : 1e-4 + 1e-4 * std::fabs(e);
            // A value computed from a matrix product: the reference's bound on float32 sums in any order.
            if (expected.error_bound.size() == expected.data.size()) tol += expected.error_bound[i];
            ok = std::fabs(a - e) <= tol || !require_tolerance;
            bool through_f16 = is_f16 || (ref::round_to_float16(a) == a && ref::round_to_float16(e) == e);
            double ulp = std::ldexp(1.0, std::max(std::ilogb(std::max(std::fabs(e), 6.103515625e-05)), -14) - 10);
            if (!ok && through_f16 && std::fabs(a - e) <= 2 * ulp) ok = true;
        }
        if (!ok && bad++ < 4) {
            char buf[200];
            std::snprintf(buf, sizeof buf, "  %s[%zu]: kernel %.9g, reference %.9g\n", what.c_str(), i, a, e);
            out += buf;
        }
    }
    if (bad > 4) out += "  " + what + ": " + std::to_string(bad) + " mismatches in all\n";
    if (actual.size() != expected.data.size()) out += "  " + what + ": size differs from the reference\n";
    return out;
}

struct Outcome {
    std::string mismatches;
    size_t nan_where_number = 0;
    size_t special_outputs = 0; // NaN/Inf values in the reference's results (the test reaches them)
};

// Runs kernel and reference on `inputs` and compares all results.
Outcome run_and_compare(const akg_kernel *k, const nlohmann::json &j, const std::vector<Tensor> &inputs,
                        bool require_tolerance, ref::RunFn fn = akg_run) {
    Outcome o;
    ref::Result expected = ref::evaluate(j, inputs);
    Buffers b(k, inputs);
    akg_status st = b.run(k, fn);
    if (st != AKG_STATUS_OK) {
        o.mismatches = "akg_run: status " + std::to_string(static_cast<int>(st));
        return o;
    }
    auto count_special = [&](const Tensor &t) {
        for (double v : t.data)
            if (!std::isfinite(to_dtype(v, t.dtype))) ++o.special_outputs;
    };
    for (size_t i = 0; i < k->num_outputs; ++i) {
        o.mismatches += compare_values(std::string("output ") + k->outputs[i].name, b.values(b.n_in + i),
                                       expected.outputs[i], require_tolerance, &o.nan_where_number);
        count_special(expected.outputs[i]);
    }
    for (const auto &[index, tensor] : expected.updated_inputs) {
        o.mismatches += compare_values(std::string("in-place input ") + k->inputs[index].name, b.values(index), tensor,
                                       require_tolerance, &o.nan_where_number);
        count_special(tensor);
    }
    return o;
}

// Special values at a few positions of every float input: the first and last elements, and
// `extra` random ones (or a fraction of all elements).
enum class Special { NaN, PosInf, NegInf, Mixed, Sprinkled };

const char *special_name(Special s) {
    switch (s) {
    case Special::NaN: return "NaN";
    case Special::PosInf: return "+Inf";
    case Special::NegInf: return "-Inf";
    case Special::Mixed: return "NaN,+Inf,-Inf";
    case Special::Sprinkled: return "2% of elements NaN/+Inf/-Inf";
    }
    return "?";
}

std::vector<Tensor> with_specials(std::vector<Tensor> inputs, Special s, uint64_t seed) {
    std::mt19937_64 rng(seed);
    const double values[3] = {kNaN, kInf, -kInf};
    for (auto &t : inputs) {
        if (!is_float(t.dtype) || t.data.empty()) continue;
        size_t n = t.data.size();
        auto pick = [&](size_t which) {
            switch (s) {
            case Special::NaN: return kNaN;
            case Special::PosInf: return kInf;
            case Special::NegInf: return -kInf;
            default: return values[which % 3];
            }
        };
        if (s == Special::Sprinkled) {
            size_t m = std::max<size_t>(1, n / 50);
            for (size_t c = 0; c < m; ++c) t.data[rng() % n] = values[rng() % 3];
            continue;
        }
        std::vector<size_t> at{0, n - 1, rng() % n, rng() % n, rng() % n};
        for (size_t c = 0; c < at.size(); ++c) t.data[at[c]] = pick(c);
    }
    return inputs;
}

std::vector<const akg_kernel *> small_kernels() {
    return {akg_test_small_kernels, akg_test_small_kernels + akg_test_small_kernel_count};
}

std::vector<std::string> small_names() {
    std::vector<std::string> n;
    for (auto *k : small_kernels()) n.push_back(k->name);
    return n;
}

const akg_kernel *small(const std::string &name) {
    for (auto *k : small_kernels())
        if (name == k->name) return k;
    return nullptr;
}

class SmallKernel : public ::testing::TestWithParam<std::string> {};

TEST_P(SmallKernel, NanAndInfPropagateAsInTheReference) {
    const akg_kernel *k = small(GetParam());
    ASSERT_NE(k, nullptr);
    nlohmann::json j = load_json(k);
    size_t specials_reached = 0;
    for (Special s : {Special::NaN, Special::PosInf, Special::NegInf, Special::Mixed, Special::Sprinkled}) {
        for (uint64_t seed : {1u, 2u}) {
            std::vector<Tensor> inputs = with_specials(ref::random_inputs(j, seed), s, seed * 7919 + static_cast<int>(s));
            Outcome o = run_and_compare(k, j, inputs, true);
            specials_reached += o.special_outputs;
            EXPECT_TRUE(o.mismatches.empty()) << GetParam() << " with " << special_name(s) << " (seed " << seed
                                              << "):\n" << o.mismatches;
        }
    }
    // Most kernels pass some special value on to a result (grad_overflow_check turns them into 0/1 flags).
    if (specials_reached == 0) std::printf("note: %s: no NaN/Inf in any result\n", GetParam().c_str());
}

TEST_P(SmallKernel, BitwiseReproducibleRunToRun) {
    const akg_kernel *k = small(GetParam());
    ASSERT_NE(k, nullptr);
    nlohmann::json j = load_json(k);
    for (bool specials : {false, true}) {
        std::vector<Tensor> inputs = ref::random_inputs(j, 5);
        if (specials) inputs = with_specials(inputs, Special::Sprinkled, 5);
        Buffers first(k, inputs);
        ASSERT_EQ(first.run(k), AKG_STATUS_OK);
        for (int r = 0; r < 3; ++r) {
            Buffers again(k, inputs);
            for (size_t i = again.n_in; i < again.t.size(); ++i) std::fill(again.bytes[i].begin(), again.bytes[i].end(), 0x3C + r);
            ASSERT_EQ(again.run(k), AKG_STATUS_OK);
            for (size_t i = 0; i < first.t.size(); ++i)
                EXPECT_TRUE(first.bytes[i] == again.bytes[i]) << GetParam() << ": tensor " << i << " differs in run " << r + 2;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(All, SmallKernel, ::testing::ValuesIn(small_names()),
                         [](const auto &info) { return info.param; });

// A kernel compiled by `akg-gen compile` into a shared object (tests/robustness/meson.build),
// with its own C ABI entry point.
struct SharedKernel {
    void *handle = nullptr;
    const akg_kernel *kernel = nullptr;
    ref::RunFn run = nullptr;
    nlohmann::json json;
};

void open_shared_kernel(const char *so, const std::string &name, SharedKernel &out) {
    out.handle = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(out.handle, nullptr) << dlerror();
    auto at = reinterpret_cast<const akg_kernel *(*)(size_t)>(dlsym(out.handle, "akg_kernel_at"));
    out.run = reinterpret_cast<ref::RunFn>(dlsym(out.handle, "akg_run"));
    ASSERT_TRUE(at && out.run);
    out.kernel = at(0);
    ASSERT_NE(out.kernel, nullptr);
    ASSERT_EQ(out.kernel->name, name);
    std::ifstream in(source_path("tests/robustness/" + name + ".json"));
    out.json = nlohmann::json::parse(in);
}

// ---- comparisons, Maximum/Minimum, ReduceMax/Min/Sum on NaN and ±Inf ---------------------
// tests/robustness/nan_semantics_f32.json (Greater, GreaterEqual, Less, LessEqual against a
// tensor and a constant, NotEqual(x, x), Select on LessEqual, Maximum, Minimum, ReduceMin over
// rows, ReduceMax over columns, ReduceSum), compiled by `akg-gen compile` into a shared object
// and called through its own C ABI. Every pair of special and ordinary values meets in the
// comparisons: NaN compares false (NotEqual true), as in the reference (a regression test for
// a <= b emitted as !(b < a)).
TEST(NanSemantics, ComparisonsMinMaxReductionsMatchTheReference) {
    SharedKernel sk;
    ASSERT_NO_FATAL_FAILURE(open_shared_kernel(AKG_NAN_SEMANTICS_SO, "nan_semantics_f32", sk));
    const akg_kernel *k = sk.kernel;
    const nlohmann::json &j = sk.json;
    auto run = sk.run;
    // x: rows of specials and ordinary values; y: every value of the cycle against each.
    const double cycle[] = {kNaN, kInf, -kInf, 0.25, -0.0, 0.0, 0.5, 1.0, -1.0, 1e30, -1e-40};
    const size_t nc = sizeof(cycle) / sizeof(cycle[0]);
    for (uint64_t seed : {1u, 2u, 3u}) {
        std::vector<Tensor> inputs = ref::random_inputs(j, seed);
        for (size_t i = 0; i < inputs[0].data.size(); ++i)
            if ((i + seed) % 3 != 0) inputs[0].data[i] = to_dtype(cycle[(i * seed) % nc], "float32");
        for (size_t i = 0; i < inputs[1].data.size(); ++i) inputs[1].data[i] = to_dtype(cycle[(i / nc + i) % nc], "float32");
        Outcome o = run_and_compare(k, j, inputs, true, run);
        EXPECT_TRUE(o.mismatches.empty()) << "seed " << seed << ":\n" << o.mismatches;
        EXPECT_GT(o.special_outputs, 0u);
    }
    for (Special s : {Special::NaN, Special::PosInf, Special::NegInf, Special::Mixed, Special::Sprinkled}) {
        Outcome o = run_and_compare(k, j, with_specials(ref::random_inputs(j, 9), s, 9), true, run);
        EXPECT_TRUE(o.mismatches.empty()) << special_name(s) << ":\n" << o.mismatches;
    }
}

// ---- maxima that may drop a NaN (the nan-dominated-extrema pass) ----------------------
// tests/robustness/nan_dominated_max_f32.json: a softmax, whose row maximum the generator
// combines with the ordered max (a NaN in the row reaches every result through the sum of
// exponentials), beside three near misses that must keep the NaN-propagating max: y - max(y),
// exp(z - max(z)) times the sum of another tensor, and a log-softmax whose maximum is an
// output. NaN, ±Inf and ordinary values in every row, in several positions.
TEST(NanSemantics, MaximaThatMayDropANanMatchTheReference) {
    SharedKernel sk;
    ASSERT_NO_FATAL_FAILURE(open_shared_kernel(AKG_NAN_DOMINATED_SO, "nan_dominated_max_f32", sk));
    for (uint64_t seed : {1u, 2u, 3u}) {
        std::vector<Tensor> inputs = ref::random_inputs(sk.json, seed);
        for (auto &t : inputs) {
            const size_t columns = 37, rows = t.data.size() / columns;
            // Row r: a NaN at column (7r + seed) mod 37 in rows 0 and 2, +Inf in row 1, NaN and
            // -Inf in row 3, nothing in row 4.
            for (size_t r = 0; r < rows; ++r) {
                size_t c = (7 * r + seed) % columns;
                if (r == 0 || r == 2) t.data[r * columns + c] = kNaN;
                if (r == 1) t.data[r * columns + c] = kInf;
                if (r == 3) t.data[r * columns + c] = kNaN, t.data[r * columns + (c + 11) % columns] = -kInf;
            }
        }
        Outcome o = run_and_compare(sk.kernel, sk.json, inputs, true, sk.run);
        EXPECT_TRUE(o.mismatches.empty()) << "seed " << seed << ":\n" << o.mismatches;
        EXPECT_GT(o.special_outputs, 0u);
    }
    for (Special s : {Special::NaN, Special::Mixed, Special::Sprinkled}) {
        Outcome o = run_and_compare(sk.kernel, sk.json, with_specials(ref::random_inputs(sk.json, 9), s, 9), true, sk.run);
        EXPECT_TRUE(o.mismatches.empty()) << special_name(s) << ":\n" << o.mismatches;
    }
}

// tests/robustness/unordered_compare_f32.json: `a OP c || isnan(x)` flags, a = x, |x| or -x,
// which math-identities folds into one unordered comparison (!(a OP' c)), beside two near
// misses whose NaN test is of another tensor. x and y hold NaN, ±Inf, the thresholds
// themselves and their float neighbours.
TEST(NanSemantics, UnorderedComparisonsMatchTheReference) {
    SharedKernel sk;
    ASSERT_NO_FATAL_FAILURE(open_shared_kernel(AKG_UNORDERED_COMPARE_SO, "unordered_compare_f32", sk));
    const std::vector<double> edges{kNaN, kInf, -kInf, 3.0, -3.0, 1.5, 2.0, -2.0, 0.5, 1.0, 0.0, -0.0,
                                   std::nextafter(3.0f, 4.0f), std::nextafter(3.0f, 2.0f), std::nextafter(1.5f, 1.0f),
                                   std::nextafter(-2.0f, -3.0f), std::nextafter(0.5f, 1.0f), std::nextafter(1.0f, 2.0f)};
    for (uint64_t seed : {1u, 2u, 3u}) {
        std::vector<Tensor> inputs = ref::random_inputs(sk.json, seed);
        for (size_t i = 0; i < inputs.size(); ++i)
            for (size_t k = 0; k < inputs[i].data.size(); k += 2) inputs[i].data[k] = edges[(k / 2 + 5 * i + seed) % edges.size()];
        Outcome o = run_and_compare(sk.kernel, sk.json, inputs, true, sk.run);
        EXPECT_TRUE(o.mismatches.empty()) << "seed " << seed << ":\n" << o.mismatches;
    }
    for (Special s : {Special::NaN, Special::PosInf, Special::NegInf, Special::Mixed, Special::Sprinkled}) {
        Outcome o = run_and_compare(sk.kernel, sk.json, with_specials(ref::random_inputs(sk.json, 9), s, 9), true, sk.run);
        EXPECT_TRUE(o.mismatches.empty()) << special_name(s) << ":\n" << o.mismatches;
    }
}

// tests/robustness/exp_below_maximum.json: exp(x - max(x)) over rows and over columns, and
// float16 exp(h - max(h)), which math-identities computes without the overflow clamp
// (akg_exp_no_overflow / akg_exp_h_no_overflow), beside near misses that overflow: exp(y -
// max(x)), exp(max(x) - x), exp(2x - max(x)). Values spread over +-100 (e^200 is +inf in
// float; e^-200 is 0), with NaN and +-Inf in places.
TEST(NanSemantics, ExponentsBelowTheirMaximumMatchTheReference) {
    SharedKernel sk;
    ASSERT_NO_FATAL_FAILURE(open_shared_kernel(AKG_EXP_BELOW_MAXIMUM_SO, "exp_below_maximum", sk));
    for (uint64_t seed : {1u, 2u, 3u}) {
        std::vector<Tensor> inputs = ref::random_inputs(sk.json, seed);
        for (auto &t : inputs)
            for (size_t i = 0; i < t.data.size(); ++i) {
                // float16 h stays within its range (e^(h - max) is what is tested there)
                const double spread = t.dtype == "float16" ? 60.0 : 100.0;
                t.data[i] = to_dtype(spread * std::sin(0.37 * static_cast<double>(i * seed) + static_cast<double>(seed)), t.dtype);
            }
        Outcome o = run_and_compare(sk.kernel, sk.json, inputs, true, sk.run);
        EXPECT_TRUE(o.mismatches.empty()) << "seed " << seed << ":\n" << o.mismatches;
        EXPECT_GT(o.special_outputs, 0u) << "the near misses overflow to +inf";
    }
    for (Special s : {Special::NaN, Special::PosInf, Special::NegInf, Special::Mixed, Special::Sprinkled}) {
        Outcome o = run_and_compare(sk.kernel, sk.json, with_specials(ref::random_inputs(sk.json, 9), s, 9), true, sk.run);
        EXPECT_TRUE(o.mismatches.empty()) << special_name(s) << ":\n" << o.mismatches;
    }
}

// tests/robustness/log_of_softmax.json: log(e / s) and log(max(e / s, 1e-6)) of a row softmax,
// which math-identities computes as (x - max) - log(s) (and its max with log(1e-6)), beside near
// misses it leaves: e divided by a column sum (all of a column's exponentials may underflow:
// log(0 / 0) is NaN), and a floor of 0. Values spread over +-30, with NaN and +-Inf in places;
// spread over +-100, rows hold exponentials that underflow in float (e^-200), where the near
// misses' float logarithm of 0 or of a subnormal departs from the double-precision reference,
// and the rewritten logs, which take no exponential, still match it.
TEST(NanSemantics, LogsOfSoftmaxMatchTheReference) {
    SharedKernel sk;
    ASSERT_NO_FATAL_FAILURE(open_shared_kernel(AKG_LOG_OF_SOFTMAX_SO, "log_of_softmax", sk));
    for (double spread : {30.0, 100.0})
        for (uint64_t seed : {1u, 2u, 3u}) {
            std::vector<Tensor> inputs = ref::random_inputs(sk.json, seed);
            for (auto &t : inputs)
                for (size_t i = 0; i < t.data.size(); ++i)
                    t.data[i] = to_dtype(spread * std::sin(0.37 * static_cast<double>(i * seed) + static_cast<double>(seed)), t.dtype);
            Outcome o = run_and_compare(sk.kernel, sk.json, inputs, true, sk.run);
            if (spread < 50.0) {
                EXPECT_TRUE(o.mismatches.empty()) << "seed " << seed << ":\n" << o.mismatches;
            } else {
                EXPECT_EQ(o.mismatches.find("output log_p:"), std::string::npos) << "seed " << seed << ":\n" << o.mismatches;
                EXPECT_EQ(o.mismatches.find("output log_p_floored:"), std::string::npos) << "seed " << seed << ":\n" << o.mismatches;
                EXPECT_NE(o.mismatches.find("output log_q:"), std::string::npos) << "the near miss's exponentials underflow";
            }
        }
    for (Special s : {Special::NaN, Special::PosInf, Special::NegInf, Special::Mixed, Special::Sprinkled}) {
        Outcome o = run_and_compare(sk.kernel, sk.json, with_specials(ref::random_inputs(sk.json, 9), s, 9), true, sk.run);
        EXPECT_TRUE(o.mismatches.empty()) << special_name(s) << ":\n" << o.mismatches;
    }
}

// ---- denormals and large magnitudes: softmax, LayerNorm, GeLU ----------------------------

bool is_sensitive(const std::string &name) {
    return name.find("softmax") != std::string::npos || name.find("layernorm") != std::string::npos ||
           name.find("gelu") != std::string::npos;
}

std::vector<std::string> sensitive_names() {
    std::vector<std::string> n;
    for (auto *k : small_kernels())
        if (is_sensitive(k->name)) n.push_back(k->name);
    return n;
}

class SensitiveKernel : public ::testing::TestWithParam<std::string> {};

// Float input `which` scaled by `scale` (rounded to its precision: float16 inputs are clamped
// to ±60000 and flush to float16 subnormals or zero like any float16 value would).
std::vector<Tensor> scaled(std::vector<Tensor> inputs, size_t which, double scale) {
    Tensor &t = inputs[which];
    for (double &v : t.data) {
        double s = v * scale;
        if (t.dtype == "float16") s = std::max(-60000.0, std::min(60000.0, s));
        v = to_dtype(s, t.dtype);
    }
    return inputs;
}

// Each float input in turn (the others keep their ordinary random values) made denormal or huge.
TEST_P(SensitiveKernel, DenormalAndHugeInputsGiveNoNaNWhereTheReferenceHasANumber) {
    const akg_kernel *k = small(GetParam());
    ASSERT_NE(k, nullptr);
    nlohmann::json j = load_json(k);
    std::vector<Tensor> base = ref::random_inputs(j, 3);
    for (size_t which = 0; which < base.size(); ++which) {
        if (!is_float(base[which].dtype)) continue;
        // From float32 denormals to magnitudes whose squares, sums or exps overflow float32
        // (but not double): no NaN where the reference (rounded to the output dtype) has a number.
        for (double scale : {1e-44, 1e-40, 1e-30, 1e8, 1e19, 1e30, 1e37}) {
            // A float16 matrix product of huge inputs overflows float16 where the framework
            // rounds it (to inf, then NaN through GeLU, as in MindSpore); the reference rounds
            // only what the kernel stores.
            bool float16_product = (GetParam().rfind("gemm_", 0) == 0 || GetParam().rfind("bmm_", 0) == 0) &&
                                   GetParam().find("_f16") != std::string::npos;
            if (float16_product && scale > 1) continue;
            // A LayerNorm of a matrix product sums rows of values that grow with K: with an
            // operand of the product that large, the row sums overflow float32 (the contract:
            // reductions accumulate in float32) and the normalized values are inf · 0, where
            // double sums stay finite.
            bool product_row_sums = (GetParam().rfind("gemm_", 0) == 0 || GetParam().rfind("bmm_", 0) == 0) &&
                                    GetParam().find("layernorm") != std::string::npos && which < 2;
            if (product_row_sums && scale > 1e30) continue;
            Outcome o = run_and_compare(k, j, scaled(base, which, scale), false);
            EXPECT_EQ(o.nan_where_number, 0u) << GetParam() << ", input " << which << " scaled by " << scale << ":\n"
                                              << o.mismatches;
        }
    }
}

TEST_P(SensitiveKernel, DenormalInputsMatchTheReference) {
    const akg_kernel *k = small(GetParam());
    ASSERT_NE(k, nullptr);
    nlohmann::json j = load_json(k);
    // Only the first input (x, the activations) is made tiny: gamma, beta, bias stay normal.
    for (double scale : {1e-39, 1e-42}) {
        std::vector<Tensor> inputs = ref::random_inputs(j, 6);
        for (double &v : inputs[0].data) v = to_dtype(v * (inputs[0].dtype == "float16" ? 1e-6 : scale), inputs[0].dtype);
        Outcome o = run_and_compare(k, j, inputs, true);
        EXPECT_TRUE(o.mismatches.empty()) << GetParam() << " with x scaled by " << scale << ":\n" << o.mismatches;
    }
}

INSTANTIATE_TEST_SUITE_P(SoftmaxLayerNormGelu, SensitiveKernel, ::testing::ValuesIn(sensitive_names()),
                         [](const auto &info) { return info.param; });

TEST(Sensitive, TheCatalogHasSoftmaxLayerNormAndGelu) {
    auto n = sensitive_names();
    auto has = [&](const char *what) {
        for (auto &s : n)
            if (s.find(what) != std::string::npos) return true;
        return false;
    };
    EXPECT_TRUE(has("softmax"));
    EXPECT_TRUE(has("layernorm"));
    EXPECT_TRUE(has("gelu"));
}

// ---- real shapes -----------------------------------------------------------------------
// Bitwise reproducibility of every catalog kernel at its real shapes is checked by
// abi_guard_pages (two runs of each kernel on the same inputs, outputs pre-filled differently,
// must agree bit for bit) and abi_threads (concurrent calls equal the single-threaded ones).

// ---- the flags ---------------------------------------------------------------------------

TEST(Flags, HaveNoFastMath) {
    // AKG_KERNEL_FLAGS is kernel_cpp_args, the flags of libakgkernels and of `akg-gen compile`.
    std::string flags = AKG_KERNEL_FLAGS;
    for (const char *bad : {"-ffast-math", "-Ofast", "-ffinite-math-only", "-fno-honor-nans", "-fno-honor-infinities",
                            "-funsafe-math-optimizations", "-fassociative-math", "-freciprocal-math",
                            "-fno-signed-zeros", "-fcx-limited-range"})
        EXPECT_EQ(flags.find(bad), std::string::npos) << "kernel flags contain " << bad << ": " << flags;
    // Whatever the flags, the tests above are what shows NaN/Inf behaviour.
#ifdef __FAST_MATH__
    FAIL() << "this test itself was compiled with fast-math";
#endif
}

} // namespace
