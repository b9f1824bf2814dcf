// Bad pattern input: each kind of mistake gets a message naming the file, the op (index and
// name) and the problem.
#include <gtest/gtest.h>

#include "driver/pipeline.h"

namespace {

const char *kGood = R"({"composite": true, "op": "k", "process": "cpu",
 "input_desc": [[{"tensor_name": "x", "shape": [4, 8], "data_type": "float32", "format": "DefaultFormat"}],
                [{"tensor_name": "b", "shape": [8], "data_type": "float32", "format": "DefaultFormat"}]],
 "output_desc": [{"tensor_name": "s", "shape": [4, 1], "data_type": "float32", "format": "DefaultFormat"}],
 "op_desc": [
  {"name": "Add", "attr": null,
   "input_desc": [[{"tensor_name": "x", "shape": [4, 8], "data_type": "float32", "format": "DefaultFormat"}],
                  [{"tensor_name": "b", "shape": [8], "data_type": "float32", "format": "DefaultFormat"}]],
   "output_desc": [{"tensor_name": "y", "shape": [4, 8], "data_type": "float32", "format": "DefaultFormat"}]},
  {"name": "ReduceSum", "attr": [{"name": "axis", "value": [1], "data_type": "listInt"}, {"name": "keep_dims", "value": true, "data_type": "bool"}],
   "input_desc": [[{"tensor_name": "y", "shape": [4, 8], "data_type": "float32", "format": "DefaultFormat"}]],
   "output_desc": [{"tensor_name": "s", "shape": [4, 1], "data_type": "float32", "format": "DefaultFormat"}]}]})";

std::string replace(std::string text, const std::string &from, const std::string &to) {
    size_t pos = text.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    if (pos != std::string::npos) text.replace(pos, from.size(), to);
    return text;
}

std::string error_of(const std::string &text) {
    try {
        akg::CompositeKernel k = akg::parse_composite(text, "patterns/bad.json");
        akg::validate_composite(k);
    } catch (const akg::UserError &e) {
        return e.what();
    }
    return "";
}

void expect_error(const std::string &text, const std::vector<std::string> &parts) {
    std::string message = error_of(text);
    ASSERT_FALSE(message.empty()) << "no error";
    for (const auto &p : parts) EXPECT_NE(message.find(p), std::string::npos) << "missing '" << p << "' in: " << message;
}

TEST(BadPatterns, TheGoodOneIsAccepted) { EXPECT_EQ(error_of(kGood), ""); }

TEST(BadPatterns, MalformedJson) { expect_error(std::string(kGood).substr(0, 200), {"patterns/bad.json", "malformed JSON"}); }

TEST(BadPatterns, UnknownOp) {
    expect_error(replace(kGood, "\"name\": \"Add\"", "\"name\": \"Frobnicate\""),
                 {"patterns/bad.json", "op #0 (Frobnicate)", "unknown op"});
}

TEST(BadPatterns, UnknownDtype) {
    expect_error(replace(kGood, "\"shape\": [8], \"data_type\": \"float32\"", "\"shape\": [8], \"data_type\": \"float7\""),
                 {"patterns/bad.json", "unknown data_type \"float7\""});
}

TEST(BadPatterns, DanglingTensorName) {
    expect_error(replace(kGood, "[[{\"tensor_name\": \"y\"", "[[{\"tensor_name\": \"nowhere\""),
                 {"patterns/bad.json", "op #1 (ReduceSum)", "nowhere", "neither a kernel input nor produced"});
}

TEST(BadPatterns, MissingTensorName) {
    expect_error(replace(kGood, "{\"tensor_name\": \"b\", \"shape\": [8],", "{\"shape\": [8],"),
                 {"patterns/bad.json", "missing \"tensor_name\""});
}

TEST(BadPatterns, AttributeOfTheWrongType) {
    expect_error(replace(kGood, "\"value\": [1]", "\"value\": \"one\""),
                 {"patterns/bad.json", "op #1 (ReduceSum)", "attribute \"axis\""});
}

TEST(BadPatterns, ShapesThatDoNotBroadcast) {
    std::string text = replace(kGood, "\"tensor_name\": \"b\", \"shape\": [8]", "\"tensor_name\": \"b\", \"shape\": [5]");
    text = replace(text, "\"tensor_name\": \"b\", \"shape\": [8]", "\"tensor_name\": \"b\", \"shape\": [5]");
    expect_error(text, {"patterns/bad.json", "op #0 (Add)", "do not broadcast", "x[4,8]", "b[5]"});
}

TEST(BadPatterns, OutputShapeDisagreesWithInference) {
    std::string text = replace(kGood, "\"output_desc\": [{\"tensor_name\": \"y\", \"shape\": [4, 8]",
                               "\"output_desc\": [{\"tensor_name\": \"y\", \"shape\": [4, 9]");
    expect_error(text, {"patterns/bad.json", "op #0 (Add)", "declared with shape [4,9]", "produces [4,8]"});
}

TEST(BadPatterns, UnsupportedOpIsNamed) {
    expect_error(replace(kGood, "\"name\": \"Add\"", "\"name\": \"Conv2D\""), {"op #0 (Conv2D)", "not supported"});
}

// x [4, 8] . b [8]: MatMul's operands must be matrices whose reduced dimensions agree, in a
// layout a CPU reads.
TEST(BadPatterns, MatMulShapesAndLayouts) {
    std::string mm = replace(kGood, "\"name\": \"Add\"", "\"name\": \"MatMul\"");
    expect_error(mm, {"op #0 (MatMul)", "rank-2 inputs", "[4,8] and [8]"});
    std::string square = replace(replace(mm, "\"shape\": [8], \"data_type\": \"float32\", \"format\": \"DefaultFormat\"}]],\n \"output",
                                         "\"shape\": [4, 8], \"data_type\": \"float32\", \"format\": \"DefaultFormat\"}]],\n \"output"),
                                 "[{\"tensor_name\": \"b\", \"shape\": [8]", "[{\"tensor_name\": \"b\", \"shape\": [4, 8]");
    expect_error(square, {"op #0 (MatMul)", "reduced dimensions differ", "x[4,8] x b[4,8]"});
    std::string fractal = replace(square, "{\"name\": \"MatMul\", \"attr\": null",
                                  "{\"name\": \"MatMul\", \"attr\": [{\"name\": \"left_format\", \"value\": \"FRACTAL_NZ\", \"data_type\": \"str\"}]");
    expect_error(fractal, {"op #0 (MatMul)", "FRACTAL_NZ", "fractal"});
}

TEST(BadPatterns, MissingFile) {
    try {
        akg::load_composite("/nonexistent/k.json");
        FAIL();
    } catch (const akg::UserError &e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/k.json: cannot open"), std::string::npos);
    }
}

// One op applied to x[4, 8] (and more inputs as given) with attributes: the kGood layout.
std::string one_op(const std::string &op, const std::string &attrs, const std::string &extra_inputs, const std::string &out_shape,
                   const std::string &out_dtype = "float32") {
    return R"({"composite": true, "op": "k", "process": "cpu",
 "input_desc": [[{"tensor_name": "x", "shape": [4, 8], "data_type": "float32", "format": "DefaultFormat"}],
                [{"tensor_name": "i", "shape": [3], "data_type": "int32", "format": "DefaultFormat"}]],
 "output_desc": [{"tensor_name": "y", "shape": )" + out_shape + R"(, "data_type": ")" + out_dtype + R"(", "format": "DefaultFormat"}],
 "op_desc": [{"name": ")" + op + R"(", "attr": )" + attrs + R"(,
   "input_desc": [[{"tensor_name": "x", "shape": [4, 8], "data_type": "float32", "format": "DefaultFormat"}])" + extra_inputs + R"(],
   "output_desc": [{"tensor_name": "y", "shape": )" + out_shape + R"(, "data_type": ")" + out_dtype + R"(", "format": "DefaultFormat"}]}]})";
}

const std::string kIndexInput = R"(, [{"tensor_name": "i", "shape": [3], "data_type": "int32", "format": "DefaultFormat"}])";
const std::string kFloatIndexInput = R"(, [{"tensor_name": "x", "shape": [4, 8], "data_type": "float32", "format": "DefaultFormat"}])";

TEST(BadPatterns, NewOpsAreAcceptedWithGoodAttributes) {
    EXPECT_EQ(error_of(one_op("Gather", R"([{"name": "axis", "value": [1], "data_type": "listInt"}])", kIndexInput, "[4, 3]")), "");
    EXPECT_EQ(error_of(one_op("StridedSlice", R"([{"name": "begin", "value": [0, -1]}, {"name": "end", "value": [4, 0]}, {"name": "strides", "value": [2, -3]}])", "", "[2, 3]")), "");
    EXPECT_EQ(error_of(one_op("Argmax", R"([{"name": "axis", "value": -1}])", "", "[4]", "int32")), "");
}

TEST(BadPatterns, IntentionallyUnsupportedOpsSayWhy) {
    expect_error(one_op("Custom", "null", "", "[4, 8]"), {"op #0 (Custom)", "not supported", "user Python"});
    expect_error(one_op("CSRMV", "null", "", "[4, 8]"), {"op #0 (CSRMV)", "sparse CSR"});
    expect_error(one_op("StandardNormal", "null", "", "[4, 8]"), {"random ops"});
}

TEST(BadPatterns, NewOpAttributesAndShapes) {
    expect_error(one_op("StridedSlice", R"([{"name": "begin", "value": [0, 0]}, {"name": "end", "value": [4, 8]}, {"name": "strides", "value": [1, 0]}])", "", "[4, 8]"),
                 {"op #0 (StridedSlice)", "strides[1] is 0"});
    expect_error(one_op("StridedSlice", R"([{"name": "begin", "value": [9]}, {"name": "end", "value": [10]}, {"name": "shrink_axis_mask", "value": 1}])", "", "[8]"),
                 {"out of range"});
    expect_error(one_op("Gather", R"([{"name": "axis", "value": 0}])", kFloatIndexInput, "[4, 8, 8]"), {"op #0 (Gather)", "indices must be int32 or int64"});
    expect_error(one_op("Gather", R"([{"name": "axis", "value": 2}])", kIndexInput, "[4, 3]"), {"axis 2 is out of range"});
    expect_error(one_op("TransData", R"([{"name": "src_format", "value": "DefaultFormat"}, {"name": "dst_format", "value": "FRACTAL_NZ"}])", "", "[4, 8]"),
                 {"FRACTAL_NZ", "Ascend layout"});
    expect_error(one_op("Argmax", R"([{"name": "axis", "value": 1}])", "", "[4]"), {"indices are int32 or int64"});
    expect_error(one_op("PadAkg", R"([{"name": "head", "value": [1]}, {"name": "tail", "value": [0, 0]}])", "", "[5, 8]"), {"one entry per dimension"});
    expect_error(one_op("Pool2D", R"([{"name": "pool_type", "value": "median"}])", "", "[4, 8]"), {"rank-4"});
    expect_error(one_op("UnsortedSegmentSum", R"([{"name": "num_segments", "value": 0}])", kIndexInput, "[0, 8]"), {"num_segments must be one positive integer"});
    expect_error(one_op("UnsortedSegmentSum", R"([{"name": "num_segments", "value": 5}])", kIndexInput, "[5, 8]"), {"segment_ids", "prefix"});
    expect_error(one_op("CumSum", R"([{"name": "axis", "value": 3}])", "", "[4, 8]"), {"axis 3 is out of range"});
    expect_error(one_op("OneHot", R"([{"name": "depth", "value": 0}])", "", "[4, 8, 0]"), {"expects 3 input tensors"});
}

} // namespace
