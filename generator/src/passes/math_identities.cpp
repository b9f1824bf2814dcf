#include "passes/math_identities.h"

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace akg {

using namespace Halide::Internal;

namespace {

bool is_float_constant(const Halide::Expr &e, double value) {
    const FloatImm *f = e.as<FloatImm>();
    return f && f->type == Halide::Float(32) && f->value == value;
}

// The argument of a float32 akg_tanh (or akg_tanh_h) call, or undefined; `name` gets the
// 1 + tanh function of the same precision.
Halide::Expr tanh_argument(const Halide::Expr &e, std::string &name) {
    const Call *c = e.as<Call>();
    if (!c || (c->name != "akg_tanh" && c->name != "akg_tanh_h") || c->type != Halide::Float(32) || c->args.size() != 1) return Halide::Expr();
    name = c->name == "akg_tanh" ? "akg_tanh_plus_one" : "akg_tanh_plus_one_h";
    return c->args[0];
}

Halide::Expr tanh_plus_one(const std::string &name, const Halide::Expr &x) { return Call::make(Halide::Float(32), name, {x}, Call::PureExtern); }

class TanhPlusOne : public IRMutator {
    using IRMutator::visit;
    Halide::Expr visit(const Add *op) override {
        Halide::Expr a = mutate(op->a), b = mutate(op->b);
        std::string name;
        if (Halide::Expr x = tanh_argument(a, name); x.defined() && is_float_constant(b, 1.0)) return tanh_plus_one(name, x);
        if (Halide::Expr x = tanh_argument(b, name); x.defined() && is_float_constant(a, 1.0)) return tanh_plus_one(name, x);
        return a.same_as(op->a) && b.same_as(op->b) ? Halide::Expr(op) : Add::make(a, b);
    }
    Halide::Expr visit(const Sub *op) override {
        Halide::Expr a = mutate(op->a), b = mutate(op->b);
        std::string name;
        if (Halide::Expr x = tanh_argument(b, name); x.defined() && is_float_constant(a, 1.0)) return tanh_plus_one(name, -x);
        return a.same_as(op->a) && b.same_as(op->b) ? Halide::Expr(op) : Sub::make(a, b);
    }
};

// The factors of a float32 product tree, in order.
void product_factors(const Halide::Expr &e, std::vector<Halide::Expr> &factors) {
    if (const Mul *m = e.as<Mul>(); m && m->type == Halide::Float(32)) {
        product_factors(m->a, factors);
        product_factors(m->b, factors);
        return;
    }
    factors.push_back(e);
}

Halide::Expr f32(double value) { return FloatImm::make(Halide::Float(32), value); }

// The constant factor of a float32 product a * c or c * a (c set, `a` returned), or undefined.
Halide::Expr constant_factor(const Halide::Expr &e, double &c) {
    const Mul *m = e.as<Mul>();
    if (!m || m->type != Halide::Float(32)) return Halide::Expr();
    if (const FloatImm *k = m->b.as<FloatImm>()) return c = k->value, m->a;
    if (const FloatImm *k = m->a.as<FloatImm>()) return c = k->value, m->b;
    return Halide::Expr();
}

// Whether `e` is v * v * v, in either association.
bool is_cube_of(const Halide::Expr &e, const Halide::Expr &v) {
    const Mul *m = e.as<Mul>();
    if (!m) return false;
    auto is_square = [&](const Halide::Expr &s) {
        const Mul *q = s.as<Mul>();
        return q && equal(q->a, v) && equal(q->b, v);
    };
    return (is_square(m->a) && equal(m->b, v)) || (equal(m->a, v) && is_square(m->b));
}

// k * (v + c * v^3) in Horner form v * (v^2 * kc + k), for a cubic argument (GeLU's
// sqrt(2/pi) * (x + 0.044715 x^3)): three roundings instead of four, and one operation and one
// dependent step fewer. Undefined unless `p` is v + c * v^3 (either order, either association).
Halide::Expr odd_cubic_scaled_by(const Halide::Expr &p, double k) {
    const Add *a = p.as<Add>();
    if (!a || a->type != Halide::Float(32)) return Halide::Expr();
    for (const auto &[linear, cubic] : {std::pair{a->a, a->b}, std::pair{a->b, a->a}}) {
        double c = 0;
        Halide::Expr cube = constant_factor(cubic, c);
        if (cube.defined() && is_cube_of(cube, linear)) return Mul::make(linear, Add::make(Mul::make(Mul::make(linear, linear), f32(k * c)), f32(k)));
    }
    return Halide::Expr();
}

// k * u with k folded into u's constant factor when u = a * c: -2 * (a * c) -> a * (-2c), the
// same bits (scaling by a power of two is exact); an odd cubic a in Horner form.
Halide::Expr scaled_by(const Halide::Expr &u, double k) {
    double c = 0;
    if (Halide::Expr a = constant_factor(u, c); a.defined()) {
        if (Halide::Expr horner = odd_cubic_scaled_by(a, k * c); horner.defined()) return horner;
        return Mul::make(a, f32(k * c));
    }
    if (Halide::Expr horner = odd_cubic_scaled_by(u, k); horner.defined()) return horner;
    return Mul::make(u, f32(k));
}

// x * (1 + tanh(z)) * c  ->  akg_div_one_plus_exp(x * 2c, -2z) = x * 2c / (1 + e^-2z): the
// multiplications by x and c and the numerator 2 fold into one division, and for GeLU (c = 1/2)
// the factor 2c disappears. Any product of float32 factors with one akg_tanh_plus_one call (or
// its float16-precision twin) and a constant.
class ScaledTanhPlusOne : public IRMutator {
    using IRMutator::visit;
    Halide::Expr visit(const Mul *op) override {
        Halide::Expr e = IRMutator::visit(op);
        if (e.type() != Halide::Float(32)) return e;
        std::vector<Halide::Expr> factors;
        product_factors(e, factors);
        const Call *tanh_plus_one = nullptr;
        double constant = 1.0;
        bool has_constant = false;
        Halide::Expr rest;
        for (const Halide::Expr &f : factors) {
            const Call *c = f.as<Call>();
            if (c && (c->name == "akg_tanh_plus_one" || c->name == "akg_tanh_plus_one_h") && c->args.size() == 1) {
                if (tanh_plus_one) return e; // two of them: leave the product alone
                tanh_plus_one = c;
            } else if (const FloatImm *k = f.as<FloatImm>()) {
                constant *= k->value;
                has_constant = true;
            } else {
                rest = rest.defined() ? Mul::make(rest, f) : f;
            }
        }
        if (!tanh_plus_one || !has_constant) return e;
        const Halide::Expr two_c = f32(2.0 * constant);
        Halide::Expr numerator = !rest.defined() ? two_c : 2.0 * constant == 1.0 ? rest : Mul::make(rest, two_c);
        const std::string name = tanh_plus_one->name == "akg_tanh_plus_one" ? "akg_div_one_plus_exp" : "akg_div_one_plus_exp_h";
        return Call::make(Halide::Float(32), name, {numerator, scaled_by(tanh_plus_one->args[0], -2.0)}, Call::PureExtern);
    }
};

// The true and false values of a select between two float constants, or false.
bool constant_select(const Halide::Expr &e, const Select *&sel, double &t, double &f) {
    sel = e.as<Select>();
    if (!sel) return false;
    const FloatImm *a = sel->true_value.as<FloatImm>(), *b = sel->false_value.as<FloatImm>();
    if (!a || !b || std::isnan(a->value) || std::isnan(b->value)) return false;
    t = a->value, f = b->value;
    return true;
}

// max(c1 ? t : f, c2 ? t : f) = (c1 || c2) ? t : f when t > f (and min when t < f): flags
// combined with max (an overflow check: isinf(x) or isnan(x)) take one select, not two and a
// NaN-propagating max.
class MaxOfFlags : public IRMutator {
    using IRMutator::visit;
    Halide::Expr flags(const Halide::Expr &a, const Halide::Expr &b, bool is_max) {
        const Select *x = nullptr, *y = nullptr;
        double tx = 0, fx = 0, ty = 0, fy = 0;
        if (!constant_select(a, x, tx, fx) || !constant_select(b, y, ty, fy) || tx != ty || fx != fy || tx == fx) return Halide::Expr();
        bool either = (tx > fx) == is_max;
        return Select::make(either ? Or::make(x->condition, y->condition) : And::make(x->condition, y->condition), x->true_value,
                            x->false_value);
    }
    Halide::Expr visit(const Max *op) override {
        Halide::Expr a = mutate(op->a), b = mutate(op->b);
        if (Halide::Expr e = flags(a, b, true); e.defined()) return e;
        return a.same_as(op->a) && b.same_as(op->b) ? Halide::Expr(op) : Max::make(a, b);
    }
    Halide::Expr visit(const Min *op) override {
        Halide::Expr a = mutate(op->a), b = mutate(op->b);
        if (Halide::Expr e = flags(a, b, false); e.defined()) return e;
        return a.same_as(op->a) && b.same_as(op->b) ? Halide::Expr(op) : Min::make(a, b);
    }
};

// x when `e` is the NaN test akg_fne(x, x), else undefined.
Halide::Expr nan_tested(const Halide::Expr &e) {
    const Call *c = e.as<Call>();
    if (!c || c->name != "akg_fne" || c->args.size() != 2 || !equal(c->args[0], c->args[1])) return Halide::Expr();
    return c->args[0];
}

// Whether `a` is NaN exactly when x is: x, |x|, or x times a finite constant other than zero
// (a Neg: x * -1; with 0, inf * 0 would be NaN).
bool nan_exactly_when(const Halide::Expr &a, const Halide::Expr &x) {
    if (equal(a, x)) return true;
    if (const Call *c = a.as<Call>(); c && c->name == "akg_abs" && c->args.size() == 1) return equal(c->args[0], x);
    if (const Mul *m = a.as<Mul>()) {
        const FloatImm *k = m->b.as<FloatImm>();
        return k && std::isfinite(k->value) && k->value != 0 && equal(m->a, x);
    }
    return false;
}

// `a OP c || isnan(x)`, with c a float constant that is not NaN and a NaN exactly when x is, is
// "not (a OP' c)" for the complementary comparison OP': both are true on NaN (an overflow
// check: |x| > FLT_MAX or x != x). One unordered compare (vcmpps NLE_UQ) instead of two
// compares and a mask or.
class UnorderedComparison : public IRMutator {
    using IRMutator::visit;
    static Halide::Expr complement(const Halide::Expr &compare, const Halide::Expr &x) {
        static const std::map<std::string, std::string> opposite{{"akg_fgt", "akg_fle"}, {"akg_fge", "akg_flt"}, {"akg_flt", "akg_fge"}, {"akg_fle", "akg_fgt"}};
        const Call *c = compare.as<Call>();
        if (!c || c->args.size() != 2 || !opposite.count(c->name)) return Halide::Expr();
        const FloatImm *k = c->args[1].as<FloatImm>();
        if (!k || std::isnan(k->value) || !nan_exactly_when(c->args[0], x)) return Halide::Expr();
        return Not::make(Call::make(c->type, opposite.at(c->name), c->args, Call::PureExtern));
    }
    Halide::Expr visit(const Or *op) override {
        Halide::Expr a = mutate(op->a), b = mutate(op->b);
        if (Halide::Expr x = nan_tested(b); x.defined())
            if (Halide::Expr e = complement(a, x); e.defined()) return e;
        if (Halide::Expr x = nan_tested(a); x.defined())
            if (Halide::Expr e = complement(b, x); e.defined()) return e;
        return a.same_as(op->a) && b.same_as(op->b) ? Halide::Expr(op) : Or::make(a, b);
    }
};

// The materialized stage a read `buf$NAME(args)` reads (through float casts), or null.
const Stage *stage_read(const std::map<std::string, const Stage *> &stages, const Halide::Expr &e, std::vector<Halide::Expr> &args) {
    const Halide::Expr read = strip_float_casts(e);
    const Call *c = read.as<Call>();
    if (!c || c->name.rfind("buf$", 0) != 0) return nullptr;
    auto it = stages.find(c->name.substr(4));
    if (it == stages.end() || it->second->shape.size() != c->args.size()) return nullptr;
    args = c->args;
    return it->second;
}

// Index variables i0.. bound to `args`, for substitute.
std::map<std::string, Halide::Expr> at_indices(const std::vector<Halide::Expr> &args) {
    std::map<std::string, Halide::Expr> at;
    for (size_t d = 0; d < args.size(); ++d) at[index_var(static_cast<int>(d))] = args[d];
    return at;
}

// A stage's value with its index variables i0.. replaced by `args`.
Halide::Expr value_at(const Stage &s, const std::vector<Halide::Expr> &args) { return substitute(at_indices(args), s.value); }

// The graph's materialized max reductions, by buffer.
using Maxima = std::map<std::string, const Stage *>;

// exp(x - m) where m is read from a max reduction whose operand, at some element of its reduced
// domain, is x itself: x <= m, so the exponent is at most 0 (plus the rounding of m when it is
// stored as float16, or of x when the reduction takes x rounded to float16: half a float16 ulp,
// at most 16), and e^(x - m) cannot overflow. Such an exp (every softmax's) becomes
// akg_exp_no_overflow / akg_exp_h_no_overflow: the same bits without the overflow clamp. "x itself" is structural: the reduction's operand, its indices taken at
// the read and its reduced variables bound by matching (Halide's expr_match), equals x, and each
// reduced variable's value lies in its extent over the consumer's whole domain.
class ExpBelowItsMaximum : public IRMutator {
public:
    ExpBelowItsMaximum(const Maxima &maxima, const Stage &consumer) : maxima_(maxima) { push_stage_bounds(consumer, consumer_bounds_); }

private:
    using IRMutator::visit;
    const Maxima &maxima_;
    Scope<Interval> consumer_bounds_;

    bool at_most_its_maximum(const Halide::Expr &x, const Halide::Expr &read) const {
        // The max reduction `read` reads (through float casts).
        std::vector<Halide::Expr> read_args;
        const Stage *max_stage = stage_read(maxima_, read, read_args);
        if (!max_stage) return false;
        const Stage &m = *max_stage;
        // The pattern: the reduction's operand with its reduced variables renamed and its
        // indices taken at the read. A maximum of values rounded to float16 (a float16 Max op)
        // bounds them within half a float16 ulp too: at most 16 below 65504, and larger values
        // round to inf.
        const std::string reduced_prefix = "max$";
        std::map<std::string, Halide::Expr> renamed;
        for (size_t k = 0; k < m.reduce_extents.size(); ++k)
            renamed[reduce_var(static_cast<int>(k))] = Variable::make(Halide::Int(64), reduced_prefix + reduce_var(static_cast<int>(k)));
        const std::map<std::string, Halide::Expr> at_read = at_indices(read_args);
        const Halide::Expr rounded = float16_rounded_operand(m.value);
        const Halide::Expr pattern = substitute(at_read, substitute(renamed, rounded.defined() ? rounded : m.value));
        // Every variable of the pattern binds: the renamed reduced variables to their values in
        // x, the consumer's own variables (from the read's indices) to themselves.
        std::map<std::string, Halide::Expr> bound;
        if (!expr_match(pattern, x, bound)) return false;
        for (const auto &[name, value] : bound) {
            if (name.rfind(reduced_prefix, 0) != 0) {
                if (!equal(value, Variable::make(value.type(), name))) return false;
                continue;
            }
            const int64_t extent = m.reduce_extents.at(static_cast<size_t>(std::stoi(name.substr(reduced_prefix.size() + 1))));
            const Interval range = bounds_of_expr_in_scope(value, consumer_bounds_);
            if (!range.is_bounded() || !can_prove(range.min >= Halide::Expr(int64_t(0))) || !can_prove(range.max <= Halide::Expr(extent - 1)))
                return false;
        }
        return true;
    }

    Halide::Expr visit(const Call *op) override {
        Halide::Expr e = IRMutator::visit(op);
        const Call *c = e.as<Call>();
        if (!c || (c->name != "akg_exp" && c->name != "akg_exp_h") || c->args.size() != 1) return e;
        const Sub *d = c->args[0].as<Sub>();
        if (!d || !at_most_its_maximum(d->a, d->b)) return e;
        return Call::make(c->type, c->name + "_no_overflow", c->args, Call::PureExtern);
    }
};

// log(e / s) and log(max(e / s, c)) of a softmax, where e = exp(x - m) is read from a float32
// stage, m is a max reduction of x and s is the sum of the same exponentials over the same
// reduced elements:
//   log(e / s)          ->  (x - m) - log(s)
//   log(max(e / s, c))  ->  max((x - m) - log(s), log(c))      (c > 0: log is increasing)
// (a softmax cross-entropy's log-probabilities). The exponential, the division and the
// logarithm of every element become one subtraction of a value per row: 1.8x faster at 1
// thread on softmax_cross_entropy_f32 (0.025 -> 0.014 ms), and closer to the double-precision
// reference (no rounding of e and of e / s before the logarithm, whose result near 0 the
// rounding of e / s near 1 would dominate). Exact in the special cases too, because s >= 1:
// the sum includes the row's maximal element, whose exponent is 0 (checked structurally: the
// sum reads the exponential stage at the elements whose x the max reduction takes, over the
// same reduced extents). NaN x or s gives NaN either way; x = -inf gives log(c) (or -inf).
class LogOfSoftmax : public IRMutator {
public:
    explicit LogOfSoftmax(const std::map<std::string, const Stage *> &stages) : stages_(stages) {}

private:
    using IRMutator::visit;
    const std::map<std::string, const Stage *> &stages_;

    // x - m of the exponential `e` reads, when the pattern holds (see the class comment).
    Halide::Expr exponent_of_normalized(const Halide::Expr &e, const Halide::Expr &sum_read) const {
        std::vector<Halide::Expr> e_args, s_args, t_args, m_args;
        const Stage *t = stage_read(stages_, e, e_args);
        const Stage *u = stage_read(stages_, sum_read, s_args);
        if (!t || !u || t->kind != StageKind::Compute || t->dtype != DType::Float32 || u->kind != StageKind::Reduce ||
            u->reduce_kind != ReduceKind::Sum || u->dtype != DType::Float32)
            return Halide::Expr();
        const Halide::Expr exp_value = strip_float_casts(t->value);
        const Call *exp = exp_value.as<Call>();
        if (!exp || exp->name != "akg_exp_no_overflow" || exp->args.size() != 1) return Halide::Expr();
        const Sub *d = exp->args[0].as<Sub>();
        const Stage *m = d ? stage_read(stages_, d->b, m_args) : nullptr;
        if (!m || m->kind != StageKind::Reduce || m->reduce_kind != ReduceKind::Max || m->reduce_extents != u->reduce_extents)
            return Halide::Expr();
        // The sum's operand is the exponential stage read at t_args (in the sum's index and
        // reduced variables); there, x must be the max reduction's operand at the row the
        // exponent subtracts, with the same reduced variables.
        if (stage_read(stages_, u->value, t_args) != t) return Halide::Expr();
        const std::map<std::string, Halide::Expr> at_sum = at_indices(t_args);
        std::vector<Halide::Expr> row;
        for (const Halide::Expr &a : m_args) row.push_back(substitute(at_sum, a));
        if (!equal(simplify(substitute(at_sum, d->a)), simplify(value_at(*m, row)))) return Halide::Expr();
        const Halide::Expr exp_at_e = strip_float_casts(value_at(*t, e_args));
        const Call *c = exp_at_e.as<Call>();
        return c ? c->args[0] : Halide::Expr();
    }

    Halide::Expr visit(const Call *op) override {
        Halide::Expr e = IRMutator::visit(op);
        const Call *log = e.as<Call>();
        if (!log || log->name != "akg_log" || log->args.size() != 1 || log->type != Halide::Float(32)) return e;
        Halide::Expr arg = strip_float_casts(log->args[0]);
        double floor = 0.0;
        bool has_floor = false;
        if (const Max *mx = arg.as<Max>()) {
            const FloatImm *c = mx->b.as<FloatImm>();
            if (!c || !(c->value > 0.0) || !std::isfinite(c->value)) return e;
            floor = c->value;
            has_floor = true;
            arg = strip_float_casts(mx->a);
        }
        const Div *ratio = arg.as<Div>();
        if (!ratio || ratio->type != Halide::Float(32)) return e;
        const Halide::Expr exponent = exponent_of_normalized(ratio->a, ratio->b);
        if (!exponent.defined() || exponent.type() != Halide::Float(32)) return e;
        Halide::Expr logp = Sub::make(exponent, Call::make(Halide::Float(32), "akg_log", {ratio->b}, Call::PureExtern));
        return has_floor ? Max::make(logp, f32(std::log(static_cast<double>(static_cast<float>(floor))))) : logp;
    }
};

} // namespace

bool is_nan_free_flag(const Halide::Expr &e) {
    const Select *sel = nullptr;
    double t = 0, f = 0;
    return constant_select(e, sel, t, f);
}

void rewrite_math_identities(TensorGraph &graph) {
    Maxima maxima;
    for (const auto &s : graph.stages)
        if (s.materialized && s.kind == StageKind::Reduce && s.reduce_kind == ReduceKind::Max) maxima[s.buffer] = &s;
    for (auto &s : graph.stages) {
        if (!s.materialized || s.kind == StageKind::Input) continue;
        s.value = UnorderedComparison().mutate(MaxOfFlags().mutate(ScaledTanhPlusOne().mutate(TanhPlusOne().mutate(s.value))));
        s.value = ExpBelowItsMaximum(maxima, s).mutate(s.value);
    }
    std::map<std::string, const Stage *> by_buffer;
    for (const auto &s : graph.stages)
        if (s.materialized && s.kind != StageKind::Input) by_buffer[s.buffer] = &s;
    for (auto &s : graph.stages)
        if (s.materialized && s.kind != StageKind::Input) s.value = LogOfSoftmax(by_buffer).mutate(s.value);
}

} // namespace akg
