// Per-pass tests of the schedule annotations (poly/schedule_annotation.h): a kernel is taken
// through the pipeline's passes up to the one under test, that pass runs alone, and the test
// reads the typed annotations of the marks it left in the schedule tree, then in isl's AST.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <isl/ctx.h>
#include <isl/options.h>
#include <isl/printer.h>

#include "codegen/emit_cpp.h"
#include "frontend/composite_kernel.h"
#include "lower/lower_to_halide.h"
#include "passes/compare_rounded_float16.h"
#include "passes/fold_dimensions.h"
#include "passes/fold_reduction_dimensions.h"
#include "passes/materialize.h"
#include "passes/math_identities.h"
#include "passes/nan_dominated_extrema.h"
#include "passes/simplify_stages.h"
#include "passes/view_reshaped_inputs.h"
#include "poly/fuse_sibling_reductions.h"
#include "poly/group_short_rows.h"
#include "poly/interleave_channel_blocks.h"
#include "poly/join_reduction_inputs.h"
#include "poly/order_band_members.h"
#include "poly/pair_row_passes.h"
#include "poly/plan_reductions.h"
#include "poly/prefetch_next_rows.h"
#include "poly/prefetch_streams.h"
#include "poly/schedule_annotation.h"
#include "poly/schedule_transforms.h"
#include "poly/sink_column_loops.h"
#include "poly/stage_float16.h"
#include "poly/stream_outputs.h"
#include "poly/tile_transposes.h"
#include "poly/whole_line_runs.h"

namespace {

using akg::ScheduleAnnotation;
namespace mark = akg::mark;

// The isl context as run_pipeline sets it up, so that isl's scheduler makes the same trees.
struct IslContext {
    isl_ctx *ctx = isl_ctx_alloc();
    IslContext() {
        const char *argv[] = {"akg-gen", "--no-schedule-parametric"};
        isl_ctx_parse_options(ctx, 2, const_cast<char **>(argv), ISL_ARG_ALL);
        isl_options_set_on_error(ctx, ISL_ON_ERROR_CONTINUE);
    }
    ~IslContext() { isl_ctx_free(ctx); }
};

// One kernel taken through the passes of driver/pipeline.cpp (same order, same names), one
// step at a time.
class PassByPass {
public:
    explicit PassByPass(const std::string &path, const akg::ScheduleOptions &options = {})
        : kernel_(akg::load_composite(std::string(AKG_SOURCE_ROOT) + "/" + path)), options_(options),
          graph_(normalized(kernel_, options.fuse)), model_(akg::build_poly_model(isl_.ctx, graph_)) {
        akg::compute_dependences(model_);
        akg::compute_schedule(model_, options_);
    }
    PassByPass(const PassByPass &) = delete;
    PassByPass &operator=(const PassByPass &) = delete;

    // Runs the passes after the last one run, up to `pass` included.
    void run_through(const std::string &pass) {
        const auto &passes = schedule_passes();
        while (next_ < passes.size()) {
            passes[next_].second(model_, options_);
            if (passes[next_++].first == pass) return;
        }
        ADD_FAILURE() << "no pass " << pass << " after the ones already run";
    }

    akg::PolyModel &model() { return model_; }

    // The annotations of the schedule tree's marks, top-down; a mark without one fails the test.
    std::vector<ScheduleAnnotation> tree_annotations() const {
        std::vector<ScheduleAnnotation> found;
        isl_schedule_node *root = isl_schedule_get_root(model_.schedule.get());
        isl_schedule_node_foreach_descendant_top_down(
            root,
            [](isl_schedule_node *node, void *user) -> isl_bool {
                if (isl_schedule_node_get_type(node) != isl_schedule_node_mark) return isl_bool_true;
                isl_id *id = isl_schedule_node_mark_get_id(node);
                const ScheduleAnnotation *annotation = akg::annotation_of(id);
                EXPECT_NE(annotation, nullptr) << isl_id_get_name(id);
                if (annotation) static_cast<std::vector<ScheduleAnnotation> *>(user)->push_back(*annotation);
                isl_id_free(id);
                return isl_bool_true;
            },
            &found);
        isl_schedule_node_free(root);
        return found;
    }

    // The schedule tree as --dump-after prints it.
    std::string tree_text() const {
        isl_printer *p = isl_printer_to_str(isl_.ctx);
        p = isl_printer_set_yaml_style(p, ISL_YAML_STYLE_BLOCK);
        p = isl_printer_print_schedule(p, model_.schedule.get());
        char *s = isl_printer_get_str(p);
        std::string text = s ? s : "";
        free(s);
        isl_printer_free(p);
        return text;
    }

    // The annotations of the marks of isl's AST of the schedule, top-down: the same isl_ids as
    // the tree's (a mark may appear more than once, e.g. in the full and the partial vector tile).
    std::vector<ScheduleAnnotation> ast_annotations() const {
        std::vector<ScheduleAnnotation> found;
        isl_ast_node *ast = akg::build_ast(model_);
        isl_ast_node_foreach_descendant_top_down(
            ast,
            [](isl_ast_node *node, void *user) -> isl_bool {
                if (isl_ast_node_get_type(node) != isl_ast_node_mark) return isl_bool_true;
                std::optional<ScheduleAnnotation> annotation = akg::mark_annotation(node);
                EXPECT_TRUE(annotation.has_value());
                if (annotation) static_cast<std::vector<ScheduleAnnotation> *>(user)->push_back(*annotation);
                return isl_bool_true;
            },
            &found);
        isl_ast_node_free(ast);
        return found;
    }

private:
    // The graph after the normalization passes, as the poly model sees it.
    static akg::TensorGraph normalized(const akg::CompositeKernel &kernel, bool fuse) {
        akg::TensorGraph graph = akg::lower_to_halide(kernel);
        akg::materialize_and_inline(graph, fuse);
        akg::view_reshaped_inputs(graph);
        akg::simplify_stages(graph);
        akg::rewrite_math_identities(graph);
        akg::compare_rounded_float16(graph);
        akg::fold_dimensions(graph);
        akg::fold_reduction_dimensions(graph);
        akg::mark_nan_dominated_extrema(graph);
        return graph;
    }

    using Pass = std::function<void(akg::PolyModel &, const akg::ScheduleOptions &)>;
    static const std::vector<std::pair<std::string, Pass>> &schedule_passes() {
        using akg::PolyModel;
        using akg::ScheduleOptions;
        static const std::vector<std::pair<std::string, Pass>> passes = {
            {"fuse-reductions", [](PolyModel &m, const ScheduleOptions &) { akg::fuse_sibling_reductions(m); }},
            {"join-reductions", [](PolyModel &m, const ScheduleOptions &) { akg::join_reduction_inputs(m); }},
            {"order-loops", [](PolyModel &m, const ScheduleOptions &o) { akg::order_band_members(m, o); }},
            {"tile-transposes", [](PolyModel &m, const ScheduleOptions &o) { akg::tile_transposes(m, o); }},
            {"parallelize", [](PolyModel &m, const ScheduleOptions &o) { akg::mark_parallel_loops(m, o); }},
            {"split-bands", [](PolyModel &m, const ScheduleOptions &) { akg::split_bands_by_dimensionality(m); }},
            {"sink-columns", [](PolyModel &m, const ScheduleOptions &o) { akg::sink_column_loops(m, o); }},
            {"interleave-channels", [](PolyModel &m, const ScheduleOptions &o) { akg::interleave_channel_blocks(m, o); }},
            {"pair-rows", [](PolyModel &m, const ScheduleOptions &o) { akg::pair_row_passes(m, o); }},
            {"group-rows", [](PolyModel &m, const ScheduleOptions &) { akg::group_short_rows(m); }},
            {"stream-outputs", [](PolyModel &m, const ScheduleOptions &o) { akg::stream_large_outputs(m, o); }},
            {"line-runs", [](PolyModel &m, const ScheduleOptions &o) { akg::give_iterations_whole_lines(m, o); }},
            {"vectorize", [](PolyModel &m, const ScheduleOptions &o) { akg::vectorize_inner_loops(m, o); }},
            {"promote", [](PolyModel &m, const ScheduleOptions &o) { akg::promote_to_local_buffers(m, o); }},
            {"stage-float16", [](PolyModel &m, const ScheduleOptions &o) { akg::stage_float16_buffers(m, o); }},
            {"prefetch-rows", [](PolyModel &m, const ScheduleOptions &o) { akg::prefetch_next_rows(m, o); }},
            {"prefetch-streams", [](PolyModel &m, const ScheduleOptions &o) { akg::prefetch_input_streams(m, o); }},
            {"plan-reductions", [](PolyModel &m, const ScheduleOptions &o) { akg::plan_reductions(m, o); }},
        };
        return passes;
    }

    IslContext isl_; // outlives the model's isl objects
    akg::CompositeKernel kernel_;
    akg::ScheduleOptions options_;
    akg::TensorGraph graph_;
    akg::PolyModel model_;
    size_t next_ = 0;
};

template <typename Kind> std::vector<Kind> of_kind(const std::vector<ScheduleAnnotation> &annotations) {
    std::vector<Kind> found;
    for (const auto &a : annotations)
        if (const Kind *k = std::get_if<Kind>(&a)) found.push_back(*k);
    return found;
}

std::set<std::string> texts(const std::vector<ScheduleAnnotation> &annotations) {
    std::set<std::string> found;
    for (const auto &a : annotations) found.insert(akg::annotation_text(a));
    return found;
}

size_t count(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

TEST(ScheduleAnnotations, IdsCarryTheirAnnotationAndPrintItsText) {
    IslContext isl;
    isl_id *id = akg::make_mark_id(isl.ctx, mark::Parallel{2, size_t{1}});
    EXPECT_STREQ(isl_id_get_name(id), "parallel(loops=2, plans=1)");
    const ScheduleAnnotation *annotation = akg::annotation_of(id);
    ASSERT_NE(annotation, nullptr);
    ASSERT_TRUE(std::holds_alternative<mark::Parallel>(*annotation));
    EXPECT_EQ(std::get<mark::Parallel>(*annotation).loops, 2);
    EXPECT_EQ(std::get<mark::Parallel>(*annotation).body_plans, size_t{1});
    isl_id_free(id);

    EXPECT_EQ(akg::annotation_text(mark::Parallel{1, std::nullopt}), "parallel(loops=1)");
    EXPECT_EQ(akg::annotation_text(mark::RowChunks{16}), "row_chunks(chunks=16)");
    EXPECT_EQ(akg::annotation_text(mark::Simd{}), "simd");
    EXPECT_EQ(akg::annotation_text(mark::Reduction{}), "reduction");
    EXPECT_EQ(akg::annotation_text(mark::TransposeTile{false}), "transpose_tile");
    EXPECT_EQ(akg::annotation_text(mark::TransposeTile{true}), "transpose_tile(staged)");
    EXPECT_EQ(akg::annotation_text(mark::ColumnRowTile{}), "column_row_tile");

    // An id someone else made, even one named like a mark, carries no annotation.
    isl_id *foreign = isl_id_alloc(isl.ctx, "simd", nullptr);
    EXPECT_EQ(akg::annotation_of(foreign), nullptr);
    isl_id_free(foreign);
    int data = 0;
    foreign = isl_id_alloc(isl.ctx, "simd", &data);
    EXPECT_EQ(akg::annotation_of(foreign), nullptr);
    isl_id_free(foreign);
}

// LayerNorm: parallelize marks the loop over the rows; vectorize marks its vector loops and the
// two innermost loops that carry the mean's and the variance's sums.
TEST(ScheduleAnnotations, ParallelizeThenVectorizeMarkTheRowKernel) {
    PassByPass k("patterns/layernorm_fwd_f32.json");
    k.run_through("tile-transposes");
    EXPECT_TRUE(k.tree_annotations().empty());

    k.run_through("parallelize");
    std::vector<ScheduleAnnotation> marks = k.tree_annotations();
    ASSERT_EQ(marks.size(), 1u);
    auto parallel = of_kind<mark::Parallel>(marks);
    ASSERT_EQ(parallel.size(), 1u);
    EXPECT_EQ(parallel[0].loops, 1);
    EXPECT_FALSE(parallel[0].body_plans);
    EXPECT_EQ(count(k.tree_text(), "mark: \"parallel(loops=1)\""), 1u) << k.tree_text();

    k.run_through("line-runs");
    k.run_through("vectorize");
    marks = k.tree_annotations();
    EXPECT_EQ(of_kind<mark::Parallel>(marks).size(), 1u);
    EXPECT_EQ(of_kind<mark::Reduction>(marks).size(), 2u);
    EXPECT_GE(of_kind<mark::Simd>(marks).size(), 2u);
    EXPECT_EQ(marks.size(), of_kind<mark::Parallel>(marks).size() + of_kind<mark::Reduction>(marks).size() + of_kind<mark::Simd>(marks).size());
    std::string tree = k.tree_text();
    EXPECT_EQ(count(tree, "mark: \"reduction\""), 2u) << tree;
    EXPECT_EQ(count(tree, "mark: \"simd\""), of_kind<mark::Simd>(marks).size()) << tree;

    k.run_through("prefetch-streams");
    EXPECT_EQ(texts(k.ast_annotations()), texts(k.tree_annotations()));
}

// A softmax gradient over float16 rows of 128: parallelize collapses the three loops around the
// rows; stage-float16 gives the mark the index of its stagings, which prefetch-rows keeps.
TEST(ScheduleAnnotations, StageFloat16GivesTheParallelMarkItsBodyPlans) {
    PassByPass k("tests/difftest/regressions/staged_softmax_grad_rows_16x12x16x128.json");
    k.run_through("promote");
    auto parallel = of_kind<mark::Parallel>(k.tree_annotations());
    ASSERT_EQ(parallel.size(), 1u);
    EXPECT_EQ(parallel[0].loops, 3);
    EXPECT_FALSE(parallel[0].body_plans);

    k.run_through("stage-float16");
    parallel = of_kind<mark::Parallel>(k.tree_annotations());
    ASSERT_EQ(parallel.size(), 1u);
    EXPECT_EQ(parallel[0].loops, 3);
    EXPECT_EQ(parallel[0].body_plans, size_t{0});
    ASSERT_EQ(k.model().float16_stagings.size(), 1u);
    EXPECT_EQ(k.model().float16_stagings[0].size(), 4u); // three inputs and the output
    EXPECT_EQ(count(k.tree_text(), "mark: \"parallel(loops=3, plans=0)\""), 1u) << k.tree_text();

    k.run_through("prefetch-streams");
    EXPECT_EQ(of_kind<mark::Parallel>(k.tree_annotations())[0].body_plans, size_t{0});
    EXPECT_EQ(texts(k.ast_annotations()), texts(k.tree_annotations()));
}

// A log-softmax over rows of 21128 floats: nothing to stage, but prefetch-rows gives the mark
// body plans for the next row's prefetch.
TEST(ScheduleAnnotations, PrefetchRowsGivesTheParallelMarkItsBodyPlans) {
    PassByPass k("patterns/mlm_bias_log_softmax_f32.json");
    k.run_through("stage-float16");
    auto parallel = of_kind<mark::Parallel>(k.tree_annotations());
    ASSERT_EQ(parallel.size(), 1u);
    EXPECT_FALSE(parallel[0].body_plans);

    k.run_through("prefetch-rows");
    parallel = of_kind<mark::Parallel>(k.tree_annotations());
    ASSERT_EQ(parallel.size(), 1u);
    EXPECT_EQ(parallel[0].loops, 1);
    EXPECT_EQ(parallel[0].body_plans, size_t{0});
    ASSERT_EQ(k.model().row_prefetches.size(), 1u);
    EXPECT_EQ(k.model().row_prefetches[0].size(), 1u);
    EXPECT_TRUE(k.model().float16_stagings[0].empty());
}

// NHWC BatchNorm statistics: sink-columns replaces the parallel loop over the channels by a
// loop over the rows run in chunks.
TEST(ScheduleAnnotations, SinkColumnsMarksRowChunks) {
    PassByPass k("patterns/bn_train_stats_nhwc_f16.json");
    k.run_through("split-bands");
    EXPECT_EQ(of_kind<mark::Parallel>(k.tree_annotations()).size(), 1u);

    k.run_through("sink-columns");
    std::vector<ScheduleAnnotation> marks = k.tree_annotations();
    EXPECT_TRUE(of_kind<mark::Parallel>(marks).empty());
    auto chunks = of_kind<mark::RowChunks>(marks);
    ASSERT_EQ(chunks.size(), 1u);
    EXPECT_EQ(chunks[0].chunks, akg::ScheduleOptions{}.row_chunks);
    EXPECT_EQ(count(k.tree_text(), "mark: \"row_chunks(chunks=16)\""), 1u) << k.tree_text();

    k.run_through("prefetch-streams");
    EXPECT_EQ(texts(k.ast_annotations()), texts(k.tree_annotations()));
}

// Column sums of an input the caches do not hold: tiles of rows walk super-blocks of columns,
// the rows of a tile marked for the emitter's float partials.
TEST(ScheduleAnnotations, SinkColumnsMarksTheRowsOfAColumnTile) {
    PassByPass k("tests/difftest/regressions/column_sums_in_row_tiles_1100x1031.json");
    k.run_through("sink-columns");
    std::vector<ScheduleAnnotation> marks = k.tree_annotations();
    EXPECT_EQ(of_kind<mark::Parallel>(marks).size(), 1u);
    EXPECT_EQ(of_kind<mark::ColumnRowTile>(marks).size(), 1u);
    EXPECT_EQ(count(k.tree_text(), "mark: \"column_row_tile\""), 1u) << k.tree_text();
}

// A sum over the middle dimension under two parallel loops: sink-columns sinks the inner one
// (the columns) and the mark counts one loop fewer.
TEST(ScheduleAnnotations, SinkColumnsTakesALoopOffTheParallelMark) {
    PassByPass k("tests/difftest/regressions/middle_axis_sum_whole_columns_100x19x80.json");
    k.run_through("split-bands");
    auto parallel = of_kind<mark::Parallel>(k.tree_annotations());
    ASSERT_EQ(parallel.size(), 1u);
    EXPECT_EQ(parallel[0].loops, 2);

    k.run_through("sink-columns");
    parallel = of_kind<mark::Parallel>(k.tree_annotations());
    ASSERT_EQ(parallel.size(), 1u);
    EXPECT_EQ(parallel[0].loops, 1);
}

// tile-transposes marks its tiles, staged or not; parallelize then runs the tile loops in
// parallel and vectorize leaves the tiles alone.
TEST(ScheduleAnnotations, TileTransposesMarksItsTiles) {
    PassByPass plain("tests/difftest/regressions/transpose_tiles_f16_nhwc_to_nchw_2x3x5x41.json");
    plain.run_through("tile-transposes");
    std::vector<ScheduleAnnotation> marks = plain.tree_annotations();
    ASSERT_EQ(marks.size(), 1u);
    auto tiles = of_kind<mark::TransposeTile>(marks);
    ASSERT_EQ(tiles.size(), 1u);
    EXPECT_FALSE(tiles[0].staged);
    EXPECT_EQ(count(plain.tree_text(), "mark: \"transpose_tile\""), 1u) << plain.tree_text();
    plain.run_through("vectorize");
    EXPECT_EQ(texts(plain.tree_annotations()), (std::set<std::string>{"parallel(loops=1)", "transpose_tile"}));

    PassByPass staged("tests/difftest/regressions/transposed_bias_add_nchw_to_nhwc_2x20x7x9.json");
    staged.run_through("tile-transposes");
    marks = staged.tree_annotations();
    tiles = of_kind<mark::TransposeTile>(marks);
    ASSERT_EQ(tiles.size(), 1u);
    EXPECT_TRUE(tiles[0].staged);
    EXPECT_EQ(of_kind<mark::Simd>(marks).size(), 1u); // the tile's rows
    EXPECT_EQ(count(staged.tree_text(), "mark: \"transpose_tile(staged)\""), 1u) << staged.tree_text();
    staged.run_through("vectorize");
    EXPECT_EQ(of_kind<mark::Simd>(staged.tree_annotations()).size(), 1u);
    staged.run_through("prefetch-streams");
    EXPECT_EQ(texts(staged.ast_annotations()), texts(staged.tree_annotations()));
}

// plan-reductions (poly/plan_reductions.h): the schedule tree goes through unchanged; the pass
// leaves a ReductionPlan for every update statement.
std::vector<std::pair<const akg::PolyStatement *, akg::ReductionPlan>> plans_after_planning(PassByPass &k) {
    k.run_through("prefetch-streams");
    EXPECT_TRUE(k.model().reduction_plans.empty());
    const std::string before = k.tree_text();
    k.run_through("plan-reductions");
    EXPECT_EQ(k.tree_text(), before);
    std::vector<std::pair<const akg::PolyStatement *, akg::ReductionPlan>> plans;
    for (const auto &st : k.model().statements) {
        if (st.role != akg::StatementRole::ReduceUpdate) continue;
        auto plan = k.model().reduction_plans.find(st.name);
        EXPECT_NE(plan, k.model().reduction_plans.end()) << st.name;
        if (plan != k.model().reduction_plans.end()) plans.emplace_back(&st, plan->second);
    }
    return plans;
}

TEST(PlanReductions, SplitsAWholeKernelSumIntoChunksOfDoubleLanes) {
    // The sum of squares of 2359296 float16 values: no loop around it, 2304 terms per lane.
    PassByPass k("patterns/global_norm_sq_unscale_f16.json");
    const akg::ScheduleOptions o;
    auto plans = plans_after_planning(k);
    ASSERT_EQ(plans.size(), 1u);
    const akg::ReductionPlan &plan = plans[0].second;
    EXPECT_EQ(plan.accumulator, Halide::Float(64));
    EXPECT_EQ(plan.lane, Halide::Float(64));
    EXPECT_EQ(plan.lanes, o.reduction_lanes);
    EXPECT_EQ(plan.float_lane_blocks, o.float_lane_blocks);
    EXPECT_EQ(plan.chunks, o.whole_reduction_chunks);
    EXPECT_EQ(k.model().column_sum_block_rows, o.column_sum_block_rows);
    EXPECT_EQ(k.model().chunk_sums_block, o.chunk_sums_block);
}

TEST(PlanReductions, GivesLongRowsWideFloatLanes) {
    // LayerNorm's mean and variance over rows of 768, one row per parallel iteration.
    PassByPass k("patterns/layernorm_fwd_f16.json");
    const akg::ScheduleOptions o;
    auto plans = plans_after_planning(k);
    ASSERT_EQ(plans.size(), 2u);
    for (const auto &[st, plan] : plans) {
        EXPECT_EQ(plan.accumulator, Halide::Float(32)) << st->name;
        EXPECT_EQ(plan.lane, Halide::Float(32)) << st->name;
        EXPECT_EQ(plan.lanes, o.reduction_wide_lanes) << st->name;
        EXPECT_EQ(plan.float_lane_blocks, 0) << st->name;
        EXPECT_EQ(plan.chunks, 0) << st->name;
    }
}

TEST(PlanReductions, TakesItsChoicesFromTheOptions) {
    // What a tuner would set: fewer lanes, other chunks, no double accumulators.
    akg::ScheduleOptions o;
    o.reduction_lanes = 16;
    o.reduction_wide_lanes = 16;
    o.whole_reduction_chunks = 8;
    o.double_lanes_from_terms = int64_t{1} << 40;
    PassByPass k("patterns/global_norm_sq_unscale_f16.json", o);
    auto plans = plans_after_planning(k);
    ASSERT_EQ(plans.size(), 1u);
    const akg::ReductionPlan &plan = plans[0].second;
    EXPECT_EQ(plan.accumulator, Halide::Float(32));
    EXPECT_EQ(plan.lane, Halide::Float(32));
    EXPECT_EQ(plan.lanes, 16);
    EXPECT_EQ(plan.float_lane_blocks, 0);
    EXPECT_EQ(plan.chunks, 8);
}

} // namespace
