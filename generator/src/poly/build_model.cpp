// From the formula IR to isl: one statement per materialized stage (two for a reduction: its
// initialization and its update), domains from the shapes, accesses from the tensor reads.
#include "poly/poly_model.h"
#include "passes/materialize.h"

#include <sstream>

namespace akg {

using namespace Halide::Internal;

namespace {

std::string tuple_vars(const PolyStatement &st) {
    std::string s;
    for (int d = 0; d < st.out_dims; ++d) s += (s.empty() ? "" : ", ") + index_var(d);
    for (int d = 0; d < st.reduce_dims; ++d) s += (s.empty() ? "" : ", ") + reduce_var(d);
    return s;
}

} // namespace

std::string to_isl(const Halide::Expr &e) {
    if (auto *v = e.as<Variable>()) return v->name;
    if (auto *i = e.as<IntImm>()) return std::to_string(i->value);
    if (auto *c = e.as<Cast>()) return c->type.is_int() ? to_isl(c->value) : "";
    auto bin = [&](const Halide::Expr &a, const Halide::Expr &b, const char *op) -> std::string {
        std::string x = to_isl(a), y = to_isl(b);
        if (x.empty() || y.empty()) return "";
        return "(" + x + " " + op + " " + y + ")";
    };
    if (auto *a = e.as<Add>()) return bin(a->a, a->b, "+");
    if (auto *s = e.as<Sub>()) return bin(s->a, s->b, "-");
    if (auto *m = e.as<Mul>()) {
        if (!m->a.as<IntImm>() && !m->b.as<IntImm>()) return "";
        return bin(m->a, m->b, "*");
    }
    if (auto *d = e.as<Div>()) {
        auto *c = d->b.as<IntImm>();
        std::string x = to_isl(d->a);
        if (!c || c->value <= 0 || x.empty()) return "";
        return "floor((" + x + ")/" + std::to_string(c->value) + ")";
    }
    if (auto *m = e.as<Mod>()) {
        auto *c = m->b.as<IntImm>();
        std::string x = to_isl(m->a);
        if (!c || c->value <= 0 || x.empty()) return "";
        return "((" + x + ") mod " + std::to_string(c->value) + ")";
    }
    if (auto *m = e.as<Min>()) {
        std::string x = to_isl(m->a), y = to_isl(m->b);
        return x.empty() || y.empty() ? "" : "min(" + x + ", " + y + ")";
    }
    if (auto *m = e.as<Max>()) {
        std::string x = to_isl(m->a), y = to_isl(m->b);
        return x.empty() || y.empty() ? "" : "max(" + x + ", " + y + ")";
    }
    return "";
}

namespace {

std::string bounds_of(const Shape &shape, const char *prefix) {
    std::string s;
    for (size_t d = 0; d < shape.size(); ++d)
        s += (s.empty() ? "" : " and ") + std::string("0 <= ") + prefix + std::to_string(d) + " < " + std::to_string(shape[d]);
    return s;
}

std::string buffer_tuple(const BufferInfo &b, const std::vector<std::string> &idx) {
    std::string s = b.name + "[";
    for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + idx[d];
    return s + "]";
}

class AccessCollector : public IRVisitor {
public:
    std::vector<std::pair<std::string, std::vector<Halide::Expr>>> reads;

private:
    using IRVisitor::visit;
    void visit(const Call *op) override {
        if (op->name.rfind("buf$", 0) == 0) reads.push_back({op->name.substr(4), op->args});
        IRVisitor::visit(op);
    }
};

} // namespace

PolyModel build_poly_model(isl_ctx *ctx, const TensorGraph &graph) {
    PolyModel m;
    m.ctx = isl::ctx(ctx);
    for (const auto &s : graph.stages) {
        if (!s.materialized) continue;
        BufferInfo b;
        b.name = s.buffer;
        b.shape = s.shape;
        b.kind = s.buffer_kind;
        b.saved_for_later_passes = s.saved_for_later_passes;
        b.dtype = s.buffer_kind == BufferKind::Scratch ? scratch_dtype(s.value.type()) : s.dtype;
        // Sums accumulate in double where they live in memory (column reductions add one
        // value per row into each column: thousands of float32 additions in a row lose digits).
        if (s.kind == StageKind::Reduce && s.buffer_kind == BufferKind::Scratch) b.dtype = reduce_accumulator_dtype(s);
        bool seen = false;
        for (const auto &other : m.buffers) seen |= other.name == b.name;
        if (!seen) m.buffers.push_back(b);
    }
    int k = 0;
    for (const Stage *s : materialized_stages(graph)) {
        if (s->kind == StageKind::Reduce) {
            m.statements.push_back({"S" + std::to_string(k++), s, StatementRole::ReduceInit, (int)s->shape.size(), 0});
            m.statements.push_back({"S" + std::to_string(k++), s, StatementRole::ReduceUpdate, (int)s->shape.size(),
                                    (int)s->reduce_extents.size()});
        } else {
            m.statements.push_back({"S" + std::to_string(k++), s, StatementRole::Assign, (int)s->shape.size(), 0});
        }
    }

    int max_dims = 0;
    for (const auto &st : m.statements) max_dims = std::max(max_dims, st.out_dims + st.reduce_dims);
    m.domain = isl::union_set(m.ctx, "{ }");
    m.reads = isl::union_map(m.ctx, "{ }");
    m.writes = isl::union_map(m.ctx, "{ }");
    m.original_schedule = isl::union_map(m.ctx, "{ }");
    for (size_t n = 0; n < m.statements.size(); ++n) {
        const PolyStatement &st = m.statements[n];
        const Stage &s = *st.stage;
        std::string tuple = st.name + "[" + tuple_vars(st) + "]";
        std::string cond = bounds_of(s.shape, "i");
        if (st.reduce_dims) {
            std::string r = bounds_of(s.reduce_extents, "r");
            cond += (cond.empty() || r.empty() ? "" : " and ") + r;
        }
        m.domain = m.domain.unite(isl::union_set(m.ctx, "{ " + tuple + (cond.empty() ? "" : " : " + cond) + " }"));

        std::vector<std::string> out_idx;
        for (int d = 0; d < st.out_dims; ++d) out_idx.push_back(index_var(d));
        const BufferInfo &target = m.buffer(s.buffer);
        m.writes = m.writes.unite(isl::union_map(m.ctx, "{ " + tuple + " -> " + buffer_tuple(target, out_idx) + " }"));
        if (st.role == StatementRole::ReduceUpdate)
            m.reads = m.reads.unite(isl::union_map(m.ctx, "{ " + tuple + " -> " + buffer_tuple(target, out_idx) + " }"));
        if (st.role != StatementRole::ReduceInit) {
            AccessCollector ac;
            s.value.accept(&ac);
            for (const auto &[buf, args] : ac.reads) {
                const BufferInfo &b = m.buffer(buf);
                std::vector<std::string> idx;
                std::string extra;
                for (size_t d = 0; d < args.size(); ++d) {
                    std::string a = to_isl(args[d]);
                    if (a.empty()) {
                        // Not quasi-affine: over-approximate by the whole dimension.
                        a = "x" + std::to_string(d);
                        extra += std::string(extra.empty() ? "" : " and ") + "0 <= " + a + " < " + std::to_string(b.shape[d]);
                    }
                    idx.push_back(a);
                }
                std::string text = "{ " + tuple + " -> " + buffer_tuple(b, idx) + (cond.empty() && extra.empty() ? "" : " : ") +
                                   cond + (cond.empty() || extra.empty() ? "" : " and ") + extra + " }";
                m.reads = m.reads.unite(isl::union_map(m.ctx, text));
            }
        }
        std::string sched = "[" + std::to_string(n);
        for (int d = 0; d < st.out_dims + st.reduce_dims; ++d) sched += ", " + (d < st.out_dims ? index_var(d) : reduce_var(d - st.out_dims));
        for (int d = st.out_dims + st.reduce_dims; d < max_dims; ++d) sched += ", 0";
        sched += "]";
        m.original_schedule = m.original_schedule.unite(isl::union_map(m.ctx, "{ " + tuple + " -> " + sched + " }"));
    }
    m.reads = m.reads.intersect_domain(m.domain);
    m.writes = m.writes.intersect_domain(m.domain);
    m.original_schedule = m.original_schedule.intersect_domain(m.domain);
    return m;
}

const PolyStatement &PolyModel::statement(const std::string &name) const {
    for (const auto &s : statements)
        if (s.name == name) return s;
    throw InternalError("unknown statement " + name);
}

BufferInfo &PolyModel::buffer(const std::string &name) {
    for (auto &b : buffers)
        if (b.name == name) return b;
    throw InternalError("unknown buffer " + name);
}
const BufferInfo &PolyModel::buffer(const std::string &name) const { return const_cast<PolyModel *>(this)->buffer(name); }

const Halide::Internal::Call *PolyModel::float16_copy_source(const Stage &s) const {
    if (s.kind != StageKind::Compute || buffer(s.buffer).dtype != DType::Float16) return nullptr;
    const Halide::Internal::Cast *widen = s.value.as<Halide::Internal::Cast>();
    if (!widen || widen->type != Halide::Float(32)) return nullptr;
    const Halide::Internal::Call *read = widen->value.as<Halide::Internal::Call>();
    if (!read || read->type != Halide::Float(16) || read->name.rfind("buf$", 0) != 0) return nullptr;
    return buffer(read->name.substr(4)).dtype == DType::Float16 ? read : nullptr;
}

const Halide::Internal::Call *PolyModel::copy_source(const Stage &s) const {
    if (const Halide::Internal::Call *half = float16_copy_source(s)) return half;
    if (s.kind != StageKind::Compute) return nullptr;
    const Halide::Internal::Call *read = s.value.as<Halide::Internal::Call>();
    if (!read || read->name.rfind("buf$", 0) != 0) return nullptr;
    DType dtype = buffer(s.buffer).dtype;
    bool same = (dtype == DType::Float32 && read->type == Halide::Float(32)) || (dtype == DType::Int32 && read->type == Halide::Int(32));
    return same && buffer(read->name.substr(4)).dtype == dtype ? read : nullptr;
}

} // namespace akg
