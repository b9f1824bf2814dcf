// Runs the reference evaluator over every real kernel in ../shared/akg-corpus: each one it
// supports must evaluate at its real shapes with random inputs, and each one it does not
// (MatMul, BatchMatMul, Conv2D, FRACTAL_NZ layouts) must be refused with an "unsupported" Error.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
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
// suite's time and memory down; AKG_REFERENCE_CORPUS_MAX_ELEMENTS overrides it.
constexpr int64_t kDefaultMaxInputElements = 50'000'000;

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
    if (name == "MatMul" || name == "BatchMatMul" || name == "Conv2D") return true;
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

TEST(Corpus, EveryKernelEvaluates) {
  if (!fs::is_directory(corpus_dir())) {
    GTEST_SKIP() << "corpus not found at " << corpus_dir() << " (it lives in ../shared/akg-corpus)";
  }
  const int64_t max_elements = max_input_elements();
  size_t evaluated = 0, refused = 0, too_big = 0;
  std::vector<std::string> non_finite;
  for (const fs::path &path : corpus_files()) {
    const std::string rel = fs::relative(path, corpus_dir()).string();
    json kernel;
    try {
      std::ifstream in(path);
      kernel = json::parse(in);
    } catch (const std::exception &e) {
      ADD_FAILURE() << rel << ": cannot parse: " << e.what();
      continue;
    }
    if (is_unsupported(kernel)) {
      ++refused;
      if (has_fractal_layout(kernel) || total_input_elements(kernel) > max_elements) continue;
      try {
        evaluate(kernel, zero_inputs(kernel));
        ADD_FAILURE() << rel << ": an unsupported kernel evaluated without an Error";
      } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("unsupported"), std::string::npos) << rel << ": " << e.what();
      }
      continue;
    }
    if (total_input_elements(kernel) > max_elements) {
      ++too_big;
      continue;
    }
    Result result;
    try {
      result = evaluate(kernel, random_inputs(kernel, evaluated + 1));
    } catch (const std::exception &e) {
      ADD_FAILURE() << rel << ": " << e.what();
      continue;
    }
    ++evaluated;
    const json &outputs = kernel["output_desc"];
    ASSERT_EQ(result.outputs.size(), outputs.size()) << rel;
    bool finite = true;
    for (size_t i = 0; i < outputs.size(); ++i) {
      int64_t n = 1;
      for (int64_t e : outputs[i]["shape"].get<std::vector<int64_t>>()) n *= e;
      EXPECT_EQ(static_cast<int64_t>(result.outputs[i].data.size()), n) << rel << " output " << i;
      for (double v : result.outputs[i].data) finite = finite && std::isfinite(v);
    }
    if (!finite) non_finite.push_back(rel);
  }
  std::cout << "corpus: " << evaluated << " kernels evaluated, " << refused << " refused as unsupported, "
            << too_big << " skipped with more than " << max_elements << " input elements\n";
  // Not a failure: random inputs can legitimately overflow (e.g. Exp of a large value in float16
  // storage), but a kernel listed here is a poor random-input test case.
  for (const std::string &rel : non_finite) std::cout << "  non-finite outputs: " << rel << "\n";
  EXPECT_GT(evaluated, 0u);
}

}  // namespace
}  // namespace akg::reference
