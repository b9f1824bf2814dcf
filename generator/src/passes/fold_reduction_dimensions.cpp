#include "passes/fold_reduction_dimensions.h"

#include "passes/fold_dimensions.h"

#include <map>
#include <set>

namespace akg {

using Halide::Expr;
using namespace Halide::Internal;

namespace {

// A pair of adjacent loop variables of one stage: (i_d, i_d+1) or (r_d, r_d+1).
struct LoopPair {
    int stage;
    bool reduce;
    int d;
    bool operator<(const LoopPair &o) const { return std::tie(stage, reduce, d) < std::tie(o.stage, o.reduce, o.d); }
};

std::string var_name(bool reduce, int d) { return reduce ? reduce_var(d) : index_var(d); }

bool is_var(const Expr &e, const std::string &name) {
    const Variable *v = e.as<Variable>();
    return v && v->name == name;
}

struct Read {
    std::string buffer;
    std::vector<Expr> args;
};

std::vector<Read> reads_of(const Expr &value) {
    class Collect : public IRVisitor {
    public:
        std::vector<Read> reads;
        using IRVisitor::visit;
        void visit(const Call *op) override {
            if (op->name.rfind("buf$", 0) == 0) reads.push_back({op->name.substr(4), op->args});
            IRVisitor::visit(op);
        }
    } c;
    if (value.defined()) value.accept(&c);
    return c.reads;
}

int occurrences(const Expr &value, const std::string &var) {
    class Count : public IRVisitor {
    public:
        explicit Count(const std::string &v) : var(v) {}
        const std::string &var;
        int n = 0;
        using IRVisitor::visit;
        void visit(const Variable *op) override { n += op->name == var; }
    } c(var);
    if (value.defined()) value.accept(&c);
    return c.n;
}

const Shape &loop_extents(const Stage &s, bool reduce) { return reduce ? s.reduce_extents : s.shape; }

// Collects the closure of one candidate fold: every loop pair and buffer dimension pair that
// must fold with it. Fails on any access that does not use the pair as two adjacent dimensions
// of the same extents.
class Closure {
public:
    explicit Closure(const TensorGraph &g) : g_(g) {}
    std::map<LoopPair, bool> loops;          // folded loop pairs
    std::map<std::string, int> buffers;      // buffer -> first of its two folded dimensions
    bool ok = true;

    void add_loop(LoopPair p) {
        if (!ok || loops.count(p)) return;
        const Stage &s = g_.stages[p.stage];
        for (const auto &[q, unused] : loops)
            if (q.stage == p.stage) ok = false; // one pair per stage per round
        const Shape &ext = loop_extents(s, p.reduce);
        if (!ok || p.d + 1 >= static_cast<int>(ext.size())) {
            ok = false;
            return;
        }
        loops[p] = true;
        std::string a = var_name(p.reduce, p.d), b = var_name(p.reduce, p.d + 1);
        // Every use of the two variables is a read that indexes two adjacent dimensions with them.
        int used = 0;
        for (const Read &r : reads_of(s.value)) {
            for (size_t k = 0; k + 1 < r.args.size(); ++k)
                if (is_var(r.args[k], a) && is_var(r.args[k + 1], b)) {
                    used += 2;
                    add_buffer(r.buffer, static_cast<int>(k));
                }
        }
        if (used != occurrences(s.value, a) + occurrences(s.value, b)) ok = false;
        // The stage's own store indexes its buffer with i0.., so output dimensions fold it too.
        if (!p.reduce && s.materialized) add_buffer(s.buffer, p.d);
    }

    void add_buffer(const std::string &buffer, int k) {
        if (!ok) return;
        auto it = buffers.find(buffer);
        if (it != buffers.end()) {
            if (it->second != k) ok = false;
            return;
        }
        buffers[buffer] = k;
        for (size_t t = 0; t < g_.stages.size() && ok; ++t) {
            const Stage &s = g_.stages[t];
            if (!s.materialized) continue;
            if (s.buffer == buffer) {
                if (static_cast<int>(s.shape.size()) < k + 2) ok = false;
                else if (s.kind != StageKind::Input) add_loop({static_cast<int>(t), false, k});
            }
            for (const Read &r : reads_of(s.value)) {
                if (r.buffer != buffer) continue;
                bool found = false;
                for (bool reduce : {false, true}) {
                    const Shape &ext = loop_extents(s, reduce);
                    for (int d = 0; d + 1 < static_cast<int>(ext.size()); ++d)
                        if (is_var(r.args[k], var_name(reduce, d)) && is_var(r.args[k + 1], var_name(reduce, d + 1)) &&
                            ext[d] == extent(buffer, k) && ext[d + 1] == extent(buffer, k + 1)) {
                            add_loop({static_cast<int>(t), reduce, d});
                            found = true;
                        }
                }
                if (!found) ok = false;
            }
        }
    }

private:
    const TensorGraph &g_;
    int64_t extent(const std::string &buffer, int k) const {
        for (const auto &s : g_.stages)
            if (s.materialized && s.buffer == buffer && static_cast<int>(s.shape.size()) > k) return s.shape[k];
        return -1;
    }
};

// Rewrites one stage's value: reads of folded buffers lose their second folded index, and the
// stage's variables above its folded pair shift down.
class Rewrite : public IRMutator {
public:
    Rewrite(const std::map<std::string, int> &buffers, bool reduce, int d) : buffers(buffers), reduce(reduce), d(d) {}
    const std::map<std::string, int> &buffers;
    bool reduce;
    int d;

private:
    using IRMutator::visit;
    Expr visit(const Call *op) override {
        if (op->name.rfind("buf$", 0) != 0) return IRMutator::visit(op);
        auto it = buffers.find(op->name.substr(4));
        std::vector<Expr> args;
        for (size_t k = 0; k < op->args.size(); ++k) {
            if (it != buffers.end() && static_cast<int>(k) == it->second + 1) continue;
            args.push_back(mutate(op->args[k]));
        }
        return Call::make(op->type, op->name, args, op->call_type);
    }
    Expr visit(const Variable *op) override {
        char prefix = reduce ? 'r' : 'i';
        if (op->name.size() > 1 && op->name[0] == prefix && isdigit(static_cast<unsigned char>(op->name[1]))) {
            int n = std::stoi(op->name.substr(1));
            if (n > d + 1) return reduce ? reduce_expr(n - 1) : index_expr(n - 1);
        }
        return op;
    }
};

} // namespace

void fold_reduction_dimensions(TensorGraph &graph) {
    // Each round folds one pair of one reduction (and everything tied to it); repeat while any
    // reduction still has a pair that folds.
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t t = 0; t < graph.stages.size() && !changed; ++t) {
            const Stage &s = graph.stages[t];
            if (!s.materialized || s.kind != StageKind::Reduce) continue;
            for (int d = static_cast<int>(s.reduce_extents.size()) - 2; d >= 0 && !changed; --d) {
                Closure c(graph);
                c.add_loop({static_cast<int>(t), true, d});
                if (!c.ok) continue;
                for (const auto &[p, unused] : c.loops) {
                    Stage &st = graph.stages[p.stage];
                    // Buffers read by this stage fold at their own positions; the variables
                    // shift by this stage's pair.
                    st.value = Rewrite(c.buffers, p.reduce, p.d).mutate(st.value);
                    if (p.reduce) st.reduce_extents = merge_dimensions(st.reduce_extents, p.d);
                    else st.shape = merge_dimensions(st.shape, p.d);
                }
                for (auto &st : graph.stages)
                    if (st.materialized && st.kind == StageKind::Input && c.buffers.count(st.buffer))
                        st.shape = merge_dimensions(st.shape, c.buffers.at(st.buffer));
                changed = true;
            }
        }
    }
}

} // namespace akg
