#include "passes/fold_dimensions.h"

#include <algorithm>
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
    // i_d or i_{d+1} anywhere but as a read's adjacent index pair (a value compared with an
    // index, as in a scatter or a one-hot, or a data-dependent index) rules the fold out.
    void visit(const Variable *op) override {
        if (op->name == index_var(d) || op->name == index_var(d + 1)) ok = false;
    }
    void visit(const Call *op) override {
        if (op->name.rfind("buf$", 0) != 0) return IRVisitor::visit(op);
        std::string a = index_var(d), b = index_var(d + 1);
        int found = -1;
        for (size_t k = 0; k + 1 < op->args.size(); ++k)
            if (is_var(op->args[k], a) && is_var(op->args[k + 1], b)) found = static_cast<int>(k);
        for (size_t k = 0; k < op->args.size(); ++k)
            if (found < 0 || (static_cast<int>(k) != found && static_cast<int>(k) != found + 1)) op->args[k].accept(this);
        if (found < 0) return;
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

namespace {

constexpr int64_t kMaxFoldedSecondaryRow = 64;

// Folds the dimensions of the stages `stages` (all of one shape) that every access uses
// together; `others` must not read a buffer whose view changes.
void fold_group(TensorGraph &graph, const std::vector<Stage *> &stages, const std::vector<Stage *> &others) {
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
        // Every stage of the group writes its own buffer at (i_0, ..., i_n): its view folds too.
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

} // namespace

void fold_dimensions(TensorGraph &graph) {
    // Stages fold by shape, largest first: the stages of one shape, elementwise or column
    // reductions (a sum over the rows of [32, 128, 43, 43] into [43, 43] folds into one of 1849
    // columns, walked by sink-columns in long contiguous blocks instead of 43 strided runs of
    // 43), fold together; row reductions keep their loops. The stages of a smaller shape whose
    // innermost dimension (past trailing 1s) is short fold next, unless a stage of another
    // shape reads a buffer whose view would change: the independent stages of a parallel
    // fusion, such as four [256, 256, 3, 3] weight transposes next to [512, 512, 3, 3] ones,
    // or [64, 64, 3, 3] weight updates next to [147456] ones (1.6-4x faster). Longer rows gain
    // nothing and may lose: [1024, 256, 1, 1] updates folded joined the 1-D loop of the largest
    // shape and ran 0.73-0.85x.
    std::vector<Shape> shapes;
    for (auto &s : graph.stages)
        if (s.materialized && s.kind != StageKind::Input && std::find(shapes.begin(), shapes.end(), s.shape) == shapes.end()) shapes.push_back(s.shape);
    std::stable_sort(shapes.begin(), shapes.end(), [](const Shape &a, const Shape &b) { return element_count(a) > element_count(b); });
    std::vector<std::pair<std::vector<Stage *>, std::vector<Stage *>>> groups; // chosen before any shape changes
    for (const Shape &shape : shapes) {
        std::vector<Stage *> stages, others;
        for (auto &s : graph.stages) {
            if (!s.materialized || s.kind == StageKind::Input) continue;
            bool mine = s.shape == shape && (s.kind == StageKind::Compute || !reduces_along_rows(s));
            (mine ? stages : others).push_back(&s);
        }
        size_t inner = shape.size();
        while (inner > 1 && shape[inner - 1] == 1) --inner;
        bool short_rows = inner > 0 && shape[inner - 1] < kMaxFoldedSecondaryRow;
        if (!stages.empty() && shape.size() >= 2 && (groups.empty() || short_rows)) groups.emplace_back(stages, others);
    }
    for (const auto &[stages, others] : groups) fold_group(graph, stages, others);
}

} // namespace akg
