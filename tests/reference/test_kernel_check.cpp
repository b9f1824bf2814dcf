// check_kernel end to end with hand-written "kernels": plain functions behind the akg_run
// signature, computing a graph per op in float32 as a generated kernel would (or wrongly), so
// that the check's verdicts (pass, ill-conditioned, fail) are tested without the generator.
#include <cmath>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "kernel_builder.h"
#include "kernel_check.h"

namespace akg::reference {
namespace {

using namespace build;

void expect_contains(const std::string &text, const std::string &fragment) {
  EXPECT_NE(text.find(fragment), std::string::npos) << "'" << fragment << "' not in: " << text;
}

// ---------------------------------------------------------------------------------------------
// (x + 1e6) - 1e6 over 256 float32 values: per op in float32, x survives only to 1/16.

constexpr int64_t kCancelSize = 256;
const int64_t kCancelShape[] = {kCancelSize};
const akg_tensor_def kCancelInputs[] = {{"x", AKG_DTYPE_FLOAT32, 1, kCancelShape, 0}};
const akg_tensor_def kCancelOutputs[] = {{"u", AKG_DTYPE_FLOAT32, 1, kCancelShape, 0}};
const akg_kernel kCancelKernel = {"cancel", "", 1, kCancelInputs, 1, kCancelOutputs, nullptr};

json cancel_json() {
  const json x = desc("x", {kCancelSize}), t = desc("t", {kCancelSize}), u = desc("u", {kCancelSize});
  return kernel({x}, {op("Add", {x, constant(1e6)}, t), op("Sub", {t, constant(1e6)}, u)}, {u});
}

// What the "kernel" does to element 7 on top of the float32 computation.
float cancel_error = 0.0f;

akg_status run_cancel(const akg_kernel *, const akg_tensor *in, size_t, const akg_tensor *out, size_t) {
  const float *x = static_cast<const float *>(in[0].data);
  float *u = static_cast<float *>(out[0].data);
  for (int64_t i = 0; i < kCancelSize; ++i) {
    const volatile float t = x[i] + 1e6f;  // volatile: no reassociation, whatever the flags
    u[i] = t - 1e6f;
  }
  u[7] += cancel_error;
  return AKG_STATUS_OK;
}

TEST(KernelCheck, IllConditionedElementsAreCountedNotFailed) {
  cancel_error = 0.0f;
  const KernelCheck r = check_kernel(&kCancelKernel, cancel_json(), 1, run_cancel);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.elements, static_cast<size_t>(kCancelSize));
  // N(0, 1) values are multiples of 1/16 almost never: nearly every element cancels.
  EXPECT_GT(r.ill_conditioned, static_cast<size_t>(kCancelSize) * 9 / 10);
}

TEST(KernelCheck, AWrongElementStillFailsAmongIllConditionedOnes) {
  cancel_error = 0.5f;  // far beyond the per-op result's disagreement with double (at most 1/32)
  const KernelCheck r = check_kernel(&kCancelKernel, cancel_json(), 1, run_cancel);
  cancel_error = 0.0f;
  EXPECT_FALSE(r.ok);
  expect_contains(r.message, "1 of 256 float32 values outside");
  expect_contains(r.message, "index 7");
  EXPECT_GT(r.ill_conditioned, 0u);
}

// ---------------------------------------------------------------------------------------------
// The float16 rounding mode: sum((a + b / 64) - a) over float16 tensors, cast to float32 for
// the sum. The "kernel" keeps the float16 ops' results in float32 (the generator's
// --float16-intermediates=float32), where (a + b / 64) - a is b / 64 almost exactly; rounded to
// float16 per op, a + b / 64 loses up to half a float16 step of |a|, and 2048 such errors sum
// far beyond float32's tolerance of the small exact sum.

constexpr int64_t kSumSize = 2048;
const int64_t kSumShape[] = {kSumSize};
const int64_t kOneShape[] = {1};
const akg_tensor_def kSumInputs[] = {{"a", AKG_DTYPE_FLOAT16, 1, kSumShape, 0}, {"b", AKG_DTYPE_FLOAT16, 1, kSumShape, 0}};
const akg_tensor_def kSumOutputs[] = {{"sum", AKG_DTYPE_FLOAT32, 1, kOneShape, 0}};
const akg_kernel kSumKernel = {"sum", "", 2, kSumInputs, 1, kSumOutputs, nullptr};

json sum_json() {
  const json a = desc("a", {kSumSize}, "float16"), b = desc("b", {kSumSize}, "float16");
  const json bs = desc("bs", {kSumSize}, "float16"), s = desc("s", {kSumSize}, "float16");
  const json d = desc("d", {kSumSize}, "float16"), c = desc("c", {kSumSize}), sum = desc("sum", {1});
  return kernel({a, b},
                {op("Mul", {b, constant(1.0 / 64, "float16")}, bs), op("Add", {a, bs}, s), op("Sub", {s, a}, d),
                 op("Cast", {d}, c, {{"dst_type", "float32"}}),
                 op("ReduceSum", {c}, sum, {{"axis", {0}}, {"keep_dims", true}})},
                {sum});
}

akg_status run_sum_in_float32(const akg_kernel *, const akg_tensor *in, size_t, const akg_tensor *out, size_t) {
  const uint16_t *a = static_cast<const uint16_t *>(in[0].data), *b = static_cast<const uint16_t *>(in[1].data);
  float sum = 0.0f;
  for (int64_t i = 0; i < kSumSize; ++i) {
    const float ai = static_cast<float>(float16_from_bits(a[i]));
    const volatile float s = ai + static_cast<float>(float16_from_bits(b[i])) / 64;
    sum += s - ai;
  }
  static_cast<float *>(out[0].data)[0] = sum;
  return AKG_STATUS_OK;
}

TEST(KernelCheck, Float16RoundingFollowsTheKernelOrTheOptions) {
  json j = sum_json();
  const KernelCheck per_op = check_kernel(&kSumKernel, j, 3, run_sum_in_float32);
  EXPECT_FALSE(per_op.ok);
  EXPECT_EQ(per_op.ill_conditioned, 0u);  // a failure, not an ill-conditioned element
  j["float16_intermediates"] = "float32";
  const KernelCheck at_stores = check_kernel(&kSumKernel, j, 3, run_sum_in_float32);
  EXPECT_TRUE(at_stores.ok) << at_stores.message;
  EXPECT_EQ(at_stores.elements, 1u);
  EXPECT_FALSE(check_kernel(&kSumKernel, j, 3, run_sum_in_float32, {Float16Rounding::PerOp}).ok);
  j["float16_intermediates"] = "float8";
  EXPECT_THROW(check_kernel(&kSumKernel, j, 3, run_sum_in_float32), Error);
}

}  // namespace
}  // namespace akg::reference
