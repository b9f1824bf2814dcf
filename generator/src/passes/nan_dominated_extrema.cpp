#include "passes/nan_dominated_extrema.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace akg {

using namespace Halide::Internal;

namespace {

const std::string kBufferRead = "buf$";

// Scratch values are expanded into their readers this many levels deep at most: deeper chains
// are left unmarked (the analysis only ever answers "no" for want of depth).
constexpr int kMaxExpansionDepth = 8;

bool propagates_nan(const std::string &math) {
    return math == "akg_exp" || math == "akg_exp_h" || math == "akg_exp_no_overflow" || math == "akg_exp_h_no_overflow" || math == "akg_log" || math == "akg_sqrt" || math == "akg_rsqrt" || math == "akg_tanh" ||
           math == "akg_tanh_h" || math == "akg_tanh_plus_one" || math == "akg_tanh_plus_one_h" || math == "akg_div_one_plus_exp" || math == "akg_div_one_plus_exp_h" || math == "akg_erf" ||
           math == "akg_abs";
}

class NanDominance {
public:
    explicit NanDominance(const TensorGraph &graph) : graph_(graph) {
        for (const auto &s : graph.stages)
            if (s.materialized && s.kind != StageKind::Input) by_buffer_[s.buffer] = &s;
    }

    bool dominated(const Stage &m) const {
        if (observable(m)) return false;
        const Halide::Expr operand = strip_float_casts(m.value);
        std::set<std::string> sums;
        for (const auto &s : graph_.stages)
            if (is_row_sum_of(s, m, operand)) sums.insert(s.buffer);
        if (sums.empty()) return false;

        std::vector<const Stage *> frontier = readers(m.buffer);
        std::set<const Stage *> seen;
        while (!frontier.empty()) {
            const Stage *c = frontier.back();
            frontier.pop_back();
            if (!seen.insert(c).second || sums.count(c->buffer) || poisoned(*c, m.buffer, sums)) continue;
            if (observable(*c) || c->kind != StageKind::Compute) return false;
            for (const Stage *r : readers(c->buffer)) frontier.push_back(r);
        }
        return true;
    }

private:
    static bool observable(const Stage &s) { return s.buffer_kind == BufferKind::KernelOutput || s.inplace_write; }

    // A materialized elementwise scratch or output stage: its reads can be replaced by its value.
    const Stage *expandable(const Call *call) const {
        if (call->name.rfind(kBufferRead, 0) != 0) return nullptr;
        auto it = by_buffer_.find(call->name.substr(kBufferRead.size()));
        if (it == by_buffer_.end() || it->second->kind != StageKind::Compute || it->second->inplace_write) return nullptr;
        return it->second;
    }

    static Halide::Expr value_at(const Stage &s, const std::vector<Halide::Expr> &index) {
        std::map<std::string, Halide::Expr> at;
        for (size_t d = 0; d < index.size(); ++d) at[index_var(static_cast<int>(d))] = index[d];
        return substitute(at, s.value);
    }

    // Whether `e` is NaN whenever some subexpression accepted by `is_target` is.
    bool reaches(const Halide::Expr &e, const std::function<bool(const Halide::Expr &)> &is_target, int depth) const {
        if (is_target(e)) return true;
        if (!e.type().is_float()) return false;
        auto either = [&](const Halide::Expr &a, const Halide::Expr &b) { return reaches(a, is_target, depth) || reaches(b, is_target, depth); };
        if (const Add *op = e.as<Add>()) return either(op->a, op->b);
        if (const Sub *op = e.as<Sub>()) return either(op->a, op->b);
        if (const Mul *op = e.as<Mul>()) return either(op->a, op->b);
        if (const Div *op = e.as<Div>()) return either(op->a, op->b);
        // Float max/min are emitted NaN-propagating (akg_fmax, akg_fmin).
        if (const Max *op = e.as<Max>()) return either(op->a, op->b);
        if (const Min *op = e.as<Min>()) return either(op->a, op->b);
        if (const Cast *op = e.as<Cast>()) return reaches(op->value, is_target, depth);
        if (const Select *op = e.as<Select>())
            return reaches(op->true_value, is_target, depth) && reaches(op->false_value, is_target, depth);
        if (const Call *op = e.as<Call>()) {
            if (const Stage *s = expandable(op)) return depth < kMaxExpansionDepth && reaches(value_at(*s, op->args), is_target, depth + 1);
            if (propagates_nan(op->name))
                return std::any_of(op->args.begin(), op->args.end(), [&](const Halide::Expr &a) { return reaches(a, is_target, depth); });
        }
        return false;
    }

    // S is a sum over M's rows whose body is NaN wherever M's operand is.
    bool is_row_sum_of(const Stage &s, const Stage &m, const Halide::Expr &operand) const {
        if (!s.materialized || s.kind != StageKind::Reduce || s.reduce_kind != ReduceKind::Sum || !s.value.type().is_float()) return false;
        if (s.shape != m.shape || s.reduce_extents != m.reduce_extents) return false;
        return reaches(s.value, [&](const Halide::Expr &e) { return equal(e, operand); }, 0);
    }

    // The indices `e` reads buffer `name` at, looking through expandable stages; false when
    // the expansion ran too deep.
    bool reads_of(const Halide::Expr &e, const std::string &name, std::vector<std::vector<Halide::Expr>> &out, int depth) const {
        bool complete = true;
        visit_with_self(e, [&](const Call *op) {
            if (op->name == kBufferRead + name) out.push_back(op->args);
            else if (const Stage *s = expandable(op)) {
                if (depth >= kMaxExpansionDepth) complete = false;
                else complete &= reads_of(value_at(*s, op->args), name, out, depth + 1);
            }
        });
        return complete;
    }

    static void visit_with_self(const Halide::Expr &e, const std::function<void(const Call *)> &on_call) {
        class Calls : public IRVisitor {
        public:
            explicit Calls(const std::function<void(const Call *)> &f) : f_(f) {}
            using IRVisitor::visit;
            void visit(const Call *op) override {
                f_(op);
                IRVisitor::visit(op);
            }

        private:
            const std::function<void(const Call *)> &f_;
        } calls(on_call);
        e.accept(&calls);
    }

    // Every value of `c` that reads M (at index a) is NaN when the sum S[a] is.
    bool poisoned(const Stage &c, const std::string &m, const std::set<std::string> &sums) const {
        if (c.kind == StageKind::Reduce && c.reduce_kind != ReduceKind::Sum && c.reduce_kind != ReduceKind::Prod) return false;
        std::vector<std::vector<Halide::Expr>> m_reads;
        if (!reads_of(c.value, m, m_reads, 0) || m_reads.empty()) return false;
        for (const auto &index : m_reads) {
            auto sum_at_index = [&](const Halide::Expr &e) {
                const Call *op = e.as<Call>();
                if (!op || op->name.rfind(kBufferRead, 0) != 0 || !sums.count(op->name.substr(kBufferRead.size())) || op->args.size() != index.size())
                    return false;
                for (size_t d = 0; d < index.size(); ++d)
                    if (!equal(op->args[d], index[d])) return false;
                return true;
            };
            if (!reaches(c.value, sum_at_index, 0)) return false;
        }
        return true;
    }

    std::vector<const Stage *> readers(const std::string &buffer) const {
        std::vector<const Stage *> out;
        for (const auto &s : graph_.stages) {
            if (!s.materialized || s.kind == StageKind::Input) continue;
            bool reads = false;
            visit_with_self(s.value, [&](const Call *op) { reads |= op->name == kBufferRead + buffer; });
            if (reads) out.push_back(&s);
        }
        return out;
    }

    const TensorGraph &graph_;
    std::map<std::string, const Stage *> by_buffer_;
};

} // namespace

void mark_nan_dominated_extrema(TensorGraph &graph) {
    NanDominance dominance(graph);
    for (auto &s : graph.stages) {
        bool extremum = s.kind == StageKind::Reduce && (s.reduce_kind == ReduceKind::Max || s.reduce_kind == ReduceKind::Min);
        s.ignores_nan = s.materialized && extremum && s.value.type().is_float() && dominance.dominated(s);
    }
}

} // namespace akg
