// The split of a kernel around its contractions (kernel_parts.h): op-level grouping, then a
// stable topological order of the groups.
#include "frontend/kernel_parts.h"

#include <algorithm>
#include <map>
#include <set>

namespace akg {

namespace {

const std::set<std::string> kPointwise = {"Add", "TensorAdd", "Sub", "Mul", "RealDiv", "Pow", "Maximum", "Minimum", "Greater", "GreaterEqual",
                                          "Less", "LessEqual", "Equal", "NotEqual", "LogicalOr", "LogicalAnd", "LogicalNot", "Neg", "Abs", "Exp",
                                          "Log", "Sqrt", "Rsqrt", "Reciprocal", "Tanh", "Erf", "Cast", "IsInf", "IsNan", "Select", "AddN"};
// Packing evaluates the operands element by element: only index maps and cheap conversions
// belong there.
const std::set<std::string> kPackable = {"Cast", "Transpose", "Reshape", "ExpandDims", "BroadcastTo", "Neg"};
// Ops that only move every element of their input to another place (split and merge heads):
// after the epilogue they become where its stores go.
const std::set<std::string> kPermuting = {"Transpose", "Reshape", "ExpandDims"};

std::vector<const TensorDesc *> op_inputs(const OpDesc &op) {
    std::vector<const TensorDesc *> ins;
    for (const auto &g : op.inputs)
        for (const auto &t : g)
            if (!t.value) ins.push_back(&t);
    return ins;
}

bool broadcasts_into(const Shape &small, const Shape &big) {
    if (small.size() > big.size()) return false;
    size_t off = big.size() - small.size();
    for (size_t d = 0; d < small.size(); ++d)
        if (small[d] != 1 && small[d] != big[off + d]) return false;
    return true;
}

// A bias gradient beside a weight gradient: an unfused float32 ReduceSum over k of the float32
// B that MatMul `k` reads from outside its group (dW = Xᵀ·dY, db = Σ dY). B's packing sums each
// micro-panel as it copies it (ContractionPlan::column_sum), sparing a second pass over B.
// Returns the ReduceSum's op index, or -1.
int column_sum_of_b(const CompositeKernel &kernel, size_t k, const std::vector<int> &group, const std::map<std::string, size_t> &producer,
                    const std::map<std::string, std::vector<size_t>> &consumers) {
    const OpDesc &mm = kernel.ops[k];
    auto ins = op_inputs(mm);
    if (mm.name != "MatMul" || ins.size() < 2 || ins[1]->shape.size() != 2 || ins[1]->dtype != DType::Float32) return -1;
    const std::string &b = ins[1]->name;
    if (auto p = producer.find(b); p != producer.end() && group[p->second] == group[k]) return -1;
    const int k_axis = attr_bool(kernel, mm, "transpose_b", false) ? 1 : 0;
    for (size_t e = 0; e < kernel.ops.size(); ++e) {
        const OpDesc &op = kernel.ops[e];
        if (group[e] != -1 || op.name != "ReduceSum" || op.outputs[0].dtype != DType::Float32) continue;
        auto rins = op_inputs(op);
        if (rins.size() != 1 || rins[0]->name != b || op.inputs.size() != 1) continue;
        // The sums are ready only once every panel of B is packed: the group's epilogue may not
        // read them, nor anything computed from them.
        bool feeds_group = false;
        std::vector<std::string> work = {op.outputs[0].name};
        std::set<std::string> seen;
        while (!work.empty() && !feeds_group) {
            const std::string t = work.back();
            work.pop_back();
            auto users = consumers.find(t);
            if (users == consumers.end()) continue;
            for (size_t u : users->second) {
                feeds_group |= group[u] == group[k];
                if (seen.insert(kernel.ops[u].outputs[0].name).second) work.push_back(kernel.ops[u].outputs[0].name);
            }
        }
        if (feeds_group) continue;
        if (reduction_axes(kernel, op, 2) == std::vector<int>{k_axis}) return static_cast<int>(e);
    }
    return -1;
}

// Whether `rows` (a fused part) works row by row on the product of the contraction part
// `gemm`: KernelPart::row_part. `aligned` holds the tensors of contraction groups whose elements
// are the product's (the product, its elementwise epilogue).
bool works_by_rows(const CompositeKernel &kernel, const KernelPart &gemm, const KernelPart &rows, const std::set<std::string> &aligned) {
    const OpDesc *mm = nullptr;
    for (const auto &op : gemm.kernel.ops)
        if (is_contraction_op(op.name)) mm = &op;
    if (!mm) return false;
    const Shape &product = mm->outputs[0].shape;
    const size_t p = product.size();
    // Row dimensions: all but the last, right-aligned; each the product's extent or 1.
    auto fits = [&](const Shape &s, bool whole_rows) {
        if (s.size() > p || (whole_rows && s.size() != p)) return false;
        for (size_t d = 0; d < s.size(); ++d) {
            const size_t at = d + (p - s.size());
            if (at + 1 == p) continue;
            if (s[d] != product[at] && (s[d] != 1 || whole_rows)) return false;
        }
        return true;
    };
    std::set<std::string> from_gemm;
    for (const auto &t : gemm.kernel.outputs) from_gemm.insert(t.name);
    bool reads_product = false;
    for (const auto &op : rows.kernel.ops) {
        const bool reduce = op.name == "ReduceSum" || op.name == "ReduceMax" || op.name == "ReduceMin";
        if (!kPointwise.count(op.name) && !reduce) return false;
        auto ins = op_inputs(op);
        if (reduce && (ins.size() != 1 || ins[0]->shape.size() != p ||
                       reduction_axes(kernel, op, static_cast<int>(p)) != std::vector<int>{static_cast<int>(p) - 1}))
            return false;
        for (const TensorDesc *t : ins) {
            if (!fits(t->shape, false)) return false;
            if (from_gemm.count(t->name)) {
                if (!aligned.count(t->name) || t->shape != product) return false;
                reads_product = true;
            }
        }
        // Every output covers whole rows, so that each element is written by one panel.
        if (!fits(op.outputs[0].shape, true)) return false;
    }
    return reads_product;
}

} // namespace

bool has_contraction(const CompositeKernel &kernel) {
    return std::any_of(kernel.ops.begin(), kernel.ops.end(), [](const OpDesc &op) { return is_contraction_op(op.name); });
}

bool is_direct_op(const OpDesc &op) {
    static const std::set<std::string> kDirect = {"TensorScatterAdd", "UnsortedSegmentSum", "CumSum", "CumProd", "Pool2D"};
    if (!kDirect.count(op.name)) return false;
    if (op.name == "Pool2D") {
        // A global pool is a plain reduction, fused like one (group-rows handles its short rows).
        const Attr *global = op.find_attr("global");
        if (global && ((global->value.is_boolean() && global->value.get<bool>()) || (global->value.is_number() && global->value.get<double>() != 0)))
            return false;
    }
    for (const auto &g : op.inputs)
        for (const auto &t : g)
            if (t.value) return false; // an inline constant operand: the lowering's reduction form
    return true;
}

bool needs_parts(const CompositeKernel &kernel) {
    return std::any_of(kernel.ops.begin(), kernel.ops.end(), [](const OpDesc &op) { return is_contraction_op(op.name) || is_direct_op(op); });
}

KernelParts split_kernel_parts(const CompositeKernel &kernel) {
    const size_t n = kernel.ops.size();
    std::map<std::string, size_t> producer;
    std::map<std::string, std::vector<size_t>> consumers;
    for (size_t k = 0; k < n; ++k) {
        producer[kernel.ops[k].outputs[0].name] = k;
        for (const TensorDesc *t : op_inputs(kernel.ops[k])) consumers[t->name].push_back(k);
    }
    std::set<std::string> kernel_outputs;
    for (const auto &t : kernel.outputs) kernel_outputs.insert(t.name);

    std::set<std::string> aligned; // see works_by_rows
    // group[k]: the group of op k; contraction groups first, then one group per other op.
    std::vector<int> group(n, -1);
    std::vector<bool> is_contraction_group, is_direct_group;
    for (size_t k = 0; k < n; ++k) {
        if (is_direct_op(kernel.ops[k])) {
            group[k] = static_cast<int>(is_contraction_group.size());
            is_contraction_group.push_back(false);
            is_direct_group.push_back(true);
            continue;
        }
        if (!is_contraction_op(kernel.ops[k].name)) continue;
        int g = static_cast<int>(is_contraction_group.size());
        is_contraction_group.push_back(true);
        is_direct_group.push_back(false);
        group[k] = g;
        // Prologue: packable ops whose every consumer is in the group, walked back from the operands.
        std::vector<size_t> work = {k};
        while (!work.empty()) {
            size_t c = work.back();
            work.pop_back();
            for (const TensorDesc *t : op_inputs(kernel.ops[c])) {
                auto p = producer.find(t->name);
                if (p == producer.end() || group[p->second] != -1 || !kPackable.count(kernel.ops[p->second].name)) continue;
                if (kernel_outputs.count(t->name)) continue;
                bool only_group = true;
                for (size_t u : consumers[t->name]) only_group &= group[u] == g;
                if (!only_group) continue;
                group[p->second] = g;
                work.push_back(p->second);
            }
        }
        // Epilogue: pointwise ops over the contraction's output shape whose other operands do
        // not depend on the group (they are ready before it runs), then permutations of those
        // values (stored to where they move the elements).
        const Shape &shape = kernel.ops[k].outputs[0].shape;
        std::set<std::string> depends = {kernel.ops[k].outputs[0].name}; // tensors depending on the group
        std::set<std::string> inside = {kernel.ops[k].outputs[0].name};
        aligned.insert(kernel.ops[k].outputs[0].name);
        std::set<std::string> permuted; // inside, in another shape
        for (size_t e = k + 1; e < n; ++e) {
            const OpDesc &op = kernel.ops[e];
            auto ins = op_inputs(op);
            bool reads_group = false, fits = group[e] == -1 && kPointwise.count(op.name) && op.outputs[0].shape == shape;
            for (const TensorDesc *t : ins) {
                if (inside.count(t->name)) {
                    reads_group = true;
                    fits &= t->shape == shape && !permuted.count(t->name);
                } else fits &= !depends.count(t->name) && broadcasts_into(t->shape, shape);
            }
            const bool permutes = group[e] == -1 && kPermuting.count(op.name) && ins.size() == 1 && inside.count(ins[0]->name) &&
                                  element_count(op.outputs[0].shape) == element_count(shape);
            if (permutes) permuted.insert(op.outputs[0].name);
            if ((reads_group && fits) || permutes) {
                group[e] = g;
                inside.insert(op.outputs[0].name);
                if (!permutes) aligned.insert(op.outputs[0].name);
            }
            bool dep = false;
            for (const TensorDesc *t : ins) dep |= depends.count(t->name) > 0;
            if (dep) depends.insert(op.outputs[0].name);
        }
        if (int e = column_sum_of_b(kernel, k, group, producer, consumers); e >= 0) group[e] = g;
    }
    for (size_t k = 0; k < n; ++k)
        if (group[k] == -1) {
            group[k] = static_cast<int>(is_contraction_group.size());
            is_contraction_group.push_back(false);
            is_direct_group.push_back(false);
        }

    // Group dependences, then a topological order that keeps the ops' order where it can.
    const size_t groups = is_contraction_group.size();
    std::vector<std::set<int>> preds(groups);
    for (size_t k = 0; k < n; ++k)
        for (const TensorDesc *t : op_inputs(kernel.ops[k])) {
            auto p = producer.find(t->name);
            if (p != producer.end() && group[p->second] != group[k]) preds[group[k]].insert(group[p->second]);
        }
    std::vector<int> first_op(groups, static_cast<int>(n));
    for (size_t k = 0; k < n; ++k) first_op[group[k]] = std::min(first_op[group[k]], static_cast<int>(k));
    std::vector<int> order;
    std::vector<bool> placed(groups, false);
    while (order.size() < groups) {
        int best = -1;
        for (size_t g = 0; g < groups; ++g) {
            if (placed[g]) continue;
            bool ready = std::all_of(preds[g].begin(), preds[g].end(), [&](int p) { return placed[p]; });
            if (ready && (best < 0 || first_op[g] < first_op[best])) best = static_cast<int>(g);
        }
        if (best < 0) throw InternalError(kernel.source + ": the kernel's parts depend on each other");
        placed[best] = true;
        order.push_back(best);
    }

    // Consecutive fused groups run as one part.
    KernelParts result;
    std::vector<int> part_of_group(groups, -1);
    for (int g : order) {
        bool fused = !is_contraction_group[g] && !is_direct_group[g];
        bool merge = fused && !result.parts.empty() && !result.parts.back().contraction && !result.parts.back().direct;
        if (!merge) {
            KernelPart p;
            p.contraction = is_contraction_group[g];
            p.direct = is_direct_group[g];
            result.parts.push_back(std::move(p));
        }
        part_of_group[g] = static_cast<int>(result.parts.size()) - 1;
    }
    for (size_t k = 0; k < n; ++k) {
        KernelPart &p = result.parts[part_of_group[group[k]]];
        p.kernel.ops.push_back(kernel.ops[k]);
    }
    // Inputs and outputs of each part; every part's ops keep the kernel's op order.
    std::map<std::string, TensorDesc> descs;
    for (const auto &t : kernel.inputs) descs[t.name] = t;
    for (const auto &op : kernel.ops) descs[op.outputs[0].name] = op.outputs[0];
    std::map<std::string, int> produced_by;
    for (size_t k = 0; k < n; ++k) produced_by[kernel.ops[k].outputs[0].name] = part_of_group[group[k]];
    std::set<std::string> intermediate_names;
    for (size_t pi = 0; pi < result.parts.size(); ++pi) {
        KernelPart &p = result.parts[pi];
        p.kernel.name = kernel.name + "$part" + std::to_string(pi);
        p.kernel.source = kernel.source;
        std::sort(p.kernel.ops.begin(), p.kernel.ops.end(), [](const OpDesc &a, const OpDesc &b) { return a.index < b.index; });
        std::set<std::string> seen;
        for (const auto &op : p.kernel.ops)
            for (const TensorDesc *t : op_inputs(op)) {
                auto pr = produced_by.find(t->name);
                if (pr != produced_by.end() && pr->second == static_cast<int>(pi)) continue;
                if (seen.insert(t->name).second) p.kernel.inputs.push_back(descs.at(t->name));
            }
        for (const auto &op : p.kernel.ops) {
            const std::string &name = op.outputs[0].name;
            bool used_later = false;
            for (size_t u : consumers[name]) used_later |= part_of_group[group[u]] != static_cast<int>(pi);
            if (kernel_outputs.count(name) || used_later) p.kernel.outputs.push_back(op.outputs[0]);
            if (used_later && !kernel_outputs.count(name) && intermediate_names.insert(name).second)
                result.intermediates.push_back(op.outputs[0]);
        }
    }
    for (size_t pi = 1; pi < result.parts.size(); ++pi) {
        KernelPart &p = result.parts[pi];
        p.row_part = result.parts[pi - 1].contraction && !p.contraction && !p.direct && works_by_rows(kernel, result.parts[pi - 1], p, aligned);
    }
    return result;
}

} // namespace akg
