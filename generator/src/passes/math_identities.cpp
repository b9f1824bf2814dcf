#include "passes/math_identities.h"

namespace akg {

using namespace Halide::Internal;

namespace {

bool is_float_constant(const Halide::Expr &e, double value) {
    const FloatImm *f = e.as<FloatImm>();
    return f && f->type == Halide::Float(32) && f->value == value;
}

// The argument of a float32 akg_tanh call, or undefined.
Halide::Expr tanh_argument(const Halide::Expr &e) {
    const Call *c = e.as<Call>();
    if (!c || c->name != "akg_tanh" || c->type != Halide::Float(32) || c->args.size() != 1) return Halide::Expr();
    return c->args[0];
}

Halide::Expr tanh_plus_one(const Halide::Expr &x) { return Call::make(Halide::Float(32), "akg_tanh_plus_one", {x}, Call::PureExtern); }

class TanhPlusOne : public IRMutator {
    using IRMutator::visit;
    Halide::Expr visit(const Add *op) override {
        Halide::Expr a = mutate(op->a), b = mutate(op->b);
        if (Halide::Expr x = tanh_argument(a); x.defined() && is_float_constant(b, 1.0)) return tanh_plus_one(x);
        if (Halide::Expr x = tanh_argument(b); x.defined() && is_float_constant(a, 1.0)) return tanh_plus_one(x);
        return a.same_as(op->a) && b.same_as(op->b) ? Halide::Expr(op) : Add::make(a, b);
    }
    Halide::Expr visit(const Sub *op) override {
        Halide::Expr a = mutate(op->a), b = mutate(op->b);
        if (Halide::Expr x = tanh_argument(b); x.defined() && is_float_constant(a, 1.0)) return tanh_plus_one(-x);
        return a.same_as(op->a) && b.same_as(op->b) ? Halide::Expr(op) : Sub::make(a, b);
    }
};

} // namespace

void rewrite_math_identities(TensorGraph &graph) {
    for (auto &s : graph.stages) {
        if (!s.materialized || s.kind == StageKind::Input) continue;
        s.value = TanhPlusOne().mutate(s.value);
    }
}

} // namespace akg
