// Golden tests of the pipeline: the schedule trees isl produces for row kernels, and the code
// that follows them.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "driver/pipeline.h"

namespace {

std::string dump_after(const std::string &pattern, const std::string &pass) {
    akg::CompositeKernel kernel = akg::load_composite(std::string(AKG_SOURCE_ROOT) + "/patterns/" + pattern);
    akg::PipelineOptions o;
    o.emit.kernel_name = o.emit.symbol = "golden";
    o.emit.pattern_file = pattern;
    std::ostringstream dump;
    o.dump_after = pass;
    o.dump = &dump;
    akg::run_pipeline(kernel, o);
    return dump.str();
}

size_t count(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
    return n;
}

// The tree is: domain → mark "parallel" → a one-member coincident band (the rows) → a sequence
// of the reductions and the elementwise tail. Nothing lies outside that band.
void expect_one_fused_parallel_row_loop(const std::string &pattern) {
    std::string tree = dump_after(pattern, "promote");
    SCOPED_TRACE(tree);
    EXPECT_EQ(count(tree, "mark: \"parallel_"), 1u);
    std::regex shape(R"(domain: "[^"]*"\nchild:\n  mark: "parallel_\d"\n  child:\n    schedule: "[^"]*"\n    permutable: 1\n    coincident: \[ 1(, 1)* \]\n    child:\n      sequence:)");
    EXPECT_TRUE(std::regex_search(tree, shape)) << "expected one parallel row band above a sequence";
    std::string code = dump_after(pattern, "emit");
    EXPECT_EQ(count(code, "#pragma omp parallel for"), 1u) << code;
    EXPECT_GE(count(code, "#pragma omp simd"), 1u) << code;
}

TEST(PipelineGolden, LayerNormIsOneFusedParallelRowLoop) { expect_one_fused_parallel_row_loop("layernorm_fwd_f32.json"); }

TEST(PipelineGolden, SoftmaxIsOneFusedParallelRowLoop) { expect_one_fused_parallel_row_loop("mlm_bias_log_softmax_f32.json"); }

TEST(PipelineGolden, AttentionSoftmaxIsOneFusedParallelLoopNest) {
    expect_one_fused_parallel_row_loop("attention_softmax_dropout_f32.json");
}

TEST(PipelineGolden, RowStatisticsArePromotedToLocals) {
    std::string promote = dump_after("layernorm_fwd_f32.json", "promote");
    EXPECT_NE(promote.find("local [1,1] at offset (c0, 0)"), std::string::npos) << promote;
    EXPECT_EQ(promote.find("kernel-wide scratch"), std::string::npos) << promote;
}

TEST(PipelineGolden, SoftmaxRowOfExponentialsIsALocalBuffer) {
    std::string promote = dump_after("mlm_bias_log_softmax_f32.json", "promote");
    // The exponentials of a row (or of the rows of one parallel iteration) stay local.
    EXPECT_EQ(promote.find("kernel-wide scratch"), std::string::npos) << promote;
}

TEST(PipelineGolden, FullVectorTilesAreIsolated) {
    std::string tree = dump_after("layernorm_fwd_f32.json", "vectorize");
    EXPECT_NE(tree.find("isolate["), std::string::npos) << tree;
    EXPECT_NE(tree.find("mark: \"simd\""), std::string::npos) << tree;
}

TEST(PipelineGolden, EveryPassCanBeDumped) {
    for (const auto &pass : akg::pipeline_pass_names()) {
        std::string text = dump_after("add_relu_f32.json", pass);
        EXPECT_NE(text.find("// ---- after " + pass + " ----"), std::string::npos) << pass;
    }
}

TEST(PipelineGolden, OutputIsReproducible) {
    EXPECT_EQ(dump_after("layernorm_fwd_f16.json", "emit"), dump_after("layernorm_fwd_f16.json", "emit"));
}

} // namespace
