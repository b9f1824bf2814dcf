// isl's AST generator over the transformed schedule tree. Shapes are fixed, so the context
// is universal; iterators are named c0, c1, ... by schedule depth, which memory promotion
// relies on for its offsets.
#include "poly/poly_model.h"

#include <isl/ast_build.h>
#include <isl/options.h>

namespace akg {

isl_ast_node *build_ast(const PolyModel &m) {
    isl_ctx *ctx = m.ctx.get();
    isl_options_set_ast_build_atomic_upper_bound(ctx, 1);
    isl_options_set_ast_build_detect_min_max(ctx, 1);
    isl_ast_build *build = isl_ast_build_alloc(ctx);
    isl_ast_node *tree = isl_ast_build_node_from_schedule(build, isl_schedule_copy(m.schedule.get()));
    isl_ast_build_free(build);
    if (!tree) throw InternalError("isl's AST generator failed");
    return tree;
}

} // namespace akg
