#include "passes/simplify_stages.h"

namespace akg {

using namespace Halide::Internal;

void simplify_stages(TensorGraph &graph) {
    for (auto &s : graph.stages) {
        if (!s.materialized || s.kind == StageKind::Input) continue;
        Scope<Interval> bounds;
        for (size_t d = 0; d < s.shape.size(); ++d)
            bounds.push(index_var(static_cast<int>(d)), Interval(Halide::Expr(int64_t(0)), Halide::Expr(s.shape[d] - 1)));
        for (size_t d = 0; d < s.reduce_extents.size(); ++d)
            bounds.push(reduce_var(static_cast<int>(d)),
                        Interval(Halide::Expr(int64_t(0)), Halide::Expr(s.reduce_extents[d] - 1)));
        s.value = simplify(s.value, true, bounds);
    }
}

} // namespace akg
