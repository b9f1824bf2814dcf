// Runs the reference evaluator over every real kernel in ../shared/akg-corpus: each one it
// supports (MatMul included) must evaluate at its real shapes with random inputs, and each one
// it does not (Conv2D, FRACTAL_NZ layouts) must be refused with an "unsupported" Error.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "reference_evaluator.h"

#ifndef AKG_SOURCE_ROOT
#error "AKG_SOURCE_ROOT must name the project's source root (set in tests/reference/meson.build)"
#endif

namespace akg::reference {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Kernels whose inputs exceed this many elements in total are skipped (counted) to keep the
// suite's time and memory down (at 8M, 841 of 985 are evaluated; at 16M, 901 in 2.5 times the
// time); corpus_check evaluates the big ones too, scaled down above 64M elements.
// AKG_REFERENCE_CORPUS_MAX_ELEMENTS overrides it.
constexpr int64_t kDefaultMaxInputElements = 8'000'000;

int64_t max_input_elements() {
  if (const char *env = std::getenv("AKG_REFERENCE_CORPUS_MAX_ELEMENTS")) return std::atoll(env);
  return kDefaultMaxInputElements;
}

fs::path corpus_dir() { return fs::path(AKG_SOURCE_ROOT) / ".." / "shared" / "akg-corpus"; }

std::vector<fs::path> corpus_files() {
  std::vector<fs::path> files;
  for (const auto &entry : fs::recursive_directory_iterator(corpus_dir())) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".info" || ext == ".json")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool has_fractal_layout(const json &j) {
  if (j.is_object()) {
    if (j.contains("format") && j["format"].is_string() && j["format"].get<std::string>().rfind("FRACTAL", 0) == 0) {
      return true;
    }
    for (const auto &item : j.items()) {
      if (has_fractal_layout(item.value())) return true;
    }
  } else if (j.is_array()) {
    for (const auto &item : j) {
      if (has_fractal_layout(item)) return true;
    }
  }
  return false;
}

// What the reference deliberately refuses.
bool is_unsupported(const json &kernel) {
  for (const auto &op : kernel["op_desc"]) {
    const std::string name = op.value("name", "");
    if (name == "Conv2D") return true;
  }
  return has_fractal_layout(kernel);
}

int64_t total_input_elements(const json &kernel) {
  int64_t total = 0;
  for (const Tensor &t : kernel_inputs_signature(kernel)) {
    int64_t n = 1;
    for (int64_t e : t.shape) n *= e;
    total += n;
  }
  return total;
}

// Inputs of the right shapes without the cost of random numbers, for kernels that must be refused.
std::vector<Tensor> zero_inputs(const json &kernel) {
  std::vector<Tensor> inputs = kernel_inputs_signature(kernel);
  for (Tensor &t : inputs) {
    int64_t n = 1;
    for (int64_t e : t.shape) n *= e;
    t.data.assign(static_cast<size_t>(n), 0.0);
  }
  return inputs;
}

// The outcome for one corpus file.
struct KernelOutcome {
  enum Kind { Evaluated, Refused, TooBig, Failed } kind = Failed;
  bool finite = true;
  std::string failure;  // for Failed
};

KernelOutcome check_kernel(const fs::path &path, uint64_t seed, int64_t max_elements) {
  KernelOutcome outcome;
  json kernel;
  try {
    std::ifstream in(path);
    kernel = json::parse(in);
  } catch (const std::exception &e) {
    outcome.failure = std::string("cannot parse: ") + e.what();
    return outcome;
  }
  if (is_unsupported(kernel)) {
    outcome.kind = KernelOutcome::Refused;
    if (has_fractal_layout(kernel) || total_input_elements(kernel) > max_elements) return outcome;
    try {
      evaluate(kernel, zero_inputs(kernel));
      outcome = {KernelOutcome::Failed, true, "an unsupported kernel evaluated without an Error"};
    } catch (const Error &e) {
      if (std::string(e.what()).find("unsupported") == std::string::npos) {
        outcome = {KernelOutcome::Failed, true, std::string("refused without saying unsupported: ") + e.what()};
      }
    }
    return outcome;
  }
  if (total_input_elements(kernel) > max_elements) {
    outcome.kind = KernelOutcome::TooBig;
    return outcome;
  }
  Result result;
  try {
    result = evaluate(kernel, random_inputs(kernel, seed));
  } catch (const std::exception &e) {
    outcome.failure = e.what();
    return outcome;
  }
  const json &outputs = kernel["output_desc"];
  if (result.outputs.size() != outputs.size()) {
    outcome.failure = "wrong number of outputs";
    return outcome;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    int64_t n = 1;
    for (int64_t e : outputs[i]["shape"].get<std::vector<int64_t>>()) n *= e;
    if (static_cast<int64_t>(result.outputs[i].data.size()) != n) {
      outcome.failure = "output " + std::to_string(i) + " has the wrong size";
      return outcome;
    }
    for (double v : result.outputs[i].data) outcome.finite = outcome.finite && std::isfinite(v);
  }
  outcome.kind = KernelOutcome::Evaluated;
  return outcome;
}

// Kernels are independent, so a few worker threads share them (each big kernel takes under
// 1 GB); AKG_REFERENCE_CORPUS_THREADS overrides the count.
unsigned worker_count() {
  if (const char *env = std::getenv("AKG_REFERENCE_CORPUS_THREADS")) return std::max(1, std::atoi(env));
  return std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
}

TEST(Corpus, EveryKernelEvaluates) {
  if (!fs::is_directory(corpus_dir())) {
    GTEST_SKIP() << "corpus not found at " << corpus_dir() << " (it lives in ../shared/akg-corpus)";
  }
  const int64_t max_elements = max_input_elements();
  const std::vector<fs::path> files = corpus_files();
  std::vector<KernelOutcome> outcomes(files.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      outcomes[i] = check_kernel(files[i], /*seed=*/i + 1, max_elements);
    }
  };
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < worker_count(); ++t) workers.emplace_back(work);
  for (std::thread &w : workers) w.join();

  size_t counts[4] = {0, 0, 0, 0};
  std::vector<std::string> non_finite;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string rel = fs::relative(files[i], corpus_dir()).string();
    ++counts[outcomes[i].kind];
    if (outcomes[i].kind == KernelOutcome::Failed) ADD_FAILURE() << rel << ": " << outcomes[i].failure;
    if (outcomes[i].kind == KernelOutcome::Evaluated && !outcomes[i].finite) non_finite.push_back(rel);
  }
  std::cout << "corpus: " << counts[KernelOutcome::Evaluated] << " kernels evaluated, "
            << counts[KernelOutcome::Refused] << " refused as unsupported, " << counts[KernelOutcome::TooBig]
            << " skipped with more than " << max_elements << " input elements, " << counts[KernelOutcome::Failed]
            << " failed\n";
  // Not a failure: random inputs can legitimately overflow (e.g. Exp of a large value in float16
  // storage), but a kernel listed here is a poor random-input test case.
  for (const std::string &rel : non_finite) std::cout << "  non-finite outputs: " << rel << "\n";
  EXPECT_GT(counts[KernelOutcome::Evaluated], 0u);
}

// A real kernel checked by hand: MindSpore's float16 overflow check (cast to float16, scale,
// IsInf/IsNan, LogicalOr, ElemAny, InplaceAssign of the flag into a status input).
TEST(Corpus, OverflowCheckKernelByHand) {
  const fs::path path = corpus_dir() / "composite" / "elemany" / "level0" /
                        "Fused_Cast_Mul_IsInf_IsNan_LogicalOr_ElemAny_Assign_split_13807630631961538942.info";
  if (!fs::exists(path)) GTEST_SKIP() << path << " not found";
  std::ifstream in(path);
  const json kernel = json::parse(in);
  std::vector<Tensor> inputs = kernel_inputs_signature(kernel);  // x [8192] f32, scale [1] f16, status [1] f32
  ASSERT_EQ(inputs.size(), 3u);
  inputs[0].data.assign(8192, 0.5);
  inputs[1].data = {2.0};
  inputs[2].data = {0.0};
  Result r = evaluate(kernel, inputs);
  EXPECT_EQ(r.outputs[0].data, std::vector<double>(8192, 1.0));
  EXPECT_EQ(r.outputs[1].data, std::vector<double>{0.0});
  EXPECT_EQ(r.updated_inputs.at(2).data, std::vector<double>{0.0});
  inputs[0].data[100] = 70000.0;  // overflows float16 in the Cast to inf
  r = evaluate(kernel, inputs);
  EXPECT_EQ(r.outputs[0].data[100], std::numeric_limits<double>::infinity());
  EXPECT_EQ(r.outputs[1].data, std::vector<double>{1.0});
  EXPECT_EQ(r.updated_inputs.at(2).data, std::vector<double>{1.0});
  // 40000 fits in float16 but 40000 * 2 does not: the float16 Mul rounds its result to inf
  // before IsInf (per-op rounding, as MindSpore computes it), so the overflow is flagged.
  inputs[0].data[100] = 40000.0;
  r = evaluate(kernel, inputs);
  EXPECT_EQ(r.outputs[0].data[100], std::numeric_limits<double>::infinity());
  EXPECT_EQ(r.outputs[1].data, std::vector<double>{1.0});
  // With float16 intermediates kept wider (AtStores), only the stored output overflows.
  r = evaluate(kernel, inputs, {Float16Rounding::AtStores});
  EXPECT_EQ(r.outputs[0].data[100], std::numeric_limits<double>::infinity());
  EXPECT_EQ(r.outputs[1].data, std::vector<double>{0.0});
}

}  // namespace
}  // namespace akg::reference
