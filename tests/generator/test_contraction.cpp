// Per-pass tests of the GEMM path: the split of a kernel around its MatMul ops
// (frontend/kernel_parts.h), the blocking model and plan (plan-contraction), the BLIS tree
// (tile-contraction) and the marks of isl's AST of it (emit_contraction.h). Each test takes a
// catalog pattern through the passes before the one under test and reads what that pass made.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <isl/ctx.h>
#include <isl/options.h>
#include <isl/printer.h>

#include "codegen/emit_contraction.h"
#include "frontend/composite_kernel.h"
#include "frontend/kernel_parts.h"
#include "lower/lower_to_halide.h"
#include "passes/compare_rounded_float16.h"
#include "passes/materialize.h"
#include "passes/math_identities.h"
#include "passes/simplify_stages.h"
#include "passes/view_reshaped_inputs.h"
#include "poly/plan_contraction.h"
#include "poly/schedule_annotation.h"
#include "poly/stream_outputs.h"
#include "driver/pipeline.h"
#include "poly/tile_contraction.h"

namespace {

akg::CompositeKernel load(const std::string &pattern) {
    akg::CompositeKernel k = akg::load_composite(std::string(AKG_SOURCE_ROOT) + "/patterns/" + pattern + ".json");
    akg::validate_composite(k);
    return k;
}

// One GEMM part taken through the graph passes and the poly model, as run_pipeline does.
class GemmPart {
public:
    explicit GemmPart(const akg::CompositeKernel &kernel, const akg::Target &target = akg::target_named("x86-64-v4"))
        : kernel_(kernel), options_(akg::ScheduleOptions::for_target(target)), graph_(normalized(kernel_)),
          model_(akg::build_poly_model(isl_.ctx, graph_)) {
        akg::compute_dependences(model_);
    }
    akg::PolyModel &model() { return model_; }
    const akg::ScheduleOptions &options() const { return options_; }
    bool has_contraction() const { return akg::graph_has_contraction(graph_); }

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

private:
    struct IslContext {
        isl_ctx *ctx = isl_ctx_alloc();
        IslContext() { isl_options_set_on_error(ctx, ISL_ON_ERROR_CONTINUE); }
        ~IslContext() { isl_ctx_free(ctx); }
    };
    static akg::TensorGraph normalized(const akg::CompositeKernel &kernel) {
        akg::TensorGraph graph = akg::lower_to_halide(kernel);
        akg::materialize_and_inline(graph, true);
        akg::view_reshaped_inputs(graph);
        akg::simplify_stages(graph);
        akg::rewrite_math_identities(graph);
        akg::compare_rounded_float16(graph);
        return graph;
    }
    IslContext isl_; // outlives the model's isl objects
    akg::CompositeKernel kernel_;
    akg::ScheduleOptions options_;
    akg::TensorGraph graph_;
    akg::PolyModel model_;
};

size_t count(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// The C++ the emitter writes for a planned part, through tile-contraction and isl's AST ("" if
// isl builds none).
std::string emitted_code(GemmPart &part, const akg::CompositeKernel &k, const std::string &target = "x86-64-v4") {
    akg::tile_contraction(part.model(), part.options());
    isl_ast_node *ast = akg::build_contraction_ast(part.model());
    if (!ast) return "";
    std::string code = akg::emit_contraction_cpp(part.model(), ast, k, akg::EmitOptions{"k", "k", target, "k.json", "test"});
    isl_ast_node_free(ast);
    return code;
}

TEST(KernelParts, AnEpilogueJoinsItsMatMul) {
    akg::KernelParts parts = akg::split_kernel_parts(load("gemm_ffn1_bias_gelu_f32"));
    ASSERT_EQ(parts.parts.size(), 1u);
    EXPECT_TRUE(parts.parts[0].contraction);
    EXPECT_GT(parts.parts[0].kernel.ops.size(), 5u); // the MatMul, the bias and GeLU's ops
    EXPECT_TRUE(parts.intermediates.empty());
}

TEST(KernelParts, TheBiasGradientJoinsItsWeightGradient) {
    // db = Σ_k dY beside dW = Xᵀ·dY: a sum of B over k, taken while B is packed.
    akg::KernelParts parts = akg::split_kernel_parts(load("gemm_dw_bias_grad_f32"));
    ASSERT_EQ(parts.parts.size(), 1u);
    EXPECT_TRUE(parts.parts[0].contraction);
    EXPECT_EQ(parts.parts[0].kernel.ops.size(), 2u);
    EXPECT_EQ(parts.parts[0].kernel.outputs.size(), 2u);
}

TEST(KernelParts, AReductionOfAnotherTensorRunsAsAPartOfItsOwn) {
    // The same kernel summing A (X) instead: no packing of B sees those values.
    akg::CompositeKernel k = load("gemm_dw_bias_grad_f32");
    ASSERT_EQ(k.ops[1].name, "ReduceSum");
    k.ops[1].inputs[0][0] = k.inputs[0];
    k.ops[1].outputs[0].shape = k.outputs[1].shape = {768};
    akg::KernelParts parts = akg::split_kernel_parts(k);
    ASSERT_EQ(parts.parts.size(), 2u);
    EXPECT_EQ(parts.parts[0].contraction + parts.parts[1].contraction, 1);
    for (const auto &p : parts.parts) EXPECT_EQ(p.kernel.outputs.size(), 1u);
    EXPECT_TRUE(parts.intermediates.empty()); // both results are kernel outputs
}

TEST(KernelParts, SplitAndMergeHeadsJoinTheirProduct) {
    // The reshape and transpose after the product are where the epilogue stores, not a pass of
    // their own.
    for (const char *name : {"gemm_qkv_bias_split_heads_f32", "bmm_attn_context_merge_heads_f32"}) {
        akg::KernelParts parts = akg::split_kernel_parts(load(name));
        ASSERT_EQ(parts.parts.size(), 1u) << name;
        EXPECT_TRUE(parts.parts[0].contraction);
        EXPECT_TRUE(parts.intermediates.empty());
    }
}

TEST(KernelParts, AnOpAfterAPermutationRunsApart) {
    // An elementwise op over the merged heads is not over the product's shape.
    akg::CompositeKernel k = load("bmm_attn_context_merge_heads_f32");
    akg::OpDesc neg = k.ops.back();
    neg.name = "Neg";
    neg.attrs.clear();
    neg.index = static_cast<int>(k.ops.size());
    neg.inputs = {{k.ops.back().outputs[0]}};
    neg.outputs[0].name = "negated";
    k.ops.push_back(neg);
    k.outputs = {neg.outputs[0]};
    akg::validate_composite(k);
    akg::KernelParts parts = akg::split_kernel_parts(k);
    ASSERT_EQ(parts.parts.size(), 2u);
    EXPECT_TRUE(parts.parts[0].contraction);
    EXPECT_FALSE(parts.parts[1].contraction);
}

TEST(KernelParts, ASoftmaxOrLayerNormAfterAGemmWorksByRows) {
    for (const char *name : {"bmm_attn_scores_softmax_dropout_f32", "gemm_attn_out_bias_residual_layernorm_f32",
                             "bmm_attn_scores_softmax_dropout_f16", "gemm_attn_out_bias_residual_layernorm_f16"}) {
        akg::KernelParts parts = akg::split_kernel_parts(load(name));
        ASSERT_EQ(parts.parts.size(), 2u) << name;
        EXPECT_TRUE(parts.parts[0].contraction);
        EXPECT_TRUE(parts.parts[1].row_part) << name;
    }
}

TEST(KernelParts, ASumAcrossRowsIsNoRowPart) {
    // The softmax's sum over the queries (axis 2) instead of the keys: one panel of rows does
    // not hold what a sum adds.
    akg::CompositeKernel k = load("bmm_attn_scores_softmax_dropout_f32");
    bool changed = false;
    for (auto &op : k.ops)
        if (op.name == "ReduceSum")
            for (auto &a : op.attrs)
                if (a.name == "axis") a.value = nlohmann::json::array({2}), changed = true;
    ASSERT_TRUE(changed);
    akg::KernelParts parts = akg::split_kernel_parts(k);
    ASSERT_EQ(parts.parts.size(), 2u);
    EXPECT_FALSE(parts.parts[1].row_part);
}

TEST(GemmBlocking, TheMicroTileFillsEachTargetsRegisters) {
    struct Expect {
        const char *target;
        int mr, nr;
    };
    for (Expect e : {Expect{"x86-64-v4", 14, 32}, Expect{"x86-64-v3", 6, 16}, Expect{"x86-64-v2", 6, 8}, Expect{"aarch64", 8, 12}}) {
        akg::GemmBlocking b = akg::gemm_blocking(akg::target_named(e.target), 2048, 3072, 768);
        EXPECT_EQ(b.mr, e.mr) << e.target;
        EXPECT_EQ(b.nr, e.nr) << e.target;
    }
}

TEST(GemmBlocking, PanelsFollowTheCaches) {
    const akg::Target &t = akg::target_named("x86-64-v4");
    akg::GemmBlocking one = akg::gemm_blocking(t, 2048, 3072, 768);
    EXPECT_EQ(one.kc, 768); // one panel of k: the micro-panels stream from L2
    EXPECT_LE(one.mc * one.kc * 4, t.l2_bytes / 2);
    EXPECT_EQ(one.mc % one.mr, 0);
    EXPECT_LE(768 * one.nc * 4, t.llc_bytes / t.cores / 2);
    akg::GemmBlocking long_k = akg::gemm_blocking(t, 100, 4096, 12288);
    EXPECT_LT(long_k.kc, 12288);
    const int64_t panels = (12288 + long_k.kc - 1) / long_k.kc;
    EXPECT_LT(panels * long_k.kc - 12288, panels); // equal panels, the last short by less than one k each
    EXPECT_LE((long_k.mr + long_k.nr) * long_k.kc * 4, t.l2_bytes / 2);
    // A smaller L2 (x86-64-v2's) gives shorter panels of k.
    EXPECT_LT(akg::gemm_blocking(akg::target_named("x86-64-v2"), 100, 4096, 12288).kc, long_k.kc);
}

TEST(PlanContraction, FindsTheOperandsAndTheEpilogue) {
    GemmPart part(load("gemm_ffn1_bias_gelu_f32"));
    ASSERT_TRUE(part.has_contraction());
    akg::plan_contraction(part.model(), part.options());
    ASSERT_TRUE(part.model().contraction.has_value());
    const akg::ContractionPlan &p = *part.model().contraction;
    EXPECT_EQ(p.m, 2048);
    EXPECT_EQ(p.n, 3072);
    EXPECT_EQ(p.k, 768);
    EXPECT_EQ(p.epilogue.size(), 1u); // bias and GeLU, one stage after inlining
    EXPECT_TRUE(p.direct_output.empty());
    ASSERT_TRUE(p.a_plain && p.b_plain);
    EXPECT_EQ(p.a_plain->k_stride, 1); // row-major A: transposed into its panels
    EXPECT_EQ(p.b_plain->x_stride, 1); // row-major B: copied
    EXPECT_EQ(p.split, akg::GemmSplit::Columns);
    EXPECT_EQ(p.n_panels() % p.slices, 0);
}

TEST(PlanContraction, SharesOutBatchesRowsOrColumns) {
    {
        GemmPart part(load("bmm_attn_scores_scale_mask_f32"));
        akg::plan_contraction(part.model(), part.options());
        EXPECT_EQ(part.model().contraction->split, akg::GemmSplit::Batch);
        EXPECT_TRUE(part.model().contraction->rhs_k_inner); // keys transposed
    }
    {
        GemmPart part(load("gemm_dx_f32"));
        akg::plan_contraction(part.model(), part.options());
        const akg::ContractionPlan &p = *part.model().contraction;
        EXPECT_EQ(p.split, akg::GemmSplit::Rows);
        EXPECT_EQ(p.slice_rows % p.blocking.mr, 0);
        EXPECT_GE(p.slice_rows * p.slices, p.m);
        EXPECT_EQ(p.b_plain->k_stride, 1);
    }
    {
        GemmPart part(load("gemm_bare_attn_out_f32"));
        akg::plan_contraction(part.model(), part.options());
        EXPECT_FALSE(part.model().contraction->direct_output.empty()); // no epilogue: tiles go to the output
    }
}

TEST(PlanContraction, OneThreadSharesNothing) {
    akg::Target one = akg::target_named("x86-64-v4");
    one.cores = 1;
    GemmPart part(load("gemm_qkv_bias_f32"), one);
    akg::plan_contraction(part.model(), part.options());
    EXPECT_EQ(part.model().contraction->split, akg::GemmSplit::None);
}

TEST(TileContraction, BuildsTheBlisTreeWithPackingAndTheMicroKernelMark) {
    GemmPart part(load("gemm_ffn1_bias_gelu_f32"));
    akg::plan_contraction(part.model(), part.options());
    akg::tile_contraction(part.model(), part.options());
    std::string tree = part.tree_text();
    EXPECT_EQ(count(tree, "mark: \"parallel(loops=1)\""), 1u) << tree;
    EXPECT_EQ(count(tree, "mark: \"micro_kernel(14x32)\""), 1u) << tree;
    EXPECT_NE(tree.find("PackB[jr] -> [(jr)]"), std::string::npos) << tree;
    EXPECT_NE(tree.find("PackA[jt, pt, ir] -> [(ir)]"), std::string::npos) << tree;
    // Packing comes before the tiles that read it: PackB's filter is the first of the sequence.
    EXPECT_LT(tree.find("filter: \"{ PackB"), tree.find("micro_kernel")) << tree;
}

// The row epilogue run_parts proposes for a GEMM part: its own output 0 kept per block.
akg::RowEpilogue row_part_keeping_out0() {
    akg::RowEpilogue re;
    re.blocked = {"out0"};
    re.full_rows = "rows";
    re.last_rows = "last_rows";
    return re;
}

TEST(PlanContraction, TakesARowPartWhenOnePanelHoldsWholeRows) {
    akg::KernelParts parts = akg::split_kernel_parts(load("bmm_attn_scores_softmax_dropout_f32"));
    GemmPart scores(parts.parts[0].kernel);
    const akg::RowEpilogue re = row_part_keeping_out0();
    akg::plan_contraction(scores.model(), scores.options(), &re);
    ASSERT_TRUE(scores.model().contraction->row_epilogue.has_value());
    EXPECT_NE(akg::contraction_plan_text(scores.model()).find("out0 kept per block"), std::string::npos);
    // FFN2's k of 3072 is several panels: a row is done only after the last one, past every block.
    GemmPart ffn2(load("gemm_ffn2_bias_residual_f32"));
    akg::plan_contraction(ffn2.model(), ffn2.options(), &re);
    ASSERT_GT(ffn2.model().contraction->k_panels, 1);
    EXPECT_FALSE(ffn2.model().contraction->row_epilogue.has_value());
}

TEST(PlanContraction, ARowPartBehindALongKLoopStreamsItsOutputs) {
    const akg::RowEpilogue re = row_part_keeping_out0();
    // The attention output's k of 768: the LayerNorm's stores would wait between the tiles.
    akg::KernelParts ln = akg::split_kernel_parts(load("gemm_attn_out_bias_residual_layernorm_f32"));
    GemmPart attn_out(ln.parts[0].kernel);
    akg::plan_contraction(attn_out.model(), attn_out.options(), &re);
    ASSERT_TRUE(attn_out.model().contraction->row_epilogue.has_value());
    EXPECT_TRUE(attn_out.model().contraction->row_epilogue->streams_outputs);
    EXPECT_NE(akg::contraction_plan_text(attn_out.model()).find("streaming the outputs it does not read back"), std::string::npos);
    // The scores' k of 64 leaves the kernel bound by memory: ordinary stores.
    akg::KernelParts sm = akg::split_kernel_parts(load("bmm_attn_scores_softmax_dropout_f32"));
    GemmPart scores(sm.parts[0].kernel);
    akg::plan_contraction(scores.model(), scores.options(), &re);
    ASSERT_TRUE(scores.model().contraction->row_epilogue.has_value());
    EXPECT_FALSE(scores.model().contraction->row_epilogue->streams_outputs);
}

TEST(TileContraction, TheRowPartRunsAfterTheTilesOfItsBlock) {
    akg::KernelParts parts = akg::split_kernel_parts(load("gemm_attn_out_bias_residual_layernorm_f32"));
    GemmPart part(parts.parts[0].kernel);
    const akg::RowEpilogue re = row_part_keeping_out0();
    akg::plan_contraction(part.model(), part.options(), &re);
    ASSERT_TRUE(part.model().contraction->row_epilogue.has_value());
    akg::tile_contraction(part.model(), part.options());
    std::string tree = part.tree_text();
    EXPECT_NE(tree.find("RowPart[ir] -> [(ir)]"), std::string::npos) << tree;
    // In the sequence below the block of rows, after the micro-kernel's tiles.
    EXPECT_LT(tree.find("micro_kernel"), tree.find("filter: \"{ RowPart")) << tree;
    EXPECT_NE(tree.find("RowPart[ir] -> [(floor((ir)/12))]"), std::string::npos) << tree; // mc 168 = 12 panels of 14
}

TEST(RunPipeline, TheScoresStayInABlockOfRowsForTheSoftmax) {
    akg::CompositeKernel k = load("bmm_attn_scores_softmax_dropout_f32");
    akg::PipelineOptions o;
    o.schedule = akg::ScheduleOptions::for_target(akg::target_named("x86-64-v4"));
    o.emit = akg::EmitOptions{"sc", "sc", "x86-64-v4", "sc.json", "test"};
    const std::string fused = akg::run_pipeline(k, o);
    EXPECT_NE(fused.find("static int akg_part1_rows_sc("), std::string::npos);
    EXPECT_NE(fused.find("static int akg_part1_last_rows_sc("), std::string::npos); // 128 rows = 9 x 14 + 2
    EXPECT_NE(fused.find("void *akg_mid0 = nullptr;"), std::string::npos) << "the scores are not allocated whole";
    EXPECT_EQ(count(fused, "akg_status = akg_part"), 1u); // one part called: the GEMM runs the softmax
    o.row_epilogues = false;
    const std::string apart = akg::run_pipeline(k, o);
    EXPECT_EQ(apart.find("_rows_sc("), std::string::npos);
    EXPECT_EQ(count(apart, "akg_status = akg_part"), 2u);
}

TEST(RunPipeline, TheLayerNormAfterTheAttentionOutputStreamsItsRows) {
    // The kernel's 27.6 MB are under the LLC, which alone keeps ordinary stores; the GEMM's
    // plan streams the row part's output all the same. The scores' softmax keeps ordinary stores.
    akg::PipelineOptions o;
    o.schedule = akg::ScheduleOptions::for_target(akg::target_named("x86-64-v4"));
    o.emit = akg::EmitOptions{"ln", "ln", "x86-64-v4", "ln.json", "test"};
    const std::string ln = akg::run_pipeline(load("gemm_attn_out_bias_residual_layernorm_f32"), o);
    const std::string rows = ln.substr(ln.find("static int akg_part1_rows_ln("), ln.find("static int akg_part1_last_rows_ln("));
    EXPECT_NE(rows.find("akg_stream_f32_n(blk_out2, out2 + "), std::string::npos) << rows;
    EXPECT_NE(rows.find("akg_stream_fence();"), std::string::npos) << rows;
    o.emit = akg::EmitOptions{"sc", "sc", "x86-64-v4", "sc.json", "test"};
    const std::string sc = akg::run_pipeline(load("bmm_attn_scores_softmax_dropout_f32"), o);
    EXPECT_EQ(sc.find("akg_stream_"), std::string::npos);
}

TEST(RunPipeline, AFloat16RowPartConvertsItsRowsAVectorAtATime) {
    // The float16 scores: the GEMM stores its block of scaled, masked scores a row at a time
    // (vcvtps2ph), and the softmax over 14 rows, sized as a slice of the whole part, converts its
    // three outputs a block at a time with ordinary stores: no element-wise conversion is left.
    // Its outermost band pairs the rows, as the parallel loop of the part run apart does.
    akg::CompositeKernel k = load("bmm_attn_scores_softmax_dropout_f16");
    akg::PipelineOptions o;
    o.schedule = akg::ScheduleOptions::for_target(akg::target_named("x86-64-v4"));
    o.emit = akg::EmitOptions{"sc", "sc", "x86-64-v4", "sc.json", "test"};
    const std::string code = akg::run_pipeline(k, o);
    EXPECT_EQ(count(code, "akg_f32_to_f16_n(akg_tile_out0 + akg_r * 32, out0 + (i2 % 140) * 128 + akg_j, akg_nv);"), 1u) << code;
    const std::string rows = code.substr(code.find("static int akg_part1_rows_sc("), code.find("static int akg_part1_last_rows_sc(") - code.find("static int akg_part1_rows_sc("));
    EXPECT_EQ(rows.find("= akg_f32_to_f16("), std::string::npos) << rows;
    EXPECT_EQ(count(rows, "akg_f32_to_f16_n(blk_out"), 4u) << rows; // out0 and out2, for each row of a pair
    EXPECT_EQ(rows.find("akg_stream_"), std::string::npos) << rows;
    EXPECT_NE(rows.find("for (int64_t c0 = 0; (c0 <= 13); c0 += 2) {"), std::string::npos) << rows;
}

TEST(PlanContraction, TheResidualIsPrefetchedPerTileNotTheBias) {
    // The residual's tile is 14 short runs the hardware prefetchers miss; the bias row is reused.
    GemmPart part(load("gemm_attn_out_bias_residual_f32"));
    akg::plan_contraction(part.model(), part.options());
    const auto &reads = part.model().contraction->tile_prefetches;
    ASSERT_EQ(reads.size(), 1u);
    EXPECT_NE(akg::print_expr(reads[0]).find("buf$in3"), std::string::npos) << akg::print_expr(reads[0]);
    EXPECT_EQ(part.model().contraction->prefetch_line_floats, 16);
}

TEST(PlanContraction, Float16EpilogueLinesAreListedOnlyForALongKLoop) {
    // FFN1's float16 output (768 steps of k) and the corpus shape's (256): the micro-kernel
    // requests their lines during its loop. Behind a short loop float32 tensors are prefetched
    // before the call (the scores' mask), float16 ones not at all.
    auto planned = [](const char *pattern) {
        GemmPart part(load(pattern));
        akg::plan_contraction(part.model(), part.options());
        const akg::ContractionPlan &p = *part.model().contraction;
        std::string s = p.lines_in_k_loop ? "listed:" : "before:";
        for (const auto &e : p.tile_prefetches) s += " " + e.as<Halide::Internal::Call>()->name;
        for (const auto &name : p.tile_write_prefetches) s += " " + name + "(w)";
        return s;
    };
    EXPECT_EQ(planned("gemm_ffn1_bias_gelu_f16"), "listed: out0(w)");
    EXPECT_EQ(planned("gemm_nt_f16"), "listed: out0(w)");
    EXPECT_EQ(planned("gemm_attn_out_bias_residual_f32"), "listed: buf$in3 out0(w)");
    EXPECT_EQ(planned("bmm_attn_scores_scale_mask_f32"), "before: buf$in2");
}

// What `read` finds in a GEMM part of `pattern` for `target` after plan-contraction and
// stream-outputs.
template <class Read> auto after_stream_outputs(const char *pattern, const char *target, Read read) {
    GemmPart part(load(pattern), akg::target_named(target));
    akg::plan_contraction(part.model(), part.options());
    akg::stream_contraction_outputs(part.model(), part.options());
    return read(part.model());
}

// The outputs stream-outputs marks.
std::vector<std::string> streamed_outputs(const char *pattern, const char *target = "x86-64-v4") {
    return after_stream_outputs(pattern, target, [](const akg::PolyModel &m) {
        std::vector<std::string> names;
        for (const auto &b : m.buffers)
            if (b.streamed) names.push_back(b.name);
        return names;
    });
}

TEST(StreamOutputs, AGemmStreamsTheOutputsItStoresAtTheProductsElements) {
    using V = std::vector<std::string>;
    // FFN1 (41 MB): the GeLU's output; dX (41 MB): the product the micro-kernel stores itself.
    EXPECT_EQ(streamed_outputs("gemm_ffn1_bias_gelu_f32"), V{"out0"});
    EXPECT_EQ(streamed_outputs("gemm_dx_f32"), V{"out0"});
    EXPECT_EQ(streamed_outputs("gemm_ffn1_bias_gelu_f32", "x86-64-v3"), V{"out0"});
    // Tiles of 8 (SSE) or 12 (NEON) floats share lines with their neighbours.
    EXPECT_EQ(streamed_outputs("gemm_ffn1_bias_gelu_f32", "x86-64-v2"), V{});
    EXPECT_EQ(streamed_outputs("gemm_ffn1_bias_gelu_f32", "aarch64"), V{});
    // The attention output (21 MB) stays below the cache; QKV with split heads is a permuted store.
    EXPECT_EQ(streamed_outputs("gemm_attn_out_bias_residual_f32"), V{});
    EXPECT_EQ(streamed_outputs("gemm_qkv_bias_split_heads_f32"), V{});
}

// The outputs whose tile lines are prefetched for writing.
std::vector<std::string> write_prefetched(const char *pattern, const char *target = "x86-64-v4") {
    return after_stream_outputs(pattern, target, [](const akg::PolyModel &m) { return m.contraction->tile_write_prefetches; });
}

TEST(StreamOutputs, EpilogueOutputsNotStreamedArePrefetchedForWriting) {
    using V = std::vector<std::string>;
    // Ordinary stores of the epilogue: the attention output, QKV + bias, and FFN1 where its
    // tiles share lines (SSE); the streamed FFN1 output is not read for ownership at all.
    EXPECT_EQ(write_prefetched("gemm_attn_out_bias_residual_f32"), V{"out0"});
    EXPECT_EQ(write_prefetched("gemm_qkv_bias_f32"), V{"out0"});
    EXPECT_EQ(write_prefetched("gemm_ffn1_bias_gelu_f32", "x86-64-v2"), V{"out0"});
    EXPECT_EQ(write_prefetched("gemm_ffn1_bias_gelu_f32"), V{});
    // The micro-kernel stores dX itself (and prefetches its rows); split heads is a permuted
    // store; the scores' k loop of 64 steps is too short to hide the burst.
    EXPECT_EQ(write_prefetched("gemm_dx_f32", "x86-64-v2"), V{});
    EXPECT_EQ(write_prefetched("gemm_qkv_bias_split_heads_f32"), V{});
    EXPECT_EQ(write_prefetched("bmm_attn_scores_scale_mask_f32"), V{});
}

// The C++ of a GEMM part of `pattern` (x86-64-v4) with its outputs streamed or prefetched.
std::string streamed_code(const char *pattern) {
    akg::CompositeKernel k = load(pattern);
    GemmPart part(k);
    akg::plan_contraction(part.model(), part.options());
    akg::stream_contraction_outputs(part.model(), part.options());
    return emitted_code(part, k);
}

TEST(EmitContraction, BehindALongKLoopTheMicroKernelRequestsTheEpiloguesLines) {
    // The attention output's k loop of 768 steps: the tile lists the lines of its residual and
    // of its output, and the micro-kernel requests them one a step (akg_gemm_lines),
    // beside its share of the next micro-panel of B.
    const std::string code = streamed_code("gemm_attn_out_bias_residual_f32");
    const size_t listed = code.find("akg_lines[akg_nl++] = &out0[i0 * 768 + i1];");
    ASSERT_NE(listed, std::string::npos) << code;
    EXPECT_LT(listed, code.find("akg_gemm_tile<")) << code;
    EXPECT_EQ(count(code, "akg_lines[akg_nl++] = &in3[i0 * 768 + i1];"), 1u) << code;
    EXPECT_EQ(count(code, "const void *akg_lines[56];"), 1u) << code; // 14 rows x 2 lines x 2 tensors
    EXPECT_EQ(count(code, "akg_ahead, akg_gemm_lines{akg_lines, akg_lines + akg_nl})"), 2u) << code;
    EXPECT_EQ(count(code, "__builtin_prefetch(&"), 0u) << code;
    // A float16 row of the tile's 32 columns is one line.
    const std::string f16 = streamed_code("gemm_ffn1_bias_gelu_f16");
    EXPECT_EQ(count(f16, "const void *akg_lines[14];"), 1u) << f16;
    EXPECT_EQ(count(f16, "akg_c < akg_nv; akg_c += 32) {"), 1u) << f16;
    // The scores' 64 steps are too short to spread them over: the tile requests its mask's
    // lines before the micro-kernel call.
    const std::string scores = streamed_code("bmm_attn_scores_scale_mask_f32");
    const size_t pf = scores.find("__builtin_prefetch(&in2[");
    ASSERT_NE(pf, std::string::npos) << scores;
    EXPECT_LT(pf, scores.find("akg_gemm_tile<")) << scores;
    EXPECT_EQ(count(scores, "akg_lines"), 0u) << scores;
}

TEST(EmitContraction, AStreamedEpilogueOutputLeavesEachTileRowWithNonTemporalStores) {
    const std::string code = streamed_code("gemm_ffn1_bias_gelu_f32");
    EXPECT_EQ(count(code, "akg_s_out0[akg_c] = v_tile_out0;"), 1u) << code;
    EXPECT_EQ(count(code, "akg_stream_f32_n(akg_s_out0, out0 + i0 * 3072 + i1, akg_nv);"), 1u) << code;
    EXPECT_EQ(count(code, "akg_stream_fence();"), 1u) << code;
    EXPECT_EQ(count(code, "out0[i0 * 3072 + i1] ="), 0u) << code;
}

TEST(PlanContraction, TilesPrefetchTheNextMicroPanelOfBWhereItsPanelOutgrowsL2) {
    // FFN1's packed panel of B (768 x 1536, 4.7 MB) comes from L3: each tile of a column
    // prefetches its share of the next column's micro-panel. The attention scores' panel of
    // 64 x 128 stays in L1; the FC reads its B in place (rows prefetched instead).
    auto prefetched = [](const char *pattern) {
        GemmPart part(load(pattern));
        akg::plan_contraction(part.model(), part.options());
        return part.model().contraction->b_next_prefetched;
    };
    EXPECT_TRUE(prefetched("gemm_ffn1_bias_gelu_f32"));
    EXPECT_TRUE(prefetched("gemm_dw_bias_grad_f32"));
    EXPECT_FALSE(prefetched("bmm_attn_scores_scale_mask_f32"));
    EXPECT_FALSE(prefetched("gemm_fc_bias_f32"));
}

TEST(EmitContraction, EachTileOfAColumnPrefetchesItsShareOfTheNextMicroPanel) {
    // FFN1 packs B per panel of 1536 columns (48 micro-panels of 768 x 32) and blocks of 168
    // rows (12 tiles): the next micro-panel is 768 * 32 floats on, only within the panel.
    const std::string code = streamed_code("gemm_ffn1_bias_gelu_f32");
    EXPECT_EQ(count(code, "const akg_gemm_ahead akg_ahead = (akg_j / 32) % 48 + 1 < 48 && akg_j + 32 < 3072 ? "
                          "akg_gemm_next_panel(akg_b + 24576, akg_kn * 32, (akg_i % 168) / 14, 12) : akg_gemm_ahead{};"),
              1u)
        << code;
    EXPECT_EQ(count(code, "akg_tile, 32, akg_ahead);"), 2u) << code; // the full tiles' call and the last rows'
    // The attention scores' tiles do not.
    EXPECT_EQ(streamed_code("bmm_attn_scores_scale_mask_f32").find("akg_ahead"), std::string::npos);
}

TEST(PlanContraction, SmallMReadsBInPlace) {
    // FC: 32 rows, one block of them; B [2048, 1001] row-major at a stride that does not alias.
    GemmPart fc(load("gemm_fc_bias_f32"));
    akg::plan_contraction(fc.model(), fc.options());
    EXPECT_FALSE(fc.model().contraction->pack_b);
    EXPECT_NE(akg::contraction_plan_text(fc.model()).find("B read in place, rows prefetched"), std::string::npos);
    // Its 8 MB come from memory, a row every 4004 bytes: the micro-kernel prefetches them. The
    // context BatchMatMul's B in place is 32 KiB per head, read from the caches.
    EXPECT_TRUE(fc.model().contraction->b_streamed);
    GemmPart context(load("bmm_attn_context_f32"));
    akg::plan_contraction(context.model(), context.options());
    EXPECT_FALSE(context.model().contraction->pack_b);
    EXPECT_FALSE(context.model().contraction->b_streamed);
    // 2048 rows: B's micro-panels are read by many tiles of rows, so packing pays.
    GemmPart ffn1(load("gemm_ffn1_bias_gelu_f32"));
    akg::plan_contraction(ffn1.model(), ffn1.options());
    EXPECT_TRUE(ffn1.model().contraction->pack_b);
    // Transposed B (keys): its columns are not innermost, so it is packed whatever M is.
    GemmPart scores(load("bmm_attn_scores_scale_mask_f32"));
    akg::plan_contraction(scores.model(), scores.options());
    EXPECT_TRUE(scores.model().contraction->pack_b);
}

TEST(PlanContraction, BStreamedInPlaceIsReadInPanelsOfKWhoseRowsFitTheTlb) {
    // The FC's B rows are 4004 bytes, a page each: panels of 64 rows (the L1 TLB's 64 pages) of
    // one panel of each thread's columns, so that every micro-panel of columns reads those pages.
    GemmPart fc(load("gemm_fc_bias_f32"));
    akg::plan_contraction(fc.model(), fc.options());
    const akg::ContractionPlan &p = *fc.model().contraction;
    EXPECT_EQ(p.blocking.kc, 64);
    EXPECT_EQ(p.k_panels, 32);
    EXPECT_EQ(p.n_panels(), 2);
    EXPECT_EQ(p.blocking.nc, 512);
    // Aarch64's TLB has 48 entries: 43 panels of 48 rows (the last 32).
    GemmPart arm(load("gemm_fc_bias_f32"), akg::target_named("aarch64"));
    akg::plan_contraction(arm.model(), arm.options());
    EXPECT_EQ(arm.model().contraction->blocking.kc, 48);
    EXPECT_EQ(arm.model().contraction->k_panels, 43);
    // AVX2's 36 rows of 6-row tiles are more than its L2 block at all of k (30 rows), but its
    // tiles of C (36 rows x 512 columns, 72 KiB) stay in L2 between panels of 64: B in place.
    GemmPart v3(load("gemm_fc_bias_f32"), akg::target_named("x86-64-v3"));
    akg::plan_contraction(v3.model(), v3.options());
    EXPECT_FALSE(v3.model().contraction->pack_b);
    EXPECT_EQ(v3.model().contraction->blocking.kc, 64);
    EXPECT_EQ(v3.model().contraction->blocking.mc, 36);
    // Rows of 524 bytes share a page 7 at a time: 16 panels of at most 7 x 64 rows of 7001.
    akg::CompositeKernel odd = akg::load_composite(std::string(AKG_SOURCE_ROOT) + "/tests/patterns_small/gemm_ffn2_bias_residual_f32.json");
    GemmPart ffn2(odd);
    akg::plan_contraction(ffn2.model(), ffn2.options());
    EXPECT_TRUE(ffn2.model().contraction->b_streamed);
    EXPECT_EQ(ffn2.model().contraction->k_panels, 16);
    EXPECT_EQ(ffn2.model().contraction->blocking.kc, 438);
    // B read in place from the caches keeps one panel of k: the context BatchMatMul.
    GemmPart context(load("bmm_attn_context_f32"));
    akg::plan_contraction(context.model(), context.options());
    EXPECT_EQ(context.model().contraction->k_panels, 1);
}

TEST(PlanContraction, Float16OperandsArePackedByVectorConversions) {
    // Both operands of [100352,256]·[128,256]ᵀ are float16 tensors read as they are: plain
    // operands converted while packing, never read in place by the float32 micro-kernel.
    GemmPart nt(load("gemm_nt_f16"));
    akg::plan_contraction(nt.model(), nt.options());
    const akg::ContractionPlan &p = *nt.model().contraction;
    ASSERT_TRUE(p.a_plain && p.b_plain);
    EXPECT_TRUE(p.a_plain->f16 && p.b_plain->f16);
    EXPECT_EQ(p.a_plain->k_stride, 1);
    EXPECT_EQ(p.b_plain->k_stride, 1);
    EXPECT_TRUE(p.pack_a && p.pack_b);
    EXPECT_NE(akg::contraction_plan_text(nt.model()).find("transposed in registers, from float16"), std::string::npos);
}

TEST(TileContraction, BInPlacePacksOnlyItsPartialMicroPanel) {
    // FC: 1001 = 31 x 32 + 9 columns: only micro-panel 31 is packed (zero-padded).
    GemmPart fc(load("gemm_fc_bias_f32"));
    akg::plan_contraction(fc.model(), fc.options());
    akg::tile_contraction(fc.model(), fc.options());
    std::string tree = fc.tree_text();
    EXPECT_NE(tree.find("filter: \"{ PackB[jr = 31] }\""), std::string::npos) << tree;
    // The context BMM: 64 columns, two whole micro-panels, nothing to pack.
    GemmPart context(load("bmm_attn_context_f32"));
    akg::plan_contraction(context.model(), context.options());
    akg::tile_contraction(context.model(), context.options());
    EXPECT_EQ(context.tree_text().find("PackB"), std::string::npos);
}

TEST(TileContraction, TilesOfAAndBInPlaceRunRowsOutermost) {
    // The context BMM reads both in place: the tile band's first member is the micro-tile of
    // rows (i2 / 14), the columns (i3 / 32) second. FFN1 packs both: columns first (BLIS).
    const std::string rows_then_columns = "S1[i0, i1, i2, i3, r0] -> [(floor((i2)/14))]; S0[i0, i1, i2, i3] -> [(floor((i2)/14))] }, { S2";
    GemmPart context(load("bmm_attn_context_f32"));
    akg::plan_contraction(context.model(), context.options());
    ASSERT_FALSE(context.model().contraction->pack_a);
    ASSERT_FALSE(context.model().contraction->pack_b);
    akg::tile_contraction(context.model(), context.options());
    const std::string tree = context.tree_text();
    EXPECT_NE(tree.find(rows_then_columns), std::string::npos) << tree;
    EXPECT_LT(tree.find("/14))]"), tree.find("/32))]")) << tree;
    GemmPart ffn1(load("gemm_ffn1_bias_gelu_f32"));
    akg::plan_contraction(ffn1.model(), ffn1.options());
    akg::tile_contraction(ffn1.model(), ffn1.options());
    const std::string blis = ffn1.tree_text();
    const size_t mark = blis.find("micro_kernel");
    ASSERT_NE(mark, std::string::npos);
    EXPECT_LT(blis.rfind("/32))]", mark), blis.rfind("/14))]", mark)) << blis;
}

TEST(PlanContraction, AWeightInputCanBePackedAheadOfTime) {
    // FC's B is an input that only the MatMul reads: packable. With it packed ahead of time the
    // plan reads it packed (not in place) and the tree has no PackB statement.
    GemmPart fc(load("gemm_fc_bias_f32"));
    akg::ScheduleOptions packed = fc.options();
    packed.prepacked_b = true;
    akg::plan_contraction(fc.model(), packed);
    const akg::ContractionPlan &p = *fc.model().contraction;
    EXPECT_TRUE(p.b_packable && p.prepacked_b && p.pack_b);
    EXPECT_FALSE(p.b_streamed);
    akg::tile_contraction(fc.model(), packed);
    EXPECT_EQ(fc.tree_text().find("PackB"), std::string::npos) << fc.tree_text();
    EXPECT_NE(fc.tree_text().find("PackA"), std::string::npos);
    // Not packable: the attention BatchMatMul's B differs per head; the weight gradient's B
    // (dY) is summed by its packing into the bias gradient.
    for (const char *name : {"bmm_attn_context_f32", "gemm_dw_bias_grad_f32"}) {
        GemmPart g(load(name));
        akg::plan_contraction(g.model(), g.options());
        EXPECT_FALSE(g.model().contraction->b_packable) << name;
    }
}

// The blocking plan_contraction picks for a catalog GEMM, its B packed per run or ahead of time.
// What `get` reads of the model of `name`'s GEMM part planned on `target`, B packed ahead of
// time or not.
template <typename Get>
auto planned(const char *name, bool prepacked_b, Get get, const akg::Target &target = akg::target_named("x86-64-v4")) {
    GemmPart g(load(name), target);
    akg::ScheduleOptions o = g.options();
    o.prepacked_b = prepacked_b;
    akg::plan_contraction(g.model(), o);
    return get(static_cast<const akg::PolyModel &>(g.model()));
}

akg::GemmBlocking blocking_of(const char *name, bool prepacked_b) {
    return planned(name, prepacked_b, [](const akg::PolyModel &m) { return m.contraction->blocking; });
}

TEST(PlanContraction, BPackedAheadOfTimeTakesAllColumnsInOnePanel) {
    // With 8 MB of last-level cache, dX's K of 3072 bounds nc (the panel of B a thread would
    // pack) to a fraction of its 768 columns, so A is packed once per panel; with B packed
    // ahead of time there is no such panel, and one is all.
    akg::Target small_llc = akg::target_named("x86-64-v4");
    small_llc.llc_bytes = 8 << 20;
    auto nc = [](const akg::PolyModel &m) { return m.contraction->blocking.nc; };
    EXPECT_LT(planned("gemm_dx_f32", false, nc, small_llc), 768);
    EXPECT_EQ(planned("gemm_dx_f32", true, nc, small_llc), 768);
}

TEST(PlanContraction, RowSlicesTakeOnePanelOfAllColumnsWhereItFitsTheLlcShare) {
    // dX: all of B (3072 x 768, 9.4 MB) fits a core's 16 MB share of the last-level cache, so
    // each slice of rows packs A once; a thread that runs both slices packs B once.
    planned("gemm_dx_f32", false, [](const akg::PolyModel &m) {
        EXPECT_EQ(m.contraction->split, akg::GemmSplit::Rows);
        EXPECT_EQ(m.contraction->blocking.nc, 768);
        EXPECT_TRUE(m.contraction->b_shared_by_slices);
        EXPECT_NE(akg::contraction_plan_text(m).find("B packed once by a thread for all the slices of rows it runs"), std::string::npos);
        return 0;
    });
    // dW sums B's columns while packing it in each panel: not shared (and its columns are split).
    EXPECT_FALSE(planned("gemm_dw_bias_grad_f32", false, [](const akg::PolyModel &m) { return m.contraction->b_shared_by_slices; }));
}

TEST(EmitContraction, AThreadPacksBForItsFirstSliceOnly) {
    const std::string code = streamed_code("gemm_dx_f32");
    EXPECT_EQ(count(code, "int64_t akg_bp_slice = -1;"), 1u) << code;
    EXPECT_EQ(count(code, "if (akg_bp_slice < 0 || akg_bp_slice == (c0)) {"), 1u) << code;
    EXPECT_EQ(count(code, "akg_bp_slice = (c0);"), 1u) << code;
}

TEST(PlanContraction, ColumnPanelsRoundDownToTheThreadsWhereWiderPanelsFit) {
    // dW's K of 2048 makes the model's 1024 columns three panels; two threads need an even count.
    // Four panels would pack its A four times; two of 1536 columns (12.6 MB) still fit a
    // thread's share of the last-level cache.
    GemmPart dw(load("gemm_dw_bias_grad_f32"));
    akg::plan_contraction(dw.model(), dw.options());
    const akg::ContractionPlan &p = *dw.model().contraction;
    ASSERT_EQ(p.split, akg::GemmSplit::Columns);
    EXPECT_EQ(p.blocking.nc, 1536);
    EXPECT_EQ(p.n_panels(), 2);
    const akg::Target &t = akg::target_named("x86-64-v4");
    EXPECT_LE(p.k * p.blocking.nc * 4, t.llc_bytes / t.cores);
    // One panel (the FC's 1001 columns) cannot round down: two panels, one per thread.
    GemmPart fc(load("gemm_fc_bias_f32"));
    akg::plan_contraction(fc.model(), fc.options());
    EXPECT_EQ(fc.model().contraction->n_panels(), 2);
}

TEST(PlanContraction, ABFromMemoryIsReadOnceByOneBlockOfAllRows) {
    // The MLM head packed ahead of time: each thread's 10,564 columns of B (32 MB) come from
    // memory, and its 320 rows (23 micro-panels, 989 KB at kc 768) fit the 1 MB of L2: one block.
    // Packed per run, B is packed per column of tiles, so the rows fit L2 as one block too.
    EXPECT_EQ(blocking_of("gemm_mlm_head_bias_f32", false).mc, 23 * 14);
    EXPECT_EQ(blocking_of("gemm_mlm_head_bias_f32", true).mc, 23 * 14);
    // FFN1's 2048 rows do not fit L2: blocks of half of it, whatever B.
    EXPECT_EQ(blocking_of("gemm_ffn1_bias_gelu_f32", true).mc, 168);
}

TEST(PlanContraction, BIsPackedPerColumnOfTilesWhereOneBlockHoldsAllRows) {
    // The MLM head packed per run: its 320 rows fit L2 as one block, so each micro-panel of B is
    // read by one column of tiles. It is packed right before them, and its source (32 rows of
    // B [21128, 768], one run of memory) prefetched by the column before; a panel per thread.
    GemmPart mlm(load("gemm_mlm_head_bias_f32"));
    akg::plan_contraction(mlm.model(), mlm.options());
    const akg::ContractionPlan &p = *mlm.model().contraction;
    EXPECT_TRUE(p.b_packed_per_column);
    EXPECT_FALSE(p.b_next_prefetched);
    EXPECT_EQ(p.blocking.mc, 23 * 14);
    EXPECT_EQ(p.n_panels(), 2);
    EXPECT_NE(akg::contraction_plan_text(mlm.model()).find("B packed per column of tiles, the next one's source prefetched"), std::string::npos);
    // Not FFN1 (2048 rows, blocks of them share a panel), nor the attention scores (a panel of
    // 64 x 128 in L2), nor B packed ahead of time.
    auto per_column = [](const char *pattern, bool prepacked_b) {
        return planned(pattern, prepacked_b, [](const akg::PolyModel &m) { return m.contraction->b_packed_per_column; });
    };
    EXPECT_FALSE(per_column("gemm_ffn1_bias_gelu_f32", false));
    EXPECT_FALSE(per_column("bmm_attn_scores_scale_mask_f32", false));
    EXPECT_FALSE(per_column("gemm_mlm_head_bias_f32", true));
}

TEST(TileContraction, BPackedPerColumnIsPackedInTheColumnLoopBeforeItsTiles) {
    GemmPart mlm(load("gemm_mlm_head_bias_f32"));
    akg::plan_contraction(mlm.model(), mlm.options());
    akg::tile_contraction(mlm.model(), mlm.options());
    const std::string tree = mlm.tree_text();
    // The column band schedules PackB with the tiles; below it, PackB's filter comes first.
    const size_t columns = tree.find("PackB[jr] -> [(jr)] }]");
    ASSERT_NE(columns, std::string::npos) << tree;
    EXPECT_LT(tree.find("PackA[jt, pt, ir] -> [(ir)]"), columns) << tree;
    const size_t packing = tree.find("filter: \"{ PackB", columns);
    EXPECT_LT(packing, tree.find("mark: \"micro_kernel(14x32)\"")) << tree;
    // The tiles of a column: one band of rows only.
    EXPECT_NE(tree.find("S1[i0, i1, r0] -> [(floor((i0)/14))]; S2[i0, i1] -> [(floor((i0)/14))] }]", packing), std::string::npos) << tree;
}

TEST(EmitContraction, BPackedPerColumnFillsOneMicroPanelAndPrefetchesTheNextSource) {
    const std::string code = streamed_code("gemm_mlm_head_bias_f32");
    EXPECT_EQ(count(code, "float *akg_bp = (float *)aligned_alloc(64, 98304);"), 1u) << code; // 768 x 32 floats
    EXPECT_EQ(count(code, "float *__restrict akg_dst = akg_bp;"), 1u) << code;
    EXPECT_EQ(count(code, "const float *akg_b = akg_bp + akg_k * 32;"), 1u) << code;
    EXPECT_EQ(count(code, "const akg_gemm_ahead akg_ahead = (akg_j / 32) % 331 + 1 < 331 && akg_j + 32 < 21128 ? "
                          "akg_gemm_next_panel(in1 + (INT64_C(0)) + (akg_j + 32) * 768, akg_imin(32, 21128 - (akg_j + 32)) * 768, "
                          "(akg_i % 322) / 14, 23) : akg_gemm_ahead{};"),
              1u)
        << code;
    EXPECT_EQ(count(code, "akg_tile, 32, akg_ahead);"), 2u) << code;
}

TEST(RunPipeline, APackableKernelEndsWithItsPackedTwinAndPacking) {
    akg::PipelineOptions o;
    o.schedule = akg::ScheduleOptions::for_target(akg::target_named("x86-64-v4"));
    o.emit.symbol = "fc";
    akg::PackableB packable;
    const std::string source = akg::run_pipeline(load("gemm_fc_bias_f32"), o, &packable);
    EXPECT_TRUE(packable.packable);
    EXPECT_EQ(packable.input, 1);
    EXPECT_EQ(packable.bytes, 32 * 32 * 2048 * 4); // 32 micro-panels of 32 columns, the last zero-padded
    EXPECT_NE(source.find("int akg_kernel_fn_fc_prepacked(void *const *buffers)"), std::string::npos);
    EXPECT_NE(source.find("void akg_pack_fn_fc_prepacked(const void *akg_input, void *akg_packed)"), std::string::npos);
    EXPECT_NE(source.find("akg_prepack_fc = {1, 8388608, akg_kernel_fn_fc_prepacked, akg_pack_fn_fc_prepacked}"), std::string::npos);
    // A kernel of parts: its only GEMM part's B, a kernel input no other part reads, packed by
    // that part's packing function; not the scores' B, which differs per head.
    const std::string ln = akg::run_pipeline(load("gemm_attn_out_bias_residual_layernorm_f32"), o, &packable);
    EXPECT_TRUE(packable.packable);
    EXPECT_EQ(packable.input, 1);
    EXPECT_NE(ln.find("akg_kernel_fn_fc_prepacked, akg_pack_fn_fc_prepacked_part0}"), std::string::npos);
    // The twin emits only its GEMM part: the LayerNorm rows are the first run's functions.
    const std::string rows = "static int akg_part1_rows_fc(";
    ASSERT_NE(ln.find(rows), std::string::npos);
    EXPECT_EQ(ln.find(rows, ln.find(rows) + 1), std::string::npos);
    EXPECT_EQ(ln.find("_rows_fc_prepacked"), std::string::npos);
    EXPECT_NE(ln.find("akg_part1_rows_fc(akg_row_args)", ln.find("akg_part0_fc_prepacked(")), std::string::npos);
    akg::run_pipeline(load("bmm_attn_scores_softmax_dropout_f32"), o, &packable);
    EXPECT_FALSE(packable.packable);
    // A kernel without a GEMM says so in the same definition.
    const std::string other = akg::run_pipeline(load("add_relu_f32"), o, &packable);
    EXPECT_FALSE(packable.packable);
    EXPECT_NE(other.find("akg_prepack_fc = {-1, 0, nullptr, nullptr}"), std::string::npos);
}

TEST(PlanContraction, TheColumnSumOfBIsTakenWhilePackingB) {
    GemmPart dw(load("gemm_dw_bias_grad_f32"));
    akg::plan_contraction(dw.model(), dw.options());
    const akg::ContractionPlan &p = *dw.model().contraction;
    ASSERT_TRUE(p.column_sum.has_value());
    EXPECT_EQ(p.column_sum->statements.size(), 3u); // the sum's init and update, its copy to the output
    EXPECT_EQ(p.column_sum->output, "out1");
    EXPECT_TRUE(p.pack_b);
    EXPECT_EQ(p.epilogue.size(), 1u); // the product's copy to out0, stored by the tiles
    akg::tile_contraction(dw.model(), dw.options());
    std::string tree = dw.tree_text();
    for (const auto &s : p.column_sum->statements) EXPECT_EQ(tree.find(s + "["), std::string::npos) << s << " is scheduled:\n" << tree;
    EXPECT_NE(tree.find("PackB[jr] -> [(jr)]"), std::string::npos) << tree;
}

TEST(PlanContraction, MergeHeadsStoreEachTileRowAsOneRun) {
    // ctx[b,h,s,d] goes to out[b*S + s, h*HD + d]: isl inverts the reshape and transpose.
    GemmPart ctx(load("bmm_attn_context_merge_heads_f32"));
    akg::plan_contraction(ctx.model(), ctx.options());
    const akg::ContractionPlan &p = *ctx.model().contraction;
    ASSERT_EQ(p.epilogue.size(), 1u);
    ASSERT_EQ(p.permuted.count(p.epilogue[0]), 1u);
    const auto &ps = p.permuted.at(p.epilogue[0]);
    EXPECT_TRUE(ps.rows_contiguous);
    EXPECT_EQ(ps.tile_row_stride, 768);
    // A copy: the micro-kernel stores its full tiles there itself, 768 floats between rows.
    EXPECT_EQ(p.direct_output, "out0");
    EXPECT_EQ(p.direct_permuted, p.epilogue[0]);
    std::string plan = akg::contraction_plan_text(ctx.model());
    EXPECT_NE(plan.find("permuted: stored at (((((int64)i0*(int64)128) + (int64)i2)*(int64)768) + (((int64)i1*(int64)64) + (int64)i3)), rows contiguous, "
                        "tile rows 768 apart"),
              std::string::npos)
        << plan;
}

TEST(TileContraction, APermutedStoreRunsInTheTileOfWhatItStores) {
    GemmPart qkv(load("gemm_qkv_bias_split_heads_f32"));
    akg::plan_contraction(qkv.model(), qkv.options());
    const akg::ContractionPlan &p = *qkv.model().contraction;
    ASSERT_EQ(p.permuted.size(), 1u);
    EXPECT_TRUE(p.permuted.begin()->second.rows_contiguous); // a tile of 32 columns stays in a head of 64
    EXPECT_EQ(p.permuted.begin()->second.tile_row_stride, 0); // 14 rows cross the batches' 128 now and then
    EXPECT_TRUE(p.direct_output.empty());                      // and the bias is added on the way
    // isl composes the bias's read through the permutation with its inverse: the product's column.
    const std::string value = akg::print_expr(p.permuted.begin()->second.value);
    EXPECT_NE(value.find("buf$in2((int64)i1)"), std::string::npos) << value;
    akg::tile_contraction(qkv.model(), qkv.options());
    std::string tree = qkv.tree_text();
    const std::string s = p.permuted.begin()->first;
    // Its instance [q, b, h, s, d] is the product's [128b + s, 768q + 64h + d].
    EXPECT_NE(tree.find(s + "[i0, i1, i2, i3, i4] -> [(24i0 + 2i2 + floor((i4)/32))]"), std::string::npos) << tree;
    EXPECT_NE(tree.find(s + "[i0, i1, i2, i3, i4] -> [(768i0 + 64i2 + i4)]"), std::string::npos) << tree;
    EXPECT_EQ(tree.find("V" + s), std::string::npos) << tree; // no stand-in is left
}

TEST(PlanContraction, HeadsNarrowerThanATileAreStoredElementByElement) {
    // Heads of 13 columns: a tile row of 32 crosses heads.
    akg::CompositeKernel k = akg::load_composite(std::string(AKG_SOURCE_ROOT) + "/tests/patterns_small/gemm_qkv_bias_split_heads_f32.json");
    akg::validate_composite(k);
    GemmPart qkv(k);
    akg::plan_contraction(qkv.model(), qkv.options());
    const akg::ContractionPlan &p = *qkv.model().contraction;
    ASSERT_EQ(p.permuted.size(), 1u);
    EXPECT_FALSE(p.permuted.begin()->second.rows_contiguous);
}

TEST(PlanContraction, AnEpilogueReadingTwoElementsOfTheProductIsRejected) {
    // C + Cᵀ reads two elements of the product per element: no tile holds both.
    const std::string text = R"({"composite": true, "op": "c_plus_ct", "process": "cpu", "platform": "AKG",
      "input_desc": [[{"data_type": "float32", "shape": [19, 7], "tensor_name": "x", "format": "DefaultFormat"}],
                     [{"data_type": "float32", "shape": [7, 19], "tensor_name": "w", "format": "DefaultFormat"}]],
      "output_desc": [{"data_type": "float32", "shape": [19, 19], "tensor_name": "y", "format": "DefaultFormat"}],
      "op_desc": [
        {"name": "MatMul", "attr": [{"name": "transpose_a", "data_type": "bool", "value": false},
                                    {"name": "transpose_b", "data_type": "bool", "value": false}],
         "input_desc": [[{"data_type": "float32", "shape": [19, 7], "tensor_name": "x", "format": "DefaultFormat"}],
                        [{"data_type": "float32", "shape": [7, 19], "tensor_name": "w", "format": "DefaultFormat"}]],
         "output_desc": [{"data_type": "float32", "shape": [19, 19], "tensor_name": "c", "format": "DefaultFormat"}]},
        {"name": "Transpose", "attr": [{"name": "perm", "data_type": "listInt", "value": [1, 0]}],
         "input_desc": [[{"data_type": "float32", "shape": [19, 19], "tensor_name": "c", "format": "DefaultFormat"}]],
         "output_desc": [{"data_type": "float32", "shape": [19, 19], "tensor_name": "ct", "format": "DefaultFormat"}]},
        {"name": "Add", "attr": null,
         "input_desc": [[{"data_type": "float32", "shape": [19, 19], "tensor_name": "c", "format": "DefaultFormat"}],
                        [{"data_type": "float32", "shape": [19, 19], "tensor_name": "ct", "format": "DefaultFormat"}]],
         "output_desc": [{"data_type": "float32", "shape": [19, 19], "tensor_name": "y", "format": "DefaultFormat"}]}]})";
    akg::CompositeKernel k = akg::parse_composite(text, "c_plus_ct.json");
    akg::validate_composite(k);
    // kernel_parts keeps the Add apart (it reads a permuted value); taken whole, the plan refuses it.
    EXPECT_EQ(akg::split_kernel_parts(k).parts.size(), 2u);
    GemmPart whole(k);
    try {
        akg::plan_contraction(whole.model(), whole.options());
        ADD_FAILURE() << "planned";
    } catch (const akg::UserError &e) {
        EXPECT_NE(std::string(e.what()).find("not a permutation"), std::string::npos) << e.what();
    }
}

TEST(EmitContraction, OnlyTheFirstSliceOfRowsSumsB) {
    // [51,39]ᵀ·[51,37]: rows shared out, each slice packing all of B for itself.
    akg::CompositeKernel k = akg::load_composite(std::string(AKG_SOURCE_ROOT) + "/tests/patterns_small/gemm_dw_bias_grad_f32.json");
    akg::validate_composite(k);
    akg::Target two = akg::target_named("x86-64-v4");
    two.cores = 2;
    GemmPart part(k, two);
    akg::plan_contraction(part.model(), part.options());
    ASSERT_EQ(part.model().contraction->split, akg::GemmSplit::Rows);
    const std::string code = emitted_code(part, k);
    EXPECT_EQ(count(code, "akg_gemm_column_sums(akg_dst, 51, akg_valid, out1 + akg_j0);"), 1u) << code;
    EXPECT_NE(code.find(") == 0) akg_gemm_column_sums("), std::string::npos) << code;
}

TEST(EmitContraction, AFloat16EpilogueRoundsOneStagedArrayAtATime) {
    // FFN1 in float16: every op of the GeLU rounds to float16. With vector conversions each
    // rounded value is a tile array rounded by akg_round_f16_n, and the output's tile rows are
    // converted and stored whole; without them (x86-64-v2) the rounding stays in one loop.
    akg::CompositeKernel k = load("gemm_ffn1_bias_gelu_f16");
    for (const char *target : {"x86-64-v4", "x86-64-v2"}) {
        GemmPart part(k, akg::target_named(target));
        akg::plan_contraction(part.model(), part.options());
        const bool staged = std::string(target) == "x86-64-v4";
        ASSERT_EQ(part.model().contraction->staged_float16_epilogue, staged) << target;
        const std::string code = emitted_code(part, k, target);
        if (staged) {
            // The product, then x = t + b, x², x³, 0.0447·x³, x + …, ·0.798, tanh, 1 + …, x·(…).
            EXPECT_EQ(count(code, "akg_round_f16_n("), 10u) << code;
            EXPECT_EQ(code.find("akg_round_f16("), std::string::npos) << code;
            EXPECT_EQ(count(code, "akg_f32_to_f16_n(akg_tile_out0 + akg_r * 32, out0 + i0 * 3072 + i1, akg_nv);"), 1u) << code;
        } else {
            EXPECT_EQ(code.find("akg_round_f16_n("), std::string::npos) << code;
            EXPECT_NE(code.find("akg_round_f16("), std::string::npos) << code;
        }
    }
}

TEST(EmitContraction, AStagedEpilogueOfManyRoundingsRunsAtAConstantWidthOnFullTiles) {
    // GeLU's nine staged roundings run in a lambda over the tile's width, called with a constant
    // 32 (3072 columns: every tile is full); a bias's one rounding stays in place.
    akg::CompositeKernel gelu = load("gemm_ffn1_bias_gelu_f16");
    GemmPart part(gelu, akg::target_named("x86-64-v4"));
    akg::plan_contraction(part.model(), part.options());
    std::string code = emitted_code(part, gelu);
    EXPECT_EQ(count(code, "const int64_t akg_nv = akg_width;"), 1u) << code;
    EXPECT_EQ(count(code, "akg_epilogue(std::integral_constant<int64_t, 32>());"), 1u) << code;
    EXPECT_EQ(code.find("akg_epilogue(akg_nv)"), std::string::npos) << code;

    // At 37 columns the second tile is 5 wide and runs at a run-time width.
    akg::CompositeKernel odd = akg::load_composite(std::string(AKG_SOURCE_ROOT) + "/tests/patterns_small/gemm_ffn1_bias_gelu_f16.json");
    akg::validate_composite(odd);
    GemmPart odd_part(odd, akg::target_named("x86-64-v4"));
    akg::plan_contraction(odd_part.model(), odd_part.options());
    code = emitted_code(odd_part, odd);
    EXPECT_EQ(count(code, "if (akg_nv == 32) akg_epilogue(std::integral_constant<int64_t, 32>());"), 1u) << code;
    EXPECT_EQ(count(code, "else akg_epilogue(akg_nv);"), 1u) << code;

    const std::string f16 = R"("data_type": "float16", "format": "DefaultFormat")";
    const std::string text = R"({"composite": true, "op": "bias_half", "process": "cpu", "platform": "AKG",
      "input_desc": [[{)" + f16 + R"(, "shape": [19, 7], "tensor_name": "x"}], [{)" + f16 + R"(, "shape": [7, 40], "tensor_name": "w"}],
                     [{)" + f16 + R"(, "shape": [40], "tensor_name": "b"}]],
      "output_desc": [{)" + f16 + R"(, "shape": [19, 40], "tensor_name": "y"}],
      "op_desc": [
        {"name": "MatMul", "attr": [{"name": "transpose_a", "data_type": "bool", "value": false},
                                    {"name": "transpose_b", "data_type": "bool", "value": false}],
         "input_desc": [[{)" + f16 + R"(, "shape": [19, 7], "tensor_name": "x"}], [{)" + f16 + R"(, "shape": [7, 40], "tensor_name": "w"}]],
         "output_desc": [{)" + f16 + R"(, "shape": [19, 40], "tensor_name": "c"}]},
        {"name": "Add", "attr": null,
         "input_desc": [[{)" + f16 + R"(, "shape": [19, 40], "tensor_name": "c"}], [{)" + f16 + R"(, "shape": [40], "tensor_name": "b"}]],
         "output_desc": [{)" + f16 + R"(, "shape": [19, 40], "tensor_name": "t"}]},
        {"name": "Mul", "attr": null,
         "input_desc": [[{)" + f16 + R"(, "shape": [19, 40], "tensor_name": "t"}], [{)" + f16 + R"(, "shape": [], "tensor_name": "half", "value": 0.5}]],
         "output_desc": [{)" + f16 + R"(, "shape": [19, 40], "tensor_name": "y"}]}]})";
    akg::CompositeKernel one = akg::parse_composite(text, "bias_half.json");
    akg::validate_composite(one);
    GemmPart one_part(one, akg::target_named("x86-64-v4"));
    akg::plan_contraction(one_part.model(), one_part.options());
    ASSERT_TRUE(one_part.model().contraction->staged_float16_epilogue);
    code = emitted_code(one_part, one);
    EXPECT_EQ(count(code, "akg_round_f16_n(akg_akgr"), 1u) << code;
    EXPECT_EQ(code.find("akg_epilogue"), std::string::npos) << code;
}

TEST(TileContraction, EveryMicroKernelMarkOfTheAstKnowsItsTile) {
    GemmPart part(load("bmm_attn_context_f32"));
    akg::plan_contraction(part.model(), part.options());
    akg::tile_contraction(part.model(), part.options());
    isl_ast_node *ast = akg::build_contraction_ast(part.model());
    ASSERT_NE(ast, nullptr);
    struct Found {
        int marks = 0, annotated = 0;
    } found;
    isl_ast_node_foreach_descendant_top_down(
        ast,
        [](isl_ast_node *node, void *user) -> isl_bool {
            if (!akg::mark_as<akg::mark::MicroKernel>(node)) return isl_bool_true;
            auto *f = static_cast<Found *>(user);
            ++f->marks;
            isl_id *id = isl_ast_node_get_annotation(node);
            f->annotated += id != nullptr;
            isl_id_free(id);
            return isl_bool_false; // the point loops below are not emitted
        },
        &found);
    isl_ast_node_free(ast);
    EXPECT_GE(found.marks, 1);
    EXPECT_EQ(found.annotated, found.marks);
}

TEST(TileContraction, AnEmptyProductRunsAsAReduction) {
    // K = 0: a sum of no terms, which the reduction path initializes; the GEMM path is not taken.
    akg::CompositeKernel k = akg::parse_composite(R"({"op": "k0", "input_desc": [[{"data_type": "float32", "shape": [5, 0], "tensor_name": "a"}],
        [{"data_type": "float32", "shape": [0, 7], "tensor_name": "b"}]], "output_desc": [{"data_type": "float32", "shape": [5, 7], "tensor_name": "c"}],
        "op_desc": [{"name": "MatMul", "attr": [], "input_desc": [[{"data_type": "float32", "shape": [5, 0], "tensor_name": "a"}],
        [{"data_type": "float32", "shape": [0, 7], "tensor_name": "b"}]], "output_desc": [{"data_type": "float32", "shape": [5, 7], "tensor_name": "c"}]}]})",
                                                  "k0.json");
    akg::validate_composite(k);
    GemmPart part(k);
    EXPECT_FALSE(part.has_contraction());
}

} // namespace
