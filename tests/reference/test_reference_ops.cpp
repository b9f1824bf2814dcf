// Hand-computed cases for the ops of docs/OPS.md in the reference evaluator: the element-wise
// ops, Argmax/Argmin, ElemAll, CumSum/CumProd, StridedSlice, Concat, PadAkg/UnPadAkg, OneHot,
// EquivFormat, TransData, Gather, GatherNd, TensorScatterAdd, UnsortedSegmentSum, Pool2D and
// GlobalPool2D; the value ranges random_inputs gives their operands; and their errors.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "expect_error.h"
#include "kernel_builder.h"
#include "reference_evaluator.h"

namespace akg::reference {
namespace {

using namespace build;  // the kernel builders
using V = std::vector<double>;
using S = std::vector<int64_t>;

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kPi = 3.14159265358979323846;

using akg::reference::testing::expect_contains;
using akg::reference::testing::expect_error;

Tensor iota(S shape, const std::string &dtype = "float32") {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  V v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
  return Tensor{shape, dtype, v};
}

// Element-wise equality that treats NaN as equal to NaN.
void expect_same(const V &actual, const V &expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(actual[i])) << "element " << i << ": " << actual[i];
    } else {
      EXPECT_EQ(actual[i], expected[i]) << "element " << i;
    }
  }
}

void expect_near(const V &actual, const V &expected, double tol = 1e-15) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(actual[i])) << "element " << i << ": " << actual[i];
    } else if (std::isinf(expected[i])) {
      EXPECT_EQ(actual[i], expected[i]) << "element " << i;
    } else {
      EXPECT_NEAR(actual[i], expected[i], tol * std::max(1.0, std::fabs(expected[i]))) << "element " << i;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Element-wise

TEST(OpsElementwise, RoundHalfToEvenAndFloor) {
  expect_same(run_op("Round", {tensor({8}, {0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6, kNaN})}, {8}).data,
              {0, 2, 2, 0, -2, 2, -3, kNaN});
  // An integer output dtype converts the rounded value as Cast (saturating, NaN gives 0).
  EXPECT_EQ(run_op("Round", {tensor({4}, {2.5, -3.5, 1e10, kNaN})}, {4}, "int32").data, (V{2, -4, 2147483647, 0}));
  EXPECT_EQ(run_op("Round", {tensor({2}, {-3, 7}, "int32")}, {2}, "int32").data, (V{-3, 7}));
  expect_same(run_op("Floor", {tensor({5}, {1.5, -1.5, -0.0, 3, -kInf})}, {5}).data, {1, -2, 0, 3, -kInf});
  EXPECT_EQ(run_op("Floor", {tensor({2}, {-3, 7}, "int32")}, {2}, "int32").data, (V{-3, 7}));
  // float16: 2.5 rounds to 2, then is stored as float16 exactly.
  EXPECT_EQ(run_op("Round", {tensor({1}, {2.5}, "float16")}, {1}, "float16").data, (V{2}));
}

TEST(OpsElementwise, SignAndIsFinite) {
  expect_same(run_op("Sign", {tensor({7}, {-2.5, 0, -0.0, 3, kNaN, -kInf, kInf})}, {7}).data, {-1, 0, 0, 1, kNaN, -1, 1});
  EXPECT_EQ(run_op("Sign", {tensor({3}, {-5, 0, 7}, "int32")}, {3}, "int32").data, (V{-1, 0, 1}));
  EXPECT_EQ(run_op("IsFinite", {tensor({5}, {1, kInf, -kInf, kNaN, -0.0})}, {5}, "bool").data, (V{1, 0, 0, 0, 1}));
  EXPECT_EQ(run_op("IsFinite", {tensor({2}, {-5, 0}, "int32")}, {2}, "bool").data, (V{1, 1}));
}

TEST(OpsElementwise, FloatDivisionFamily) {
  const Tensor a = tensor({6}, {7, -7, 7, -7, 7.5, 1});
  const Tensor b = tensor({6}, {2, 2, -2, -2, 2, 0});
  expect_same(run_op("Div", {a, b}, {6}).data, {3.5, -3.5, -3.5, 3.5, 3.75, kInf});
  expect_same(run_op("FloorDiv", {a, b}, {6}).data, {3, -4, -4, 3, 3, kInf});
  expect_same(run_op("Mod", {a, b}, {6}).data, {1, -1, 1, -1, 1.5, kNaN});
  expect_same(run_op("FloorMod", {a, b}, {6}).data, {1, 1, -1, -1, 1.5, kNaN});
  // An exact multiple: r = 0 gets no correction; an infinite divisor (Python: -1 % inf = inf).
  expect_same(run_op("FloorMod", {tensor({3}, {-4, -1, 1}), tensor({3}, {2, kInf, kInf})}, {3}).data, {0, kInf, 1});
  // Broadcasting [2, 1] against [3].
  EXPECT_EQ(run_op("FloorMod", {tensor({2, 1}, {5, -5}), tensor({3}, {3, -3, 5})}, {2, 3}).data,
            (V{2, -1, 0, 1, -2, 0}));
}

TEST(OpsElementwise, IntegerDivisionFamily) {
  const Tensor a = tensor({6}, {7, -7, 7, -7, 6, -2147483648.0}, "int32");
  const Tensor b = tensor({6}, {2, 2, -2, -2, 3, -1}, "int32");
  // INT32_MIN / -1 wraps to INT32_MIN, as two's-complement code computes it.
  EXPECT_EQ(run_op("Div", {a, b}, {6}, "int32").data, (V{3, -3, -3, 3, 2, -2147483648.0}));
  EXPECT_EQ(run_op("FloorDiv", {a, b}, {6}, "int32").data, (V{3, -4, -4, 3, 2, -2147483648.0}));
  EXPECT_EQ(run_op("Mod", {a, b}, {6}, "int32").data, (V{1, -1, 1, -1, 0, 0}));
  EXPECT_EQ(run_op("FloorMod", {a, b}, {6}, "int32").data, (V{1, 1, -1, -1, 0, 0}));
  const Tensor i8a = tensor({3}, {-128, 100, -7}, "int8"), i8b = tensor({1}, {-3}, "int8");
  EXPECT_EQ(run_op("FloorDiv", {i8a, i8b}, {3}, "int8").data, (V{42, -34, 2}));
  EXPECT_EQ(run_op("FloorMod", {i8a, i8b}, {3}, "int8").data, (V{-2, -2, -1}));
  const Tensor zero = tensor({6}, {1, 1, 0, 1, 1, 1}, "int32");
  for (const char *name : {"Div", "FloorDiv"}) {
    expect_error([&] { run_op(name, {a, zero}, {6}, "int32"); }, {name, "division by zero"});
  }
  for (const char *name : {"Mod", "FloorMod"}) {
    expect_error([&] { run_op(name, {a, zero}, {6}, "int32"); }, {name, "modulo by zero"});
  }
}

TEST(OpsElementwise, TrigonometricAndHyperbolic) {
  expect_near(run_op("Sin", {tensor({4}, {0, kPi / 6, -kPi / 2, kInf})}, {4}).data, {0, 0.5, -1, kNaN});
  expect_near(run_op("Cos", {tensor({4}, {0, kPi / 3, kPi, kNaN})}, {4}).data, {1, 0.5, -1, kNaN});
  expect_near(run_op("Asin", {tensor({5}, {0, 0.5, 1, -1, 1.5})}, {5}).data, {0, kPi / 6, kPi / 2, -kPi / 2, kNaN});
  expect_near(run_op("ACos", {tensor({5}, {1, 0.5, 0, -1, -2})}, {5}).data, {0, kPi / 3, kPi / 2, kPi, kNaN});
  expect_near(run_op("Atan", {tensor({4}, {0, 1, -kInf, kNaN})}, {4}).data, {0, kPi / 4, -kPi / 2, kNaN});
  // asinh(x) = log(x + sqrt(x^2 + 1)), acosh(x) = log(x + sqrt(x^2 - 1)).
  expect_near(run_op("Asinh", {tensor({4}, {0, 1, -1, -kInf})}, {4}).data,
              {0, 0.88137358701954302, -0.88137358701954302, -kInf});
  expect_near(run_op("Acosh", {tensor({4}, {1, 2, 0.5, kInf})}, {4}).data, {0, 1.3169578969248166, kNaN, kInf});
  // expm1 keeps the digits of tiny arguments that exp(x) - 1 loses.
  expect_near(run_op("Expm1", {tensor({4}, {0, 1e-10, 1, -kInf})}, {4}).data, {0, 1.00000000005e-10, 1.718281828459045, -1});
}

TEST(OpsElementwise, Atan2SpecialCases) {
  const Tensor y = tensor({10}, {1, 0, -0.0, 0, -0.0, 1, kInf, -kInf, kNaN, 1});
  const Tensor x = tensor({10}, {1, 0, 0, -1, -1, 0, kInf, -kInf, 1, -kInf});
  const Tensor r = run_op("Atan2", {y, x}, {10});
  expect_near(r.data, {kPi / 4, 0, 0, kPi, -kPi, kPi / 2, kPi / 4, -3 * kPi / 4, kNaN, kPi});
  EXPECT_TRUE(std::signbit(r.data[2]));  // atan2(-0, +0) = -0
  // Broadcast: y [2, 1] against x [2].
  expect_near(run_op("Atan2", {tensor({2, 1}, {1, -1}), tensor({2}, {1, -1})}, {2, 2}).data,
              {kPi / 4, 3 * kPi / 4, -kPi / 4, -3 * kPi / 4});
}

TEST(OpsElementwise, FastGeLU) {
  // MindSpore's formula equals x * sigmoid(1.702 x); checked against that form.
  const V xs = {-3, -0.5, 0, 0.5, 3, 20};
  V expected;
  for (double x : xs) expected.push_back(x / (1.0 + std::exp(-1.702 * x)));
  expect_near(run_op("FastGeLU", {tensor({6}, xs)}, {6}).data, expected, 1e-14);
  // Large negative arguments underflow to (-)0 instead of overflowing.
  EXPECT_EQ(run_op("FastGeLU", {tensor({1}, {-1000})}, {1}).data[0], 0.0);
  // The formula itself is NaN at both infinities (inf - inf, and -inf * 0); docs/OPS.md gives no
  // other rule, so the reference computes the formula as written.
  expect_same(run_op("FastGeLU", {tensor({2}, {kInf, -kInf})}, {2}).data, {kNaN, kNaN});
}

// The functions kernels approximate get an error bound before their float16 rounding (like Exp);
// exact ops (Neg) and float32 results get none.
TEST(OpsElementwise, ApproximatedFunctionsCarryABoundInFloat16) {
  const Tensor x = tensor({3}, {0.25, 0.5, 1.5}, "float16");
  for (const char *name : {"Sin", "Cos", "Asin", "ACos", "Atan", "Asinh", "Acosh", "Expm1", "FastGeLU"}) {
    EXPECT_EQ(run_op(name, {x}, {3}, "float16").error_bound.size(), 3u) << name;
  }
  EXPECT_EQ(run_op("Atan2", {x, x}, {3}, "float16").error_bound.size(), 3u);
  EXPECT_TRUE(run_op("Neg", {x}, {3}, "float16").error_bound.empty());
  EXPECT_TRUE(run_op("Sin", {tensor({3}, {0.25, 0.5, 1.5})}, {3}).error_bound.empty());
}

TEST(OpsElementwise, ZerosLikeAndAddMinValue) {
  const Tensor z = run_op("ZerosLike", {iota({2, 3})}, {2, 3});
  EXPECT_EQ(z.data, V(6, 0.0));
  EXPECT_EQ(run_op("ZerosLike", {iota({5}, "int32")}, {5}, "int32").data, V(5, 0.0));
  EXPECT_EQ(run_op("AddMinValue", {tensor({2}, {0, -1})}, {2}).data, (V{0x1p-126, -1 + 0x1p-126}));
  EXPECT_EQ(run_op("AddMinValue", {tensor({3}, {0, -0x1p-24, 1}, "float16")}, {3}, "float16").data,
            (V{0x1p-24, 0, 1}));  // 1 + 2^-24 rounds back to 1
  EXPECT_EQ(run_op("AddMinValue", {tensor({2}, {5, -3}, "int32")}, {2}, "int32").data, (V{5, -3}));
}

TEST(OpsElementwise, SelectComparisons) {
  const Tensor a = tensor({4}, {1, 2, 3, kNaN});
  const Tensor b = tensor({4}, {2, 2, 2, 2});
  const Tensor c = tensor({1}, {10}), d = tensor({1}, {-1});
  EXPECT_EQ(run_op("SelectGE", {a, b, c, d}, {4}).data, (V{-1, 10, 10, -1}));
  EXPECT_EQ(run_op("SelectGT", {a, b, c, d}, {4}).data, (V{-1, -1, 10, -1}));
  EXPECT_EQ(run_op("SelectLE", {a, b, c, d}, {4}).data, (V{10, 10, -1, -1}));
  EXPECT_EQ(run_op("SelectLT", {a, b, c, d}, {4}).data, (V{10, -1, -1, -1}));
  // All four broadcast: a [2, 1], b [3], c [2, 3], d [] -> [2, 3].
  const Tensor r = run_op("SelectGE", {tensor({2, 1}, {1, 3}), tensor({3}, {0, 1, 2}), iota({2, 3}), tensor({}, {-7})},
                          {2, 3});
  EXPECT_EQ(r.data, (V{0, 1, -7, 3, 4, 5}));
  // Integer operands and result.
  EXPECT_EQ(run_op("SelectLT", {tensor({2}, {1, 5}, "int32"), tensor({1}, {3}, "int32"), tensor({2}, {7, 8}, "int32"),
                                tensor({2}, {-7, -8}, "int32")},
                   {2}, "int32")
                .data,
            (V{7, -8}));
  expect_error([&] { run_op("SelectGE", {a, b, c}, {4}); }, {"SelectGE", "expected 4 inputs"});
}

TEST(OpsElementwise, ElemAll) {
  EXPECT_EQ(run_op("ElemAll", {tensor({3}, {1, -2, kNaN})}, {1}, "bool").data, (V{1}));
  EXPECT_EQ(run_op("ElemAll", {tensor({2, 2}, {1, 2, 0, 3})}, {1}, "float32").data, (V{0}));
  EXPECT_EQ(run_op("ElemAll", {tensor({1}, {-0.0})}, {1}, "int32").data, (V{0}));
}

// ---------------------------------------------------------------------------------------------
// Argmax / Argmin and scans

TEST(OpsReduce, ArgmaxArgmin) {
  const Tensor x = tensor({2, 3}, {1, 5, 5, 7, -2, 0});
  EXPECT_EQ(run_op("Argmax", {x}, {2}, "int32", {{"axis", -1}}).data, (V{1, 0}));  // ties: the first
  EXPECT_EQ(run_op("Argmin", {x}, {2}, "int32", {{"axis", -1}}).data, (V{0, 1}));
  EXPECT_EQ(run_op("Argmax", {x}, {3}, "int64", {{"axis", {0}}}).data, (V{1, 0, 0}));
  EXPECT_EQ(run_op("Argmin", {x}, {3}, "int64", {{"axis", 0}}).data, (V{0, 1, 1}));
  // Prime length 7 along the middle axis of [2, 7, 1]; a size-1 axis gives index 0.
  const Tensor p = tensor({2, 7, 1}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7});
  EXPECT_EQ(run_op("Argmax", {p}, {2, 1}, "int32", {{"axis", 1}}).data, (V{5, 5}));
  EXPECT_EQ(run_op("Argmin", {p}, {2, 1}, "int32", {{"axis", 1}}).data, (V{1, 2}));
  EXPECT_EQ(run_op("Argmax", {p}, {2, 7}, "int32", {{"axis", 2}}).data, V(14, 0.0));
  // The first NaN wins for both.
  const Tensor n = tensor({5}, {1, kNaN, 9, kNaN, -9});
  EXPECT_EQ(run_op("Argmax", {n}, {}, "int32", {{"axis", 0}}).data, (V{1}));
  EXPECT_EQ(run_op("Argmin", {n}, {}, "int32", {{"axis", 0}}).data, (V{1}));
  EXPECT_EQ(run_op("Argmax", {tensor({3}, {-kInf, -kInf, kInf})}, {}, "int32", {{"axis", 0}}).data, (V{2}));
  EXPECT_EQ(run_op("Argmax", {tensor({3}, {4, -1, 4}, "int32")}, {}, "int32", {{"axis", 0}}).data, (V{0}));
  expect_error([&] { run_op("Argmax", {x}, {2}, "float32", {{"axis", 1}}); }, {"Argmax", "integer"});
  expect_error([&] { run_op("Argmax", {x}, {2}, "int32", {{"axis", 2}}); }, {"Argmax", "axis 2 out of range"});
  expect_error([&] { run_op("Argmax", {x}, {2}, "int32", {{"axis", {0, 1}}}); }, {"Argmax", "one int"});
}

TEST(OpsScan, CumSumCumProdEveryMode) {
  const Tensor x = tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  auto cum = [&](const char *name, const Attrs &attrs) { return run_op(name, {x}, {2, 3}, "float32", attrs).data; };
  EXPECT_EQ(cum("CumSum", {{"axis", 1}}), (V{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(cum("CumSum", {{"axis", -1}, {"exclusive", true}}), (V{0, 1, 3, 0, 4, 9}));
  EXPECT_EQ(cum("CumSum", {{"axis", {1}}, {"reverse", true}}), (V{6, 5, 3, 15, 11, 6}));
  EXPECT_EQ(cum("CumSum", {{"axis", 1}, {"exclusive", true}, {"reverse", true}}), (V{5, 3, 0, 11, 6, 0}));
  EXPECT_EQ(cum("CumSum", {}), (V{1, 2, 3, 5, 7, 9}));  // axis defaults to 0
  EXPECT_EQ(cum("CumProd", {{"axis", 1}}), (V{1, 2, 6, 4, 20, 120}));
  EXPECT_EQ(cum("CumProd", {{"axis", 1}, {"exclusive", true}}), (V{1, 1, 2, 1, 4, 20}));
  EXPECT_EQ(cum("CumProd", {{"axis", 1}, {"reverse", true}}), (V{6, 6, 3, 120, 30, 6}));
  EXPECT_EQ(cum("CumProd", {{"axis", 1}, {"exclusive", true}, {"reverse", true}}), (V{6, 3, 1, 30, 6, 1}));
  EXPECT_EQ(cum("CumProd", {{"axis", 0}, {"exclusive", true}}), (V{1, 1, 1, 1, 2, 3}));
  // A size-1 axis: inclusive is the input, exclusive the empty sum (product).
  const Tensor one = tensor({1, 2}, {5, 6});
  EXPECT_EQ(run_op("CumSum", {one}, {1, 2}, "float32", {{"axis", 0}}).data, (V{5, 6}));
  EXPECT_EQ(run_op("CumSum", {one}, {1, 2}, "float32", {{"axis", 0}, {"exclusive", true}}).data, (V{0, 0}));
  EXPECT_EQ(run_op("CumProd", {one}, {1, 2}, "float32", {{"axis", 0}, {"exclusive", true}}).data, (V{1, 1}));
  // NaN and infinity propagate forward only.
  expect_same(run_op("CumSum", {tensor({4}, {1, kNaN, 2, 3})}, {4}).data, {1, kNaN, kNaN, kNaN});
  expect_same(run_op("CumSum", {tensor({3}, {1, kInf, -kInf})}, {3}).data, {1, kInf, kNaN});
  expect_error([&] { cum("CumSum", {{"axis", 2}}); }, {"CumSum", "axis 2 out of range"});
  expect_error([&] { cum("CumSum", {{"axis", 1}, {"exclusive", "yes"}}); }, {"CumSum", "exclusive"});
}

TEST(OpsScan, IntegersWrapAndFloat16RoundsEachResultOnce) {
  const Tensor i = tensor({3}, {2147483647, 1, 5}, "int32");
  EXPECT_EQ(run_op("CumSum", {i}, {3}, "int32").data, (V{2147483647, -2147483648.0, -2147483643.0}));
  EXPECT_EQ(run_op("CumProd", {tensor({3}, {65536, 65537, 2}, "int32")}, {3}, "int32").data,
            (V{65536, 65536, 131072}));  // 2^32 + 2^16 wraps to 2^16
  // float16: the running sums 2048, 2049, 2050 are exact before rounding once each (2049 is a tie
  // to even 2048); a float16 accumulator would be stuck at 2048.
  EXPECT_EQ(run_op("CumSum", {tensor({3}, {2048, 1, 1}, "float16")}, {3}, "float16").data, (V{2048, 2048, 2050}));
}

// ---------------------------------------------------------------------------------------------
// StridedSlice

Tensor slice(const Tensor &x, S out_shape, Attrs attrs) { return run_op("StridedSlice", {x}, out_shape, "float32", attrs); }

TEST(OpsStridedSlice, PositiveStrides) {
  const Tensor x = iota({3, 4, 5});
  const Tensor r = slice(x, {3, 2, 3}, {{"begin", {0, 1, 0}}, {"end", {3, 4, 5}}, {"strides", {1, 2, 2}}});
  ASSERT_EQ(r.data.size(), 18u);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(r.data[(i * 2 + j) * 3 + k], 20 * i + 5 * (1 + 2 * j) + 2 * k);
  // Negative begin/end add n; out-of-range ones clamp; fewer entries than dims take the rest whole.
  EXPECT_EQ(slice(iota({7}), {3}, {{"begin", {-5}}, {"end", {-2}}, {"strides", {1}}}).data, (V{2, 3, 4}));
  EXPECT_EQ(slice(iota({7}), {7}, {{"begin", {-100}}, {"end", {100}}, {"strides", {1}}}).data, iota({7}).data);
}

TEST(OpsStridedSlice, StepsAndEmptySlices) {
  // ceil((7 - 1) / 3) = 2 elements: 1, 4.
  EXPECT_EQ(slice(iota({7}), {2}, {{"begin", {1}}, {"end", {7}}, {"strides", {3}}}).data, (V{1, 4}));
  EXPECT_EQ(slice(iota({7}), {3}, {{"begin", {0}}, {"end", {7}}, {"strides", {3}}}).data, (V{0, 3, 6}));
  EXPECT_EQ(slice(iota({3, 4}), {1, 4}, {{"begin", {1}}, {"end", {2}}, {"strides", {1}}}).data, (V{4, 5, 6, 7}));
  EXPECT_EQ(slice(iota({5}), {0}, {{"begin", {3}}, {"end", {1}}, {"strides", {1}}}).data, V{});
  EXPECT_EQ(slice(iota({5}), {0}, {{"begin", {1}}, {"end", {3}}, {"strides", {-1}}}).data, V{});
  // Missing strides are ones.
  EXPECT_EQ(slice(iota({5}), {2}, {{"begin", {1}}, {"end", {3}}}).data, (V{1, 2}));
}

TEST(OpsStridedSlice, NegativeStrides) {
  const Tensor x = iota({5});
  EXPECT_EQ(slice(x, {5}, {{"begin", {-1}}, {"end", {-6}}, {"strides", {-1}}}).data, (V{4, 3, 2, 1, 0}));
  EXPECT_EQ(slice(x, {3}, {{"begin", {4}}, {"end", {-100}}, {"strides", {-2}}}).data, (V{4, 2, 0}));
  EXPECT_EQ(slice(x, {3}, {{"begin", {10}}, {"end", {1}}, {"strides", {-1}}}).data, (V{4, 3, 2}));  // begin clamps to 4
  EXPECT_EQ(slice(x, {2}, {{"begin", {3}}, {"end", {0}}, {"strides", {-2}}}).data, (V{3, 1}));
  // Both dims reversed on a [2, 3].
  EXPECT_EQ(slice(iota({2, 3}), {2, 3}, {{"begin", {-1, -1}}, {"end", {-3, -4}}, {"strides", {-1, -1}}}).data,
            (V{5, 4, 3, 2, 1, 0}));
}

TEST(OpsStridedSlice, BeginAndEndMasks) {
  const Tensor x = iota({5});
  EXPECT_EQ(slice(x, {2}, {{"begin", {3}}, {"end", {2}}, {"strides", {1}}, {"begin_mask", 1}}).data, (V{0, 1}));
  EXPECT_EQ(slice(x, {2}, {{"begin", {3}}, {"end", {0}}, {"strides", {1}}, {"end_mask", 1}}).data, (V{3, 4}));
  // s < 0: begin_mask means n - 1, end_mask means -1 (past the front).
  EXPECT_EQ(slice(x, {2}, {{"begin", {0}}, {"end", {2}}, {"strides", {-1}}, {"begin_mask", 1}}).data, (V{4, 3}));
  EXPECT_EQ(slice(x, {4}, {{"begin", {3}}, {"end", {3}}, {"strides", {-1}}, {"end_mask", 1}}).data, (V{3, 2, 1, 0}));
  // Bit k applies to entry k only: dim 0 [:], dim 1 [1:].
  EXPECT_EQ(slice(iota({2, 3}), {2, 2}, {{"begin", {1, 1}}, {"end", {1, 3}}, {"strides", {1, 1}}, {"begin_mask", 1},
                                          {"end_mask", 1}})
                .data,
            (V{1, 2, 4, 5}));
}

TEST(OpsStridedSlice, ShrinkNewAxisAndEllipsis) {
  const Tensor x = iota({3, 4, 5});
  // Shrink dims 0 and 1 at 1 and -1: x[1, 3, :].
  EXPECT_EQ(slice(x, {5}, {{"begin", {1, -1}}, {"end", {2, 0}}, {"strides", {1, 1}}, {"shrink_axis_mask", 3}}).data,
            (V{35, 36, 37, 38, 39}));
  // Entry 1 is a new axis: x[0:1, newaxis, 0:2, :] -> [1, 1, 2, 5].
  const Tensor n = slice(x, {1, 1, 2, 5}, {{"begin", {0, 0, 0}}, {"end", {1, 0, 2}}, {"strides", {1, 1, 1}},
                                           {"new_axis_mask", 2}});
  EXPECT_EQ(n.data, (V{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  // A leading ellipsis covers dims 0 and 1: x[..., 1:3] -> [3, 4, 2].
  const Tensor e = slice(x, {3, 4, 2}, {{"begin", {0, 1}}, {"end", {0, 3}}, {"strides", {1, 1}}, {"ellipsis_mask", 1}});
  ASSERT_EQ(e.data.size(), 24u);
  EXPECT_EQ(e.data[0], 1);
  EXPECT_EQ(e.data[1], 2);
  EXPECT_EQ(e.data[23], 57);  // x[2, 3, 2]
  // x[1, ..., 2:4]: shrink, an ellipsis covering dim 1, then dim 2.
  EXPECT_EQ(slice(x, {4, 2}, {{"begin", {1, 0, 2}}, {"end", {2, 0, 4}}, {"strides", {1, 1, 1}}, {"ellipsis_mask", 2},
                              {"shrink_axis_mask", 1}})
                .data,
            (V{22, 23, 27, 28, 32, 33, 37, 38}));
  // x[..., newaxis, 4] -> [3, 4, 1].
  EXPECT_EQ(slice(x, {3, 4, 1}, {{"begin", {0, 0, 4}}, {"end", {0, 0, 5}}, {"strides", {1, 1, 1}}, {"ellipsis_mask", 1},
                                 {"new_axis_mask", 2}, {"shrink_axis_mask", 4}})
                .data,
            (V{4, 9, 14, 19, 24, 29, 34, 39, 44, 49, 54, 59}));
  // An ellipsis covering nothing, and a shrink of a size-1 dim to a scalar.
  EXPECT_EQ(slice(iota({1}), {}, {{"begin", {0, 0}}, {"end", {1, 1}}, {"strides", {1, 1}}, {"ellipsis_mask", 1},
                                  {"shrink_axis_mask", 2}})
                .data,
            (V{0}));
}

TEST(OpsStridedSlice, ErrorsAreClear) {
  const Tensor x = iota({3, 4});
  expect_error([&] { slice(x, {3, 4}, {{"begin", {0, 0}}, {"end", {3, 4}}, {"strides", {1, 0}}}); },
               {"StridedSlice", "slice entry 1", "stride 0"});
  expect_error([&] { slice(x, {4}, {{"begin", {3}}, {"end", {4}}, {"strides", {1}}, {"shrink_axis_mask", 1}}); },
               {"StridedSlice", "shrink index 3 out of range"});
  expect_error([&] { slice(x, {4}, {{"begin", {-4}}, {"end", {4}}, {"strides", {1}}, {"shrink_axis_mask", 1}}); },
               {"shrink index -4"});
  expect_error([&] { slice(x, {3, 4}, {{"begin", {0, 0}}, {"end", {3}}, {"strides", {1, 1}}}); },
               {"StridedSlice", "same length"});
  expect_error([&] { slice(x, {3, 4}, {{"begin", {0, 0}}, {"end", {3, 4}}, {"strides", {1, 1}}, {"ellipsis_mask", 3}}); },
               {"more than one ellipsis"});
  expect_error([&] { slice(x, {3, 4}, {{"begin", {0, 0, 0}}, {"end", {3, 4, 1}}, {"strides", {1, 1, 1}}}); },
               {"3 slice entries for a tensor of rank 2"});
  // The declared shape is checked like every op's.
  expect_error([&] { slice(x, {3, 3}, {{"begin", {0}}, {"end", {3}}, {"strides", {1}}}); }, {"output_desc"});
}

// ---------------------------------------------------------------------------------------------
// Concat, PadAkg, UnPadAkg, EquivFormat, TransData

Tensor concat(const std::vector<Tensor> &parts, S out_shape, Attrs attrs, const std::string &dtype = "float32") {
  std::vector<json> descs;
  std::vector<json> list;
  for (size_t i = 0; i < parts.size(); ++i) descs.push_back(desc("in" + std::to_string(i), parts[i].shape, parts[i].dtype));
  const json out = desc("out", out_shape, dtype);
  const json k = kernel(descs, {op("Concat", {json(descs)}, out, attrs)}, {out});
  return evaluate(k, parts).outputs.at(0);
}

TEST(OpsLayout, Concat) {
  const Tensor a = tensor({2, 1}, {1, 2}), b = iota({2, 3});
  EXPECT_EQ(concat({a, b}, {2, 4}, {{"axis", 1}}).data, (V{1, 0, 1, 2, 2, 3, 4, 5}));
  EXPECT_EQ(concat({b, a}, {2, 4}, {{"axis", -1}}).data, (V{0, 1, 2, 1, 3, 4, 5, 2}));
  EXPECT_EQ(concat({tensor({1, 2}, {1, 2}), tensor({2, 2}, {3, 4, 5, 6}), tensor({1, 2}, {7, 8})}, {4, 2}, {{"axis", {0}}})
                .data,
            (V{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(concat({tensor({1}, {9})}, {1}, {{"axis", 0}}).data, (V{9}));
  EXPECT_EQ(concat({iota({2}, "int32"), iota({3}, "int32")}, {5}, {{"axis", 0}}, "int32").data, (V{0, 1, 0, 1, 2}));
  expect_error([&] { concat({a, iota({3, 3})}, {5, 3}, {{"axis", 1}}); }, {"Concat", "[2, 1]", "[3, 3]", "differ outside axis 1"});
  expect_error([&] { concat({a, iota({2})}, {2, 2}, {{"axis", 1}}); }, {"Concat", "differ outside axis"});
  expect_error([&] { concat({a, iota({2, 1}, "int32")}, {2, 2}, {{"axis", 1}}); }, {"Concat", "dtypes differ"});
  expect_error([&] { concat({a, b}, {2, 4}, {{"axis", 2}}); }, {"Concat", "axis 2 out of range"});
}

TEST(OpsLayout, PadAndUnPad) {
  const Tensor x = iota({2, 3});
  EXPECT_EQ(run_op("PadAkg", {x}, {3, 5}, "float32", {{"head", {1, 0}}, {"tail", {0, 2}}, {"pad_val", 7}}).data,
            (V{7, 7, 7, 7, 7, 0, 1, 2, 7, 7, 3, 4, 5, 7, 7}));
  EXPECT_EQ(run_op("PadAkg", {tensor({1}, {5})}, {4}, "float32", {{"head", {2}}, {"tail", {1}}}).data, (V{0, 0, 5, 0}));
  EXPECT_EQ(run_op("PadAkg", {x}, {2, 3}, "float32", {{"head", {0, 0}}, {"tail", {0, 0}}}).data, x.data);
  EXPECT_EQ(run_op("PadAkg", {tensor({1}, {5}, "int32")}, {2}, "int32", {{"head", {0}}, {"tail", {1}}, {"pad_val", -1}})
                .data,
            (V{5, -1}));
  expect_error([&] { run_op("PadAkg", {x}, {2, 3}, "float32", {{"head", {0}}, {"tail", {0, 0}}}); },
               {"PadAkg", "'head' has 1 entries"});
  expect_error([&] { run_op("PadAkg", {x}, {2, 3}, "float32", {{"head", {0, -1}}, {"tail", {0, 0}}}); },
               {"PadAkg", "negative"});
  const Tensor y = iota({3, 5});
  EXPECT_EQ(run_op("UnPadAkg", {y}, {2, 3}, "float32", {{"tail", {1, 2}}}).data, (V{0, 1, 2, 5, 6, 7}));
  EXPECT_EQ(run_op("UnPadAkg", {y}, {3, 5}, "float32", {{"tail", {0, 0}}}).data, y.data);
  expect_error([&] { run_op("UnPadAkg", {y}, {0, 5}, "float32", {{"tail", {4, 0}}}); }, {"UnPadAkg", "exceeds"});
}

TEST(OpsLayout, EquivFormatAndTransData) {
  const Tensor x = iota({2, 3});
  EXPECT_EQ(run_op("EquivFormat", {x}, {3, 2}, "float32", {{"shape", {3, 2}}}).data, x.data);
  EXPECT_EQ(run_op("EquivFormat", {x}, {6}, "float32", {{"shape", {-1}}}).data, x.data);
  EXPECT_EQ(run_op("EquivFormat", {x}, {1, 6}, "float32").data, x.data);  // no attr: the output desc
  expect_error([&] { run_op("EquivFormat", {x}, {4}, "float32"); }, {"EquivFormat", "cannot reshape"});
  for (const char *dst : {"NHWC", "ND", "DefaultFormat", "NCHW"}) {
    EXPECT_EQ(run_op("TransData", {x}, {2, 3}, "float32", {{"src_format", "NCHW"}, {"dst_format", dst}}).data, x.data);
  }
  EXPECT_EQ(run_op("TransData", {x}, {2, 3}, "float32").data, x.data);
  for (const char *fmt : {"FRACTAL_NZ", "NC1HWC0", "FRACTAL_Z"}) {
    expect_error([&] { run_op("TransData", {x}, {2, 3}, "float32", {{"src_format", "ND"}, {"dst_format", fmt}}); },
                 {"TransData", fmt, "unsupported"});
    expect_error([&] { run_op("TransData", {x}, {2, 3}, "float32", {{"src_format", fmt}, {"dst_format", "ND"}}); },
                 {"TransData", fmt, "unsupported"});
  }
}

// ---------------------------------------------------------------------------------------------
// OneHot, Gather, GatherNd, TensorScatterAdd, UnsortedSegmentSum

Tensor one_hot(const Tensor &indices, S out_shape, Attrs attrs, const std::string &dtype = "float32",
               double on = 1, double off = 0) {
  const json in = desc("indices", indices.shape, indices.dtype), out = desc("out", out_shape, dtype);
  const json k = kernel({in}, {op("OneHot", {in, constant(on, dtype), constant(off, dtype)}, out, attrs)}, {out});
  return evaluate(k, {indices}).outputs.at(0);
}

TEST(OpsIndexing, OneHot) {
  const Tensor idx = tensor({4}, {0, 2, 3, -1}, "int32");
  EXPECT_EQ(one_hot(idx, {4, 3}, {{"depth", 3}, {"axis", -1}}).data, (V{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(one_hot(idx, {3, 4}, {{"depth", 3}, {"axis", 0}}).data, (V{1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0}));
  // [2, 2] indices, axis 1 -> [2, 3, 2]: out[i, d, j] = (idx[i, j] == d).
  const Tensor idx2 = tensor({2, 2}, {1, 0, 2, 2}, "int64");
  EXPECT_EQ(one_hot(idx2, {2, 3, 2}, {{"depth", 3}, {"axis", 1}}, "float32", 5, -5).data,
            (V{-5, 5, 5, -5, -5, -5, -5, -5, -5, -5, 5, 5}));
  EXPECT_EQ(one_hot(idx2, {2, 2, 3}, {{"depth", 3}, {"axis", 2}}, "int32").data,
            (V{0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1}));
  EXPECT_EQ(one_hot(tensor({}, {0}, "int32"), {1}, {{"depth", 1}, {"axis", -1}}).data, (V{1}));
  // on/off given as [1] kernel inputs.
  const json in = desc("i", {2}, "int32"), on = desc("on", {1}), off = desc("off", {1}), out = desc("out", {2, 2});
  const json k = kernel({in, on, off}, {op("OneHot", {in, on, off}, out, {{"depth", 2}, {"axis", -1}})}, {out});
  EXPECT_EQ(evaluate(k, {tensor({2}, {1, 7}, "int32"), tensor({1}, {3}), tensor({1}, {0.5})}).outputs[0].data,
            (V{0.5, 3, 0.5, 0.5}));
  expect_error([&] { one_hot(idx, {4, 3}, {{"depth", 0}, {"axis", -1}}); }, {"OneHot", "depth"});
  expect_error([&] { one_hot(idx, {4, 3}, {{"depth", 3}, {"axis", -2}}); }, {"OneHot", "axis -2 out of range"});
  expect_error([&] { one_hot(idx, {4, 3}, {{"depth", 3}, {"axis", 2}}); }, {"OneHot", "axis 2 out of range"});
  expect_error([&] { one_hot(tensor({4}, {0, 1, 2, 0}), {4, 3}, {{"depth", 3}}); }, {"OneHot", "integer"});
}

TEST(OpsIndexing, Gather) {
  const Tensor params = iota({3, 2});
  EXPECT_EQ(run_op("Gather", {params, tensor({5}, {2, 0, -1, 3, 2}, "int32")}, {5, 2}, "float32", {{"axis", 0}}).data,
            (V{4, 5, 0, 1, 0, 0, 0, 0, 4, 5}));
  // axis 1 of [2, 3] with [2, 2] indices -> [2, 2, 2].
  const Tensor p2 = iota({2, 3});
  const Tensor idx = tensor({2, 2}, {2, 0, 1, 5}, "int64");
  EXPECT_EQ(run_op("Gather", {p2, idx}, {2, 2, 2}, "float32", {{"axis", {1}}}).data, (V{2, 0, 1, 0, 5, 3, 4, 0}));
  EXPECT_EQ(run_op("Gather", {p2, idx}, {2, 2, 2}, "float32", {{"axis", -1}}).data, (V{2, 0, 1, 0, 5, 3, 4, 0}));
  // Default axis 0, a size-1 table, integer params.
  EXPECT_EQ(run_op("Gather", {tensor({1}, {7}, "int32"), tensor({3}, {0, 1, 0}, "int32")}, {3}, "int32").data,
            (V{7, 0, 7}));
  // A scalar index removes the axis.
  EXPECT_EQ(run_op("Gather", {p2, tensor({}, {1}, "int32")}, {2}, "float32", {{"axis", 1}}).data, (V{1, 4}));
  expect_error([&] { run_op("Gather", {p2, idx}, {2, 2, 2}, "float32", {{"axis", 2}}); }, {"Gather", "axis 2"});
  expect_error([&] { run_op("Gather", {p2, tensor({1}, {0})}, {1, 3}, "float32"); }, {"Gather", "integer"});
}

TEST(OpsIndexing, GatherNd) {
  const Tensor params = iota({2, 3});
  EXPECT_EQ(run_op("GatherNd", {params, tensor({4, 2}, {1, 2, 0, 0, 2, 0, 0, -1}, "int32")}, {4}).data, (V{5, 0, 0, 0}));
  // q = 1: whole rows.
  EXPECT_EQ(run_op("GatherNd", {params, tensor({3, 1}, {1, -1, 0}, "int32")}, {3, 3}).data,
            (V{3, 4, 5, 0, 0, 0, 0, 1, 2}));
  // Batch dims of the indices: [2, 1, 2] -> [2, 1].
  EXPECT_EQ(run_op("GatherNd", {params, tensor({2, 1, 2}, {0, 1, 1, 1}, "int64")}, {2, 1}).data, (V{1, 4}));
  expect_error([&] { run_op("GatherNd", {params, tensor({1, 3}, {0, 0, 0}, "int32")}, {1}); },
               {"GatherNd", "3 components", "rank 2"});
}

TEST(OpsIndexing, TensorScatterAdd) {
  const Tensor x = tensor({4}, {1, 1, 1, 1});
  // Duplicates add up in order; rows out of range (-1, 4) are skipped.
  EXPECT_EQ(run_op("TensorScatterAdd", {x, tensor({6, 1}, {0, 2, 0, 4, -1, 3}, "int32"), tensor({6}, {10, 20, 30, 40, 50, 60})},
                   {4})
                .data,
            (V{41, 1, 21, 61}));
  // A rank-1 indices tensor means q = 1; updates rows are x's trailing dims.
  EXPECT_EQ(run_op("TensorScatterAdd", {iota({3, 2}), tensor({2}, {2, 2}, "int32"), tensor({2, 2}, {10, 20, 30, 40})}, {3, 2})
                .data,
            (V{0, 1, 2, 3, 44, 65}));
  // q = 2 on [2, 3].
  EXPECT_EQ(run_op("TensorScatterAdd",
                   {iota({2, 3}), tensor({3, 2}, {1, 2, 0, 3, 0, 0}, "int64"), tensor({3}, {100, 200, 300})}, {2, 3})
                .data,
            (V{300, 1, 2, 3, 4, 105}));
  // Integers wrap.
  EXPECT_EQ(run_op("TensorScatterAdd", {tensor({1}, {2147483647}, "int32"), tensor({1, 1}, {0}, "int32"),
                                        tensor({1}, {1}, "int32")},
                   {1}, "int32")
                .data,
            (V{-2147483648.0}));
  expect_error(
      [&] { run_op("TensorScatterAdd", {x, tensor({2, 1}, {0, 1}, "int32"), tensor({3}, {1, 2, 3})}, {4}); },
      {"TensorScatterAdd", "updates shape [3], expected [2]"});
}

TEST(OpsIndexing, UnsortedSegmentSum) {
  const Tensor x = iota({5, 2});
  EXPECT_EQ(run_op("UnsortedSegmentSum", {x, tensor({5}, {0, 2, 0, -1, 3}, "int32")}, {3, 2}, "float32",
                   {{"num_segments", 3}})
                .data,
            (V{4, 6, 0, 0, 2, 3}));
  // ids [2, 2] of x [2, 2, 3] -> [num_segments, 3].
  EXPECT_EQ(run_op("UnsortedSegmentSum", {iota({2, 2, 3}), tensor({2, 2}, {1, 1, 0, 7}, "int64")}, {2, 3}, "float32",
                   {{"num_segments", {2}}})
                .data,
            (V{6, 7, 8, 3, 5, 7}));
  // ids of x's full shape: a plain scatter of scalars; integers.
  EXPECT_EQ(run_op("UnsortedSegmentSum", {tensor({3}, {5, 6, 7}, "int32"), tensor({3}, {0, 0, 0}, "int32")}, {1}, "int32",
                   {{"num_segments", 1}})
                .data,
            (V{18}));
  expect_error([&] { run_op("UnsortedSegmentSum", {x, tensor({2}, {0, 1}, "int32")}, {2, 2}, "float32", {{"num_segments", 2}}); },
               {"UnsortedSegmentSum", "not a prefix"});
  expect_error([&] { run_op("UnsortedSegmentSum", {x, tensor({5}, {0, 0, 0, 0, 0}, "int32")}, {0, 2}, "float32",
                            {{"num_segments", 0}}); },
               {"UnsortedSegmentSum", "num_segments"});
}

// ---------------------------------------------------------------------------------------------
// Pooling

Tensor pool(const Tensor &x, S out_shape, Attrs attrs) { return run_op("Pool2D", {x}, out_shape, "float32", attrs); }

TEST(OpsPool, MaxAndAvgNCHW) {
  const Tensor x = iota({1, 1, 4, 4});
  const Attrs base = {{"data_layout", "NCHW"}, {"kernel_size", {2, 2}}, {"strides", {2, 2}}};
  Attrs max = base, avg = base;
  max.push_back({"pool_type", "max"});
  avg.push_back({"pool_type", "avg"});
  EXPECT_EQ(pool(x, {1, 1, 2, 2}, max).data, (V{5, 7, 13, 15}));
  EXPECT_EQ(pool(x, {1, 1, 2, 2}, avg).data, (V{2.5, 4.5, 10.5, 12.5}));
  // Two channels, kernel 3 x 1, strides 1 x 2 on [1, 2, 3, 3] -> [1, 2, 1, 2].
  EXPECT_EQ(pool(iota({1, 2, 3, 3}), {1, 2, 1, 2},
                 {{"pool_type", "max"}, {"data_layout", "NCHW"}, {"kernel_size", {3, 1}}, {"strides", {1, 2}}})
                .data,
            (V{6, 8, 15, 17}));
}

TEST(OpsPool, CeilModeAndPadding) {
  const Tensor x = iota({1, 1, 5, 5});
  const Attrs common = {{"pool_type", "max"}, {"data_layout", "NCHW"}, {"kernel_size", {2, 2}}, {"strides", {2, 2}}};
  Attrs floor_mode = common, ceil_mode = common;
  floor_mode.push_back({"round_mode", 0});
  ceil_mode.push_back({"round_mode", 1});
  EXPECT_EQ(pool(x, {1, 1, 2, 2}, floor_mode).data, (V{6, 8, 16, 18}));
  // Ceil: a third, partial window per dim (only the elements inside the input count).
  EXPECT_EQ(pool(x, {1, 1, 3, 3}, ceil_mode).data, (V{6, 8, 9, 16, 18, 19, 21, 23, 24}));
  Attrs ceil_avg = {{"pool_type", "avg"}, {"data_layout", "NCHW"}, {"kernel_size", {2, 2}}, {"strides", {2, 2}},
                    {"round_mode", 1}};
  // Partial windows still divide by kh * kw = 4 (the outside counts as zeros).
  EXPECT_EQ(pool(x, {1, 1, 3, 3}, ceil_avg).data, (V{3, 5, 3.25, 13, 15, 8.25, 10.25, 11.25, 6}));
  // 3 x 3 window, stride 1, pad 1 all round on a 3 x 3 input: the corners see 4 elements.
  const Tensor y = iota({1, 1, 3, 3});
  const Attrs padded = {{"data_layout", "NCHW"}, {"kernel_size", {3, 3}}, {"strides", {1, 1}}, {"pad", {1, 1, 1, 1}}};
  Attrs pmax = padded, pavg = padded;
  pmax.push_back({"pool_type", "max"});
  pavg.push_back({"pool_type", "avg"});
  EXPECT_EQ(pool(y, {1, 1, 3, 3}, pmax).data, (V{4, 5, 5, 7, 8, 8, 7, 8, 8}));
  EXPECT_EQ(pool(y, {1, 1, 3, 3}, pavg).data, (V{8.0 / 9, 15.0 / 9, 12.0 / 9, 21.0 / 9, 36.0 / 9, 27.0 / 9,
                                                 20.0 / 9, 33.0 / 9, 24.0 / 9}));
  // Padding never wins a max, even against negative values.
  EXPECT_EQ(pool(tensor({1, 1, 1, 2}, {-3, -1}), {1, 1, 1, 2},
                 {{"pool_type", "max"}, {"data_layout", "NCHW"}, {"kernel_size", {1, 2}}, {"strides", {1, 1}},
                  {"pad", {0, 0, 1, 0}}})
                .data,
            (V{-3, -1}));
  // A window wholly in the padding (top pad 2, kernel 1): -inf for max, 0 for avg.
  const Attrs deep = {{"data_layout", "NCHW"}, {"kernel_size", {1, 1}}, {"strides", {1, 1}}, {"pad", {2, 0, 0, 0}}};
  Attrs dmax = deep, davg = deep;
  dmax.push_back({"pool_type", "max"});
  davg.push_back({"pool_type", "avg"});
  EXPECT_EQ(pool(tensor({1, 1, 1, 1}, {5}), {1, 1, 3, 1}, dmax).data, (V{-kInf, -kInf, 5}));
  EXPECT_EQ(pool(tensor({1, 1, 1, 1}, {5}), {1, 1, 3, 1}, davg).data, (V{0, 0, 5}));
}

TEST(OpsPool, NHWCAndNaN) {
  // [1, 2, 2, 2] NHWC: channel c holds 4 values at h, w.
  const Tensor x = tensor({1, 2, 2, 2}, {1, -1, kNaN, -2, 3, -3, 4, -4});
  expect_same(pool(x, {1, 1, 1, 2}, {{"pool_type", "max"}, {"data_layout", "NHWC"}, {"kernel_size", {2, 2}}, {"strides", {2, 2}}})
                  .data,
              {kNaN, -1});
  expect_same(pool(x, {1, 1, 1, 2}, {{"pool_type", "avg"}, {"data_layout", "NHWC"}, {"kernel_size", {2, 2}}, {"strides", {2, 2}}})
                  .data,
              {kNaN, -2.5});
  // NHWC with a 1 x 2 window, stride 1: [1, 2, 1, 2].
  EXPECT_EQ(pool(iota({1, 2, 2, 2}), {1, 2, 1, 2},
                 {{"pool_type", "max"}, {"data_layout", "NHWC"}, {"kernel_size", {1, 2}}, {"strides", {1, 1}}})
                .data,
            (V{2, 3, 6, 7}));
}

TEST(OpsPool, GlobalPooling) {
  const Tensor x = iota({1, 2, 2, 3});  // NCHW: channel 0 holds 0..5, channel 1 6..11
  EXPECT_EQ(run_op("GlobalPool2D", {x}, {1, 2, 1, 1}, "float32", {{"pool_type", "avg"}, {"data_layout", "NCHW"}}).data,
            (V{2.5, 8.5}));
  EXPECT_EQ(run_op("GlobalPool2D", {x}, {1, 2, 1, 1}, "float32", {{"pool_type", "max"}, {"data_layout", "NCHW"}}).data,
            (V{5, 11}));
  EXPECT_EQ(pool(x, {1, 2, 1, 1}, {{"pool_type", "max"}, {"data_layout", "NCHW"}, {"global", true}}).data, (V{5, 11}));
  // NHWC: [1, 2, 2, 3] has 3 channels over 2 x 2.
  EXPECT_EQ(run_op("GlobalPool2D", {x}, {1, 1, 1, 3}, "float32", {{"pool_type", "avg"}, {"data_layout", "NHWC"}}).data,
            (V{4.5, 5.5, 6.5}));
  expect_same(run_op("GlobalPool2D", {tensor({1, 1, 1, 3}, {1, kNaN, 2})}, {1, 1, 1, 1}, "float32",
                     {{"pool_type", "max"}, {"data_layout", "NCHW"}})
                  .data,
              {kNaN});
}

TEST(OpsPool, ErrorsAreClear) {
  const Tensor x = iota({1, 1, 4, 4});
  expect_error([&] { pool(x, {1, 1, 2, 2}, {{"pool_type", "min"}, {"kernel_size", {2, 2}}, {"strides", {2, 2}}}); },
               {"Pool2D", "pool_type"});
  expect_error([&] { pool(x, {1, 1, 2, 2}, {{"pool_type", "max"}, {"kernel_size", {2, 2}}, {"strides", {0, 2}}}); },
               {"Pool2D", "strides must be positive"});
  expect_error([&] { pool(x, {1, 1, 2, 2}, {{"pool_type", "max"}, {"data_layout", "NC1HWC0"}, {"kernel_size", {2, 2}},
                                            {"strides", {2, 2}}}); },
               {"Pool2D", "data_layout"});
  expect_error([&] { pool(x, {1, 1, 2, 2}, {{"pool_type", "max"}, {"kernel_size", {5, 5}}, {"strides", {1, 1}}}); },
               {"Pool2D", "larger than the padded input"});
  expect_error([&] { pool(iota({1, 4, 4}), {1, 2, 2}, {{"pool_type", "max"}, {"kernel_size", {2, 2}}, {"strides", {2, 2}}}); },
               {"Pool2D", "rank 4"});
  expect_error([&] { pool(x, {1, 1, 2, 2}, {{"pool_type", "max"}, {"kernel_size", {2, 2}}, {"strides", {2, 2}}, {"pad", {1, 1}}}); },
               {"Pool2D", "pad"});
}

// ---------------------------------------------------------------------------------------------
// Unsupported ops say why

TEST(OpsUnsupported, NamedWithAReason) {
  const json a = desc("a", {2}), out = desc("out", {2});
  for (const char *name : {"Custom", "CSRMV", "Complex", "StandardNormal", "LayoutTransform"}) {
    const json k = kernel({a}, {op(name, {a}, out)}, {out});
    expect_error([&] { evaluate(k, {iota({2})}); }, {name, "unsupported", "("});
  }
}

// ---------------------------------------------------------------------------------------------
// Random inputs for the new ops

// Fraction of values below `lo` and at or above `hi`.
std::pair<double, double> outside(const Tensor &t, double lo, double hi) {
  double below = 0, above = 0;
  for (double v : t.data) {
    below += v < lo;
    above += v >= hi;
  }
  return {below / t.data.size(), above / t.data.size()};
}

TEST(OpsRandomInputs, IndicesMostlyInRangeWithSomeOutside) {
  const json params = desc("params", {7, 3}), idx = desc("idx", {4000}, "int32"), g = desc("g", {4000, 3});
  const json nd_params = desc("ndp", {5, 3, 2}), nd_idx = desc("ndi", {2000, 2}, "int64"), nd = desc("nd", {2000, 2});
  const json oh_idx = desc("ohi", {4000}, "int32"), oh = desc("oh", {4000, 4});
  const json seg_x = desc("sx", {4000}), seg_raw = desc("sraw", {4000}, "int64"), seg_ids = desc("sid", {4000}, "int32");
  const json seg = desc("seg", {6});
  const json k = kernel({params, idx, nd_params, nd_idx, oh_idx, seg_x, seg_raw},
                        {op("Gather", {params, idx}, g, {{"axis", 0}}),
                         op("GatherNd", {nd_params, nd_idx}, nd),
                         op("OneHot", {oh_idx, constant(1.0), constant(0.0)}, oh, {{"depth", 4}, {"axis", -1}}),
                         op("Cast", {seg_raw}, seg_ids, {{"dst_type", "int32"}}),
                         op("UnsortedSegmentSum", {seg_x, seg_ids}, seg, {{"num_segments", 6}})},
                        {g, nd, oh, seg});
  const std::vector<Tensor> in = random_inputs(k, 11);
  auto check = [](const Tensor &t, double limit, const char *what) {
    const auto [below, above] = outside(t, 0, limit);
    EXPECT_GT(below, 0.01) << what;
    EXPECT_GT(above, 0.01) << what;
    EXPECT_LT(below + above, 0.1) << what;
    for (double v : t.data) ASSERT_TRUE(v == std::floor(v) && v >= -limit && v < 2 * limit) << what << " " << v;
  };
  check(in[1], 7, "Gather");
  check(in[4], 4, "OneHot");
  check(in[6], 6, "UnsortedSegmentSum through a Cast");
  // GatherNd: component 0 indexes a dim of 5, component 1 a dim of 3.
  Tensor c0{{2000}, "int64", {}}, c1{{2000}, "int64", {}};
  for (size_t i = 0; i < 2000; ++i) {
    c0.data.push_back(in[3].data[2 * i]);
    c1.data.push_back(in[3].data[2 * i + 1]);
  }
  check(c0, 5, "GatherNd component 0");
  check(c1, 3, "GatherNd component 1");
  // The tables themselves stay gaussian, and the kernel evaluates.
  EXPECT_LT(*std::min_element(in[0].data.begin(), in[0].data.end()), 0.0);
  EXPECT_NO_THROW(evaluate(k, in));
}

TEST(OpsRandomInputs, TensorScatterAddIndices) {
  const json x = desc("x", {9, 2}), idx = desc("idx", {3000}, "int32"), upd = desc("upd", {3000, 2}), out = desc("out", {9, 2});
  const json k = kernel({x, idx, upd}, {op("TensorScatterAdd", {x, idx, upd}, out)}, {out});
  const std::vector<Tensor> in = random_inputs(k, 3);
  const auto [below, above] = outside(in[1], 0, 9);
  EXPECT_GT(below, 0.01);
  EXPECT_GT(above, 0.01);
  EXPECT_LT(below + above, 0.1);
  EXPECT_NO_THROW(evaluate(k, in));
}

TEST(OpsRandomInputs, DivisorsAvoidZero) {
  const json a = desc("a", {2000}, "int32"), b = desc("b", {2000}, "int32"), c = desc("c", {2000}, "int8");
  const json f = desc("f", {2000}), fb = desc("fb", {2000}, "float16");
  const json q = desc("q", {2000}, "int32"), m = desc("m", {2000}, "int32"), r = desc("r", {2000}, "int32");
  const json cb = desc("cb", {2000}, "int32"), fm = desc("fm", {2000}), fm16 = desc("fm16", {2000}, "float16");
  const json k = kernel({a, b, c, f, fb},
                        {op("FloorDiv", {a, b}, q), op("Cast", {c}, cb, {{"dst_type", "int32"}}), op("Mod", {a, cb}, m),
                         op("FloorMod", {a, b}, r), op("FloorMod", {f, f}, fm), op("Div", {fb, fb}, fm16)},
                        {q, m, r, fm, fm16});
  const std::vector<Tensor> in = random_inputs(k, 5);
  for (size_t i : {1, 2}) {
    EXPECT_EQ(std::count(in[i].data.begin(), in[i].data.end(), 0.0), 0) << i;
    EXPECT_LT(*std::min_element(in[i].data.begin(), in[i].data.end()), 0.0) << i;  // both signs
  }
  EXPECT_LT(*std::min_element(in[0].data.begin(), in[0].data.end()), 0.0);  // a dividend stays signed
  for (double v : in[4].data) ASSERT_GE(v, 0.5);  // Div's divisor is positive, like RealDiv's
  EXPECT_NO_THROW(evaluate(k, in));
}

TEST(OpsRandomInputs, DomainsOfAsinACosAcosh) {
  const json s = desc("s", {4000}), c = desc("c", {4000}, "float16"), h = desc("h", {4000}), cv = desc("cv", {4000});
  const json so = desc("so", {4000}), co = desc("co", {4000}, "float16"), ho = desc("ho", {4000});
  const json k = kernel({s, c, h},
                        {op("Asin", {s}, so), op("ACos", {c}, co), op("Reshape", {h}, cv, {{"shape", {4000}}}),
                         op("Acosh", {cv}, ho)},
                        {so, co, ho});
  const std::vector<Tensor> in = random_inputs(k, 9);
  for (size_t i : {0, 1}) {
    const auto [below, above] = outside(in[i], -1, 1.0000001);
    EXPECT_GT(below + above, 0.01) << i;
    EXPECT_LT(below + above, 0.12) << i;
  }
  const auto [below_one, ignored] = outside(in[2], 1, kInf);
  EXPECT_GT(below_one, 0.01);
  EXPECT_LT(below_one, 0.12);
  size_t finite = 0;
  for (const Tensor &t : evaluate(k, in).outputs) finite += std::count_if(t.data.begin(), t.data.end(), [](double v) {
    return std::isfinite(v);
  });
  EXPECT_GT(finite, 3 * 4000 * 0.85);
}

}  // namespace
}  // namespace akg::reference
