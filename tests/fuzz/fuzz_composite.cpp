// libFuzzer target over the generator's front end and pipeline: composite JSON text → parse →
// validate → lower → ... → C++ source of the kernel (and its dispatch-table entry), i.e.
// everything akg-gen does before it runs a C++ compiler.
//
// Contract checked: every input ends in generated C++ or an akg::UserError (a clear message
// naming the problem). Anything else — a crash, a sanitizer report, a hang (libFuzzer's
// -timeout), a leak, or any other exception escaping as an internal error — is a finding.
// Set AKG_FUZZ_LENIENT=1 to let internal errors (akg::InternalError, Halide errors, ...) pass
// as "clear errors" too (they are caught and reported by akg-gen with exit status 3).
//
// A structure-aware mutator (LLVMFuzzerCustomMutator) changes parsed JSON: numbers to boundary
// values (0, 1, -1, primes, 2^31, 2^48, 2^63, ...), strings to op names, dtypes and other
// strings of the same document, lists and objects by dropping, duplicating or swapping
// members; one mutation in four is libFuzzer's own byte-level one.
//
// Build: meson setup ... -Dfuzzing=true with clang (tools/ci-sanitized.sh, tools/fuzz-long.sh).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "driver/catalog_files.h"
#include "driver/pipeline.h"

namespace {

bool lenient() {
    static const bool value = [] {
        const char *e = std::getenv("AKG_FUZZ_LENIENT");
        return e && *e && *e != '0';
    }();
    return value;
}

bool verbose() {
    static const bool value = [] {
        const char *e = std::getenv("AKG_FUZZ_VERBOSE");
        return e && *e && *e != '0';
    }();
    return value;
}

[[noreturn]] void internal_failure(const char *kind, const char *what) {
    std::fprintf(stderr, "fuzz_composite: %s escaped the generator: %s\n", kind, what);
    std::abort();
}

} // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

namespace {

void collect(nlohmann::json &j, std::vector<nlohmann::json *> &nodes, std::vector<std::string> &strings) {
    nodes.push_back(&j);
    if (j.is_string()) strings.push_back(j.get<std::string>());
    if (j.is_structured())
        for (auto &child : j) collect(child, nodes, strings);
}

const char *const kWords[] = {"Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow", "Exp", "Log", "Sqrt",
                              "Rsqrt", "Tanh", "Erf", "Neg", "Abs", "Reciprocal", "Cast", "Select", "AddN",
                              "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "Reshape", "Transpose",
                              "BroadcastTo", "Tile", "ExpandDims", "InplaceAssign", "Assign", "ElemAny", "Greater",
                              "Equal", "NotEqual", "LogicalAnd", "LogicalNot", "IsNan", "IsInf", "MatMul",
                              "float16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool",
                              "DefaultFormat", "NCHW", "NHWC", "FRACTAL_NZ", "axis", "keep_dims", "perm", "shape",
                              "multiples", "dst_type", "value", "", "x", "T$0", "i0"};
const int64_t kIntegers[] = {0, 1, -1, 2, 3, 7, 8, 16, 17, 31, 37, 127, 128, 255, 256, 1023, 1024, 65535, 65536,
                             2147483647, 2147483648LL, -2147483648LL, 4294967296LL, (1LL << 48), (1LL << 48) + 1,
                             (1LL << 62), INT64_MAX, INT64_MIN, -2, -3, -8, -9};
const double kDoubles[] = {0.0, -0.0, 0.5, -1.5, 1e-310, 65504.0, 65520.0, 3.4e38, 1e300, -1e300, 2147483648.0,
                           9.3e18, -9.3e18, 0.7978845834732056};

void mutate(nlohmann::json &doc, std::mt19937 &rng) {
    std::vector<nlohmann::json *> nodes;
    std::vector<std::string> strings;
    collect(doc, nodes, strings);
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    nlohmann::json &j = *nodes[pick(nodes.size())];
    if (j.is_number_integer()) {
        int64_t v = j.get<int64_t>();
        switch (pick(4)) {
        case 0: j = static_cast<int64_t>(static_cast<uint64_t>(v) + 1); break; // wraps, no UB
        case 1: j = static_cast<int64_t>(static_cast<uint64_t>(v) - 1); break;
        case 2: j = static_cast<int64_t>(static_cast<uint64_t>(v) * 2); break;
        default: j = kIntegers[pick(std::size(kIntegers))];
        }
    } else if (j.is_number_float()) {
        j = kDoubles[pick(std::size(kDoubles))];
    } else if (j.is_string()) {
        if (!strings.empty() && pick(2)) j = strings[pick(strings.size())];
        else j = kWords[pick(std::size(kWords))];
    } else if (j.is_boolean()) {
        j = !j.get<bool>();
    } else if (j.is_array()) {
        size_t n = j.size();
        switch (pick(5)) {
        case 0: if (n) j.erase(pick(n)); break;
        case 1: if (n) j.push_back(j[pick(n)]); break;
        case 2: if (n > 1) std::swap(j[pick(n)], j[pick(n)]); break;
        case 3: if (n) j.insert(j.begin() + static_cast<std::ptrdiff_t>(pick(n + 1)), *nodes[pick(nodes.size())]); break;
        default: j.push_back(kIntegers[pick(std::size(kIntegers))]);
        }
    } else if (j.is_object()) {
        if (j.empty()) return;
        auto it = j.begin();
        std::advance(it, static_cast<std::ptrdiff_t>(pick(j.size())));
        switch (pick(3)) {
        case 0: j.erase(it); break;
        case 1: it.value() = nullptr; break;
        default: { nlohmann::json copy = *nodes[pick(nodes.size())]; it.value() = std::move(copy); }
        }
    } else {
        j = kIntegers[pick(std::size(kIntegers))];
    }
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
    std::mt19937 rng(seed);
    if (rng() % 4 == 0) return LLVMFuzzerMutate(data, size, max_size);
    nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, false);
    if (doc.is_discarded()) return LLVMFuzzerMutate(data, size, max_size);
    int rounds = 1 + static_cast<int>(rng() % 3);
    for (int r = 0; r < rounds; ++r) mutate(doc, rng);
    std::string text = doc.dump(rng() % 2 ? 1 : -1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (text.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
    std::copy(text.begin(), text.end(), data);
    return text.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    // Real composite kernels are at most ~60 KB; much larger inputs only slow the fuzzer.
    if (size > (256u << 10)) return -1;
    const std::string text(reinterpret_cast<const char *>(data), size);
    try {
        akg::CompositeKernel kernel = akg::parse_composite(text, "fuzz.json");
        akg::PipelineOptions o;
        o.emit.kernel_name = kernel.name;
        o.emit.symbol = akg::sanitize_identifier(kernel.name);
        o.emit.pattern_file = "fuzz.json";
        o.emit.generator_version = akg::kGeneratorVersion;
        std::string source = akg::run_pipeline(kernel, o);
        if (source.empty()) internal_failure("empty output", "run_pipeline returned no C++");
        std::vector<akg::CatalogEntry> entries{{o.emit.kernel_name, o.emit.symbol, std::move(kernel)}};
        std::string table = akg::emit_catalog_cpp(entries, "akg_catalog", true, {&akg::default_target()});
        std::string header = akg::emit_catalog_header(entries);
        if (table.empty() || header.empty()) internal_failure("empty output", "the catalog emitters returned nothing");
        if (verbose()) std::fprintf(stderr, "fuzz_composite: generated %zu bytes of C++\n", source.size());
    } catch (const akg::UserError &e) {
        if (verbose()) std::fprintf(stderr, "fuzz_composite: error: %s\n", e.what());
    } catch (const std::exception &e) {
        if (!lenient()) internal_failure("an internal error", e.what());
        if (verbose()) std::fprintf(stderr, "fuzz_composite: internal error: %s\n", e.what());
    } catch (...) {
        if (!lenient()) internal_failure("a non-standard exception", "(unknown type)");
    }
    return 0;
}
