// Validation of a parsed composite kernel: every tensor name resolves, every op is known,
// attributes have the right types, and each op's declared output shape and dtype agree with
// what its semantics infer (numpy broadcasting, reductions, reshapes, transposes).
#include "frontend/composite_kernel.h"
#include "frontend/op_table.h"
#include "frontend/strided_slice.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace akg {

namespace {

const std::set<std::string> kBinary = {"Add", "TensorAdd", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "Mod", "FloorMod", "Pow",
                                       "Atan2", "Maximum", "Minimum", "Greater", "GreaterEqual", "Less", "LessEqual",
                                       "Equal", "NotEqual", "LogicalOr", "LogicalAnd"};
const std::set<std::string> kSelect4 = {"SelectGE", "SelectGT", "SelectLE", "SelectLT"};
// Ops whose output dtype is theirs to declare (bool, or a number MindSpore chose).
const std::set<std::string> kCompare = {"Greater", "GreaterEqual", "Less", "LessEqual", "Equal",
                                        "NotEqual", "LogicalOr", "LogicalAnd", "LogicalNot", "IsInf",
                                        "IsNan", "IsFinite", "ElemAny", "ElemAll", "Round", "Argmax", "Argmin"};
// Index operands: integer tensors, whatever the output is.
const std::set<std::string> kIndexing = {"Gather", "GatherNd", "TensorScatterAdd", "UnsortedSegmentSum", "OneHot"};
const std::set<std::string> kDefaultFormats = {"", "DefaultFormat", "ND", "NCHW", "NHWC"};
const std::set<std::string> kReduce = {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"};

std::vector<const TensorDesc *> flat_inputs(const OpDesc &op) {
    std::vector<const TensorDesc *> out;
    for (const auto &g : op.inputs)
        for (const auto &t : g) out.push_back(&t);
    return out;
}

Shape broadcast(const CompositeKernel &kernel, const OpDesc &op, const std::vector<const TensorDesc *> &ins) {
    size_t rank = 0;
    for (auto *t : ins) rank = std::max(rank, t->shape.size());
    Shape out(rank, 1);
    for (auto *t : ins) {
        size_t off = rank - t->shape.size();
        for (size_t d = 0; d < t->shape.size(); ++d) {
            int64_t a = out[off + d], b = t->shape[d];
            if (a == b || b == 1) continue;
            if (a == 1) { out[off + d] = b; continue; }
            std::string shapes;
            for (auto *u : ins) shapes += (shapes.empty() ? "" : " and ") + u->name + shape_string(u->shape);
            op_error(kernel, op, "shapes do not broadcast: " + shapes);
        }
    }
    return out;
}

// MatMul: [M, K] x [K, N]; BatchMatMul: [..., M, K] x [..., K, N] with numpy-broadcast batch
// dimensions (MindSpore's, also with one side of rank 2); transposes swap the last two
// dimensions of their side. An optional third input is a bias over the N columns.
Shape contraction_shape(const CompositeKernel &kernel, const OpDesc &op, const std::vector<const TensorDesc *> &ins) {
    if (ins.size() != 2 && ins.size() != 3)
        op_error(kernel, op, "expects 2 input tensors (and an optional bias), got " + std::to_string(ins.size()));
    for (const char *side : {"left_format", "right_format"}) {
        std::string f = attr_string(kernel, op, side);
        if (!f.empty() && f != "DefaultFormat" && f != "ND")
            op_error(kernel, op, std::string(side) + " " + f + " is an Ascend fractal layout; only DefaultFormat is supported on CPUs");
    }
    const Shape &a = ins[0]->shape, &b = ins[1]->shape;
    bool batch = op.name == "BatchMatMul";
    if (!batch && (a.size() != 2 || b.size() != 2))
        op_error(kernel, op, "MatMul takes rank-2 inputs, got " + shape_string(a) + " and " + shape_string(b));
    if (a.size() < 2 || b.size() < 2)
        op_error(kernel, op, "inputs must have rank 2 or more, got " + shape_string(a) + " and " + shape_string(b));
    bool ta = attr_bool(kernel, op, "transpose_a", false), tb = attr_bool(kernel, op, "transpose_b", false);
    int64_t m = a[a.size() - (ta ? 1 : 2)], ka = a[a.size() - (ta ? 2 : 1)];
    int64_t kb = b[b.size() - (tb ? 1 : 2)], n = b[b.size() - (tb ? 2 : 1)];
    if (ka != kb)
        op_error(kernel, op, "the reduced dimensions differ: " + ins[0]->name + shape_string(a) + (ta ? "^T" : "") + " x " + ins[1]->name +
                                 shape_string(b) + (tb ? "^T" : ""));
    TensorDesc ba{"a", Shape(a.begin(), a.end() - 2), DType::Float32, "", {}}, bb{"b", Shape(b.begin(), b.end() - 2), DType::Float32, "", {}};
    Shape out = broadcast(kernel, op, {&ba, &bb});
    out.push_back(m);
    out.push_back(n);
    if (ins.size() == 3 && !(ins[2]->shape == Shape{n} || element_count(ins[2]->shape) == 1))
        op_error(kernel, op, "bias " + ins[2]->name + shape_string(ins[2]->shape) + " must have shape [" + std::to_string(n) + "]");
    return out;
}


void require_integer(const CompositeKernel &kernel, const OpDesc &op, const TensorDesc &t, const char *what) {
    if (t.dtype != DType::Int32 && t.dtype != DType::Int64)
        op_error(kernel, op, std::string(what) + " " + t.name + " is " + dtype_name(t.dtype) + "; indices must be int32 or int64");
}

// Gather, GatherNd, TensorScatterAdd, UnsortedSegmentSum and OneHot (docs/OPS.md).
Shape indexing_shape(const CompositeKernel &kernel, const OpDesc &op, const std::vector<const TensorDesc *> &ins) {
    const std::string &n = op.name;
    size_t want = n == "TensorScatterAdd" || n == "OneHot" ? 3 : 2;
    if (ins.size() != want) op_error(kernel, op, "expects " + std::to_string(want) + " input tensors, got " + std::to_string(ins.size()));
    const Shape &x = ins[0]->shape;
    if (n == "OneHot") {
        require_integer(kernel, op, *ins[0], "indices");
        for (int k = 1; k <= 2; ++k)
            if (element_count(ins[k]->shape) != 1) op_error(kernel, op, "on_value and off_value must be scalars; " + ins[k]->name + " is " + shape_string(ins[k]->shape));
        auto depth = attr_int_list(kernel, op, "depth", true);
        if (depth.size() != 1 || depth[0] <= 0) op_error(kernel, op, "depth must be one positive integer");
        auto axis = attr_int_list(kernel, op, "axis", false);
        int64_t rank = static_cast<int64_t>(x.size()), a = axis.empty() ? -1 : axis[0];
        if (a == -1) a = rank;
        if (a < 0 || a > rank) op_error(kernel, op, "axis " + std::to_string(axis[0]) + " is out of range for indices of rank " + std::to_string(rank));
        Shape out = x;
        out.insert(out.begin() + a, depth[0]);
        return out;
    }
    const TensorDesc &idx = *ins[1];
    require_integer(kernel, op, idx, n == "UnsortedSegmentSum" ? "segment_ids" : "indices");
    if (n == "Gather") {
        int axis = single_axis(kernel, op, "axis", static_cast<int>(x.size()), 0);
        if (x.empty()) op_error(kernel, op, "params must have rank 1 or more");
        Shape out(x.begin(), x.begin() + axis);
        out.insert(out.end(), idx.shape.begin(), idx.shape.end());
        out.insert(out.end(), x.begin() + axis + 1, x.end());
        return out;
    }
    if (n == "UnsortedSegmentSum") {
        auto num = attr_int_list(kernel, op, "num_segments", true);
        if (num.size() != 1 || num[0] <= 0) op_error(kernel, op, "num_segments must be one positive integer");
        if (idx.shape.size() > x.size() || !std::equal(idx.shape.begin(), idx.shape.end(), x.begin()))
            op_error(kernel, op, "segment_ids " + shape_string(idx.shape) + " must be a prefix of the input shape " + shape_string(x));
        Shape out{num[0]};
        out.insert(out.end(), x.begin() + idx.shape.size(), x.end());
        return out;
    }
    // GatherNd and TensorScatterAdd: the last dimension of indices holds q coordinates.
    if (idx.shape.empty()) op_error(kernel, op, "indices must have rank 1 or more");
    bool flat = n == "TensorScatterAdd" && idx.shape.size() == 1;
    int64_t q = flat ? 1 : idx.shape.back();
    if (q < 1 || q > static_cast<int64_t>(x.size()))
        op_error(kernel, op, "indices " + shape_string(idx.shape) + " index " + std::to_string(q) + " dimensions of a rank-" + std::to_string(x.size()) + " tensor");
    Shape rows = flat ? idx.shape : Shape(idx.shape.begin(), idx.shape.end() - 1);
    Shape slice = rows;
    slice.insert(slice.end(), x.begin() + q, x.end());
    if (n == "GatherNd") return slice;
    if (ins[2]->shape != slice) op_error(kernel, op, "updates " + shape_string(ins[2]->shape) + " must have shape " + shape_string(slice));
    if (ins[2]->dtype != ins[0]->dtype) op_error(kernel, op, "updates must have the input's dtype");
    return x;
}

Shape pool_shape(const CompositeKernel &kernel, const OpDesc &op, const Shape &in) {
    PoolParams p = pool_params(kernel, op, in);
    Shape out = in;
    out[p.h_dim] = p.out_h;
    out[p.w_dim] = p.out_w;
    return out;
}

} // namespace

PoolParams pool_params(const CompositeKernel &kernel, const OpDesc &op, const Shape &in) {
    PoolParams p;
    if (in.size() != 4) op_error(kernel, op, "expects a rank-4 input, got " + shape_string(in));
    std::string type = attr_string(kernel, op, "pool_type");
    if (type != "max" && type != "avg") op_error(kernel, op, "pool_type must be \"max\" or \"avg\", got \"" + type + "\"");
    p.max = type == "max";
    std::string layout = attr_string(kernel, op, "data_layout");
    if (layout.empty()) layout = attr_string(kernel, op, "format");
    if (layout == "NHWC") p.h_dim = 1, p.w_dim = 2;
    else if (!layout.empty() && layout != "NCHW" && layout != "DefaultFormat")
        op_error(kernel, op, "data_layout " + layout + " is not supported; use NCHW or NHWC");
    p.global = op.name == "GlobalPool2D" || attr_number(kernel, op, "global", 0) != 0;
    if (p.global) {
        p.kh = in[p.h_dim], p.kw = in[p.w_dim];
        return p;
    }
    // One entry for both, two [h, w], or four in the data layout's order.
    auto hw = [&](const char *name, bool required, int64_t fallback) -> std::pair<int64_t, int64_t> {
        auto v = attr_int_list(kernel, op, name, required);
        if (v.empty()) return {fallback, fallback};
        if (v.size() == 1) return {v[0], v[0]};
        if (v.size() == 2) return {v[0], v[1]};
        if (v.size() == 4) return {v[p.h_dim], v[p.w_dim]};
        op_error(kernel, op, std::string("attribute \"") + name + "\" needs 2 entries (or 4 in the layout's order)");
    };
    std::tie(p.kh, p.kw) = hw("kernel_size", true, 1);
    std::tie(p.sh, p.sw) = hw("strides", false, 1);
    if (p.kh < 1 || p.kw < 1 || p.sh < 1 || p.sw < 1) op_error(kernel, op, "kernel_size and strides must be positive");
    auto pad = attr_int_list(kernel, op, "pad", false);
    if (pad.empty()) pad.assign(4, 0);
    if (pad.size() != 4) op_error(kernel, op, "pad needs 4 entries [top, bottom, left, right]");
    for (int64_t v : pad)
        if (v < 0) op_error(kernel, op, "pad must not be negative");
    p.pad_top = pad[0], p.pad_left = pad[2];
    bool ceil_mode = attr_number(kernel, op, "round_mode", 0) != 0;
    auto extent = [&](int64_t size, int64_t lo, int64_t hi, int64_t k, int64_t s) {
        int64_t span = size + lo + hi - k;
        if (span < 0) op_error(kernel, op, "the window " + std::to_string(k) + " exceeds the padded input " + std::to_string(size + lo + hi));
        return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    };
    p.out_h = extent(in[p.h_dim], pad[0], pad[1], p.kh, p.sh);
    p.out_w = extent(in[p.w_dim], pad[2], pad[3], p.kw, p.sw);
    return p;
}

bool is_contraction_op(const std::string &name) { return name == "MatMul" || name == "BatchMatMul"; }

void op_error(const CompositeKernel &kernel, const OpDesc &op, const std::string &problem) {
    throw UserError(kernel.source + ": op #" + std::to_string(op.index) + " (" + op.name + "): " + problem);
}

std::vector<int64_t> attr_int_list(const CompositeKernel &kernel, const OpDesc &op, const std::string &name,
                                   bool required) {
    const Attr *a = op.find_attr(name);
    if (!a) {
        if (required) op_error(kernel, op, "missing attribute \"" + name + "\"");
        return {};
    }
    std::vector<int64_t> out;
    if (a->value.is_number_integer()) return {a->value.get<int64_t>()};
    if (!a->value.is_array()) op_error(kernel, op, "attribute \"" + name + "\" must be an integer or a list of integers");
    for (const auto &v : a->value) {
        if (!v.is_number_integer()) op_error(kernel, op, "attribute \"" + name + "\" must be a list of integers");
        out.push_back(v.get<int64_t>());
    }
    return out;
}

bool attr_bool(const CompositeKernel &kernel, const OpDesc &op, const std::string &name, bool fallback) {
    const Attr *a = op.find_attr(name);
    if (!a || a->value.is_null()) return fallback;
    if (!a->value.is_boolean()) op_error(kernel, op, "attribute \"" + name + "\" must be a bool");
    return a->value.get<bool>();
}

std::string attr_string(const CompositeKernel &kernel, const OpDesc &op, const std::string &name) {
    const Attr *a = op.find_attr(name);
    if (!a || a->value.is_null()) return "";
    if (!a->value.is_string()) op_error(kernel, op, "attribute \"" + name + "\" must be a string");
    return a->value.get<std::string>();
}

int single_axis(const CompositeKernel &kernel, const OpDesc &op, const std::string &name, int rank, int fallback) {
    auto v = attr_int_list(kernel, op, name, false);
    if (v.empty()) return fallback;
    if (v.size() != 1) op_error(kernel, op, "attribute \"" + name + "\" must name one axis");
    int64_t a = v[0] < 0 ? v[0] + rank : v[0];
    if (a < 0 || a >= std::max(rank, 1)) op_error(kernel, op, "axis " + std::to_string(v[0]) + " is out of range for rank " + std::to_string(rank));
    return static_cast<int>(a);
}

double attr_number(const CompositeKernel &kernel, const OpDesc &op, const std::string &name, double fallback) {
    const Attr *a = op.find_attr(name);
    if (!a || a->value.is_null()) return fallback;
    if (a->value.is_boolean()) return a->value.get<bool>() ? 1.0 : 0.0;
    if (a->value.is_array() && a->value.size() == 1 && a->value[0].is_number()) return a->value[0].get<double>();
    if (!a->value.is_number()) op_error(kernel, op, "attribute \"" + name + "\" must be a number");
    return a->value.get<double>();
}

std::vector<int> reduction_axes(const CompositeKernel &kernel, const OpDesc &op, int input_rank) {
    std::vector<int64_t> raw = attr_int_list(kernel, op, "axis", false);
    std::vector<int> axes;
    if (raw.empty()) {
        for (int d = 0; d < input_rank; ++d) axes.push_back(d);
        return axes;
    }
    for (int64_t a : raw) {
        int64_t n = a < 0 ? a + input_rank : a;
        if (n < 0 || n >= std::max(input_rank, 1))
            op_error(kernel, op, "reduction axis " + std::to_string(a) + " is out of range for rank " +
                                     std::to_string(input_rank));
        if (input_rank > 0) axes.push_back(static_cast<int>(n));
    }
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    return axes;
}

Shape infer_output_shape(const CompositeKernel &kernel, const OpDesc &op) {
    auto ins = flat_inputs(op);
    auto need = [&](size_t n) {
        if (ins.size() != n)
            op_error(kernel, op, "expects " + std::to_string(n) + " input tensor(s), got " + std::to_string(ins.size()));
    };
    const std::string &n = op.name;
    if (kBinary.count(n)) { need(2); return broadcast(kernel, op, ins); }
    if (n == "ZerosLike") { need(1); return ins[0]->shape; }
    if (n == "Select") { need(3); return broadcast(kernel, op, ins); }
    if (n == "AddN") {
        if (ins.empty()) op_error(kernel, op, "expects at least one input");
        for (auto *t : ins)
            if (t->shape != ins[0]->shape) op_error(kernel, op, "inputs must all have the same shape; " + t->name + " has " + shape_string(t->shape));
        return ins[0]->shape;
    }
    if (n == "InplaceAssign") { need(3); return ins[2]->shape; }
    if (is_contraction_op(n)) return contraction_shape(kernel, op, ins);
    if (n == "Assign") {
        need(2);
        if (element_count(ins[0]->shape) != element_count(ins[1]->shape))
            op_error(kernel, op, "value " + shape_string(ins[1]->shape) + " does not fit ref " + shape_string(ins[0]->shape));
        return ins[0]->shape;
    }
    if (kReduce.count(n) || n == "ElemAny") {
        need(1);
        const Shape &in = ins[0]->shape;
        if (n == "ElemAny") return Shape{1};
        auto axes = reduction_axes(kernel, op, static_cast<int>(in.size()));
        bool keep = attr_bool(kernel, op, "keep_dims", false);
        Shape out;
        for (size_t d = 0; d < in.size(); ++d) {
            bool reduced = std::count(axes.begin(), axes.end(), static_cast<int>(d)) > 0;
            if (!reduced) out.push_back(in[d]);
            else if (keep) out.push_back(1);
        }
        return out;
    }
    if (kSelect4.count(n)) { need(4); return broadcast(kernel, op, ins); }
    if (n == "Concat") {
        if (ins.empty()) op_error(kernel, op, "expects at least one input");
        const Shape &first = ins[0]->shape;
        int axis = single_axis(kernel, op, "axis", static_cast<int>(first.size()), 0);
        Shape out = first;
        out[axis] = 0;
        for (auto *t : ins) {
            bool fits = t->shape.size() == first.size();
            for (size_t d = 0; fits && d < first.size(); ++d) fits = static_cast<int>(d) == axis || t->shape[d] == first[d];
            if (!fits) op_error(kernel, op, "input " + t->name + shape_string(t->shape) + " does not fit " + shape_string(first) + " outside axis " + std::to_string(axis));
            if (t->dtype != ins[0]->dtype) op_error(kernel, op, "inputs must have one dtype; " + t->name + " is " + dtype_name(t->dtype));
            out[axis] += t->shape[axis];
        }
        return out;
    }
    if (kIndexing.count(n)) return indexing_shape(kernel, op, ins);
    if (n == "Pool2D" || n == "GlobalPool2D") {
        need(1);
        if (ins[0]->dtype != DType::Float32 && ins[0]->dtype != DType::Float16) op_error(kernel, op, "pooling takes float32 or float16 data");
        return pool_shape(kernel, op, ins[0]->shape);
    }
    if (n == "Argmax" || n == "Argmin") {
        need(1);
        Shape out = ins[0]->shape;
        if (out.empty()) return Shape{1};
        out.erase(out.begin() + single_axis(kernel, op, "axis", static_cast<int>(out.size()), static_cast<int>(out.size()) - 1));
        return out;
    }
    if (n == "ElemAll") { need(1); return Shape{1}; }
    if (n == "CumSum" || n == "CumProd") {
        need(1);
        single_axis(kernel, op, "axis", static_cast<int>(ins[0]->shape.size()), 0);
        return ins[0]->shape;
    }
    need(1);
    const Shape &in = ins[0]->shape;
    if (n == "StridedSlice") return strided_slice_plan(kernel, op, in).out_shape;
    if (n == "PadAkg" || n == "UnPadAkg") {
        auto tail = attr_int_list(kernel, op, "tail", true);
        auto head = n == "PadAkg" ? attr_int_list(kernel, op, "head", true) : std::vector<int64_t>(in.size(), 0);
        if (head.size() != in.size() || tail.size() != in.size())
            op_error(kernel, op, "head and tail need one entry per dimension of " + shape_string(in));
        Shape out = in;
        for (size_t d = 0; d < in.size(); ++d) {
            if (head[d] < 0 || tail[d] < 0) op_error(kernel, op, "head and tail must not be negative");
            if (n == "UnPadAkg" && tail[d] > in[d]) op_error(kernel, op, "tail " + std::to_string(tail[d]) + " exceeds the dimension " + std::to_string(in[d]));
            out[d] = n == "PadAkg" ? in[d] + head[d] + tail[d] : in[d] - tail[d];
        }
        return out;
    }
    if (n == "TransData") {
        for (const char *attr : {"src_format", "dst_format"}) {
            std::string f = attr_string(kernel, op, attr);
            if (!kDefaultFormats.count(f))
                op_error(kernel, op, std::string(attr) + " " + f + " is an Ascend layout; only transfers between default formats (a copy) are supported on CPUs");
        }
        return in;
    }
    if (n == "Reshape" || n == "EquivFormat") {
        Shape target = attr_int_list(kernel, op, "shape", false);
        if (target.empty() && !op.outputs.empty()) target = op.outputs[0].shape;
        int64_t known = 1, unknown = -1;
        for (size_t d = 0; d < target.size(); ++d) {
            if (target[d] == -1 && unknown < 0) unknown = static_cast<int64_t>(d);
            else if (target[d] < 0) op_error(kernel, op, "invalid reshape target " + shape_string(target));
            else if (__builtin_mul_overflow(known, target[d], &known))
                op_error(kernel, op, "reshape target " + shape_string(target) + " has too many elements");
        }
        if (unknown >= 0 && known > 0) target[unknown] = element_count(in) / known;
        if (element_count(target) != element_count(in))
            op_error(kernel, op, "cannot reshape " + shape_string(in) + " (" + std::to_string(element_count(in)) +
                                     " elements) to " + shape_string(target));
        return target;
    }
    if (n == "Transpose") {
        auto perm = attr_int_list(kernel, op, "perm", true);
        if (perm.size() != in.size()) op_error(kernel, op, "perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(in.size()));
        std::vector<bool> seen(in.size(), false);
        Shape out;
        for (int64_t p : perm) {
            if (p < 0) p += static_cast<int64_t>(in.size());
            if (p < 0 || p >= static_cast<int64_t>(in.size()) || seen[p]) op_error(kernel, op, "perm is not a permutation");
            seen[p] = true;
            out.push_back(in[p]);
        }
        return out;
    }
    if (n == "BroadcastTo") {
        Shape target = attr_int_list(kernel, op, "shape", true);
        TensorDesc t{"shape", target, DType::Float32, "", {}};
        Shape b = broadcast(kernel, op, {ins[0], &t});
        if (b != target) op_error(kernel, op, "cannot broadcast " + shape_string(in) + " to " + shape_string(target));
        return target;
    }
    if (n == "Tile") {
        auto mult = attr_int_list(kernel, op, "multiples", true);
        if (mult.size() < in.size()) op_error(kernel, op, "multiples has fewer entries than the input rank");
        Shape padded(mult.size() - in.size(), 1);
        padded.insert(padded.end(), in.begin(), in.end());
        for (size_t d = 0; d < mult.size(); ++d) {
            if (mult[d] < 1) op_error(kernel, op, "multiples must be positive");
            if (__builtin_mul_overflow(padded[d], mult[d], &padded[d]))
                op_error(kernel, op, "multiples make the output too large");
        }
        return padded;
    }
    if (n == "ExpandDims") {
        auto ax = attr_int_list(kernel, op, "axis", true);
        Shape out = in;
        for (int64_t a : ax) {
            int64_t r = static_cast<int64_t>(out.size());
            if (a < 0) a += r + 1;
            if (a < 0 || a > r) op_error(kernel, op, "axis out of range");
            out.insert(out.begin() + a, 1);
        }
        return out;
    }
    return in; // elementwise unary ops and Cast
}

void validate_composite(const CompositeKernel &kernel) {
    std::map<std::string, const TensorDesc *> defined;
    for (const auto &t : kernel.inputs) {
        if (defined.count(t.name)) throw UserError(kernel.source + ": input_desc: tensor " + t.name + " is listed twice");
        defined[t.name] = &t;
    }
    for (const auto &op : kernel.ops) {
        if (!is_supported_op(op.name)) {
            if (const char *why = unsupported_reason(op.name)) op_error(kernel, op, "op " + op.name + " is not supported: " + why);
            op_error(kernel, op, "unknown op \"" + op.name + "\" (akg-gen ops lists the supported ones)");
        }
        for (const auto &g : op.inputs)
            for (const auto &t : g) {
                if (t.format == "FRACTAL_NZ" || t.format == "NC1HWC0")
                    op_error(kernel, op, "tensor " + t.name + " uses the Ascend-only layout " + t.format);
                if (t.value) continue;
                auto it = defined.find(t.name);
                if (it == defined.end())
                    op_error(kernel, op, "input tensor " + t.name + " is neither a kernel input nor produced by an earlier op");
                // [] and [1] (and [1,1]) name the same scalar in real MindSpore output.
                bool both_scalar = element_count(it->second->shape) == 1 && element_count(t.shape) == 1;
                if (it->second->shape != t.shape && !both_scalar)
                    op_error(kernel, op, "input tensor " + t.name + " is declared with shape " + shape_string(t.shape) +
                                             " but was defined with " + shape_string(it->second->shape));
                if (it->second->dtype != t.dtype)
                    op_error(kernel, op, "input tensor " + t.name + " is declared " + dtype_name(t.dtype) + " but was defined " +
                                             dtype_name(it->second->dtype));
            }
        if (op.outputs.size() != 1) op_error(kernel, op, "expects exactly one output, got " + std::to_string(op.outputs.size()));
        const TensorDesc &out = op.outputs[0];
        Shape inferred = infer_output_shape(kernel, op);
        bool scalar_like = element_count(inferred) == 1 && element_count(out.shape) == 1;
        if (inferred != out.shape && !scalar_like)
            op_error(kernel, op, "output " + out.name + " is declared with shape " + shape_string(out.shape) +
                                     " but the op produces " + shape_string(inferred));
        if (op.name == "Cast") {
            std::string dst = attr_string(kernel, op, "dst_type");
            if (!dst.empty()) {
                auto d = parse_dtype(dst);
                if (!d) op_error(kernel, op, "unknown dst_type \"" + dst + "\"");
                if (*d != out.dtype) op_error(kernel, op, "dst_type " + dst + " disagrees with output dtype " + dtype_name(out.dtype));
            }
        } else if (is_contraction_op(op.name)) {
            // Inputs float32 or float16 (computed in float32); the output is dst_type.
            for (const auto &g : op.inputs)
                for (const auto &t : g)
                    if (t.dtype != DType::Float32 && t.dtype != DType::Float16)
                        op_error(kernel, op, "input " + t.name + " is " + dtype_name(t.dtype) + "; MatMul takes float32 or float16");
            if (out.dtype != DType::Float32 && out.dtype != DType::Float16)
                op_error(kernel, op, "output " + out.name + " is " + dtype_name(out.dtype) + "; MatMul produces float32 or float16");
            std::string dst = attr_string(kernel, op, "dst_type");
            if (!dst.empty()) {
                auto d = parse_dtype(dst);
                if (!d) op_error(kernel, op, "unknown dst_type \"" + dst + "\"");
                if (*d != out.dtype) op_error(kernel, op, "dst_type " + dst + " disagrees with output dtype " + dtype_name(out.dtype));
            }
        } else if (op.name == "Argmax" || op.name == "Argmin") {
            if (out.dtype != DType::Int32 && out.dtype != DType::Int64)
                op_error(kernel, op, "output " + out.name + " is " + dtype_name(out.dtype) + "; indices are int32 or int64");
        } else if (kIndexing.count(op.name) || kSelect4.count(op.name)) {
            const TensorDesc &source = *flat_inputs(op)[op.name == "OneHot" ? 1 : kSelect4.count(op.name) ? 2 : 0];
            if (source.dtype != out.dtype)
                op_error(kernel, op, "output " + out.name + " is " + dtype_name(out.dtype) + " but " + source.name + " is " + dtype_name(source.dtype));
        } else if (kCompare.count(op.name)) {
            // Comparisons yield bool; MindSpore sometimes declares their result as a number
            // (ElemAny as float32), which the lowering converts to (1 or 0).
        } else if (op.name == "Select") {
            if (op.inputs.size() == 3 && !op.inputs[1].empty() && op.inputs[1][0].dtype != out.dtype)
                op_error(kernel, op, "output dtype " + std::string(dtype_name(out.dtype)) + " differs from the operands'");
        } else if (op.name != "InplaceAssign" && op.name != "Assign") {
            const auto &first = op.inputs.empty() || op.inputs[0].empty() ? out : op.inputs[0][0];
            if (first.dtype != out.dtype)
                op_error(kernel, op, "output " + out.name + " is " + dtype_name(out.dtype) + " but the input is " +
                                         dtype_name(first.dtype) + " (casts must be explicit)");
        }
        if (op.name == "InplaceAssign" || op.name == "Assign") {
            const TensorDesc &ref = *flat_inputs(op)[0]; // the input count was checked by infer_output_shape
            bool is_input = std::any_of(kernel.inputs.begin(), kernel.inputs.end(), [&](const TensorDesc &t) { return t.name == ref.name; });
            if (!is_input) op_error(kernel, op, "ref " + ref.name + " must be a kernel input");
        }
        if (defined.count(out.name)) op_error(kernel, op, "output tensor " + out.name + " is defined twice");
        defined[out.name] = &out;
    }
    for (const auto &t : kernel.outputs) {
        auto it = defined.find(t.name);
        if (it == defined.end()) throw UserError(kernel.source + ": output_desc: tensor " + t.name + " is not produced by any op");
        if (it->second->shape != t.shape && element_count(t.shape) != element_count(it->second->shape))
            throw UserError(kernel.source + ": output_desc: tensor " + t.name + " is declared with shape " +
                            shape_string(t.shape) + " but produced with " + shape_string(it->second->shape));
    }
}

} // namespace akg
