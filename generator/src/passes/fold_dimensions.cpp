#include "passes/fold_dimensions.h"

#include <set>

namespace akg {

using Halide::Expr;
using namespace Halide::Internal;

namespace {

bool is_var(const Expr &e, const std::string &name) {
    const Variable *v = e.as<Variable>();
    return v && v->name == name;
}

// Checks whether dims (d, d+1) of the common shape can fold, and collects for each buffer
// the position k at which it is read as (i_d, i_{d+1}).
class FoldCheck : public IRVisitor {
public:
    FoldCheck(const TensorGraph &g, int d, const Shape &shape) : graph(g), d(d), shape(shape) {}
    const TensorGraph &graph;
    int d;
    const Shape &shape;
    bool ok = true;
    std::map<std::string, int> position; // buffer -> k

private:
    using IRVisitor::visit;
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->name.rfind("buf$", 0) != 0) return;
        std::string a = index_var(d), b = index_var(d + 1);
        int found = -1;
        for (size_t k = 0; k + 1 < op->args.size(); ++k)
            if (is_var(op->args[k], a) && is_var(op->args[k + 1], b)) found = static_cast<int>(k);
        if (found < 0) {
            for (const auto &arg : op->args)
                if (expr_uses_var(arg, a) || expr_uses_var(arg, b)) ok = false;
            return;
        }
        for (size_t k = 0; k < op->args.size(); ++k)
            if (static_cast<int>(k) != found && static_cast<int>(k) != found + 1 &&
                (expr_uses_var(op->args[k], a) || expr_uses_var(op->args[k], b)))
                ok = false;
        std::string buffer = op->name.substr(4);
        auto it = position.find(buffer);
        if (it != position.end() && it->second != found) ok = false;
        position[buffer] = found;
    }
};

// Rewrites reads of the folded buffers and renumbers the index variables above d. A read at
// (i_d, i_{d+1}) becomes a read at the folded i_d; any other read of a folded buffer (one that
// uses neither variable, FoldCheck makes sure: a broadcast at (x / 9, x % 9)) reads the folded
// dimension at its row-major position x_k * extent + x_{k+1}.
class Fold : public IRMutator {
public:
    Fold(int d, int64_t inner_extent, const std::map<std::string, int> &position) : d(d), inner_extent(inner_extent), position(position) {}
    int d;
    int64_t inner_extent; // of dimension d + 1
    const std::map<std::string, int> &position;

private:
    using IRMutator::visit;
    Expr visit(const Call *op) override {
        if (op->name.rfind("buf$", 0) != 0) return IRMutator::visit(op);
        auto it = position.find(op->name.substr(4));
        if (it == position.end()) return IRMutator::visit(op);
        int k = it->second;
        bool pair = is_var(op->args[k], index_var(d)) && is_var(op->args[k + 1], index_var(d + 1));
        std::vector<Expr> args;
        for (int j = 0; j < static_cast<int>(op->args.size()); ++j) {
            if (j == k + 1) continue; // merged into k
            if (j == k && !pair) args.push_back(mutate(op->args[k]) * Expr(inner_extent) + mutate(op->args[k + 1]));
            else args.push_back(mutate(op->args[j]));
        }
        return Call::make(op->type, op->name, args, op->call_type);
    }
    Expr visit(const Variable *op) override {
        // i_d stays (now the folded index); i_{d+1} only occurred next to it; above shifts down.
        if (op->name.size() > 1 && op->name[0] == 'i' && isdigit(static_cast<unsigned char>(op->name[1]))) {
            int n = std::stoi(op->name.substr(1));
            if (n > d + 1) return index_expr(n - 1);
        }
        return op;
    }
};

} // namespace

Shape merge_dimensions(const Shape &s, int k) {
    Shape out;
    for (int i = 0; i < static_cast<int>(s.size()); ++i) {
        if (i == k + 1) continue;
        out.push_back(i == k ? s[k] * s[k + 1] : s[i]);
    }
    return out;
}

void fold_dimensions(TensorGraph &graph) {
    // The main stages: over the largest shape, elementwise or column reductions (a sum over
    // the rows of [32, 128, 43, 43] into [43, 43] folds into one of 1849 columns, walked by
    // sink-columns in long contiguous blocks instead of 43 strided runs of 43). Other stages
    // keep their loops and must not read a buffer whose view changes.
    Shape main_shape;
    for (auto &s : graph.stages)
        if (s.materialized && s.kind != StageKind::Input && element_count(s.shape) > element_count(main_shape)) main_shape = s.shape;
    std::vector<Stage *> stages, others;
    for (auto &s : graph.stages) {
        if (!s.materialized || s.kind == StageKind::Input) continue;
        bool main = s.shape == main_shape && (s.kind == StageKind::Compute || !reduces_along_rows(s));
        (main ? stages : others).push_back(&s);
    }
    if (stages.empty()) return;
    for (int d = static_cast<int>(stages[0]->shape.size()) - 2; d >= 0; --d) {
        const Shape shape = stages[0]->shape;
        FoldCheck check(graph, d, shape);
        for (Stage *s : stages) s->value.accept(&check);
        for (const auto &[buffer, k] : check.position) {
            // The buffer's two dimensions must be exactly the two loop extents.
            for (const auto &s : graph.stages)
                if (s.materialized && s.buffer == buffer &&
                    (s.shape.size() < static_cast<size_t>(k + 2) || s.shape[k] != shape[d] || s.shape[k + 1] != shape[d + 1]))
                    check.ok = false;
        }
        // Every main stage writes its own buffer at (i_0, ..., i_n): its view folds too.
        for (Stage *s : stages) check.position[s->buffer] = d;
        for (Stage *o : others) {
            class Buffers : public IRVisitor {
            public:
                std::set<std::string> names;
                using IRVisitor::visit;
                void visit(const Call *op) override {
                    if (op->name.rfind("buf$", 0) == 0) names.insert(op->name.substr(4));
                    IRVisitor::visit(op);
                }
            } used;
            o->value.accept(&used);
            for (const auto &[buffer, k] : check.position)
                if (used.names.count(buffer) || o->buffer == buffer) check.ok = false;
        }
        if (!check.ok) continue;
        Fold fold(d, shape[d + 1], check.position);
        for (Stage *s : stages) s->value = fold.mutate(s->value);
        for (auto &s : graph.stages)
            if (s.materialized && check.position.count(s.buffer)) s.shape = merge_dimensions(s.shape, check.position.at(s.buffer));
    }
}

} // namespace akg
