// Hand-computed cases for the reference evaluator: every op, broadcasting, reductions, layouts,
// assignments, float16 rounding (per op and at stores), tolerance checks, ill-conditioned elements,
// random inputs, and error reporting.
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

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> data_of(const Tensor &t) { return t.data; }

using akg::reference::testing::expect_contains;
using akg::reference::testing::expect_error;

// ---------------------------------------------------------------------------------------------
// float16 rounding

// Decodes binary16 bits, independently of round_to_float16.
double half_value(uint16_t bits) {
  const int sign = bits >> 15;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double magnitude;
  if (exponent == 0x1f) {
    magnitude = mantissa == 0 ? kInf : kNaN;
  } else if (exponent == 0) {
    magnitude = std::ldexp(mantissa, -24);
  } else {
    magnitude = std::ldexp(1024 + mantissa, exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

TEST(Float16, KnownValues) {
  EXPECT_EQ(round_to_float16(1.0), 1.0);
  EXPECT_EQ(round_to_float16(0.1), 0.0999755859375);
  EXPECT_EQ(round_to_float16(3.14159265), 3.140625);
  EXPECT_EQ(round_to_float16(65504.0), 65504.0);
  EXPECT_EQ(round_to_float16(65519.99), 65504.0);
  EXPECT_EQ(round_to_float16(-65504.0), -65504.0);
  EXPECT_EQ(round_to_float16(std::ldexp(1.0, -14)), std::ldexp(1.0, -14));  // smallest normal
  EXPECT_EQ(round_to_float16(std::ldexp(1.0, -24)), std::ldexp(1.0, -24));  // smallest subnormal
}

TEST(Float16, TiesGoToEven) {
  // Normal range: quantum 2^-10 at 1, 2 at 2048.
  EXPECT_EQ(round_to_float16(1.0 + std::ldexp(1.0, -11)), 1.0);
  EXPECT_EQ(round_to_float16(1.0 + 3 * std::ldexp(1.0, -11)), 1.0 + std::ldexp(1.0, -9));
  EXPECT_EQ(round_to_float16(2049.0), 2048.0);
  EXPECT_EQ(round_to_float16(2051.0), 2052.0);
  EXPECT_EQ(round_to_float16(-2049.0), -2048.0);
  // Just off the tie goes to the nearer neighbour.
  EXPECT_EQ(round_to_float16(2049.0001), 2050.0);
  EXPECT_EQ(round_to_float16(2048.9999), 2048.0);
}

TEST(Float16, Subnormals) {
  const double q = std::ldexp(1.0, -24);
  EXPECT_EQ(round_to_float16(0.5 * q), 0.0);          // tie between 0 and q: 0 is even
  EXPECT_EQ(round_to_float16(0.5000001 * q), q);
  EXPECT_EQ(round_to_float16(1.5 * q), 2 * q);        // tie between q (odd) and 2q (even)
  EXPECT_EQ(round_to_float16(2.5 * q), 2 * q);
  EXPECT_EQ(round_to_float16(1023.5 * q), 1024 * q);  // largest subnormal/smallest normal tie
  EXPECT_EQ(round_to_float16(1e-9), 0.0);
  EXPECT_TRUE(std::signbit(round_to_float16(-1e-9)));  // underflow keeps the sign
  EXPECT_TRUE(std::signbit(round_to_float16(-0.0)));
}

TEST(Float16, OverflowInfAndNaN) {
  EXPECT_EQ(round_to_float16(65520.0), kInf);  // the tie above the largest half rounds up
  EXPECT_EQ(round_to_float16(-65520.0), -kInf);
  EXPECT_EQ(round_to_float16(1e10), kInf);
  EXPECT_EQ(round_to_float16(kInf), kInf);
  EXPECT_EQ(round_to_float16(-kInf), -kInf);
  EXPECT_TRUE(std::isnan(round_to_float16(kNaN)));
}

// Every finite half is a fixed point, and between every pair of neighbours the midpoint goes to
// the even one and anything off the midpoint to the nearer one.
TEST(Float16, ExhaustiveNeighbours) {
  for (uint32_t bits = 0; bits < 0x7c00; ++bits) {  // non-negative finite halves
    const double lo = half_value(static_cast<uint16_t>(bits));
    ASSERT_EQ(round_to_float16(lo), lo) << bits;
    ASSERT_EQ(round_to_float16(-lo), -lo) << bits;
    if (bits + 1 == 0x7c00) break;
    const double hi = half_value(static_cast<uint16_t>(bits + 1));
    const double mid = 0.5 * (lo + hi);  // exact in double
    const double even = (bits % 2 == 0) ? lo : hi;
    ASSERT_EQ(round_to_float16(mid), even) << bits;
    ASSERT_EQ(round_to_float16(std::nextafter(mid, 0.0)), lo) << bits;
    ASSERT_EQ(round_to_float16(std::nextafter(mid, kInf)), hi) << bits;
  }
}

// ---------------------------------------------------------------------------------------------
// Elementwise ops

TEST(Elementwise, Arithmetic) {
  const Tensor a = tensor({4}, {1, -2, 3.5, 0});
  const Tensor b = tensor({4}, {2, 4, -0.5, 8});
  EXPECT_EQ(data_of(run_op("Add", {a, b}, {4})), (std::vector<double>{3, 2, 3, 8}));
  EXPECT_EQ(data_of(run_op("TensorAdd", {a, b}, {4})), (std::vector<double>{3, 2, 3, 8}));
  EXPECT_EQ(data_of(run_op("Sub", {a, b}, {4})), (std::vector<double>{-1, -6, 4, -8}));
  EXPECT_EQ(data_of(run_op("Mul", {a, b}, {4})), (std::vector<double>{2, -8, -1.75, 0}));
  EXPECT_EQ(data_of(run_op("RealDiv", {a, b}, {4})), (std::vector<double>{0.5, -0.5, -7, 0}));
  EXPECT_EQ(data_of(run_op("Maximum", {a, b}, {4})), (std::vector<double>{2, 4, 3.5, 8}));
  EXPECT_EQ(data_of(run_op("Minimum", {a, b}, {4})), (std::vector<double>{1, -2, -0.5, 0}));
  EXPECT_EQ(data_of(run_op("Pow", {tensor({3}, {2, 9, 4}), tensor({3}, {3, 0.5, -1})}, {3})),
            (std::vector<double>{8, 3, 0.25}));
}

TEST(Elementwise, Unary) {
  const Tensor x = tensor({3}, {4, 0.25, 1});
  EXPECT_EQ(data_of(run_op("Neg", {x}, {3})), (std::vector<double>{-4, -0.25, -1}));
  EXPECT_EQ(data_of(run_op("Abs", {tensor({3}, {-4, 0, 2})}, {3})), (std::vector<double>{4, 0, 2}));
  EXPECT_EQ(data_of(run_op("Sqrt", {x}, {3})), (std::vector<double>{2, 0.5, 1}));
  EXPECT_EQ(data_of(run_op("Rsqrt", {x}, {3})), (std::vector<double>{0.5, 2, 1}));
  EXPECT_EQ(data_of(run_op("Reciprocal", {x}, {3})), (std::vector<double>{0.25, 4, 1}));
  EXPECT_EQ(data_of(run_op("Square", {x}, {3})), (std::vector<double>{16, 0.0625, 1}));
  const Tensor e = run_op("Exp", {tensor({2}, {0, 1})}, {2});
  EXPECT_EQ(e.data[0], 1.0);
  EXPECT_DOUBLE_EQ(e.data[1], 2.718281828459045);
  const Tensor l = run_op("Log", {tensor({3}, {1, std::exp(2.0), 0})}, {3});
  EXPECT_EQ(l.data[0], 0.0);
  EXPECT_DOUBLE_EQ(l.data[1], 2.0);
  EXPECT_EQ(l.data[2], -kInf);
  const Tensor t = run_op("Tanh", {tensor({3}, {0, 0.5, -30})}, {3});
  EXPECT_EQ(t.data[0], 0.0);
  EXPECT_DOUBLE_EQ(t.data[1], 0.46211715726000974);
  EXPECT_EQ(t.data[2], -1.0);
  const Tensor erf = run_op("Erf", {tensor({2}, {0, 1})}, {2});
  EXPECT_EQ(erf.data[0], 0.0);
  EXPECT_DOUBLE_EQ(erf.data[1], 0.8427007929497149);
  EXPECT_TRUE(std::isnan(run_op("Sqrt", {tensor({1}, {-1})}, {1}).data[0]));
}

TEST(Elementwise, ComparisonsGiveBool) {
  const Tensor a = tensor({4}, {1, 2, 3, kNaN});
  const Tensor b = tensor({4}, {2, 2, 2, kNaN});
  auto cmp = [&](const std::string &name) { return run_op(name, {a, b}, {4}, "bool"); };
  EXPECT_EQ(data_of(cmp("Greater")), (std::vector<double>{0, 0, 1, 0}));
  EXPECT_EQ(data_of(cmp("GreaterEqual")), (std::vector<double>{0, 1, 1, 0}));
  EXPECT_EQ(data_of(cmp("Less")), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(data_of(cmp("LessEqual")), (std::vector<double>{1, 1, 0, 0}));
  EXPECT_EQ(data_of(cmp("Equal")), (std::vector<double>{0, 1, 0, 0}));
  EXPECT_EQ(data_of(cmp("NotEqual")), (std::vector<double>{1, 0, 1, 1}));
  EXPECT_EQ(cmp("Greater").dtype, "bool");
  // A comparison may also be declared with a float output dtype (seen in real kernels).
  EXPECT_EQ(data_of(run_op("LessEqual", {a, b}, {4}, "float16")), (std::vector<double>{1, 1, 0, 0}));
}

TEST(Elementwise, LogicAndClassification) {
  const Tensor p = tensor({4}, {0, 0, 1, 1}, "bool");
  const Tensor q = tensor({4}, {0, 1, 0, 1}, "bool");
  EXPECT_EQ(data_of(run_op("LogicalAnd", {p, q}, {4}, "bool")), (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(data_of(run_op("LogicalOr", {p, q}, {4}, "bool")), (std::vector<double>{0, 1, 1, 1}));
  EXPECT_EQ(data_of(run_op("LogicalNot", {p}, {4}, "bool")), (std::vector<double>{1, 1, 0, 0}));
  const Tensor x = tensor({4}, {1, kInf, -kInf, kNaN});
  EXPECT_EQ(data_of(run_op("IsInf", {x}, {4}, "bool")), (std::vector<double>{0, 1, 1, 0}));
  EXPECT_EQ(data_of(run_op("IsNan", {x}, {4}, "bool")), (std::vector<double>{0, 0, 0, 1}));
}

TEST(Elementwise, NaNPropagatesThroughMaximumAndMinimum) {
  const Tensor a = tensor({2}, {kNaN, 1});
  const Tensor b = tensor({2}, {1, kNaN});
  for (const char *name : {"Maximum", "Minimum"}) {
    const Tensor r = run_op(name, {a, b}, {2});
    EXPECT_TRUE(std::isnan(r.data[0]) && std::isnan(r.data[1])) << name;
  }
}

TEST(Elementwise, SelectBroadcastsAllThree) {
  const Tensor cond = tensor({2, 1}, {1, 0}, "bool");
  const Tensor a = tensor({3}, {1, 2, 3});
  const Tensor b = tensor({1}, {-1});
  const Tensor r = run_op("Select", {cond, a, b}, {2, 3});
  EXPECT_EQ(r.data, (std::vector<double>{1, 2, 3, -1, -1, -1}));
}

TEST(Elementwise, IntegerArithmeticIsExactAndWraps) {
  const Tensor a = tensor({5}, {7, -7, 7, -7, 2147483647}, "int32");
  const Tensor b = tensor({5}, {2, 2, -2, -2, 1}, "int32");
  EXPECT_EQ(data_of(run_op("RealDiv", {a, b}, {5}, "int32")), (std::vector<double>{3, -3, -3, 3, 2147483647}));
  EXPECT_EQ(data_of(run_op("Add", {a, b}, {5}, "int32")), (std::vector<double>{9, -5, 5, -9, -2147483648.0}));
  EXPECT_EQ(data_of(run_op("Mul", {tensor({1}, {65536}, "int32"), tensor({1}, {65537}, "int32")}, {1}, "int32")),
            (std::vector<double>{65536}));  // 2^32 + 2^16 wraps to 2^16
  EXPECT_EQ(data_of(run_op("Neg", {tensor({1}, {-2147483648.0}, "int32")}, {1}, "int32")),
            (std::vector<double>{-2147483648.0}));
  EXPECT_EQ(data_of(run_op("Minimum", {a, b}, {5}, "int32")), (std::vector<double>{2, -7, -2, -7, 1}));
  expect_error([&] { run_op("RealDiv", {a, tensor({5}, {1, 1, 0, 1, 1}, "int32")}, {5}, "int32"); },
               {"op #0 (RealDiv)", "division by zero"});
}

TEST(Elementwise, Cast) {
  const Tensor x = tensor({6}, {2.7, -2.7, 0.0, 1e10, kNaN, -0.3});
  EXPECT_EQ(data_of(run_op("Cast", {x}, {6}, "int32", {{"dst_type", "int32"}})),
            (std::vector<double>{2, -2, 0, 2147483647, 0, 0}));
  EXPECT_EQ(data_of(run_op("Cast", {x}, {6}, "bool", {{"dst_type", "bool"}})),
            (std::vector<double>{1, 1, 0, 1, 1, 1}));
  EXPECT_EQ(data_of(run_op("Cast", {tensor({2}, {0.1, 70000}), }, {2}, "float16", {{"dst_type", "float16"}})),
            (std::vector<double>{0.0999755859375, kInf}));
  EXPECT_EQ(data_of(run_op("Cast", {tensor({2}, {1, 0}, "bool")}, {2}, "float32", {{"dst_type", "float32"}})),
            (std::vector<double>{1, 0}));
  EXPECT_EQ(data_of(run_op("Cast", {tensor({1}, {29126}, "int64")}, {1}, "int32", {{"dst_type", "int32"}})),
            (std::vector<double>{29126}));
  // Cast to float32 keeps the value: the reference computes in double.
  EXPECT_EQ(run_op("Cast", {tensor({1}, {0.1}, "float16")}, {1}, "float32", {{"dst_type", "float32"}}).data[0], 0.1);
  expect_error([&] { run_op("Cast", {x}, {6}, "int32", {{"dst_type", "float16"}}); }, {"op #0 (Cast)", "dst_type"});
}

TEST(Elementwise, AddNSumsEveryOperandOfTheInnerList) {
  const json a = desc("a", {2}), b = desc("b", {2}), c = desc("c", {2}), out = desc("out", {2});
  const json k = kernel({a, b, c}, {op("AddN", {json::array({a, b, c})}, out, {{"n", 3}})}, {out});
  const Result r = evaluate(k, {tensor({2}, {1, 2}), tensor({2}, {10, 20}), tensor({2}, {100, 200})});
  EXPECT_EQ(r.outputs[0].data, (std::vector<double>{111, 222}));
}

TEST(Elementwise, ElemAny) {
  EXPECT_EQ(data_of(run_op("ElemAny", {tensor({2, 2}, {0, 0, 1, 0}, "bool")}, {1}, "float32")),
            (std::vector<double>{1}));
  EXPECT_EQ(data_of(run_op("ElemAny", {tensor({3}, {0, 0, 0}, "bool")}, {1}, "float32")), (std::vector<double>{0}));
}

// ---------------------------------------------------------------------------------------------
// Broadcasting

TEST(Broadcasting, NumpyRules) {
  // Rank extension: [2,3] + [3].
  EXPECT_EQ(data_of(run_op("Add", {tensor({2, 3}, {0, 1, 2, 3, 4, 5}), tensor({3}, {10, 20, 30})}, {2, 3})),
            (std::vector<double>{10, 21, 32, 13, 24, 35}));
  // Both stretch: [2,1] * [1,3] = outer product.
  EXPECT_EQ(data_of(run_op("Mul", {tensor({2, 1}, {1, 2}), tensor({1, 3}, {1, 10, 100})}, {2, 3})),
            (std::vector<double>{1, 10, 100, 2, 20, 200}));
  // [4,1,3] - [2,1] -> [4,2,3]; element (i,j,k) = a[i,0,k] - b[j,0].
  std::vector<double> a(12);
  for (int i = 0; i < 12; ++i) a[i] = i;
  const Tensor r = run_op("Sub", {tensor({4, 1, 3}, a), tensor({2, 1}, {100, 200})}, {4, 2, 3});
  ASSERT_EQ(r.data.size(), 24u);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(r.data[(i * 2 + j) * 3 + k], a[i * 3 + k] - (j ? 200 : 100));
  // Scalar constants broadcast against anything.
  const json x = desc("x", {2, 2}), out = desc("out", {2, 2});
  const json k = kernel({x}, {op("Mul", {x, constant(0.5)}, out)}, {out});
  EXPECT_EQ(evaluate(k, {tensor({2, 2}, {2, 4, 6, 8})}).outputs[0].data, (std::vector<double>{1, 2, 3, 4}));
}

TEST(Broadcasting, IncompatibleShapesAreReported) {
  expect_error([] { run_op("Add", {tensor({2, 3}, std::vector<double>(6)), tensor({2}, {1, 2})}, {2, 3}); },
               {"op #0 (Add)", "[2, 3]", "[2]", "broadcast"});
}

// ---------------------------------------------------------------------------------------------
// Reductions

Tensor iota(std::vector<int64_t> shape, const std::string &dtype = "float32") {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
  return Tensor{shape, dtype, v};
}

TEST(Reduce, NegativeAxisAndKeepDims) {
  const Tensor x = iota({2, 3});  // [[0,1,2],[3,4,5]]
  const Tensor kept = run_op("ReduceSum", {x}, {2, 1}, "float32", {{"axis", {-1}}, {"keep_dims", true}});
  EXPECT_EQ(kept.shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(kept.data, (std::vector<double>{3, 12}));
  const Tensor dropped = run_op("ReduceSum", {x}, {3}, "float32", {{"axis", 0}, {"keep_dims", false}});
  EXPECT_EQ(dropped.data, (std::vector<double>{3, 5, 7}));
}

TEST(Reduce, SeveralAxes) {
  const Tensor x = iota({2, 3, 4});
  // Sum over axes 0 and 2: out[j] = sum_i sum_k (12 i + 4 j + k) = 2*4*4j + 4*12 + 2*6 = 32 j + 60.
  const Tensor r = run_op("ReduceSum", {x}, {3}, "float32", {{"axis", {0, -1}}, {"keep_dims", false}});
  EXPECT_EQ(r.data, (std::vector<double>{60, 92, 124}));
  const Tensor kept = run_op("ReduceSum", {x}, {1, 3, 1}, "float32", {{"axis", {2, 0}}, {"keep_dims", true}});
  EXPECT_EQ(kept.data, (std::vector<double>{60, 92, 124}));
  // Over axis 1 only: out[i,k] = sum_j (12 i + 4 j + k) = 36 i + 12 + 3 k.
  const Tensor mid = run_op("ReduceSum", {x}, {2, 4}, "float32", {{"axis", 1}, {"keep_dims", false}});
  EXPECT_EQ(mid.data, (std::vector<double>{12, 15, 18, 21, 48, 51, 54, 57}));
}

TEST(Reduce, AllAxesWhenEmptyOrMissing) {
  const Tensor x = iota({2, 3});
  EXPECT_EQ(run_op("ReduceSum", {x}, {1}, "float32", {{"axis", json::array()}, {"keep_dims", false}}).data,
            (std::vector<double>{15}));
  EXPECT_EQ(run_op("ReduceSum", {x}, {1, 1}, "float32", {{"keep_dims", true}}).data, (std::vector<double>{15}));
  // A reduction to a scalar may be declared [] or [1].
  const Tensor scalar = run_op("ReduceSum", {x}, {}, "float32", {{"axis", {0, 1}}, {"keep_dims", false}});
  EXPECT_EQ(scalar.shape, (std::vector<int64_t>{}));
  EXPECT_EQ(scalar.data, (std::vector<double>{15}));
}

TEST(Reduce, MaxMinProd) {
  const Tensor x = tensor({2, 3}, {3, -1, 2, -5, 4, 0.5});
  const Attrs last = {{"axis", {1}}, {"keep_dims", false}};
  EXPECT_EQ(run_op("ReduceMax", {x}, {2}, "float32", last).data, (std::vector<double>{3, 4}));
  EXPECT_EQ(run_op("ReduceMin", {x}, {2}, "float32", last).data, (std::vector<double>{-1, -5}));
  EXPECT_EQ(run_op("ReduceProd", {x}, {2}, "float32", last).data, (std::vector<double>{-6, -10}));
  const Tensor nan = run_op("ReduceMax", {tensor({3}, {1, kNaN, 2})}, {1}, "float32", {{"axis", 0}, {"keep_dims", true}});
  EXPECT_TRUE(std::isnan(nan.data[0]));
}

TEST(Reduce, WrongDeclaredShapeAndAxisAreReported) {
  const Tensor x = iota({2, 3});
  expect_error([&] { run_op("ReduceSum", {x}, {2}, "float32", {{"axis", {1}}, {"keep_dims", true}}); },
               {"op #0 (ReduceSum)", "[2, 1]", "output_desc", "[2]"});
  expect_error([&] { run_op("ReduceSum", {x}, {2}, "float32", {{"axis", {2}}, {"keep_dims", false}}); },
               {"op #0 (ReduceSum)", "axis 2"});
}

// ---------------------------------------------------------------------------------------------
// Layout ops

TEST(Layout, ReshapeUsesTheDeclaredShape) {
  const Tensor r = run_op("Reshape", {iota({2, 3})}, {3, 2}, "float32", {{"shape", {-1, 2}}});
  EXPECT_EQ(r.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(r.data, iota({6}).data);
  expect_error([] { run_op("Reshape", {iota({2, 3})}, {4}); }, {"op #0 (Reshape)", "reshape"});
}

TEST(Layout, Transpose) {
  const Tensor x = iota({2, 3, 4});  // x[i,j,k] = 12 i + 4 j + k
  const Tensor r = run_op("Transpose", {x}, {4, 2, 3}, "float32", {{"perm", {2, 0, 1}}});
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(r.data[(k * 2 + i) * 3 + j], 12 * i + 4 * j + k);
  expect_error([&] { run_op("Transpose", {x}, {4, 2, 3}, "float32", {{"perm", {2, 0, 0}}}); },
               {"op #0 (Transpose)", "perm"});
}

TEST(Layout, BroadcastTo) {
  const Tensor r = run_op("BroadcastTo", {tensor({2, 1}, {1, 2})}, {3, 2, 2}, "float32", {{"shape", {3, 2, 2}}});
  EXPECT_EQ(r.data, (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2}));
  // -1 keeps the input's extent.
  EXPECT_EQ(run_op("BroadcastTo", {tensor({2, 1}, {1, 2})}, {2, 2}, "float32", {{"shape", {-1, 2}}}).data,
            (std::vector<double>{1, 1, 2, 2}));
  // A constant broadcast without kernel inputs (the "atomic clean" kernels).
  const json out = desc("out", {2, 3});
  const json k = kernel({}, {op("BroadcastTo", {constant(0.0)}, out, {{"shape", {2, 3}}})}, {out});
  EXPECT_EQ(evaluate(k, {}).outputs[0].data, std::vector<double>(6, 0.0));
}

TEST(Layout, Tile) {
  const Tensor r = run_op("Tile", {tensor({2}, {1, 2})}, {2, 4}, "float32", {{"multiples", {2, 2}}});
  EXPECT_EQ(r.data, (std::vector<double>{1, 2, 1, 2, 1, 2, 1, 2}));
  const Tensor r2 = run_op("Tile", {tensor({2, 1}, {1, 2})}, {4, 3}, "float32", {{"multiples", {2, 3}}});
  EXPECT_EQ(r2.data, (std::vector<double>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2}));
}

TEST(Layout, ExpandDims) {
  EXPECT_EQ(run_op("ExpandDims", {iota({2, 3})}, {2, 1, 3}, "float32", {{"axis", 1}}).shape,
            (std::vector<int64_t>{2, 1, 3}));
  EXPECT_EQ(run_op("ExpandDims", {iota({2, 3})}, {2, 3, 1}, "float32", {{"axis", -1}}).data, iota({6}).data);
  EXPECT_EQ(run_op("ExpandDims", {iota({2, 3})}, {1, 2, 3}, "float32", {{"axis", 0}}).shape,
            (std::vector<int64_t>{1, 2, 3}));
}

// ---------------------------------------------------------------------------------------------
// Graphs: constants, assignment, dtype storage

TEST(Graph, InplaceAssignUpdatesTheInputAndReturnsPassthrough) {
  const json acc = desc("acc", {2}), x = desc("x", {2});
  const json sum = desc("sum", {2}), pass = desc("pass", {2}), later = desc("later", {2});
  const json k = kernel({acc, x},
                        {op("Add", {acc, x}, sum),
                         op("InplaceAssign", {acc, sum, x}, pass, {{"fake_output", true}}),
                         // Ops after the assignment still read the old contents of acc.
                         op("Mul", {acc, constant(10.0)}, later)},
                        {pass, later});
  const Result r = evaluate(k, {tensor({2}, {1, 2}), tensor({2}, {5, 7})});
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_EQ(r.outputs[0].data, (std::vector<double>{5, 7}));
  EXPECT_EQ(r.outputs[1].data, (std::vector<double>{10, 20}));
  ASSERT_EQ(r.updated_inputs.count(0), 1u);
  EXPECT_EQ(r.updated_inputs.at(0).data, (std::vector<double>{6, 9}));
  EXPECT_EQ(r.updated_inputs.at(0).shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(r.updated_inputs.count(1), 0u);
}

TEST(Graph, AssignReturnsTheValueAndRoundsFloat16Updates) {
  const json w = desc("w", {2}, "float16"), x = desc("x", {2}, "float16");
  const json v = desc("v", {2}, "float16"), out = desc("out", {2}, "float16");
  const json k = kernel({x, w}, {op("Mul", {x, constant(0.1, "float16")}, v), op("Assign", {w, v}, out)}, {out});
  const Result r = evaluate(k, {tensor({2}, {1, 2}, "float16"), tensor({2}, {0, 0}, "float16")});
  // 0.1 is the float16 constant 0.0999755859375; x * 0.1 rounded to float16 when stored.
  const std::vector<double> expected = {round_to_float16(0.0999755859375), round_to_float16(2 * 0.0999755859375)};
  EXPECT_EQ(r.outputs[0].data, expected);
  ASSERT_EQ(r.updated_inputs.count(1), 1u);
  EXPECT_EQ(r.updated_inputs.at(1).data, expected);
  EXPECT_EQ(r.updated_inputs.at(1).dtype, "float16");
}

TEST(Graph, Float16IntermediatesRoundPerOpOrAtStores) {
  // (x + 2^-12) - x: 1 + 2^-12 rounds to the float16 1 after the Add (per op), giving 0; kept
  // unrounded (AtStores), the difference is the exact 2^-12.
  const json x = desc("x", {1}, "float16"), s = desc("s", {1}, "float16"), d = desc("d", {1}, "float16");
  const json k = kernel({x}, {op("Add", {x, constant(std::ldexp(1.0, -12), "float16")}, s), op("Sub", {s, x}, d)}, {d});
  const std::vector<Tensor> one = {tensor({1}, {1.0}, "float16")};
  EXPECT_EQ(evaluate(k, one).outputs[0].data[0], 0.0);
  EXPECT_EQ(evaluate(k, one, {Float16Rounding::PerOp}).outputs[0].data[0], 0.0);
  EXPECT_EQ(evaluate(k, one, {Float16Rounding::AtStores}).outputs[0].data[0], std::ldexp(1.0, -12));
  // A stored output is rounded in both modes: 1 + 2^-12 becomes 1.
  const json k2 = kernel({x}, {op("Add", {x, constant(std::ldexp(1.0, -12), "float16")}, s)}, {s});
  EXPECT_EQ(evaluate(k2, one, {Float16Rounding::AtStores}).outputs[0].data[0], 1.0);
  // A float32 result is not rounded (the constant itself is the float32 0.1) unless asked to.
  const json y = desc("y", {1}), t = desc("t", {1});
  const json k3 = kernel({y}, {op("Mul", {y, constant(0.1)}, t)}, {t});
  EXPECT_EQ(evaluate(k3, {tensor({1}, {3.0})}).outputs[0].data[0], 3.0 * static_cast<double>(0.1f));
  EXPECT_EQ(evaluate(k3, {tensor({1}, {3.0})}, {Float16Rounding::PerOp, true}).outputs[0].data[0],
            static_cast<double>(3.0f * 0.1f));
}

TEST(Graph, AssignToAnIntermediateOutput) {
  const json x = desc("x", {2}), t = desc("t", {2}), v = desc("v", {2}), r = desc("r", {2});
  const json k = kernel({x},
                        {op("Mul", {x, constant(2.0)}, t), op("Add", {x, constant(1.0)}, v),
                         op("InplaceAssign", {t, v, v}, r, {{"fake_output", true}})},
                        {t, r});
  const Result res = evaluate(k, {tensor({2}, {1, 2})});
  EXPECT_EQ(res.outputs[0].data, (std::vector<double>{2, 3}));  // t's buffer received v
  EXPECT_EQ(res.outputs[1].data, (std::vector<double>{2, 3}));
  EXPECT_TRUE(res.updated_inputs.empty());
}

TEST(Graph, ConstantsOfEveryKind) {
  const json x = desc("x", {2}, "int32"), a = desc("a", {2}, "int32"), b = desc("b", {2}, "bool");
  const json c = desc("c", {2}, "bool");
  const json k = kernel({x},
                        {op("Add", {x, constant(3, "int32")}, a),
                         op("Cast", {a}, b, {{"dst_type", "bool"}}),
                         op("LogicalAnd", {b, constant(true, "bool", {})}, c)},
                        {a, c});
  const Result r = evaluate(k, {tensor({2}, {-3, 4}, "int32")});
  EXPECT_EQ(r.outputs[0].data, (std::vector<double>{0, 7}));
  EXPECT_EQ(r.outputs[1].data, (std::vector<double>{0, 1}));
  EXPECT_EQ(r.outputs[1].dtype, "bool");
}

TEST(Graph, ScalarShapesEmptyAndOneAreInterchangeable) {
  // As in AKG's LambUpdateWithLR kernels: a [] tensor described as [1] by its consumer.
  const json s = desc("s", {}), s1 = desc("s", {1}), out = desc("out", {});
  const json k = kernel({s}, {op("Mul", {s1, constant(2.0)}, out)}, {out});
  EXPECT_EQ(evaluate(k, {tensor({}, {4})}).outputs[0].data, (std::vector<double>{8}));
}

TEST(Graph, SignatureSkipsConstantsAndFlattens) {
  json k = kernel({desc("a", {2, 3}, "float16"), desc("b", {1}, "int32")}, {}, {});
  k["input_desc"][1].push_back(desc("c", {4}, "bool"));
  k["input_desc"].push_back(json::array({constant(1.0)}));
  const std::vector<Tensor> sig = kernel_inputs_signature(k);
  ASSERT_EQ(sig.size(), 3u);
  EXPECT_EQ(sig[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(sig[0].dtype, "float16");
  EXPECT_EQ(sig[2].dtype, "bool");
  EXPECT_TRUE(sig[1].data.empty());
  json none = kernel({}, {}, {});
  EXPECT_TRUE(kernel_inputs_signature(none).empty());
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST(Errors, UnsupportedOpsAndLayouts) {
  const json a = desc("a", {2, 2}), b = desc("b", {2, 2}), out = desc("out", {2, 2});
  const json conv = kernel({a, b}, {op("Conv2D", {a, b}, out)}, {out});
  expect_error([&] { evaluate(conv, {iota({2, 2}), iota({2, 2})}); }, {"op #0 (Conv2D)", "unsupported"});
  const json unknown = kernel({a}, {op("Frobnicate", {a}, out)}, {out});
  expect_error([&] { evaluate(unknown, {iota({2, 2})}); }, {"op #0 (Frobnicate)", "unsupported"});
  json nz = desc("nz", {2, 2});
  nz["format"] = "FRACTAL_NZ";
  const json fractal = kernel({a}, {op("Add", {a, nz}, out)}, {out});
  expect_error([&] { evaluate(fractal, {iota({2, 2})}); }, {"FRACTAL_NZ", "unsupported"});
}

TEST(Errors, BadInputsAndNames) {
  const json a = desc("a", {2}), out = desc("out", {2});
  const json k = kernel({a}, {op("Neg", {desc("ghost", {2})}, out)}, {out});
  expect_error([&] { evaluate(k, {tensor({2}, {1, 2})}); }, {"op #0 (Neg)", "ghost"});
  const json ok = kernel({a}, {op("Neg", {a}, out)}, {out});
  expect_error([&] { evaluate(ok, {}); }, {"1 inputs, got 0"});
  expect_error([&] { evaluate(ok, {tensor({3}, {1, 2, 3})}); }, {"kernel input 0", "[3]"});
  expect_error([&] { evaluate(ok, {tensor({2}, {1, 2}, "int32")}); }, {"kernel input 0", "int32"});
  // An empty dtype takes the declared one.
  EXPECT_EQ(evaluate(ok, {Tensor{{2}, "", {1, 2}}}).outputs[0].data, (std::vector<double>{-1, -2}));
  // A consumer that describes a tensor with another shape.
  const json k2 = kernel({a}, {op("Neg", {desc("a", {3})}, desc("out", {3}))}, {desc("out", {3})});
  expect_error([&] { evaluate(k2, {tensor({2}, {1, 2})}); }, {"op #0 (Neg)", "described as [3]"});
}

TEST(Errors, NamesAreDefinedOnce) {
  const json a = desc("a", {2}), t = desc("t", {2});
  const json k = kernel({a}, {op("Neg", {a}, t), op("Abs", {a}, t)}, {t});
  expect_error([&] { evaluate(k, {tensor({2}, {1, 2})}); }, {"op #1 (Abs)", "defined twice"});
  const json k2 = kernel({a}, {op("Neg", {a}, a)}, {a});
  expect_error([&] { evaluate(k2, {tensor({2}, {1, 2})}); }, {"op #0 (Neg)", "defined twice"});
}

// ---------------------------------------------------------------------------------------------
// Tolerance check

TEST(Compare, Float32Tolerance) {
  const Tensor e = tensor({3}, {1.0, 100.0, 0.0});
  EXPECT_TRUE(compare({1.00019, 100.01, 0.9e-4}, e).ok);  // within 1e-4 + 1e-4 * |e|
  const Comparison c = compare({1.0003, 100.0, 0.0}, e);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.mismatches, 1u);
  EXPECT_EQ(c.worst_index, 0u);
  EXPECT_NEAR(c.worst_abs_error, 3e-4, 1e-12);
  EXPECT_EQ(c.actual_at_worst, 1.0003);
  EXPECT_EQ(c.expected_at_worst, 1.0);
  expect_contains(c.message, "1 of 3");
}

TEST(Compare, Float16IntAndBool) {
  EXPECT_TRUE(compare({1.0019}, tensor({1}, {1.0}, "float16")).ok);
  EXPECT_FALSE(compare({1.0021}, tensor({1}, {1.0}, "float16")).ok);
  EXPECT_FALSE(compare({3.0001}, tensor({1}, {3}, "int32")).ok);
  EXPECT_TRUE(compare({3}, tensor({1}, {3}, "int32")).ok);
  EXPECT_FALSE(compare({0}, tensor({1}, {1}, "bool")).ok);
}

TEST(Compare, SpecialValues) {
  const Tensor e = tensor({4}, {kNaN, kInf, -kInf, 1});
  EXPECT_TRUE(compare({kNaN, kInf, -kInf, 1}, e).ok);
  const Comparison c = compare({0, -kInf, -kInf, kNaN}, e);
  EXPECT_EQ(c.mismatches, 3u);
  EXPECT_EQ(c.worst_abs_error, kInf);
  EXPECT_FALSE(compare({1}, tensor({2}, {1, 1})).ok);  // size mismatch
}

TEST(Compare, WorstIsReportedWhenAllMatch) {
  const Comparison c = compare({1.00001, 2.00005}, tensor({2}, {1, 2}));
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.worst_index, 1u);
  expect_contains(c.message, "within");
}

// ---------------------------------------------------------------------------------------------
// Matrix products

// The plain triple loop over numpy-broadcast batches, written independently of ops_matmul.cpp:
// a [.., M, K] (or [.., K, M] when ta), b [.., K, N] (or [.., N, K] when tb).
std::vector<double> naive_matmul(const Tensor &a, const Tensor &b, bool ta, bool tb, const std::vector<int64_t> &out) {
  const size_t ra = a.shape.size(), ro = out.size();
  const int64_t m = out[ro - 2], n = out[ro - 1], k = ta ? a.shape[ra - 2] : a.shape[ra - 1];
  int64_t batches = 1;
  for (size_t d = 0; d + 2 < ro; ++d) batches *= out[d];
  std::vector<double> r;
  for (int64_t bi = 0; bi < batches; ++bi) {
    // The batch index in out's batch dims, then in a's and b's (right-aligned, size 1 stretched).
    std::vector<int64_t> idx(ro - 2);
    int64_t rest = bi;
    for (size_t d = ro - 2; d-- > 0;) idx[d] = rest % out[d], rest /= out[d];
    auto offset = [&](const Tensor &t, int64_t matrix) {
      int64_t off = 0;
      const size_t bt = t.shape.size() - 2;
      for (size_t d = 0; d < bt; ++d) {
        const int64_t i = idx[d + (ro - 2 - bt)];
        off = off * t.shape[d] + (t.shape[d] == 1 ? 0 : i);
      }
      return off * matrix;
    };
    const int64_t oa = offset(a, m * k), ob = offset(b, k * n);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          sum += a.data[oa + (ta ? p * m + i : i * k + p)] * b.data[ob + (tb ? j * k + p : p * n + j)];
        }
        r.push_back(sum);
      }
    }
  }
  return r;
}

// Distinct small values (products and sums exact in double).
Tensor values(std::vector<int64_t> shape, int seed, const std::string &dtype = "float32") {
  Tensor t = iota(std::move(shape), dtype);
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<double>((i * 7 + seed * 3) % 11) - 5.0;
  return t;
}

Attrs mm_attrs(bool ta, bool tb, const std::string &dst = "float32") {
  return {{"transpose_a", ta}, {"transpose_b", tb}, {"dst_type", dst}, {"left_format", "DefaultFormat"},
          {"right_format", "DefaultFormat"}, {"pack_b", false}};
}

TEST(MatMul, HandComputed) {
  // [[1,2,3],[4,5,6]] . [[1,0],[0,1],[1,1]] = [[4,5],[10,11]]
  const Tensor a = tensor({2, 3}, {1, 2, 3, 4, 5, 6}), b = tensor({3, 2}, {1, 0, 0, 1, 1, 1});
  EXPECT_EQ(run_op("MatMul", {a, b}, {2, 2}).data, (std::vector<double>{4, 5, 10, 11}));
  // No attrs at all: no transposes, the inputs' dtype.
  EXPECT_EQ(run_op("MatMul", {a, b}, {2, 2}, "float32", {}).dtype, "float32");
}

TEST(MatMul, EveryTransposeCombination) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const int64_t m = 3, k = 5, n = 4;
      const Tensor a = values(ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, 1);
      const Tensor b = values(tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, 2);
      const Tensor r = run_op("MatMul", {a, b}, {m, n}, "float32", mm_attrs(ta, tb));
      EXPECT_EQ(r.data, naive_matmul(a, b, ta, tb, {m, n})) << ta << tb;
    }
  }
}

TEST(MatMul, BiasIsAddedToEveryRow) {
  const Tensor a = tensor({2, 2}, {1, 2, 3, 4}), b = tensor({2, 2}, {1, 0, 0, 1}), bias = tensor({2}, {10, 20});
  EXPECT_EQ(run_op("MatMul", {a, b, bias}, {2, 2}, "float32", mm_attrs(false, false)).data,
            (std::vector<double>{11, 22, 13, 24}));
}

TEST(MatMul, Float16InputsAndDstType) {
  // 1 + 2^-11 is not a float16 value: a float16 result rounds (ties to even) when stored, a
  // float32 one keeps it.
  const Tensor a = tensor({1, 2}, {1, std::ldexp(1.0, -6)}, "float16");
  const Tensor b = tensor({2, 1}, {1, std::ldexp(1.0, -5)}, "float16");
  EXPECT_EQ(run_op("MatMul", {a, b}, {1, 1}, "float16", mm_attrs(false, false, "float16")).data[0], 1.0);
  EXPECT_EQ(run_op("MatMul", {a, b}, {1, 1}, "float32", mm_attrs(false, false, "float32")).data[0],
            1.0 + std::ldexp(1.0, -11));
  // Missing dst_type: the inputs' dtype.
  Attrs no_dst = {{"transpose_a", false}, {"transpose_b", false}};
  EXPECT_EQ(run_op("MatMul", {a, b}, {1, 1}, "float16", no_dst).dtype, "float16");
}

TEST(BatchMatMul, BatchDimsBroadcast) {
  struct Case {
    std::vector<int64_t> a, b, out;
    bool ta, tb;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, {2, 4, 5}, {2, 3, 5}, false, false},
      {{2, 1, 3, 4}, {3, 5, 4}, {2, 3, 3, 5}, false, true},    // size 1 stretched, rank extended
      {{1, 4, 3}, {2, 4, 5}, {2, 3, 5}, true, false},
      {{2, 3, 4, 3}, {4, 5}, {2, 3, 3, 5}, true, false},        // a rank-2 side: no batch dims
      {{16, 2, 6, 3}, {16, 2, 6, 3}, {16, 2, 6, 6}, false, true},  // attention scores
  };
  for (const Case &c : cases) {
    const Tensor a = values(c.a, 3), b = values(c.b, 4);
    const Tensor r = run_op("BatchMatMul", {a, b}, c.out, "float32", mm_attrs(c.ta, c.tb));
    EXPECT_EQ(r.data, naive_matmul(a, b, c.ta, c.tb, c.out)) << json(c.a).dump() << json(c.b).dump();
  }
}

TEST(MatMul, ErrorsAreClear) {
  const Tensor a = values({2, 3}, 1), b = values({3, 4}, 2);
  Attrs nz = mm_attrs(false, false);
  nz[3].second = "FRACTAL_NZ";
  expect_error([&] { run_op("MatMul", {a, b}, {2, 4}, "float32", nz); },
               {"op #0 (MatMul)", "left_format FRACTAL_NZ", "fractal formats are not supported"});
  Attrs nhwc = mm_attrs(false, false);
  nhwc[4].second = "NHWC";
  expect_error([&] { run_op("MatMul", {a, b}, {2, 4}, "float32", nhwc); }, {"right_format NHWC", "not supported"});
  expect_error([&] { run_op("MatMul", {a, b}, {2, 4}, "float32", mm_attrs(true, false)); }, {"K = 2 and 3"});
  expect_error([&] { run_op("MatMul", {a, b}, {4, 2}); }, {"result shape is [2, 4]", "output_desc says [4, 2]"});
  expect_error([&] { run_op("MatMul", {a, b}, {2, 4}, "float16", mm_attrs(false, false)); },
               {"result dtype is float32", "output_desc says float16"});
  expect_error([&] { run_op("MatMul", {values({1, 2, 3}, 1), b}, {1, 2, 4}); }, {"MatMul needs rank-2 inputs"});
  expect_error([&] { run_op("MatMul", {a, values({3, 4}, 2, "float16")}, {2, 4}); }, {"different dtypes"});
  expect_error([&] { run_op("MatMul", {values({2, 3}, 1, "int32"), values({3, 4}, 2, "int32")}, {2, 4}, "int32"); },
               {"float32 or float16"});
  expect_error([&] { run_op("MatMul", {a, b, tensor({3}, {1, 2, 3})}, {2, 4}); }, {"bias [3] does not broadcast"});
  expect_error([&] { run_op("BatchMatMul", {values({2, 2, 3}, 1), values({3, 3, 4}, 2)}, {2, 2, 4}); },
               {"batch dims [2] and [3] do not broadcast"});
  expect_error([&] { run_op("BatchMatMul", {values({3}, 1), values({3, 4}, 2)}, {4}); }, {"rank 2 or more"});
}

// The tolerance of results of a matrix product grows with K: see reference/README.md.
TEST(MatMul, ErrorBoundGrowsWithKAndPropagates) {
  const int64_t k = 300;
  std::vector<double> av(k), bv(k);
  for (int64_t p = 0; p < k; ++p) av[p] = (p % 2 ? 1.0 : -1.0) * 0.5, bv[p] = 1.0;  // sum 0, sum|ab| 150
  const Tensor a = tensor({1, k}, av), b = tensor({k, 1}, bv);
  const json da = desc("a", {1, k}), db = desc("b", {k, 1}), mm = desc("mm", {1, 1}), scaled = desc("s", {1, 1});
  const json g = kernel({da, db},
                        {op("MatMul", {da, db}, mm, mm_attrs(false, false)), op("Mul", {mm, constant(0.125)}, scaled)},
                        {mm, scaled});
  const Result r = evaluate(g, {a, b});
  ASSERT_EQ(r.outputs[0].error_bound.size(), 1u);
  const double expected_bound = 8.0 * std::sqrt(301.0) * std::ldexp(1.0, -24) * 150.0;
  EXPECT_NEAR(r.outputs[0].error_bound[0], expected_bound, 1e-12);
  EXPECT_NEAR(r.outputs[1].error_bound[0], expected_bound * 0.125, 1e-12);  // through the Mul
  // The bound is added to AKG's tolerance: 1e-4 alone would refuse this.
  EXPECT_TRUE(compare({0.9 * expected_bound}, r.outputs[0]).ok);
  EXPECT_FALSE(compare({1.1 * expected_bound + 1e-4}, r.outputs[0]).ok);
  expect_contains(compare({0.0}, r.outputs[0]).message, "matrix-product bound");
  // K = 1: the deterministic bound (two roundings) is the smaller one.
  const Tensor one = run_op("MatMul", {tensor({1, 1}, {3}), tensor({1, 1}, {-2})}, {1, 1});
  EXPECT_NEAR(one.error_bound[0], 2 * std::ldexp(1.0, -24) * 6, 1e-18);
  // Kernels without a matrix product carry no bound: their tolerance is unchanged.
  EXPECT_TRUE(run_op("Add", {tensor({1}, {1}), tensor({1}, {2})}, {1}).error_bound.empty());
}

TEST(MatMul, ComparisonsOfNoisyProductsMayGoEitherWay) {
  // The product is exactly 0, so float32 noise could put it on either side of 0: the bool result
  // and the Select after it accept both outcomes; the product 6 is decided.
  const json da = desc("a", {2, 2}), db = desc("b", {2, 1}), mm = desc("mm", {2, 1});
  const json gt = desc("gt", {2, 1}, "bool"), sel = desc("sel", {2, 1});
  const json g = kernel({da, db},
                        {op("MatMul", {da, db}, mm), op("Greater", {mm, constant(0.0)}, gt),
                         op("Select", {gt, constant(10.0), constant(-10.0)}, sel)},
                        {gt, sel});
  const Result r = evaluate(g, {tensor({2, 2}, {1, -1, 2, 1}), tensor({2, 1}, {2, 2})});
  EXPECT_EQ(r.outputs[0].data, (std::vector<double>{0, 1}));
  EXPECT_EQ(r.outputs[0].error_bound, (std::vector<double>{1, 0}));
  EXPECT_TRUE(compare({1, 1}, r.outputs[0]).ok);
  EXPECT_FALSE(compare({1, 0}, r.outputs[0]).ok);
  EXPECT_EQ(r.outputs[1].error_bound, (std::vector<double>{20, 0}));
}

TEST(MatMul, BoundOfAProductOfBoundedOperands) {
  // (x . y) . z: the second product's bound covers the first one's, carried through |z|.
  const json dx = desc("x", {1, 2}), dy = desc("y", {2, 1}), dz = desc("z", {1, 3});
  const json xy = desc("xy", {1, 1}), xyz = desc("xyz", {1, 3});
  const json g = kernel({dx, dy, dz}, {op("MatMul", {dx, dy}, xy), op("MatMul", {xy, dz}, xyz)}, {xy, xyz});
  const Result r = evaluate(g, {tensor({1, 2}, {1, 2}), tensor({2, 1}, {3, 4}), tensor({1, 3}, {1, -2, 0.5})});
  const double e1 = r.outputs[0].error_bound[0];  // 3u * (3 + 8)
  EXPECT_NEAR(e1, 3 * std::ldexp(1.0, -24) * 11, 1e-18);
  const double u2 = 2 * std::ldexp(1.0, -24);  // K = 1
  EXPECT_NEAR(r.outputs[1].error_bound[1], u2 * 22 + e1 * 2, 1e-15);
  EXPECT_EQ(r.outputs[1].data, (std::vector<double>{11, -22, 5.5}));
}

TEST(MatMul, RandomInputsArePositiveThroughProducts) {
  const json da = desc("a", {4, 8}), db = desc("b", {8, 4}), mm = desc("mm", {4, 4}), lg = desc("lg", {4, 4});
  const json g = kernel({da, db}, {op("MatMul", {da, db}, mm), op("Log", {mm}, lg)}, {lg});
  for (const Tensor &t : random_inputs(g, 5)) {
    for (double v : t.data) EXPECT_GE(v, 0.5);
  }
}

// ---------------------------------------------------------------------------------------------
// Random inputs

TEST(RandomInputs, PositivityFollowsElementwiseProducers) {
  const std::vector<int64_t> s = {10, 100};
  const json num = desc("num", s), sq = desc("sq", s), den = desc("den", {10}, "float16");
  const json lg = desc("lg", {1000}), n = desc("n", s);
  const json cast = desc("cast", {10}), rs = desc("rs", {10, 1}), bcast = desc("bcast", s), div = desc("div", s);
  const json r1 = desc("r1", s), root = desc("root", s), lgr = desc("lgr", s), logv = desc("logv", s);
  const json neg = desc("neg", s);
  const json k = kernel({num, sq, den, lg, n},
                        {op("Cast", {den}, cast, {{"dst_type", "float32"}}),
                         op("Reshape", {cast}, rs, {{"shape", {10, 1}}}),
                         op("BroadcastTo", {rs}, bcast, {{"shape", {10, 100}}}),
                         op("RealDiv", {num, bcast}, div),
                         op("Mul", {sq, constant(2.0)}, r1),
                         op("Sqrt", {r1}, root),
                         op("Reshape", {lg}, lgr, {{"shape", {10, 100}}}),
                         op("Log", {lgr}, logv),
                         op("Neg", {n}, neg)},
                        {div, root, logv, neg});
  const std::vector<Tensor> in = random_inputs(k, 42);
  ASSERT_EQ(in.size(), 5u);
  auto min_of = [](const Tensor &t) { return *std::min_element(t.data.begin(), t.data.end()); };
  EXPECT_LT(min_of(in[0]), 0.0);  // a numerator stays gaussian
  EXPECT_GE(min_of(in[1]), 0.5);  // Sqrt(Mul(sq, 2))
  EXPECT_GE(min_of(in[2]), 0.5);  // divisor through Cast, Reshape, BroadcastTo
  EXPECT_GE(min_of(in[3]), 0.5);  // Log(Reshape(lg))
  EXPECT_LT(min_of(in[4]), 0.0);  // Neg needs nothing
  for (const Tensor &out : evaluate(k, in).outputs) {
    for (double v : out.data) ASSERT_TRUE(std::isfinite(v));
  }
}

TEST(RandomInputs, DeterministicAndInTheirDtype) {
  const json f16 = desc("h", {3000}, "float16"), f32 = desc("f", {3000}), b = desc("b", {100}, "bool");
  const json i = desc("i", {100}, "int32");
  const json k = kernel({f16, f32, b, i}, {}, {});
  const std::vector<Tensor> a = random_inputs(k, 7), again = random_inputs(k, 7), other = random_inputs(k, 8);
  for (size_t n = 0; n < a.size(); ++n) EXPECT_EQ(a[n].data, again[n].data);
  EXPECT_NE(a[0].data, other[0].data);
  for (double v : a[0].data) ASSERT_EQ(v, round_to_float16(v));
  for (double v : a[1].data) ASSERT_EQ(v, static_cast<double>(static_cast<float>(v)));
  for (double v : a[2].data) ASSERT_TRUE(v == 0.0 || v == 1.0);
  for (double v : a[3].data) ASSERT_TRUE(v == std::trunc(v) && v >= -8 && v <= 8);
  EXPECT_EQ(a[0].dtype, "float16");
  EXPECT_EQ(a[3].shape, (std::vector<int64_t>{100}));
}

TEST(RandomInputs, StandardNormalMoments) {
  const json x = desc("x", {200000});
  const json k = kernel({x}, {}, {});
  const Tensor t = random_inputs(k, 1).at(0);
  double sum = 0, sum_sq = 0;
  for (double v : t.data) {
    sum += v;
    sum_sq += v * v;
  }
  const double count = static_cast<double>(t.data.size());
  const double mean = sum / count;
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(std::sqrt(sum_sq / count - mean * mean), 1.0, 0.01);
}

// The generator is mt19937_64 (whose sequence the standard fixes) plus our own Box-Muller, so
// these values hold on every standard library, up to the last bit of libm's log and sqrt.
TEST(RandomInputs, StableValues) {
  const json x = desc("x", {4}, "float64");
  const Tensor t = random_inputs(kernel({x}, {}, {}), 2024).at(0);
  const std::vector<double> expected = {-0.011282507654959039, -1.3446449117113382, 1.2081666459016378,
                                        0.50436563264292511};
  ASSERT_EQ(t.data.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(t.data[i], expected[i], 1e-12) << i;
}

// ---------------------------------------------------------------------------------------------
// Per-op rounding (EvalOptions)

// The LayerNorm-backward pattern: a float16 Add whose results a float32 column sum adds up.
// Per op, the sum adds the float16-rounded values; AtStores, the exact ones. Here a = +-m with m
// in (1, 2) (float16 spacing 2^-10) cancels in pairs, and b = 0.75 * 2^-10 makes every a + b
// round up by 2^-12: the rounded sum is 2048 * 2^-10 = 2, the exact one 1.5.
TEST(PerOpRounding, Float16SumOfRoundedValues) {
  const int64_t n = 2048;
  const json a = desc("a", {n}, "float16"), b = desc("b", {n}, "float16"), s = desc("s", {n}, "float16");
  const json c = desc("c", {n}), sum32 = desc("sum32", {1}), sum16 = desc("sum16", {1}, "float16");
  json k = kernel({a, b},
                  {op("Add", {a, b}, s), op("Cast", {s}, c, {{"dst_type", "float32"}}),
                   op("ReduceSum", {c}, sum32, {{"axis", {0}}, {"keep_dims", true}}),
                   op("ReduceSum", {s}, sum16, {{"axis", {0}}, {"keep_dims", true}})},
                  {sum32, sum16});
  Tensor ta = tensor({n}, std::vector<double>(n), "float16");
  const Tensor tb = tensor({n}, std::vector<double>(n, 0.75 * std::ldexp(1.0, -10)), "float16");
  double rounded = 0, exact = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double m = 1 + static_cast<double>((i / 2 * 37) % 1023 + 1) / 1024;
    ta.data[i] = i % 2 == 0 ? m : -m;
    rounded += round_to_float16(ta.data[i] + tb.data[i]);
    exact += ta.data[i] + tb.data[i];
  }
  ASSERT_EQ(rounded, 2.0);
  ASSERT_EQ(exact, 1.5);
  const Result per_op = evaluate(k, {ta, tb});
  EXPECT_EQ(per_op.outputs[0].data[0], rounded);
  EXPECT_EQ(per_op.outputs[1].data[0], rounded);
  const Result at_stores = evaluate(k, {ta, tb}, {Float16Rounding::AtStores});
  EXPECT_EQ(at_stores.outputs[0].data[0], exact);
  EXPECT_EQ(at_stores.outputs[1].data[0], exact);
  EXPECT_FALSE(compare(at_stores.outputs[0].data, per_op.outputs[0]).ok);

  // The kernel's own key selects the mode.
  EXPECT_EQ(float16_rounding_of(k), Float16Rounding::PerOp);
  k["float16_intermediates"] = "float16";
  EXPECT_EQ(float16_rounding_of(k), Float16Rounding::PerOp);
  k["float16_intermediates"] = "float32";
  EXPECT_EQ(float16_rounding_of(k), Float16Rounding::AtStores);
  EXPECT_EQ(evaluate(k, {ta, tb}, {float16_rounding_of(k)}).outputs[0].data[0], exact);
  k["float16_intermediates"] = "bfloat16";
  expect_error([&] { float16_rounding_of(k); }, {"float16_intermediates", "\"bfloat16\""});
  k["float16_intermediates"] = 16;
  expect_error([&] { float16_rounding_of(k); }, {"float16_intermediates"});
}

TEST(PerOpRounding, TiesFlipInIntermediates) {
  // 1 + 2^-11 is a tie between the float16 values 1 and 1 + 2^-10: it rounds to even (1) after
  // the Add, and the other way in the tie-flipped evaluation; Sub shows which.
  const json x = desc("x", {1}, "float16"), s = desc("s", {1}, "float16"), d = desc("d", {1}, "float16");
  const json k = kernel({x}, {op("Add", {x, constant(std::ldexp(1.0, -11), "float16")}, s), op("Sub", {s, x}, d)}, {d});
  const std::vector<Tensor> one = {tensor({1}, {1.0}, "float16")};
  EXPECT_EQ(evaluate(k, one).outputs[0].data[0], 0.0);
  EXPECT_EQ(evaluate_with_float16_ties_flipped(k, one).outputs[0].data[0], std::ldexp(1.0, -10));
  EXPECT_EQ(evaluate_with_float16_ties_flipped(k, one, {Float16Rounding::AtStores}).outputs[0].data[0],
            std::ldexp(1.0, -11));
}

TEST(PerOpRounding, ErrorBoundsWidenWhereTheRoundingCouldGoEitherWay) {
  // The product 1 + 2^-11 is a float16 tie: within its bound it may round to 1 or 1 + 2^-10, so
  // the rounded product's bound is one float16 step; the float16 Sub after it keeps that bound.
  const json da = desc("a", {1, 2}, "float16"), db = desc("b", {2, 1}, "float16");
  const json mm = desc("mm", {1, 1}, "float16"), d = desc("d", {1, 1}, "float16");
  const json k = kernel({da, db},
                        {op("MatMul", {da, db}, mm, mm_attrs(false, false, "float16")),
                         op("Sub", {mm, constant(1.0, "float16")}, d)},
                        {mm, d});
  const Result r = evaluate(k, {tensor({1, 2}, {1, std::ldexp(1.0, -6)}, "float16"),
                                tensor({2, 1}, {1, std::ldexp(1.0, -5)}, "float16")});
  EXPECT_EQ(r.outputs[0].data[0], 1.0);
  EXPECT_EQ(r.outputs[0].error_bound[0], std::ldexp(1.0, -10));
  EXPECT_EQ(r.outputs[1].data[0], 0.0);
  EXPECT_EQ(r.outputs[1].error_bound[0], std::ldexp(1.0, -10));
}

// ---------------------------------------------------------------------------------------------
// Conditioning: the per-op evaluation in the tensors' dtypes against the one in double

// (x + 1e6) - 1e6 in float32: the Add keeps x only to 1/16 (the float32 spacing at 1e6), so per
// op the result differs from x by up to 1/32, far beyond the tolerance, wherever x is not a
// multiple of 1/16.
TEST(Conditioning, CancellationIsIllConditionedNotAFailure) {
  const json x = desc("x", {4}), t = desc("t", {4}), u = desc("u", {4});
  const json k = kernel({x}, {op("Add", {x, constant(1e6)}, t), op("Sub", {t, constant(1e6)}, u)}, {u});
  const double x0 = static_cast<double>(0.3f);
  const std::vector<Tensor> in = {tensor({4}, {x0, 0.5, -2.25, 1.0})};
  const Tensor e = evaluate(k, in).outputs[0];
  const Tensor d = evaluate(k, in, {Float16Rounding::PerOp, true}).outputs[0];
  EXPECT_EQ(e.data, in[0].data);  // exact in double
  EXPECT_EQ(d.data, (std::vector<double>{0.3125, 0.5, -2.25, 1.0}));

  // Matching either evaluation passes; element 0 is counted as ill-conditioned.
  for (const std::vector<double> &actual : {e.data, d.data}) {
    const Comparison c = compare_conditioned(actual, e, d);
    EXPECT_TRUE(c.ok) << c.message;
    EXPECT_EQ(c.ill_conditioned, 1u);
    expect_contains(c.message, "1 ill-conditioned");
  }
  EXPECT_FALSE(compare(d.data, e).ok);  // the plain check calls the per-op result a failure
  // Within tol(D) + |D - E| of D: accepted there; further away, or wrong anywhere else: rejected.
  EXPECT_TRUE(compare_conditioned({0.3125 + 0.01, 0.5, -2.25, 1.0}, e, d).ok);
  const Comparison far = compare_conditioned({0.3125 + 0.02, 0.5, -2.25, 1.0}, e, d);
  EXPECT_FALSE(far.ok);
  EXPECT_EQ(far.mismatches, 1u);
  const Comparison wrong = compare_conditioned({x0, 0.5, -2.25, 1.01}, e, d);
  EXPECT_FALSE(wrong.ok);
  EXPECT_EQ(wrong.mismatches, 1u);
  EXPECT_EQ(wrong.worst_index, 3u);
  EXPECT_EQ(wrong.ill_conditioned, 1u);
  bool ill = false;
  EXPECT_TRUE(element_matches_conditioned(0.3125, e, d, 0, &ill));
  EXPECT_TRUE(ill);
  EXPECT_FALSE(element_matches_conditioned(1.01, e, d, 3, &ill));
  EXPECT_FALSE(ill);
}

TEST(Conditioning, OverflowPerOpIsIllConditioned) {
  // x * 1e20 * 1e20 * 1e-20 overflows float32 in the middle: the per-op result is inf, the
  // double one 1e20 * x. Either is accepted, nothing else.
  const json x = desc("x", {1}), a = desc("a", {1}), b = desc("b", {1}), c = desc("c", {1});
  const json k = kernel({x},
                        {op("Mul", {x, constant(1e20)}, a), op("Mul", {a, constant(1e20)}, b),
                         op("Mul", {b, constant(1e-20)}, c)},
                        {c});
  const Tensor e = evaluate(k, {tensor({1}, {1})}).outputs[0];
  const Tensor d = evaluate(k, {tensor({1}, {1})}, {Float16Rounding::PerOp, true}).outputs[0];
  ASSERT_EQ(d.data[0], kInf);
  ASSERT_TRUE(std::isfinite(e.data[0]));
  EXPECT_EQ(compare_conditioned({kInf}, e, d).ill_conditioned, 1u);
  EXPECT_TRUE(compare_conditioned({kInf}, e, d).ok);
  EXPECT_TRUE(compare_conditioned(e.data, e, d).ok);
  EXPECT_FALSE(compare_conditioned({5.0}, e, d).ok);
  EXPECT_FALSE(compare_conditioned({-kInf}, e, d).ok);
  EXPECT_FALSE(compare_conditioned({kNaN}, e, d).ok);
}

TEST(Conditioning, WellConditionedGraphsHaveNoIllConditionedElements) {
  // Random inputs through float32 arithmetic, a transcendental function and a row sum, and a
  // float16 chain from float16 inputs; the per-op evaluation stays within the tolerance of the
  // double one. (A Cast of float32 results to float16 would not do: one in about 2^13 float32
  // values rounds to a float16 tie and then the other way than its double value, an element
  // that is rightly counted as ill-conditioned.)
  const json x = desc("x", {64, 128}), y = desc("y", {64, 128}), m = desc("m", {64, 128});
  const json ad = desc("ad", {64, 128}), th = desc("th", {64, 128}), rs = desc("rs", {64, 1});
  const json h = desc("h", {64, 128}, "float16"), hm = desc("hm", {64, 128}, "float16");
  const json hs = desc("hs", {64, 1}, "float16");
  const json k = kernel({x, y, h},
                        {op("Mul", {x, y}, m), op("Add", {m, x}, ad), op("Tanh", {ad}, th),
                         op("ReduceSum", {th}, rs, {{"axis", {1}}, {"keep_dims", true}}), op("Mul", {h, h}, hm),
                         op("ReduceSum", {hm}, hs, {{"axis", {1}}, {"keep_dims", true}})},
                        {th, rs, hm, hs});
  const std::vector<Tensor> in = random_inputs(k, 7);
  const Result e = evaluate(k, in);
  const Result d = evaluate(k, in, {Float16Rounding::PerOp, true});
  for (size_t o = 0; o < e.outputs.size(); ++o) {
    for (const Result *actual : {&e, &d}) {
      const Comparison c = compare_conditioned(actual->outputs[o].data, e.outputs[o], d.outputs[o]);
      EXPECT_TRUE(c.ok) << o << ": " << c.message;
      EXPECT_EQ(c.ill_conditioned, 0u) << o << ": " << c.message;
    }
  }
}

}  // namespace
}  // namespace akg::reference
