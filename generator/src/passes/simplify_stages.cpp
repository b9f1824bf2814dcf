#include "passes/simplify_stages.h"

namespace akg {

using namespace Halide::Internal;

namespace {

// A float constant converted to another float type, folded here (float16: rounded to nearest
// even); undefined for anything else.
Halide::Expr converted_constant(Halide::Type to, const Halide::Expr &c) {
    const FloatImm *f = c.as<FloatImm>();
    if (!f || !to.is_float()) return Halide::Expr();
    if (to.bits() == 16) return FloatImm::make(to, static_cast<double>(Halide::float16_t(f->value)));
    if (to.bits() == 32) return FloatImm::make(to, static_cast<double>(static_cast<float>(f->value)));
    return FloatImm::make(to, f->value);
}

// A conversion of a select between two float constants is a select between the converted
// constants: a ReLU or dropout mask `Cast(float16, x > 0 ? 1 : 0)` would otherwise round 1 and
// 0 to float16 for every element (Halide's simplifier leaves the cast outside). The constants
// are folded here rather than by running the simplifier again, which would then rewrite
// `x * (c ? 1 : 0)` as `c ? x : 0`, wrong for an infinite or NaN x.
class CastIntoConstantSelect : public IRMutator {
    using IRMutator::visit;
    Halide::Expr visit(const Cast *op) override {
        Halide::Expr value = mutate(op->value);
        if (const Select *sel = value.as<Select>()) {
            Halide::Expr a = converted_constant(op->type, sel->true_value), b = converted_constant(op->type, sel->false_value);
            if (a.defined() && b.defined()) return Select::make(sel->condition, a, b);
        }
        return value.same_as(op->value) ? Halide::Expr(op) : Cast::make(op->type, value);
    }
};

// Halide's simplifier takes floats as real numbers: it folds x * 0 and 0 / x to 0, wrong for an
// infinite or NaN x (and 0 / 0). Float zeros that multiply or are divided are hidden behind a
// variable while it runs, then put back.
const char *const kFloatZero = "akg$float_zero";

class HideFloatZeros : public IRMutator {
    using IRMutator::visit;
    static Halide::Expr hidden(const Halide::Expr &e) {
        return e.type().is_float() && is_const_zero(e) ? Variable::make(e.type(), kFloatZero) : e;
    }
    Halide::Expr visit(const Mul *op) override { return Mul::make(hidden(mutate(op->a)), hidden(mutate(op->b))); }
    Halide::Expr visit(const Div *op) override { return Div::make(hidden(mutate(op->a)), mutate(op->b)); }
};

class RestoreFloatZeros : public IRMutator {
    using IRMutator::visit;
    Halide::Expr visit(const Variable *op) override { return op->name == kFloatZero ? make_zero(op->type) : Halide::Expr(op); }
};

} // namespace

void simplify_stages(TensorGraph &graph) {
    for (auto &s : graph.stages) {
        if (!s.materialized || s.kind == StageKind::Input) continue;
        Scope<Interval> bounds;
        push_stage_bounds(s, bounds);
        Halide::Expr value = simplify(HideFloatZeros().mutate(s.value), true, bounds);
        s.value = CastIntoConstantSelect().mutate(RestoreFloatZeros().mutate(value));
    }
}

} // namespace akg
