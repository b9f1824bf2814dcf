#include "passes/simplify_stages.h"

namespace akg {

using namespace Halide::Internal;

namespace {

// A conversion of a select between two constants is a select between the converted constants
// (the casts then fold): a ReLU or dropout mask `Cast(float16, x > 0 ? 1 : 0)` would otherwise
// round 1 and 0 to float16 for every element. Halide's simplifier leaves the cast outside.
class CastIntoConstantSelect : public IRMutator {
    using IRMutator::visit;
    Halide::Expr visit(const Cast *op) override {
        Halide::Expr value = mutate(op->value);
        if (const Select *sel = value.as<Select>())
            if (is_const(sel->true_value) && is_const(sel->false_value))
                return Select::make(sel->condition, Cast::make(op->type, sel->true_value), Cast::make(op->type, sel->false_value));
        return value.same_as(op->value) ? Halide::Expr(op) : Cast::make(op->type, value);
    }
};

} // namespace

void simplify_stages(TensorGraph &graph) {
    for (auto &s : graph.stages) {
        if (!s.materialized || s.kind == StageKind::Input) continue;
        Scope<Interval> bounds;
        for (size_t d = 0; d < s.shape.size(); ++d)
            bounds.push(index_var(static_cast<int>(d)), Interval(Halide::Expr(int64_t(0)), Halide::Expr(s.shape[d] - 1)));
        for (size_t d = 0; d < s.reduce_extents.size(); ++d)
            bounds.push(reduce_var(static_cast<int>(d)),
                        Interval(Halide::Expr(int64_t(0)), Halide::Expr(s.reduce_extents[d] - 1)));
        s.value = simplify(CastIntoConstantSelect().mutate(simplify(s.value, true, bounds)), true, bounds);
    }
}

} // namespace akg
