// Lowering of composite ops to Halide expressions over loop indices.
#include "lower/lower_to_halide.h"

#include <algorithm>
#include <cmath>
#include <limits>
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
        v = Select::make(GE::make(x, limit), target.max(),
                         Select::make(LT::make(x, -limit), target.min(),
                                      Cast::make(target, Select::make(in_range, x, make_zero(from)))));
        v = Select::make(math("akg_isnan", Halide::Bool(), {x}), make_zero(target), v);
    } else if (from != target) v = Cast::make(target, v);
    if (to == DType::Float16) v = Cast::make(Halide::Float(32), Cast::make(Halide::Float(16), v));
    return v;
}

// Ops whose float16 result is exactly one of their float16 operands (or a constant): rounding it
// again would change nothing, so per-op rounding skips them.
const std::set<std::string> kExactInFloat16 = {"Neg", "Abs", "Maximum", "Minimum", "Select", "BroadcastTo", "Reshape", "ExpandDims",
                                                "Transpose", "Tile", "InplaceAssign", "Assign", "Cast"};

const std::set<std::string> kBinaryArithmetic = {"Add", "TensorAdd", "Sub", "Mul", "RealDiv", "Pow", "Maximum", "Minimum",
                                                 "Greater", "GreaterEqual", "Less", "LessEqual", "Equal", "NotEqual"};

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
        } else if (n == "Neg") s.value = arith('*', arg(0), constant_of(ct, -1));
        else if (n == "Abs") s.value = math("akg_abs", ct, {arg(0)});
        // With float32 intermediates, an exponential or tanh declared float16 is computed to
        // float16 precision (relative error below 2^-16, akg_vmath.h): a float16 value carries
        // 11 bits, and the full float32 polynomials cost a third more. Rounded per op, it takes
        // the float32 functions: an error of 2^-16 would round 1 in 32 results the other way
        // from the framework's, 2.5 float32 ulps about 1 in 4000.
        else if (n == "Exp") s.value = math(half_precision_math ? "akg_exp_h" : "akg_exp", ct, {arg(0)});
        else if (n == "Log") s.value = math("akg_log", ct, {arg(0)});
        else if (n == "Sqrt") s.value = math("akg_sqrt", ct, {arg(0)});
        else if (n == "Rsqrt") s.value = math("akg_rsqrt", ct, {arg(0)});
        else if (n == "Tanh") s.value = math(half_precision_math ? "akg_tanh_h" : "akg_tanh", ct, {arg(0)});
        else if (n == "Erf") s.value = math("akg_erf", ct, {arg(0)});
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
        else if (n == "Reshape" || n == "ExpandDims") s.value = read_linear(*ins[0], linear_of(out.shape));
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
        } else if (n == "ReduceSum" || n == "ReduceMax" || n == "ReduceMin" || n == "ReduceProd" || n == "ElemAny") {
            lower_reduce(op, s, *ins[0]);
        } else if (is_contraction_op(n)) {
            if (!lower_contraction(op, s, ins)) return;
        } else {
            op_error(kernel_, op, "op is not supported by the lowering");
        }
        if (s.kind == StageKind::Compute && s.value.type() != ct) s.value = convert(s.value, out.dtype);
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

    void lower_reduce(const OpDesc &op, Stage &s, const TensorDesc &in) {
        const Stage &src = graph_.stage(in.name);
        int rank = static_cast<int>(src.shape.size());
        std::vector<int> axes = op.name == "ElemAny" ? reduction_axes(kernel_, op, rank) : reduction_axes(kernel_, op, rank);
        if (op.name == "ElemAny") {
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
        if (op.name == "ElemAny") {
            body = Select::make(convert(body, DType::Bool), Expr(1.0f), Expr(0.0f));
            s.reduce_kind = ReduceKind::Max;
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
           name == "akg_tanh_plus_one_h" || name == "akg_div_one_plus_exp" || name == "akg_div_one_plus_exp_h" || name == "akg_erf" || name == "akg_pow" || name == "akg_sqrt" || name == "akg_rsqrt";
}

std::string print_expr(const Expr &e) {
    std::ostringstream os;
    os << e;
    return os.str();
}

} // namespace akg
