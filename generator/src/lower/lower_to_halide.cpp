// Lowering of composite ops to Halide expressions over loop indices.
#include "lower/lower_to_halide.h"
#include "frontend/strided_slice.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace akg {

using Halide::Expr;
using namespace Halide::Internal;

namespace {

const char *const kTensorPrefix = "T$";

Expr math(const std::string &fn, Halide::Type t, std::vector<Expr> args) {
    return Call::make(t, fn, args, Call::PureExtern);
}

Expr int64(int64_t v) { return Expr(v); }

Expr constant_of(Halide::Type t, double v) {
    if (t.is_float()) return Halide::Internal::make_const(t, v);
    if (t.is_bool()) return Halide::Internal::make_const(t, v != 0.0);
    return Halide::Internal::make_const(t, static_cast<int64_t>(v));
}

// An inline constant holds a value of its dtype: a float16 constant such as 0.7978845834732056
// is the float16 0.7978515625 (round to nearest even), as the reference evaluator reads it.
Expr constant_value(const TensorDesc &t) {
    double v = *t.value;
    if (t.dtype == DType::Float16) v = static_cast<double>(Halide::float16_t(v));
    return constant_of(compute_type(t.dtype), v);
}

// Converts a value of compute type `from` to the compute type of dtype `to`, with the
// rounding that storing in `to` implies (float16 rounds; float→int truncates; →bool is != 0).
Expr convert(const Expr &x, DType to) {
    Halide::Type from = x.type();
    Halide::Type target = compute_type(to);
    if (to == DType::Bool) {
        if (from.is_bool()) return x;
        // Halide's simplifier folds int64(float x) != 0 as if the conversion kept x whole.
        if (from.is_int() && from.bits() == 64) return math("akg_nonzero", Halide::Bool(), {x});
        return NE::make(x, make_zero(from));
    }
    Expr v = x;
    if (from.is_bool()) v = Select::make(x, make_one(target.is_float() ? target : target), make_zero(target));
    else if (from.is_float() && target.is_int()) {
        // Truncation toward zero; out-of-range values saturate and NaN gives 0, as the reference
        // evaluator defines it (a plain C++ conversion is undefined there: x86 gives INT_MIN).
        Expr limit = make_const(from, std::ldexp(1.0, target.bits() - 1));
        // The selects become branch-free blends that evaluate every operand, so the converted
        // value itself is kept in range (0 for NaN and out-of-range x): converting an
        // out-of-range float is undefined behaviour even when its result is discarded (UBSan).
        Expr in_range = And::make(Not::make(math("akg_isnan", Halide::Bool(), {x})),
                                  And::make(GE::make(x, -limit), LT::make(x, limit)));
        Expr kept = Select::make(in_range, x, make_zero(from));
        v = Select::make(GE::make(x, limit), target.max(), Select::make(LT::make(x, -limit), target.min(), Cast::make(target, kept)));
        if (to == DType::Int8 || to == DType::UInt8) {
            // Narrow integers saturate at their own range (computed in int32).
            const double lo = to == DType::Int8 ? -128 : 0, hi = to == DType::Int8 ? 127 : 255;
            v = Select::make(GE::make(x, make_const(from, hi + 1)), make_const(target, hi),
                             Select::make(LE::make(x, make_const(from, lo - 1)), make_const(target, lo), v));
        }
        v = Select::make(math("akg_isnan", Halide::Bool(), {x}), make_zero(target), v);
    } else if (from != target) v = Cast::make(target, v);
    if (to == DType::Float16) v = Cast::make(Halide::Float(32), Cast::make(Halide::Float(16), v));
    return v;
}

// Ops whose float16 result is exactly one of their float16 operands (or a constant): rounding it
// again would change nothing, so per-op rounding skips them.
const std::set<std::string> kExactInFloat16 = {"Neg", "Abs", "Maximum", "Minimum", "Select", "BroadcastTo", "Reshape", "ExpandDims",
                                                "Transpose", "Tile", "InplaceAssign", "Assign", "Cast", "Sign", "Round", "Floor",
                                                "ZerosLike", "SelectGE", "SelectGT", "SelectLE", "SelectLT", "StridedSlice", "Concat",
                                                "UnPadAkg", "OneHot", "EquivFormat", "TransData", "Gather", "GatherNd"};

const std::set<std::string> kBinaryArithmetic = {"Add", "TensorAdd", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "Mod", "FloorMod",
                                                 "Pow", "Atan2", "Maximum", "Minimum", "Greater", "GreaterEqual", "Less", "LessEqual",
                                                 "Equal", "NotEqual"};

// Element-wise functions of one float operand that map to one akg_vmath.h function.
const std::map<std::string, std::string> kUnaryMath = {{"Log", "akg_log"},     {"Sqrt", "akg_sqrt"},     {"Rsqrt", "akg_rsqrt"},
                                                       {"Erf", "akg_erf"},     {"Sin", "akg_sin"},       {"Cos", "akg_cos"},
                                                       {"Asin", "akg_asin"},   {"ACos", "akg_acos"},     {"Atan", "akg_atan"},
                                                       {"Asinh", "akg_asinh"}, {"Acosh", "akg_acosh"},   {"Expm1", "akg_expm1"}};

Expr clamp_index(const Expr &i, int64_t extent) { return Max::make(Min::make(i, int64(std::max<int64_t>(extent - 1, 0))), int64(0)); }

Expr all_of(const std::vector<Expr> &conditions) {
    Expr c;
    for (const Expr &x : conditions) c = c.defined() ? And::make(c, x) : x;
    return c.defined() ? c : Halide::Internal::const_true();
}

// A float ordering as an opaque call (see the comparisons in lower_op), an int one as Halide's.
Expr compare(const std::string &op, const Expr &a, const Expr &b) {
    if (a.type().is_float()) return math("akg_f" + op, Halide::Bool(), {a, b});
    if (op == "ge") return GE::make(a, b);
    if (op == "gt") return GT::make(a, b);
    if (op == "le") return LE::make(a, b);
    return LT::make(a, b);
}

// Brings two operands to one compute type (Halide's Max/Min/comparisons require it): bool
// counts as int32; any float wins over ints; the wider of two floats or two ints wins.
void common_type(Expr &a, Expr &b) {
    if (a.type() == b.type()) return;
    if (a.type().is_bool()) a = convert(a, DType::Int32);
    if (b.type().is_bool()) b = convert(b, DType::Int32);
    if (a.type() == b.type()) return;
    Halide::Type t = a.type().is_float() == b.type().is_float() ? (a.type().bits() >= b.type().bits() ? a.type() : b.type())
                                                                 : (a.type().is_float() ? a.type() : b.type());
    if (a.type() != t) a = Cast::make(t, a);
    if (b.type() != t) b = Cast::make(t, b);
}

// a + b, a - b, a * b. Integer arithmetic wraps around (two's complement, as the reference
// evaluator defines it): it is done in the unsigned type of the same width, so that neither
// Halide's simplifier (which takes signed overflow as impossible and folds x + c > x to true)
// nor the C++ compiler (signed overflow is undefined behaviour) assumes otherwise.
Expr arith(char op, const Expr &a, const Expr &b) {
    if (!a.type().is_int() || a.type() != b.type()) return op == '+' ? a + b : op == '-' ? a - b : a * b;
    Halide::Type u = a.type().with_code(Halide::Type::UInt);
    Expr x = Cast::make(u, a), y = Cast::make(u, b);
    // Back to signed as a reinterpretation of the bits, not a Cast: the simplifier folds a Cast
    // of an unsigned constant above the signed maximum to `signed_integer_overflow`.
    return Call::make(a.type(), Call::reinterpret, {op == '+' ? Add::make(x, y) : op == '-' ? Sub::make(x, y) : Mul::make(x, y)},
                      Call::PureIntrinsic);
}

class Lowerer {
public:
    explicit Lowerer(const CompositeKernel &kernel) : kernel_(kernel) { graph_.kernel = &kernel; }

    TensorGraph run() {
        for (size_t k = 0; k < kernel_.inputs.size(); ++k) {
            Stage s;
            s.tensor = kernel_.inputs[k].name;
            s.kind = StageKind::Input;
            s.shape = kernel_.inputs[k].shape;
            s.dtype = kernel_.inputs[k].dtype;
            s.materialized = true;
            s.buffer_kind = BufferKind::KernelInput;
            s.buffer_index = static_cast<int>(k);
            add(std::move(s));
        }
        for (const auto &op : kernel_.ops) lower_op(op);
        for (auto &w : inplace_writes_) add(std::move(w));
        return std::move(graph_);
    }

private:
    const CompositeKernel &kernel_;
    TensorGraph graph_;
    std::vector<Stage> inplace_writes_;

    void add(Stage s) {
        graph_.stage_of_tensor[s.tensor] = static_cast<int>(graph_.stages.size());
        graph_.stages.push_back(std::move(s));
    }

    // A read of operand `t` broadcast into an iteration space of rank `out_rank` indexed by `idx`.
    Expr read_broadcast(const TensorDesc &t, const std::vector<Expr> &idx) {
        if (t.value) return constant_value(t);
        const Stage &src = graph_.stage(t.name);
        std::vector<Expr> args;
        size_t off = idx.size() - src.shape.size();
        for (size_t d = 0; d < src.shape.size(); ++d)
            args.push_back(src.shape[d] == 1 ? int64(0) : idx[off + d]);
        return tensor_read(src.tensor, src.dtype, args);
    }

    // The read of `t` at a row-major linear position `linear`.
    Expr read_linear(const TensorDesc &t, const Expr &linear) {
        if (t.value) return constant_value(t);
        const Stage &src = graph_.stage(t.name);
        std::vector<Expr> args(src.shape.size());
        int64_t stride = 1;
        for (int d = static_cast<int>(src.shape.size()) - 1; d >= 0; --d) {
            args[d] = src.shape[d] == 1 ? int64(0) : (linear / int64(stride)) % int64(src.shape[d]);
            stride *= src.shape[d];
        }
        return tensor_read(src.tensor, src.dtype, args);
    }

    // The read of `t` at explicit indices (an inline constant ignores them).
    Expr read_at(const TensorDesc &t, const std::vector<Expr> &idx) {
        if (t.value) return constant_value(t);
        const Stage &src = graph_.stage(t.name);
        std::vector<Expr> args;
        for (size_t d = 0; d < src.shape.size(); ++d) args.push_back(src.shape[d] == 1 || d >= idx.size() ? int64(0) : idx[d]);
        return tensor_read(src.tensor, src.dtype, args);
    }

    // An index value read from an integer tensor, as a 64-bit index.
    Expr index_value(const TensorDesc &t, const std::vector<Expr> &idx) { return Cast::make(Halide::Int(64), read_at(t, idx)); }

    static std::vector<Expr> out_index(size_t rank) {
        std::vector<Expr> idx;
        for (size_t d = 0; d < rank; ++d) idx.push_back(index_expr(static_cast<int>(d)));
        return idx;
    }

    static Expr linear_of(const Shape &shape) {
        Expr l = int64(0);
        int64_t stride = 1;
        for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
            l = l + index_expr(d) * int64(stride);
            stride *= shape[d];
        }
        return l;
    }

    Expr unify(const Expr &a, const Expr &b) { return a.type() == b.type() ? a : Cast::make(b.type(), a); }

    void lower_op(const OpDesc &op) {
        const TensorDesc &out = op.outputs[0];
        Stage s;
        s.tensor = out.name;
        s.shape = out.shape;
        s.dtype = out.dtype;
        s.kind = StageKind::Compute;
        Halide::Type ct = compute_type(out.dtype);
        std::vector<const TensorDesc *> ins;
        for (const auto &g : op.inputs)
            for (const auto &t : g) ins.push_back(&t);
        auto idx = out_index(out.shape.size());
        auto arg = [&](size_t k) { return read_broadcast(*ins[k], idx); };
        const std::string &n = op.name;
        const bool half_precision_math = out.dtype == DType::Float16 && !kernel_.float16_per_op;

        // The two operands of a binary op in one type: MindSpore's always agree, a graph that
        // mixes them is computed in the wider one (float over int), as the reference does.
        Expr x0, x1;
        if (ins.size() == 2 && kBinaryArithmetic.count(n)) {
            x0 = arg(0);
            x1 = arg(1);
            common_type(x0, x1);
            // Arithmetic on bools is done on 0/1 ints (a 1-bit add would wrap true + true to false).
            bool compare = n.find("Greater") == 0 || n.find("Less") == 0 || n == "Equal" || n == "NotEqual";
            if (x0.type().is_bool() && !compare) {
                x0 = convert(x0, DType::Int32);
                x1 = convert(x1, DType::Int32);
            }
        }
        if (n == "Add" || n == "TensorAdd") s.value = arith('+', x0, x1);
        else if (n == "Sub") s.value = arith('-', x0, x1);
        else if (n == "Mul") s.value = arith('*', x0, x1);
        else if (n == "RealDiv") {
            Expr a = x0, b = x1;
            s.value = a.type().is_float() ? a / b : math("akg_idiv", a.type(), {a, b});
        } else if (n == "Div") s.value = x0.type().is_float() ? x0 / x1 : math("akg_idiv", x0.type(), {x0, x1});
        else if (n == "FloorDiv") s.value = math(x0.type().is_float() ? "akg_ffloordiv" : "akg_ifloordiv", x0.type(), {x0, x1});
        else if (n == "Mod") s.value = math(x0.type().is_float() ? "akg_fmod" : "akg_imod", x0.type(), {x0, x1});
        else if (n == "FloorMod") s.value = math(x0.type().is_float() ? "akg_ffloormod" : "akg_ifloormod", x0.type(), {x0, x1});
        else if (n == "Atan2") s.value = math("akg_atan2", ct, {convert(x0, DType::Float32), convert(x1, DType::Float32)});
        else if (kUnaryMath.count(n)) s.value = math(kUnaryMath.at(n), ct, {convert(arg(0), DType::Float32)});
        else if (n == "Round" || n == "Floor") {
            Expr x = arg(0);
            s.value = x.type().is_float() ? math(n == "Round" ? "akg_round_even" : "akg_floor", x.type(), {x}) : x;
        } else if (n == "Sign") s.value = math("akg_sign", arg(0).type(), {arg(0)});
        else if (n == "IsFinite") s.value = math("akg_isfinite", Halide::Bool(), {arg(0)});
        else if (n == "ZerosLike") s.value = constant_of(ct, 0);
        else if (n == "AddMinValue") {
            Expr x = arg(0);
            double tiny = out.dtype == DType::Float16 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -126);
            s.value = x.type().is_float() ? x + constant_of(x.type(), tiny) : x;
        } else if (n == "FastGeLU") {
            // MindSpore's x / (1 + e^(-1.702|x|)) · e^(0.851 (x - |x|)).
            Expr x = arg(0), ax = math("akg_abs", ct, {x});
            Expr e1 = math("akg_exp", ct, {constant_of(ct, -1.702) * ax}), e2 = math("akg_exp", ct, {constant_of(ct, 0.851) * (x - ax)});
            s.value = x / (constant_of(ct, 1) + e1) * e2;
        } else if (n == "SelectGE" || n == "SelectGT" || n == "SelectLE" || n == "SelectLT") {
            Expr a = arg(0), b = arg(1);
            common_type(a, b);
            std::string rel = n == "SelectGE" ? "ge" : n == "SelectGT" ? "gt" : n == "SelectLE" ? "le" : "lt";
            s.value = Select::make(compare(rel, a, b), arg(2), unify(arg(3), arg(2)));
        } else if (n == "Neg") s.value = arith('*', arg(0), constant_of(ct, -1));
        else if (n == "Abs") s.value = math("akg_abs", ct, {arg(0)});
        // With float32 intermediates, an exponential or tanh declared float16 is computed to
        // float16 precision (relative error below 2^-16, akg_vmath.h): a float16 value carries
        // 11 bits, and the full float32 polynomials cost a third more. Rounded per op, it takes
        // the float32 functions: an error of 2^-16 would round 1 in 32 results the other way
        // from the framework's, 2.5 float32 ulps about 1 in 4000.
        else if (n == "Exp") s.value = math(half_precision_math ? "akg_exp_h" : "akg_exp", ct, {arg(0)});
        else if (n == "Tanh") s.value = math(half_precision_math ? "akg_tanh_h" : "akg_tanh", ct, {arg(0)});
        else if (n == "Reciprocal") s.value = constant_of(ct, 1) / arg(0);
        else if (n == "Pow") s.value = math("akg_pow", ct, {x0, x1});
        else if (n == "Maximum") s.value = Max::make(x0, x1);
        else if (n == "Minimum") s.value = Min::make(x0, x1);
        // Float orderings are opaque calls (like akg_feq): Halide's simplifier rewrites a <= b as
        // !(b < a) and select(!c, x, y) as select(c, y, x), which is true for NaN (issue 5).
        else if (n == "Greater") s.value = x0.type().is_float() ? math("akg_fgt", Halide::Bool(), {x0, x1}) : GT::make(x0, x1);
        else if (n == "GreaterEqual") s.value = x0.type().is_float() ? math("akg_fge", Halide::Bool(), {x0, x1}) : GE::make(x0, x1);
        else if (n == "Less") s.value = x0.type().is_float() ? math("akg_flt", Halide::Bool(), {x0, x1}) : LT::make(x0, x1);
        else if (n == "LessEqual") s.value = x0.type().is_float() ? math("akg_fle", Halide::Bool(), {x0, x1}) : LE::make(x0, x1);
        else if (n == "Equal" || n == "NotEqual") {
            Expr a = x0, b = x1;
            // Halide's simplifier is not IEEE-exact for floats (it folds x != x to false), so
            // float comparisons for equality stay opaque calls.
            if (a.type().is_float()) s.value = math(n == "Equal" ? "akg_feq" : "akg_fne", Halide::Bool(), {a, b});
            else s.value = n == "Equal" ? EQ::make(a, b) : NE::make(a, b);
        }
        else if (n == "LogicalAnd") s.value = And::make(convert(arg(0), DType::Bool), convert(arg(1), DType::Bool));
        else if (n == "LogicalOr") s.value = Or::make(convert(arg(0), DType::Bool), convert(arg(1), DType::Bool));
        else if (n == "LogicalNot") s.value = Not::make(convert(arg(0), DType::Bool));
        else if (n == "IsNan") s.value = math("akg_isnan", Halide::Bool(), {arg(0)});
        else if (n == "IsInf") s.value = math("akg_isinf", Halide::Bool(), {arg(0)});
        else if (n == "Select") s.value = Select::make(convert(arg(0), DType::Bool), arg(1), unify(arg(2), arg(1)));
        else if (n == "Cast") s.value = convert(arg(0), out.dtype);
        else if (n == "AddN") {
            auto term = [&](size_t k) { Expr x = arg(k); return x.type().is_bool() ? convert(x, DType::Int32) : x; };
            s.value = term(0);
            for (size_t k = 1; k < ins.size(); ++k) s.value = arith('+', s.value, term(k));
        } else if (n == "BroadcastTo") s.value = arg(0);
        else if (n == "Reshape" || n == "ExpandDims" || n == "EquivFormat") s.value = read_linear(*ins[0], linear_of(out.shape));
        else if (n == "TransData") s.value = read_at(*ins[0], idx);
        else if (n == "StridedSlice" || n == "Concat" || n == "PadAkg" || n == "UnPadAkg" || n == "OneHot") s.value = lower_layout(op, ins, idx);
        else if (n == "Gather" || n == "GatherNd") s.value = lower_gather(op, ins, idx);
        else if (n == "TensorScatterAdd" || n == "UnsortedSegmentSum") lower_scatter(op, s, ins);
        else if (n == "Argmax" || n == "Argmin") lower_arg_extreme(op, s, *ins[0]);
        else if (n == "CumSum" || n == "CumProd") lower_scan(op, s, *ins[0]);
        else if (n == "Pool2D" || n == "GlobalPool2D") lower_pool(op, s, *ins[0]);
        else if (n == "Transpose") {
            auto perm = attr_int_list(kernel_, op, "perm", true);
            std::vector<Expr> src_idx(perm.size());
            for (size_t d = 0; d < perm.size(); ++d) {
                int64_t p = perm[d] < 0 ? perm[d] + static_cast<int64_t>(perm.size()) : perm[d];
                // The output may be declared with another rank when it has one element
                // ([1,1] transposed declared as [1]): every index is then 0.
                src_idx[p] = d < idx.size() ? idx[d] : int64(0);
            }
            s.value = read_broadcast(*ins[0], src_idx);
        } else if (n == "Tile") {
            const Stage &src = graph_.stage(ins[0]->name);
            std::vector<Expr> src_idx;
            size_t off = out.shape.size() - src.shape.size();
            for (size_t d = 0; d < src.shape.size(); ++d)
                src_idx.push_back(src.shape[d] == 1 ? int64(0) : idx[off + d] % int64(src.shape[d]));
            s.value = tensor_read(src.tensor, src.dtype, src_idx);
        } else if (n == "InplaceAssign" || n == "Assign") {
            // The ref input receives `value`; the op itself yields passthrough (or value).
            const TensorDesc &ref = *ins[0];
            const TensorDesc &value = *ins[1];
            Stage w;
            w.tensor = "inplace$" + ref.name;
            w.shape = ref.shape;
            w.dtype = ref.dtype;
            w.kind = StageKind::Compute;
            w.value = read_linear(value, linear_of(ref.shape));
            w.value = convert(w.value, ref.dtype);
            w.materialized = true;
            w.inplace_write = true;
            w.buffer_kind = BufferKind::KernelInput;
            w.buffer_index = graph_.stage(ref.name).buffer_index;
            for (auto &prev : inplace_writes_)
                if (prev.tensor == w.tensor) op_error(kernel_, op, "input " + ref.name + " is assigned twice");
            inplace_writes_.push_back(std::move(w));
            s.value = read_linear(n == "InplaceAssign" ? *ins[2] : value, linear_of(out.shape));
        } else if (n == "ReduceSum" || n == "ReduceMax" || n == "ReduceMin" || n == "ReduceProd" || n == "ElemAny" || n == "ElemAll") {
            lower_reduce(op, s, *ins[0]);
        } else if (is_contraction_op(n)) {
            if (!lower_contraction(op, s, ins)) return;
        } else {
            op_error(kernel_, op, "op is not supported by the lowering");
        }
        if (s.kind == StageKind::Compute && s.value.type() != ct) s.value = convert(s.value, out.dtype);
        // int8 and uint8 are computed in int32: each op's result wraps to its width, as stored.
        if (s.kind == StageKind::Compute && (out.dtype == DType::Int8 || out.dtype == DType::UInt8) && s.value.type() == ct)
            s.value = Cast::make(ct, Cast::make(out.dtype == DType::Int8 ? Halide::Int(8) : Halide::UInt(8), s.value));
        if (out.dtype == DType::Float16 && kernel_.float16_per_op) {
            if (s.kind == StageKind::Compute && !kExactInFloat16.count(n) && !float16_rounded_operand(s.value).defined())
                s.value = Cast::make(Halide::Float(32), Cast::make(Halide::Float(16), s.value));
            if (s.kind == StageKind::Reduce && !s.contraction && s.reduce_kind != ReduceKind::Max && s.reduce_kind != ReduceKind::Min) {
                // The sum (or product) accumulates unrounded; a stage after it rounds the result
                // once, and later ops read that.
                Stage rounded;
                rounded.tensor = s.tensor;
                rounded.shape = s.shape;
                rounded.dtype = DType::Float16;
                rounded.kind = StageKind::Compute;
                s.tensor += "$unrounded";
                s.dtype = DType::Float32;
                rounded.value = convert(tensor_read(s.tensor, s.dtype, out_index(s.shape.size())), DType::Float16);
                add(std::move(s));
                add(std::move(rounded));
                return;
            }
        }
        add(std::move(s));
    }

    // out[b.., m, n] = sum over r0 of a[b.., m, r0] * b[b.., r0, n], the operands read through
    // their transposes and broadcast batch dimensions, in float32. A bias (third input) is a
    // Compute stage after it; returns false when it added the stages itself.
    bool lower_contraction(const OpDesc &op, Stage &s, const std::vector<const TensorDesc *> &ins) {
        const TensorDesc &out = op.outputs[0];
        int rank = static_cast<int>(out.shape.size());
        bool ta = attr_bool(kernel_, op, "transpose_a", false), tb = attr_bool(kernel_, op, "transpose_b", false);
        auto operand = [&](const TensorDesc &t, bool left, bool transposed) {
            std::vector<Expr> idx;
            int r = static_cast<int>(t.shape.size());
            for (int d = 0; d < r - 2; ++d) {
                int od = rank - 2 - (r - 2) + d; // numpy: batch dims align to the right
                idx.push_back(t.shape[d] == 1 ? int64(0) : index_expr(od));
            }
            Expr row = left ? index_expr(rank - 2) : reduce_expr(0), col = left ? reduce_expr(0) : index_expr(rank - 1);
            if (transposed) std::swap(row, col);
            idx.push_back(t.shape[r - 2] == 1 ? int64(0) : row);
            idx.push_back(t.shape[r - 1] == 1 ? int64(0) : col);
            if (t.value) return convert(constant_value(t), DType::Float32);
            const Stage &src = graph_.stage(t.name);
            return convert(tensor_read(src.tensor, src.dtype, idx), DType::Float32);
        };
        const TensorDesc &a = *ins[0], &b = *ins[1];
        int64_t k = a.shape[a.shape.size() - (ta ? 2 : 1)];
        s.kind = StageKind::Reduce;
        s.reduce_kind = ReduceKind::Sum;
        s.reduce_extents = {k};
        s.contraction = true;
        s.value = Mul::make(operand(a, true, ta), operand(b, false, tb));
        s.materialized = true;
        if (ins.size() < 3) return true;
        // The bias is added to the float32 sum, and the output rounded once (dst_type).
        s.tensor = out.name + "$matmul";
        s.dtype = DType::Float32;
        add(s);
        Stage biased;
        biased.tensor = out.name;
        biased.shape = out.shape;
        biased.dtype = out.dtype;
        biased.kind = StageKind::Compute;
        const Stage &sum = graph_.stage(s.tensor);
        biased.value = convert(tensor_read(sum.tensor, sum.dtype, out_index(rank)) + convert(read_broadcast(*ins[2], out_index(rank)), DType::Float32),
                               out.dtype);
        add(std::move(biased));
        return false;
    }

    // Adds `s` as the intermediate stage `<out>$<suffix>` of `dtype`, then makes `s` the op's
    // output stage (element-wise, its value still to set); returns the read of the intermediate.
    Expr spill(Stage &s, const TensorDesc &out, const std::string &suffix, DType dtype) {
        s.tensor = out.name + "$" + suffix;
        s.dtype = dtype;
        add(s);
        s = Stage();
        s.tensor = out.name;
        s.shape = out.shape;
        s.dtype = out.dtype;
        s.kind = StageKind::Compute;
        return tensor_read(out.name + "$" + suffix, dtype, out_index(out.shape.size()));
    }

    // StridedSlice, Concat, PadAkg, UnPadAkg and OneHot: reads at affine (clamped) positions,
    // selected by affine conditions; every read stays inside its tensor, so vector code may
    // evaluate both arms of a select.
    Expr lower_layout(const OpDesc &op, const std::vector<const TensorDesc *> &ins, const std::vector<Expr> &idx) {
        const std::string &n = op.name;
        const Shape &in = ins[0]->shape;
        const Shape &out = op.outputs[0].shape;
        if (n == "StridedSlice") {
            SlicePlan plan = strided_slice_plan(kernel_, op, in);
            std::vector<Expr> src(in.size(), int64(0));
            for (const auto &[dim, at] : plan.fixed) src[dim] = int64(at);
            for (size_t d = 0; d < plan.out_dims.size() && d < idx.size(); ++d)
                if (plan.out_dims[d].input_dim >= 0) src[plan.out_dims[d].input_dim] = int64(plan.out_dims[d].begin) + idx[d] * int64(plan.out_dims[d].stride);
            return read_at(*ins[0], src);
        }
        if (n == "UnPadAkg") return read_at(*ins[0], idx);
        if (n == "PadAkg") {
            auto head = attr_int_list(kernel_, op, "head", true), tail = attr_int_list(kernel_, op, "tail", true);
            std::vector<Expr> src, inside;
            for (size_t d = 0; d < in.size(); ++d) {
                src.push_back(head[d] == 0 && tail[d] == 0 ? idx[d] : clamp_index(idx[d] - int64(head[d]), in[d]));
                if (head[d] > 0) inside.push_back(GE::make(idx[d], int64(head[d])));
                if (tail[d] > 0) inside.push_back(LT::make(idx[d], int64(head[d] + in[d])));
            }
            Expr x = read_at(*ins[0], src);
            if (inside.empty()) return x;
            return Select::make(all_of(inside), x, constant_of(x.type(), attr_number(kernel_, op, "pad_val", 0)));
        }
        if (n == "Concat") {
            int axis = single_axis(kernel_, op, "axis", static_cast<int>(in.size()), 0);
            std::vector<int64_t> offset;
            int64_t at = 0;
            for (auto *t : ins) offset.push_back(at), at += t->shape[axis];
            Expr value;
            for (int k = static_cast<int>(ins.size()) - 1; k >= 0; --k) {
                if (ins[k]->shape[axis] == 0) continue;
                std::vector<Expr> src = idx;
                src[axis] = clamp_index(idx[axis] - int64(offset[k]), ins[k]->shape[axis]);
                Expr x = read_at(*ins[k], src);
                value = value.defined() ? Select::make(LT::make(idx[axis], int64(offset[k] + ins[k]->shape[axis])), x, unify(value, x)) : x;
            }
            return value.defined() ? value : constant_of(compute_type(op.outputs[0].dtype), 0);
        }
        // OneHot: the new dimension sits at `axis` of the output.
        auto ax = attr_int_list(kernel_, op, "axis", false);
        int64_t axis = ax.empty() || ax[0] == -1 ? static_cast<int64_t>(in.size()) : ax[0];
        std::vector<Expr> src;
        for (size_t d = 0; d < out.size(); ++d)
            if (static_cast<int64_t>(d) != axis) src.push_back(idx[d]);
        Expr on = read_broadcast(*ins[1], idx), off = unify(read_broadcast(*ins[2], idx), on);
        return Select::make(EQ::make(index_value(*ins[0], src), idx[axis]), on, off);
    }

    // Gather and GatherNd: the index is read from a tensor, so the access is not affine (the
    // polyhedral model over-approximates it by the whole dimension). An index out of range
    // yields 0, and the read itself is clamped into the tensor.
    Expr lower_gather(const OpDesc &op, const std::vector<const TensorDesc *> &ins, const std::vector<Expr> &idx) {
        const TensorDesc &params = *ins[0], &indices = *ins[1];
        const Shape &p = params.shape;
        std::vector<Expr> src, inside;
        size_t next = 0; // the next output dimension
        if (op.name == "Gather") {
            int axis = single_axis(kernel_, op, "axis", static_cast<int>(p.size()), 0);
            for (int d = 0; d < axis; ++d) src.push_back(idx[next++]);
            std::vector<Expr> at(idx.begin() + next, idx.begin() + next + indices.shape.size());
            next += indices.shape.size();
            Expr i = index_value(indices, at);
            inside = {GE::make(i, int64(0)), LT::make(i, int64(p[axis]))};
            src.push_back(clamp_index(i, p[axis]));
        } else {
            size_t q = static_cast<size_t>(indices.shape.back()), rows = indices.shape.size() - 1;
            std::vector<Expr> at(idx.begin(), idx.begin() + rows);
            next = rows;
            for (size_t k = 0; k < q; ++k) {
                at.push_back(int64(static_cast<int64_t>(k)));
                Expr i = index_value(indices, at);
                at.pop_back();
                inside.push_back(GE::make(i, int64(0)));
                inside.push_back(LT::make(i, int64(p[k])));
                src.push_back(clamp_index(i, p[k]));
            }
        }
        while (next < idx.size() && src.size() < p.size()) src.push_back(idx[next++]);
        Expr x = read_at(params, src);
        return Select::make(all_of(inside), x, make_zero(x.type()));
    }

    // TensorScatterAdd and UnsortedSegmentSum as reductions over the index rows: each output
    // element sums, in row order, the rows whose index names it (rows × outputs). Kernels take
    // this form only when an operand is an inline constant; otherwise the op is a direct part
    // (kernel_parts.h) costing rows × slice.
    void lower_scatter(const OpDesc &op, Stage &s, const std::vector<const TensorDesc *> &ins) {
        const TensorDesc &out = op.outputs[0];
        const TensorDesc &indices = *ins[1];
        const bool segments = op.name == "UnsortedSegmentSum";
        const TensorDesc &updates = segments ? *ins[0] : *ins[2];
        const bool flat = !segments && indices.shape.size() == 1;
        const size_t rows = segments || flat ? indices.shape.size() : indices.shape.size() - 1;
        const size_t q = segments ? 1 : flat ? 1 : static_cast<size_t>(indices.shape.back());
        std::vector<Expr> row;
        Shape extents;
        for (size_t d = 0; d < rows; ++d) row.push_back(reduce_expr(static_cast<int>(d))), extents.push_back(indices.shape[d]);
        std::vector<Expr> match;
        for (size_t k = 0; k < q; ++k) {
            std::vector<Expr> at = row;
            if (!segments && !flat) at.push_back(int64(static_cast<int64_t>(k)));
            match.push_back(EQ::make(index_value(indices, at), index_expr(static_cast<int>(k))));
        }
        std::vector<Expr> from = row; // the update element: its row, then the slice dimensions
        for (size_t d = q; d < out.shape.size(); ++d) from.push_back(index_expr(static_cast<int>(d)));
        Expr u = read_at(updates, from);
        Expr zero = make_zero(u.type());
        s.kind = StageKind::Reduce;
        s.reduce_kind = ReduceKind::Sum;
        s.reduce_extents = extents;
        s.value = Select::make(all_of(match), u, zero);
        s.materialized = true;
        if (segments) return;
        // TensorScatterAdd: the input plus the scattered sum, rounded once.
        Expr sum = spill(s, out, "scattered", scratch_dtype(u.type()));
        s.value = arith('+', read_at(*ins[0], out_index(out.shape.size())), sum);
    }

    // Argmax/Argmin: the extreme value (a NaN-dominated maximum or minimum), then the smallest
    // index holding it (or holding a NaN, which only the NaN extreme admits).
    void lower_arg_extreme(const OpDesc &op, Stage &s, const TensorDesc &in) {
        const Stage src = graph_.stage(in.name);
        const TensorDesc &out = op.outputs[0];
        int rank = static_cast<int>(src.shape.size());
        if (rank == 0) op_error(kernel_, op, "the input must have rank 1 or more");
        int axis = single_axis(kernel_, op, "axis", rank, rank - 1);
        auto at = [&](const Expr &r) {
            std::vector<Expr> a;
            int od = 0;
            for (int d = 0; d < rank; ++d) a.push_back(src.shape[d] == 1 ? int64(0) : d == axis ? r : index_expr(od)), od += d != axis;
            return tensor_read(src.tensor, src.dtype, a);
        };
        Stage m;
        m.tensor = out.name + "$extreme";
        m.shape = out.shape;
        m.kind = StageKind::Reduce;
        m.reduce_kind = op.name == "Argmax" ? ReduceKind::Max : ReduceKind::Min;
        m.reduce_extents = {src.shape[axis]};
        m.value = at(reduce_expr(0));
        m.dtype = scratch_dtype(m.value.type());
        m.materialized = true;
        add(m);
        Expr x = at(reduce_expr(0)), best = tensor_read(m.tensor, m.dtype, out_index(out.shape.size()));
        Expr hit = x.type().is_float() ? Or::make(math("akg_feq", Halide::Bool(), {x, best}), math("akg_isnan", Halide::Bool(), {x})) : EQ::make(x, best);
        Halide::Type it = compute_type(out.dtype);
        s.kind = StageKind::Reduce;
        s.reduce_kind = ReduceKind::Min;
        s.reduce_extents = {src.shape[axis]};
        s.value = Select::make(hit, Cast::make(it, reduce_expr(0)), make_const(it, src.shape[axis]));
        s.materialized = true;
    }

    // CumSum/CumProd: out[i] reduces x[r] over the r on the scan's side of i (a triangular
    // selection of a rectangular reduction: n^2 / 2 wasted terms along the axis). Only for an
    // inline-constant operand; otherwise the op is a direct part (one pass along the axis).
    void lower_scan(const OpDesc &op, Stage &s, const TensorDesc &in) {
        const Stage &src = graph_.stage(in.name);
        int rank = static_cast<int>(src.shape.size());
        int axis = single_axis(kernel_, op, "axis", rank, 0);
        bool exclusive = attr_bool(kernel_, op, "exclusive", false), reverse = attr_bool(kernel_, op, "reverse", false);
        std::vector<Expr> a = out_index(rank);
        a[axis] = reduce_expr(0);
        Expr x = tensor_read(src.tensor, src.dtype, a);
        if (x.type().is_bool()) x = convert(x, DType::Int32);
        Expr r = reduce_expr(0), i = index_expr(axis);
        Expr taken = reverse ? (exclusive ? GT::make(r, i) : GE::make(r, i)) : (exclusive ? LT::make(r, i) : LE::make(r, i));
        bool prod = op.name == "CumProd";
        s.kind = StageKind::Reduce;
        s.reduce_kind = prod ? ReduceKind::Prod : ReduceKind::Sum;
        s.reduce_extents = {src.shape[axis]};
        s.value = Select::make(taken, x, prod ? make_one(x.type()) : make_zero(x.type()));
        s.materialized = true;
    }

    // Pool2D/GlobalPool2D: a max or sum over the window; an average divides the sum by the
    // window's size (padding counts as zeros, as in TVM's topi). Global pools take this form; a
    // windowed Pool2D is a direct part (kernel_parts.h) unless its operand is a constant.
    void lower_pool(const OpDesc &op, Stage &s, const TensorDesc &in) {
        const Stage src = graph_.stage(in.name);
        const TensorDesc &out = op.outputs[0];
        if (!dtype_is_float(src.dtype)) op_error(kernel_, op, "pooling takes float32 or float16 data");
        PoolParams p = pool_params(kernel_, op, src.shape);
        std::vector<Expr> a = out_index(4), inside;
        Expr h = index_expr(p.h_dim) * int64(p.sh) + reduce_expr(0) - int64(p.pad_top);
        Expr w = index_expr(p.w_dim) * int64(p.sw) + reduce_expr(1) - int64(p.pad_left);
        if (p.global) h = reduce_expr(0), w = reduce_expr(1);
        const int64_t H = src.shape[p.h_dim], W = src.shape[p.w_dim];
        if (!p.global && p.pad_top + p.pad_left > 0) {
            inside = {GE::make(h, int64(0)), GE::make(w, int64(0))};
        }
        bool may_overhang = !p.global && ((p.out_h - 1) * p.sh + p.kh - p.pad_top > H || (p.out_w - 1) * p.sw + p.kw - p.pad_left > W);
        if (may_overhang) inside.push_back(LT::make(h, int64(H))), inside.push_back(LT::make(w, int64(W)));
        a[p.h_dim] = inside.empty() ? h : clamp_index(h, H);
        a[p.w_dim] = inside.empty() ? w : clamp_index(w, W);
        Expr x = tensor_read(src.tensor, src.dtype, a);
        Halide::Type ft = x.type();
        Expr outside = p.max ? Expr(-std::numeric_limits<float>::infinity()) : make_zero(ft);
        s.kind = StageKind::Reduce;
        s.reduce_kind = p.max ? ReduceKind::Max : ReduceKind::Sum;
        s.reduce_extents = {p.kh, p.kw};
        s.value = inside.empty() ? x : Select::make(all_of(inside), x, outside);
        s.materialized = true;
        if (p.max) return;
        s.value = spill(s, out, "window_sum", DType::Float32) / constant_of(ft, static_cast<double>(p.kh * p.kw));
    }

    void lower_reduce(const OpDesc &op, Stage &s, const TensorDesc &in) {
        const Stage &src = graph_.stage(in.name);
        int rank = static_cast<int>(src.shape.size());
        bool flag = op.name == "ElemAny" || op.name == "ElemAll";
        std::vector<int> axes = flag ? std::vector<int>{} : reduction_axes(kernel_, op, rank);
        if (flag) {
            axes.clear();
            for (int d = 0; d < rank; ++d) axes.push_back(d);
        }
        bool keep = attr_bool(kernel_, op, "keep_dims", false);
        s.kind = StageKind::Reduce;
        std::vector<Expr> src_idx(rank);
        int out_d = 0, red_d = 0;
        // The declared output may be [1] for a full reduction without keep_dims: its single
        // index i0 is simply unused.
        for (int d = 0; d < rank; ++d) {
            bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
            if (reduced) {
                s.reduce_extents.push_back(src.shape[d]);
                src_idx[d] = src.shape[d] == 1 ? int64(0) : reduce_expr(red_d);
                ++red_d;
                if (keep) ++out_d;
            } else {
                src_idx[d] = src.shape[d] == 1 ? int64(0) : index_expr(out_d);
                ++out_d;
            }
        }
        Expr body = tensor_read(src.tensor, src.dtype, src_idx);
        if (flag) {
            // Any: the maximum of the nonzero flags; all: their minimum (NaN counts as nonzero),
            // in the output's type (float for a bool output).
            Halide::Type t = compute_type(op.outputs[0].dtype);
            if (t.is_bool()) t = Halide::Float(32);
            body = Select::make(convert(body, DType::Bool), make_one(t), make_zero(t));
            s.reduce_kind = op.name == "ElemAny" ? ReduceKind::Max : ReduceKind::Min;
        } else if (op.name == "ReduceSum") s.reduce_kind = ReduceKind::Sum;
        else if (op.name == "ReduceMax") s.reduce_kind = ReduceKind::Max;
        else if (op.name == "ReduceMin") s.reduce_kind = ReduceKind::Min;
        else s.reduce_kind = ReduceKind::Prod;
        // Reductions of float data accumulate in float32 whatever the storage.
        if (body.type().is_bool()) body = Select::make(body, Expr(1.0f), Expr(0.0f));
        s.value = body;
        s.materialized = true;
    }
};

} // namespace

TensorGraph lower_to_halide(const CompositeKernel &kernel) { return Lowerer(kernel).run(); }

// ---- shared helpers of the formula IR ----

std::string index_var(int d) { return "i" + std::to_string(d); }
std::string reduce_var(int d) { return "r" + std::to_string(d); }
Expr index_expr(int d) { return Variable::make(Halide::Int(64), index_var(d)); }
Expr reduce_expr(int d) { return Variable::make(Halide::Int(64), reduce_var(d)); }

bool reduces_along_rows(const Stage &s) {
    class LastIndices : public IRVisitor {
    public:
        explicit LastIndices(const Shape &extents) : reduce_extents(extents) {}
        const Shape &reduce_extents;
        bool reduced = false;
        using IRVisitor::visit;
        void visit(const Call *op) override {
            IRVisitor::visit(op);
            if (op->name.rfind("buf$", 0) != 0 || op->args.empty()) return;
            for (int d = 0; d < static_cast<int>(reduce_extents.size()); ++d) reduced |= expr_uses_var(op->args.back(), reduce_var(d));
        }
    } last(s.reduce_extents);
    s.value.accept(&last);
    return last.reduced;
}

Halide::Type compute_type(DType t) {
    switch (t) {
    case DType::Float16:
    case DType::Float32: return Halide::Float(32);
    case DType::Float64: return Halide::Float(64);
    case DType::Int8:
    case DType::UInt8:
    case DType::Int32: return Halide::Int(32);
    case DType::Int64: return Halide::Int(64);
    case DType::Bool: return Halide::Bool();
    }
    throw InternalError("compute_type: unknown dtype");
}

DType scratch_dtype(Halide::Type t) {
    if (t.is_bool()) return DType::Bool;
    if (t.is_float()) return t.bits() == 64 ? DType::Float64 : DType::Float32;
    return t.bits() == 64 ? DType::Int64 : DType::Int32;
}

DType reduce_accumulator_dtype(const Stage &s) {
    return s.value.type().is_float() ? DType::Float64 : scratch_dtype(s.value.type());
}

static Halide::Type storage_type(DType t) {
    switch (t) {
    case DType::Float16: return Halide::Float(16);
    case DType::Float32: return Halide::Float(32);
    case DType::Float64: return Halide::Float(64);
    case DType::Int8: return Halide::Int(8);
    case DType::UInt8: return Halide::UInt(8);
    case DType::Int32: return Halide::Int(32);
    case DType::Int64: return Halide::Int(64);
    case DType::Bool: return Halide::UInt(8);
    }
    throw InternalError("storage_type: unknown dtype");
}

Expr tensor_read(const std::string &name, DType dtype, const std::vector<Expr> &index) {
    Halide::Type st = storage_type(dtype);
    Expr call = Call::make(st, kTensorPrefix + name, index, Call::PureExtern);
    if (dtype == DType::Bool) return NE::make(call, make_zero(st));
    Halide::Type ct = compute_type(dtype);
    return st == ct ? call : Cast::make(ct, call);
}

bool is_tensor_read(const Call *call) { return call->name.rfind(kTensorPrefix, 0) == 0; }

Expr float16_rounded_operand(const Expr &value) {
    if (const Cast *widen = value.as<Cast>())
        if (const Cast *narrow = widen->value.as<Cast>())
            if (widen->type == Halide::Float(32) && narrow->type == Halide::Float(16) && narrow->value.type() == Halide::Float(32))
                return narrow->value;
    return Expr();
}

Expr strip_float_casts(Expr e) {
    while (const Cast *c = e.as<Cast>()) {
        if (!c->type.is_float() || !c->value.type().is_float()) break;
        e = c->value;
    }
    return e;
}

void push_stage_bounds(const Stage &s, Scope<Interval> &bounds) {
    for (size_t d = 0; d < s.shape.size(); ++d) bounds.push(index_var(static_cast<int>(d)), Interval(Expr(int64_t(0)), Expr(s.shape[d] - 1)));
    for (size_t d = 0; d < s.reduce_extents.size(); ++d)
        bounds.push(reduce_var(static_cast<int>(d)), Interval(Expr(int64_t(0)), Expr(s.reduce_extents[d] - 1)));
}

bool is_math_function(const std::string &name) { return name.rfind("akg_", 0) == 0; }

bool is_expensive_math(const std::string &name) {
    return name == "akg_exp" || name == "akg_exp_h" || name == "akg_exp_no_overflow" || name == "akg_exp_h_no_overflow" || name == "akg_log" || name == "akg_tanh" || name == "akg_tanh_h" || name == "akg_tanh_plus_one" ||
           name == "akg_tanh_plus_one_h" || name == "akg_div_one_plus_exp" || name == "akg_div_one_plus_exp_h" || name == "akg_erf" || name == "akg_pow" || name == "akg_sqrt" || name == "akg_rsqrt" ||
           name == "akg_sin" || name == "akg_cos" || name == "akg_asin" || name == "akg_acos" || name == "akg_atan" || name == "akg_atan2" ||
           name == "akg_asinh" || name == "akg_acosh" || name == "akg_expm1";
}

std::string print_expr(const Expr &e) {
    std::ostringstream os;
    os << e;
    return os.str();
}

} // namespace akg
