// Per-pass tests of the ops of docs/OPS.md: what the lowering makes of them (formula IR), how
// fold-dimensions treats index variables used as values, the accesses isl sees for
// data-dependent indices, and which ops become sequential parts (kernel_parts.h).
#include <gtest/gtest.h>

#include <sstream>

#include <isl/ctx.h>
#include <isl/options.h>

#include "driver/pipeline.h"
#include "frontend/composite_kernel.h"
#include "frontend/kernel_parts.h"
#include "lower/lower_to_halide.h"
#include "passes/fold_dimensions.h"
#include "passes/materialize.h"
#include "passes/simplify_stages.h"
#include "poly/poly_model.h"

namespace {

akg::CompositeKernel op_test(const std::string &name) {
    akg::CompositeKernel k = akg::load_composite(std::string(AKG_SOURCE_ROOT) + "/tests/ops/" + name + ".json");
    akg::validate_composite(k);
    return k;
}

// The graph after lower, materialize and simplify: what fold-dimensions receives.
akg::TensorGraph before_fold(const akg::CompositeKernel &kernel) {
    akg::TensorGraph graph = akg::lower_to_halide(kernel);
    akg::materialize_and_inline(graph, true);
    akg::simplify_stages(graph);
    return graph;
}

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

TEST(OpLowering, StridedSliceIsAnAffineIndexMap) {
    std::string ir = akg::dump_graph(akg::lower_to_halide(op_test("stridedslice_negative_stride")));
    // begin -1 (8 of 9) stepping by -2 along dimension 0; dimension 1 whole.
    EXPECT_TRUE(contains(ir, "output_0_2[4,5] = (float32)T$output_0_1((int64)8 + ((int64)i0*(int64)-2), (int64)0 + ((int64)i1*(int64)1))")) << ir;
}

TEST(OpLowering, ArgmaxIsAMaximumThenTheFirstIndexHoldingIt) {
    std::string ir = akg::dump_graph(akg::lower_to_halide(op_test("argmax_float32_6x19")));
    EXPECT_TRUE(contains(ir, "output_0_2$extreme[6] = max over r[19]")) << ir;
    EXPECT_TRUE(contains(ir, "output_0_2[6] = min over r[19] of select((uint1)akg_feq(")) << ir;
    EXPECT_TRUE(contains(ir, "|| (uint1)akg_isnan((float32)T$output_0_1((int64)i0, (int64)r0)), int32((int64)r0), 19)")) << ir;
}

// The reduction form of a scatter (the lowering's; sequential parts replace it when every
// operand is a tensor) compares output indices with index values: those dimensions must not
// fold, while dimensions that only index reads still do.
TEST(FoldDimensions, IndicesComparedWithValuesDoNotFold) {
    akg::TensorGraph scatter = before_fold(op_test("tensorscatteradd_2d_f16"));
    akg::fold_dimensions(scatter);
    std::string ir = akg::dump_graph(scatter);
    EXPECT_TRUE(contains(ir, "input  input_0[5,6,3] float16")) << ir;
    EXPECT_FALSE(contains(ir, "[30,3]")) << ir;
    akg::TensorGraph onehot = before_fold(op_test("onehot_axis_last"));
    akg::fold_dimensions(onehot);
    ir = akg::dump_graph(onehot);
    EXPECT_TRUE(contains(ir, "input  input_0[24] int32")) << ir;
}

// A data-dependent index is not affine: isl sees the read of the whole indexed dimension.
TEST(PolyModel, GathersReadTheWholeIndexedDimension) {
    akg::TensorGraph graph = before_fold(op_test("gathernd_f32"));
    isl_ctx *ctx = isl_ctx_alloc();
    {
        akg::PolyModel m = akg::build_poly_model(ctx, graph);
        std::ostringstream os;
        os << m.reads;
        std::string reads = os.str();
        EXPECT_TRUE(contains(reads, "-> in0[x0, x1, i1] : 0 <= i0 <= 3 and 0 <= i1 <= 2 and 0 <= x0 <= 5 and 0 <= x1 <= 6")) << reads;
        EXPECT_TRUE(contains(reads, "-> in1[i0, 0]")) << reads;
        EXPECT_TRUE(contains(reads, "-> in1[i0, 1]")) << reads;
    }
    isl_ctx_free(ctx);
}

TEST(KernelParts, ScattersScansAndPoolsAreDirectParts) {
    akg::KernelParts parts = akg::split_kernel_parts(op_test("cumsum_reducesum_inplace_f32"));
    ASSERT_EQ(parts.parts.size(), 2u);
    EXPECT_TRUE(parts.parts[0].direct);
    EXPECT_EQ(parts.parts[0].kernel.ops.size(), 1u);
    EXPECT_FALSE(parts.parts[1].direct);
    EXPECT_EQ(parts.parts[1].kernel.ops.size(), 2u); // ReduceSum and InplaceAssign, fused
    EXPECT_TRUE(akg::needs_parts(op_test("unsortedsegmentsum_f32")));
    EXPECT_FALSE(akg::needs_parts(op_test("gather_embedding_f32")));
}

TEST(EmitDirect, RowsAreAddedInOrderAcrossThreadChunks) {
    akg::PipelineOptions o;
    o.emit.symbol = "k";
    std::string code = akg::run_pipeline(op_test("unsortedsegmentsum_f32"), o);
    // The Exp before it is a part of its own; the scatter walks its 12 rows in order.
    EXPECT_TRUE(contains(code, "UnsortedSegmentSum: 12 rows in order into 6 slices of 5 elements.")) << code;
    EXPECT_TRUE(contains(code, "if (i0 < 0 || i0 >= 6) continue;")) << code;
}

} // namespace

namespace {

// An input assigned in place by one part and read by a later one: the later part reads a copy
// of the input taken before any part runs (every op reads the input's value before the kernel).
TEST(RunParts, LaterPartsReadAnInputAssignedInPlaceFromACopy) {
    akg::CompositeKernel k =
        akg::load_composite(std::string(AKG_SOURCE_ROOT) + "/tests/difftest/regressions/cumsum_reads_inplace_assigned_input.json");
    akg::validate_composite(k);
    akg::PipelineOptions o;
    o.emit.symbol = "k";
    std::string code = akg::run_pipeline(k, o);
    EXPECT_TRUE(contains(code, "memcpy(akg_before0, buffers[")) << code;
    EXPECT_TRUE(contains(code, "free(akg_before0);")) << code;
}

} // namespace
