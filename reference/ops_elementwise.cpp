// Elementwise ops: arithmetic, math functions, comparisons, logic, Select and SelectGE/GT/LE/LT,
// Cast, AddN, and the elementwise reductions-to-flag ElemAny and ElemAll (docs/OPS.md).
//
// Floating-point ops are computed in double and not rounded here (the evaluator rounds float16
// results per op, EvalOptions). Ops whose output dtype is an integer use exact 64-bit integer
// arithmetic wrapped to the dtype's width, so int32 results are what two's-complement int32 code
// computes; RealDiv/Div on integers truncate toward zero, FloorDiv/FloorMod floor (Python's // and
// %), Mod is C's %; an integer division or modulo by zero is an Error.
#include <cmath>
#include <cstdint>
#include <limits>

#include "dtype.h"
#include "ops.h"

namespace akg::reference {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool integer_output(const OpCall &call) { return is_integer_dtype(call.out_dtype); }

// Brings computed values into the output dtype's domain: integers and bools are converted as
// Cast would; float results (float16 included) are left to the evaluator's rounding.
void finish_values(const OpCall &call, Tensor *t) {
  const DtypeInfo info(call.out_dtype);
  if (info.cls() == DtypeClass::Float) return;
  for (double &v : t->data) v = info.convert(v);
}

template <class F>
Tensor map_unary(const OpCall &call, const Tensor &a, F f) {
  Tensor r{a.shape, call.out_dtype, std::vector<double>(a.data.size())};
  for (size_t i = 0; i < a.data.size(); ++i) r.data[i] = f(a.data[i]);
  return r;
}

Shape broadcast_or_fail(const OpCall &call, const Shape &a, const Shape &b) {
  Shape out;
  if (!broadcast_shapes(a, b, &out)) {
    call.fail("shapes " + shape_to_string(a) + " and " + shape_to_string(b) + " do not broadcast");
  }
  return out;
}

template <class F>
Tensor map_binary(const OpCall &call, const Tensor &a, const Tensor &b, F f) {
  const Shape out = broadcast_or_fail(call, a.shape, b.shape);
  const Strides sa = broadcast_strides(a.shape, out);
  const Strides sb = broadcast_strides(b.shape, out);
  Tensor r{out, call.out_dtype, std::vector<double>(static_cast<size_t>(element_count(out)))};
  const double *pa = a.data.data();
  const double *pb = b.data.data();
  double *pr = r.data.data();
  for_each_element<2>(out, {&sa, &sb}, [&](int64_t i, const std::array<int64_t, 2> &o) {
    pr[i] = f(pa[o[0]], pb[o[1]]);
  });
  return r;
}

template <class F>
Tensor map_ternary(const OpCall &call, const Tensor &a, const Tensor &b, const Tensor &c, F f) {
  const Shape out = broadcast_or_fail(call, broadcast_or_fail(call, a.shape, b.shape), c.shape);
  const Strides sa = broadcast_strides(a.shape, out);
  const Strides sb = broadcast_strides(b.shape, out);
  const Strides sc = broadcast_strides(c.shape, out);
  Tensor r{out, call.out_dtype, std::vector<double>(static_cast<size_t>(element_count(out)))};
  const double *pa = a.data.data();
  const double *pb = b.data.data();
  const double *pc = c.data.data();
  double *pr = r.data.data();
  for_each_element<3>(out, {&sa, &sb, &sc}, [&](int64_t i, const std::array<int64_t, 3> &o) {
    pr[i] = f(pa[o[0]], pb[o[1]], pc[o[2]]);
  });
  return r;
}

// Select-style ops of four operands, all broadcast together.
template <class F>
Tensor map_quaternary(const OpCall &call, const Tensor &a, const Tensor &b, const Tensor &c, const Tensor &d, F f) {
  const Shape out = broadcast_or_fail(
      call, broadcast_or_fail(call, broadcast_or_fail(call, a.shape, b.shape), c.shape), d.shape);
  const Strides sa = broadcast_strides(a.shape, out);
  const Strides sb = broadcast_strides(b.shape, out);
  const Strides sc = broadcast_strides(c.shape, out);
  const Strides sd = broadcast_strides(d.shape, out);
  Tensor r{out, call.out_dtype, std::vector<double>(static_cast<size_t>(element_count(out)))};
  double *pr = r.data.data();
  for_each_element<4>(out, {&sa, &sb, &sc, &sd}, [&](int64_t i, const std::array<int64_t, 4> &o) {
    pr[i] = f(a.data[o[0]], b.data[o[1]], c.data[o[2]], d.data[o[3]]);
  });
  return r;
}

// A float function applied to one operand; integer/bool outputs are converted afterwards.
template <class F>
OpFunction unary_float(F f) {
  return [f](const OpCall &call) {
    call.expect_inputs(1);
    Tensor r = map_unary(call, call.in(0), f);
    finish_values(call, &r);
    return r;
  };
}

template <class F>
OpFunction binary_float(F f) {
  return [f](const OpCall &call) {
    call.expect_inputs(2);
    Tensor r = map_binary(call, call.in(0), call.in(1), f);
    finish_values(call, &r);
    return r;
  };
}

// Arithmetic with separate float and integer definitions. The integer one works on uint64_t so
// that overflow wraps instead of being undefined; DtypeInfo::wrap narrows to the dtype.
template <class FloatF, class IntF>
OpFunction binary_arith(FloatF float_f, IntF int_f) {
  return [float_f, int_f](const OpCall &call) {
    call.expect_inputs(2);
    if (!integer_output(call)) {
      Tensor r = map_binary(call, call.in(0), call.in(1), float_f);
      finish_values(call, &r);
      return r;
    }
    const DtypeInfo info(call.out_dtype);
    return map_binary(call, call.in(0), call.in(1), [&](double a, double b) {
      return info.wrap(int_f(call, static_cast<int64_t>(a), static_cast<int64_t>(b)));
    });
  };
}

template <class FloatF, class IntF>
OpFunction unary_arith(FloatF float_f, IntF int_f) {
  return [float_f, int_f](const OpCall &call) {
    call.expect_inputs(1);
    if (!integer_output(call)) {
      Tensor r = map_unary(call, call.in(0), float_f);
      finish_values(call, &r);
      return r;
    }
    const DtypeInfo info(call.out_dtype);
    return map_unary(call, call.in(0), [&](double a) {
      return info.wrap(int_f(call, static_cast<int64_t>(a)));
    });
  };
}

double truth(bool b) { return b ? 1.0 : 0.0; }

uint64_t integer_divide(const OpCall &call, int64_t a, int64_t b) {
  if (b == 0) call.fail("integer division by zero");
  if (a == std::numeric_limits<int64_t>::min() && b == -1) return static_cast<uint64_t>(a);  // wraps
  return static_cast<uint64_t>(a / b);  // C++ division truncates toward zero
}

// Python's //: the floor of the exact quotient.
uint64_t integer_floor_divide(const OpCall &call, int64_t a, int64_t b) {
  if (b == 0) call.fail("integer division by zero");
  if (a == std::numeric_limits<int64_t>::min() && b == -1) return static_cast<uint64_t>(a);  // wraps
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return static_cast<uint64_t>(q);
}

// C's %: a - trunc(a / b) * b, the sign of a.
uint64_t integer_mod(const OpCall &call, int64_t a, int64_t b) {
  if (b == 0) call.fail("integer modulo by zero");
  if (b == -1) return 0;  // also INT64_MIN % -1, undefined in C++
  return static_cast<uint64_t>(a % b);
}

// Python's %: the sign of b.
uint64_t integer_floor_mod(const OpCall &call, int64_t a, int64_t b) {
  if (b == 0) call.fail("integer modulo by zero");
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return static_cast<uint64_t>(r);
}

double float_floor_mod(double a, double b) {
  double r = std::fmod(a, b);  // NaN for b = 0
  if (r != 0.0 && ((r < 0.0) != (b < 0.0))) r += b;
  return r;
}

double sign_of(double a) {
  if (std::isnan(a)) return a;
  return a > 0.0 ? 1.0 : (a < 0.0 ? -1.0 : 0.0);
}

// MindSpore's FastGeLU: x / (1 + exp(-1.702 |x|)) * exp(0.851 (x - |x|)).
double fast_gelu(double x) {
  const double ax = std::fabs(x);
  return x / (1.0 + std::exp(-1.702 * ax)) * std::exp(0.851 * (x - ax));
}

// numpy semantics: a NaN operand makes the result NaN.
double nan_max(double a, double b) { return (std::isnan(a) || std::isnan(b)) ? kNaN : (a > b ? a : b); }
double nan_min(double a, double b) { return (std::isnan(a) || std::isnan(b)) ? kNaN : (a < b ? a : b); }

Tensor select(const OpCall &call) {
  call.expect_inputs(3);
  Tensor r = map_ternary(call, call.in(0), call.in(1), call.in(2),
                         [](double cond, double a, double b) { return cond != 0.0 ? a : b; });
  finish_values(call, &r);
  return r;
}

Tensor cast(const OpCall &call) {
  call.expect_inputs(1);
  if (const nlohmann::json *dst = call.attr("dst_type")) {
    if (!dst->is_string() || dst->get<std::string>() != call.out_dtype) {
      call.fail("attr dst_type " + dst->dump() + " disagrees with output data_type " + call.out_dtype);
    }
  }
  const DtypeInfo info(call.out_dtype);
  return map_unary(call, call.in(0), [&](double v) { return info.convert(v); });
}

// SelectGE(a, b, c, d) = a >= b ? c : d (GT, LE, LT likewise); a comparison with NaN is false.
template <class Compare>
OpFunction select_compare(Compare compare) {
  return [compare](const OpCall &call) {
    call.expect_inputs(4);
    Tensor r = map_quaternary(call, call.in(0), call.in(1), call.in(2), call.in(3),
                              [&](double a, double b, double c, double d) { return compare(a, b) ? c : d; });
    finish_values(call, &r);
    return r;
  };
}

// Zeros of x's shape in the output dtype.
Tensor zeros_like(const OpCall &call) {
  call.expect_inputs(1);
  return Tensor{call.in(0).shape, call.out_dtype, std::vector<double>(call.in(0).data.size(), 0.0)};
}

// x plus the dtype's smallest value of docs/OPS.md: 2^-24 (the smallest float16 subnormal) for
// float16, 2^-126 (the smallest normal float32) for float32 (and float64); integers unchanged.
Tensor add_min_value(const OpCall &call) {
  call.expect_inputs(1);
  const DtypeInfo info(call.out_dtype);
  if (info.cls() != DtypeClass::Float) {
    Tensor r = map_unary(call, call.in(0), [](double a) { return a; });
    finish_values(call, &r);
    return r;
  }
  const double min_value = call.out_dtype == "float16" ? 0x1p-24 : 0x1p-126;
  return map_unary(call, call.in(0), [&](double a) { return a + min_value; });
}

// Sum of all operands, wherever they are listed (MindSpore puts them in one inner list).
Tensor add_n(const OpCall &call) {
  std::vector<const Tensor *> terms;
  for (const auto &list : call.inputs) terms.insert(terms.end(), list.begin(), list.end());
  if (terms.empty()) call.fail("needs at least one input");
  for (const Tensor *t : terms) {
    if (!same_shape(t->shape, terms[0]->shape)) {
      call.fail("operand shapes differ: " + shape_to_string(terms[0]->shape) + " vs " +
                shape_to_string(t->shape));
    }
  }
  Tensor r{terms[0]->shape, call.out_dtype, std::vector<double>(terms[0]->data.size(), 0.0)};
  if (integer_output(call)) {
    const DtypeInfo info(call.out_dtype);
    for (size_t i = 0; i < r.data.size(); ++i) {
      uint64_t sum = 0;
      for (const Tensor *t : terms) sum += static_cast<uint64_t>(static_cast<int64_t>(t->data[i]));
      r.data[i] = info.wrap(sum);
    }
    return r;
  }
  for (const Tensor *t : terms) {
    for (size_t i = 0; i < r.data.size(); ++i) r.data[i] += t->data[i];
  }
  finish_values(call, &r);
  return r;
}

// 1 when any element is nonzero (NaN counts as nonzero), else 0; a one-element result, as in
// MindSpore's overflow check (ElemAny feeding an InplaceAssign into a [1] status buffer).
Tensor elem_any(const OpCall &call) {
  call.expect_inputs(1);
  bool any = false;
  for (double v : call.in(0).data) any = any || v != 0.0;
  return Tensor{{1}, call.out_dtype, {truth(any)}};
}

// 1 when no element equals 0 (NaN is not 0), else 0; a one-element result like ElemAny's.
Tensor elem_all(const OpCall &call) {
  call.expect_inputs(1);
  bool all = true;
  for (double v : call.in(0).data) all = all && v != 0.0;
  Tensor r{{1}, call.out_dtype, {truth(all)}};
  finish_values(call, &r);
  return r;
}

}  // namespace

void add_elementwise_ops(OpTable *table) {
  OpTable &t = *table;
  auto add = binary_arith([](double a, double b) { return a + b; },
                          [](const OpCall &, int64_t a, int64_t b) {
                            return static_cast<uint64_t>(a) + static_cast<uint64_t>(b);
                          });
  t["Add"] = add;
  t["TensorAdd"] = add;
  t["Sub"] = binary_arith([](double a, double b) { return a - b; },
                          [](const OpCall &, int64_t a, int64_t b) {
                            return static_cast<uint64_t>(a) - static_cast<uint64_t>(b);
                          });
  t["Mul"] = binary_arith([](double a, double b) { return a * b; },
                          [](const OpCall &, int64_t a, int64_t b) {
                            return static_cast<uint64_t>(a) * static_cast<uint64_t>(b);
                          });
  t["RealDiv"] = binary_arith([](double a, double b) { return a / b; }, integer_divide);
  t["Maximum"] = binary_arith(nan_max, [](const OpCall &, int64_t a, int64_t b) {
    return static_cast<uint64_t>(a > b ? a : b);
  });
  t["Minimum"] = binary_arith(nan_min, [](const OpCall &, int64_t a, int64_t b) {
    return static_cast<uint64_t>(a < b ? a : b);
  });
  t["Pow"] = binary_float([](double a, double b) { return std::pow(a, b); });

  t["Greater"] = binary_float([](double a, double b) { return truth(a > b); });
  t["GreaterEqual"] = binary_float([](double a, double b) { return truth(a >= b); });
  t["Less"] = binary_float([](double a, double b) { return truth(a < b); });
  t["LessEqual"] = binary_float([](double a, double b) { return truth(a <= b); });
  t["Equal"] = binary_float([](double a, double b) { return truth(a == b); });
  t["NotEqual"] = binary_float([](double a, double b) { return truth(a != b); });
  t["LogicalAnd"] = binary_float([](double a, double b) { return truth(a != 0.0 && b != 0.0); });
  t["LogicalOr"] = binary_float([](double a, double b) { return truth(a != 0.0 || b != 0.0); });

  t["Neg"] = unary_arith([](double a) { return -a; },
                         [](const OpCall &, int64_t a) { return uint64_t{0} - static_cast<uint64_t>(a); });
  t["Abs"] = unary_arith([](double a) { return std::fabs(a); }, [](const OpCall &, int64_t a) {
    return a < 0 ? uint64_t{0} - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
  });
  t["Square"] = unary_arith([](double a) { return a * a; }, [](const OpCall &, int64_t a) {
    return static_cast<uint64_t>(a) * static_cast<uint64_t>(a);
  });
  t["Reciprocal"] = unary_arith([](double a) { return 1.0 / a; },
                                [](const OpCall &call, int64_t a) { return integer_divide(call, 1, a); });
  t["Exp"] = unary_float([](double a) { return std::exp(a); });
  t["Log"] = unary_float([](double a) { return std::log(a); });
  t["Sqrt"] = unary_float([](double a) { return std::sqrt(a); });
  t["Rsqrt"] = unary_float([](double a) { return 1.0 / std::sqrt(a); });
  t["Tanh"] = unary_float([](double a) { return std::tanh(a); });
  t["Erf"] = unary_float([](double a) { return std::erf(a); });
  t["IsInf"] = unary_float([](double a) { return truth(std::isinf(a)); });
  t["IsNan"] = unary_float([](double a) { return truth(std::isnan(a)); });
  t["LogicalNot"] = unary_float([](double a) { return truth(a == 0.0); });

  // docs/OPS.md, element-wise.
  t["Div"] = t["RealDiv"];
  t["FloorDiv"] = binary_arith([](double a, double b) { return std::floor(a / b); }, integer_floor_divide);
  t["Mod"] = binary_arith([](double a, double b) { return std::fmod(a, b); }, integer_mod);
  t["FloorMod"] = binary_arith(float_floor_mod, integer_floor_mod);
  // std::nearbyint rounds half to even in the default rounding mode; integers are fixed points
  // of all three. An integer output dtype converts the result as Cast does.
  t["Round"] = unary_float([](double a) { return std::nearbyint(a); });
  t["Floor"] = unary_float([](double a) { return std::floor(a); });
  t["Sign"] = unary_float(sign_of);
  t["IsFinite"] = unary_float([](double a) { return truth(std::isfinite(a)); });
  t["Sin"] = unary_float([](double a) { return std::sin(a); });
  t["Cos"] = unary_float([](double a) { return std::cos(a); });
  t["Asin"] = unary_float([](double a) { return std::asin(a); });
  t["ACos"] = unary_float([](double a) { return std::acos(a); });
  t["Atan"] = unary_float([](double a) { return std::atan(a); });
  t["Atan2"] = binary_float([](double y, double x) { return std::atan2(y, x); });
  t["Asinh"] = unary_float([](double a) { return std::asinh(a); });
  t["Acosh"] = unary_float([](double a) { return std::acosh(a); });
  t["Expm1"] = unary_float([](double a) { return std::expm1(a); });
  t["FastGeLU"] = unary_float(fast_gelu);
  t["ZerosLike"] = zeros_like;
  t["AddMinValue"] = add_min_value;
  t["SelectGE"] = select_compare([](double a, double b) { return a >= b; });
  t["SelectGT"] = select_compare([](double a, double b) { return a > b; });
  t["SelectLE"] = select_compare([](double a, double b) { return a <= b; });
  t["SelectLT"] = select_compare([](double a, double b) { return a < b; });
  t["ElemAll"] = elem_all;

  t["Select"] = select;
  t["Cast"] = cast;
  t["AddN"] = add_n;
  t["ElemAny"] = elem_any;
}

}  // namespace akg::reference
