// Reading composite JSON into CompositeKernel. Only structure is checked here; the meaning of
// ops and shapes is checked by validate_composite (shape_inference.cpp).
#include "frontend/composite_kernel.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace akg {

namespace {

// Limits that keep every later pass well-defined (64-bit index arithmetic without overflow)
// and its run time bounded; far above any real fused kernel (the corpus has at most 43 ops
// and 233008 elements per dimension). Exceeding one is a UserError naming the limit.
constexpr int64_t kMaxTensorElements = int64_t{1} << 48; // product of the dimensions (0 counted as 1)
constexpr size_t kMaxOps = 1024;

struct Context {
    const std::string &source;
    std::string where; // "input_desc[0][1]" etc.
};

[[noreturn]] void fail(const Context &ctx, const std::string &problem) {
    throw UserError(ctx.source + ": " + ctx.where + ": " + problem);
}

const nlohmann::json &member(const Context &ctx, const nlohmann::json &object, const char *key) {
    auto it = object.find(key);
    if (it == object.end()) fail(ctx, std::string("missing \"") + key + "\"");
    return *it;
}

TensorDesc parse_tensor(const Context &ctx, const nlohmann::json &j) {
    if (!j.is_object()) fail(ctx, "a tensor description must be an object");
    TensorDesc t;
    const auto &name = member(ctx, j, "tensor_name");
    if (!name.is_string() || name.get<std::string>().empty()) fail(ctx, "\"tensor_name\" must be a non-empty string");
    t.name = name.get<std::string>();
    const auto &shape = member(ctx, j, "shape");
    if (!shape.is_array()) fail(ctx, "tensor " + t.name + ": \"shape\" must be a list of integers");
    for (const auto &d : shape) {
        if (!d.is_number_integer()) fail(ctx, "tensor " + t.name + ": \"shape\" must be a list of integers");
        if (d.get<int64_t>() < 0) fail(ctx, "tensor " + t.name + ": negative dimension in shape");
        t.shape.push_back(d.get<int64_t>());
    }
    if (t.shape.size() > 8) fail(ctx, "tensor " + t.name + ": rank " + std::to_string(t.shape.size()) + " exceeds 8");
    int64_t extent = 1; // every dimension and every stride stays below the limit, even with a 0 dimension
    for (int64_t d : t.shape)
        if (__builtin_mul_overflow(extent, std::max<int64_t>(d, 1), &extent) || extent > kMaxTensorElements)
            fail(ctx, "tensor " + t.name + ": shape " + shape_string(t.shape) + " exceeds the limit of 2^48 elements");
    const auto &dt = member(ctx, j, "data_type");
    if (!dt.is_string()) fail(ctx, "tensor " + t.name + ": \"data_type\" must be a string");
    auto dtype = parse_dtype(dt.get<std::string>());
    if (!dtype) fail(ctx, "tensor " + t.name + ": unknown data_type \"" + dt.get<std::string>() + "\"");
    t.dtype = *dtype;
    if (auto f = j.find("format"); f != j.end() && f->is_string()) t.format = f->get<std::string>();
    if (auto v = j.find("value"); v != j.end() && !v->is_null()) {
        if (v->is_boolean()) t.value = v->get<bool>() ? 1.0 : 0.0;
        else if (v->is_number()) t.value = v->get<double>();
        else fail(ctx, "tensor " + t.name + ": \"value\" must be a number or a bool");
        if (element_count(t.shape) != 1) fail(ctx, "tensor " + t.name + ": an inline \"value\" must have one element");
        if (!dtype_is_float(t.dtype) && t.dtype != DType::Bool) {
            // An integer constant must be representable in its dtype (converting it is
            // otherwise undefined).
            double lo = t.dtype == DType::Int8 ? -128.0 : t.dtype == DType::UInt8 ? 0.0 : t.dtype == DType::Int32 ? -0x1p31 : -0x1p63;
            double hi = t.dtype == DType::Int8 ? 128.0 : t.dtype == DType::UInt8 ? 256.0 : t.dtype == DType::Int32 ? 0x1p31 : 0x1p63;
            double truncated = std::trunc(*t.value);
            if (!(truncated >= lo && truncated < hi)) // also false for NaN
                fail(ctx, "tensor " + t.name + ": value " + v->dump() + " is out of the range of " + dtype_name(t.dtype));
        }
    }
    return t;
}

std::vector<TensorDesc> parse_tensor_list(Context ctx, const nlohmann::json &j, const std::string &what) {
    std::vector<TensorDesc> out;
    if (j.is_null()) return out;
    if (!j.is_array()) { ctx.where = what; fail(ctx, "must be a list"); }
    for (size_t i = 0; i < j.size(); ++i) {
        ctx.where = what + "[" + std::to_string(i) + "]";
        out.push_back(parse_tensor(ctx, j[i]));
    }
    return out;
}

std::vector<std::vector<TensorDesc>> parse_nested(Context ctx, const nlohmann::json &j, const std::string &what) {
    std::vector<std::vector<TensorDesc>> out;
    if (j.is_null()) return out;
    if (!j.is_array()) { ctx.where = what; fail(ctx, "must be a list of lists"); }
    for (size_t i = 0; i < j.size(); ++i) {
        if (!j[i].is_array()) { ctx.where = what + "[" + std::to_string(i) + "]"; fail(ctx, "must be a list"); }
        out.push_back(parse_tensor_list(ctx, j[i], what + "[" + std::to_string(i) + "]"));
    }
    return out;
}

} // namespace

CompositeKernel parse_composite(const std::string &text, const std::string &source) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception &e) { // parse_error, and out_of_range for a number like 1e30832
        throw UserError(source + ": malformed JSON: " + e.what());
    }
    Context ctx{source, "top level"};
    if (!j.is_object()) fail(ctx, "the composite description must be a JSON object");

    CompositeKernel kernel;
    kernel.source = source;
    const auto &op = member(ctx, j, "op");
    if (!op.is_string() || op.get<std::string>().empty()) fail(ctx, "\"op\" (the kernel name) must be a non-empty string");
    kernel.name = op.get<std::string>();
    if (j.contains("float16_intermediates")) {
        const auto &mode = j.at("float16_intermediates");
        if (!mode.is_string() || (mode != "float16" && mode != "float32"))
            fail(ctx, "\"float16_intermediates\" must be \"float16\" (round every float16 op, the default) or \"float32\"");
        kernel.float16_per_op = mode == "float16";
    }

    for (auto &group : parse_nested(ctx, member(ctx, j, "input_desc"), "input_desc"))
        for (auto &t : group)
            if (!t.value) kernel.inputs.push_back(std::move(t));
    kernel.outputs = parse_tensor_list(ctx, member(ctx, j, "output_desc"), "output_desc");

    const auto &ops = member(ctx, j, "op_desc");
    if (!ops.is_array()) fail(ctx, "\"op_desc\" must be a list");
    if (ops.size() > kMaxOps)
        fail(ctx, "\"op_desc\" has " + std::to_string(ops.size()) + " ops, more than the limit of " + std::to_string(kMaxOps));
    for (size_t i = 0; i < ops.size(); ++i) {
        const auto &o = ops[i];
        Context octx{source, "op #" + std::to_string(i)};
        if (!o.is_object()) fail(octx, "must be an object");
        OpDesc desc;
        desc.index = static_cast<int>(i);
        const auto &name = member(octx, o, "name");
        if (!name.is_string()) fail(octx, "\"name\" must be a string");
        desc.name = name.get<std::string>();
        octx.where += " (" + desc.name + ")";
        desc.inputs = parse_nested(octx, member(octx, o, "input_desc"), octx.where + " input_desc");
        desc.outputs = parse_tensor_list(octx, member(octx, o, "output_desc"), octx.where + " output_desc");
        if (auto a = o.find("attr"); a != o.end() && !a->is_null()) {
            if (!a->is_array()) fail(octx, "\"attr\" must be a list or null");
            for (const auto &attr : *a) {
                if (!attr.is_object() || !attr.contains("name") || !attr["name"].is_string() || !attr.contains("value"))
                    fail(octx, "each attr must be an object with \"name\" and \"value\"");
                Attr parsed{attr["name"].get<std::string>(), attr["value"], ""};
                if (auto dt = attr.find("data_type"); dt != attr.end() && dt->is_string()) parsed.data_type = dt->get<std::string>();
                desc.attrs.push_back(std::move(parsed));
            }
        }
        kernel.ops.push_back(std::move(desc));
    }
    return kernel;
}

CompositeKernel load_composite(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UserError(path + ": cannot open file");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_composite(text.str(), path);
}

const Attr *OpDesc::find_attr(const std::string &attr_name) const {
    for (const auto &a : attrs)
        if (a.name == attr_name) return &a;
    return nullptr;
}

} // namespace akg
