// plan-contraction (plan_contraction.h).
#include "poly/plan_contraction.h"
#include "poly/schedule_transforms.h"

#include <sstream>

#include <isl/aff.h>
#include <isl/map.h>

namespace akg {

using namespace Halide::Internal;

namespace {

bool uses_var(const Halide::Expr &e, const std::string &name) { return expr_uses_var(e, name); }

class ReadCollector : public IRVisitor {
public:
    std::vector<const Call *> reads;

private:
    using IRVisitor::visit;
    void visit(const Call *op) override {
        if (op->name.rfind("buf$", 0) == 0) reads.push_back(op);
        IRVisitor::visit(op);
    }
};

// The reads of buffers in `e`, in order.
std::vector<const Call *> buffer_reads(const Halide::Expr &e) {
    ReadCollector rc;
    e.accept(&rc);
    return rc.reads;
}

class Float16Finder : public IRVisitor {
public:
    bool found = false;

private:
    using IRVisitor::visit;
    void visit(const Cast *op) override {
        found |= op->type == Halide::Float(16);
        IRVisitor::visit(op);
    }
};

// Whether `e` converts anything to float16: a rounding, or a float16 value.
bool converts_to_float16(const Halide::Expr &e) {
    Float16Finder f;
    e.accept(&f);
    return f.found;
}

bool is_var(const Halide::Expr &e, const std::string &name) {
    const Variable *v = e.as<Variable>();
    return v && v->name == name;
}

// `operand` as a plain read of a float32 tensor, or of a float16 one converted to float32
// (ContractionPlan::PlainOperand), x being the index variable of its row or column; nothing when
// it computes anything else.
std::optional<ContractionPlan::PlainOperand> plain_operand(const PolyModel &m, const Halide::Expr &operand, const std::string &x, int rank) {
    const Call *read = operand.as<Call>();
    const Cast *cast = operand.as<Cast>();
    const bool f16 = cast && cast->type == Halide::Float(32) && cast->value.type() == Halide::Float(16);
    if (f16) read = cast->value.as<Call>();
    if (!read || read->name.rfind("buf$", 0) != 0 || read->type != (f16 ? Halide::Float(16) : Halide::Float(32))) return std::nullopt;
    const BufferInfo &b = m.buffer(read->name.substr(4));
    if (b.dtype != (f16 ? DType::Float16 : DType::Float32) || read->args.size() != b.shape.size()) return std::nullopt;
    ContractionPlan::PlainOperand p;
    p.buffer = b.name;
    p.f16 = f16;
    p.offset = Halide::Expr(int64_t{0});
    int64_t stride = 1;
    for (int d = static_cast<int>(b.shape.size()) - 1; d >= 0; --d) {
        const Halide::Expr &a = read->args[d];
        if (is_var(a, x)) p.x_stride = stride;
        else if (is_var(a, reduce_var(0))) p.k_stride = stride;
        else if (is_const_zero(a)) {
        } else {
            bool batch = false;
            for (int v = 0; v + 2 < rank; ++v) batch |= is_var(a, index_var(v));
            if (!batch) return std::nullopt;
            p.offset = p.offset + a * Halide::Expr(stride);
        }
        stride *= b.shape[d];
    }
    p.offset = simplify(p.offset);
    return p;
}

// B can be packed once for many runs (akg_pack_input): a plain kernel input, the same for every
// batch element, that no statement but the contraction reads and none writes.
bool b_packable_ahead(const PolyModel &m, const ContractionPlan &p) {
    if (!p.b_plain || p.column_sum || m.buffer(p.b_plain->buffer).kind != BufferKind::KernelInput) return false;
    for (int64_t e : p.batch)
        if (e != 1) return false;
    struct Seen {
        std::string buffer, update;
        bool other = false;
    } seen{p.b_plain->buffer, p.update};
    isl_union_map *accesses = isl_union_map_union(m.reads.copy(), m.writes.copy());
    isl_union_map_foreach_map(
        accesses,
        [](isl_map *map, void *user) -> isl_stat {
            auto *s = static_cast<Seen *>(user);
            if (isl_map_get_tuple_name(map, isl_dim_out) == s->buffer && isl_map_get_tuple_name(map, isl_dim_in) != s->update) s->other = true;
            isl_map_free(map);
            return isl_stat_ok;
        },
        &seen);
    isl_union_map_free(accesses);
    return !seen.other;
}

// The column sum of B that a part holds beside its contraction (ContractionPlan::ColumnSum):
// a sum over k of exactly B's values, over n columns, copied to a float32 kernel output that
// nothing else in the part reads.
std::optional<ContractionPlan::ColumnSum> column_sum_of_b(const PolyModel &m, const ContractionPlan &p) {
    const Stage *sum = nullptr;
    for (const auto &st : m.statements)
        if (!st.stage->contraction && st.stage->kind == StageKind::Reduce) {
            if (sum && sum != st.stage) throw InternalError("a GEMM part holds two column sums");
            sum = st.stage;
        }
    if (!sum) return std::nullopt;
    auto fail = [&](const std::string &why) -> InternalError { return InternalError("the column sum " + sum->tensor + " beside the MatMul " + why); };
    if (!p.batch.empty() || sum->reduce_kind != ReduceKind::Sum || sum->reduce_extents != Shape{p.k} || element_count(sum->shape) != p.n)
        throw fail("is not a sum over its k of n columns");
    int col = static_cast<int>(sum->shape.size()) - 1;
    for (int d = 0; d < static_cast<int>(sum->shape.size()); ++d)
        if (sum->shape[d] != 1) col = d;
    const Halide::Expr b_value = substitute(index_var(1), index_expr(col), p.rhs);
    if (!equal(strip_float_casts(sum->value), strip_float_casts(b_value))) throw fail("sums something other than B: " + print_expr(sum->value));
    ContractionPlan::ColumnSum cs;
    for (const auto &st : m.statements) {
        if (st.stage == sum) cs.statements.push_back(st.name);
        bool reads_sum = false;
        for (const Call *read : buffer_reads(st.stage->value)) reads_sum |= read->name == "buf$" + sum->buffer;
        if (!reads_sum) continue;
        const Call *copy = strip_float_casts(st.stage->value).as<Call>();
        const BufferInfo &out = m.buffer(st.stage->buffer);
        if (!cs.output.empty() || !copy || copy->name != "buf$" + sum->buffer || st.stage->shape != sum->shape || out.kind != BufferKind::KernelOutput || out.dtype != DType::Float32)
            throw fail("is read by " + st.stage->tensor + ", not only copied to a float32 output");
        cs.output = out.name;
        cs.statements.push_back(st.name);
    }
    if (cs.output.empty()) throw fail("is not stored");
    return cs;
}

// The instances of statement `name` in the model's domain.
isl::union_set instances(const PolyModel &m, const std::string &name) {
    isl_ctx *ctx = m.ctx.get();
    return m.domain.intersect(isl::union_set(isl::manage(isl_set_universe(m.statement(name).space(ctx)))));
}

// `aff` as N / den, N an integer expression in the index variables of its domain's dimensions
// and floor divisions.
Halide::Expr aff_numerator(isl_aff *aff, int64_t &den) {
    isl_val *d = isl_aff_get_denominator_val(aff);
    den = isl_val_get_num_si(d);
    auto scaled = [&](isl_val *v) {
        v = isl_val_mul(v, isl_val_copy(d));
        int64_t r = isl_val_get_num_si(v);
        isl_val_free(v);
        return r;
    };
    Halide::Expr e = Halide::Expr(scaled(isl_aff_get_constant_val(aff)));
    for (int i = 0; i < isl_aff_dim(aff, isl_dim_in); ++i)
        if (int64_t c = scaled(isl_aff_get_coefficient_val(aff, isl_dim_in, i))) e = e + Halide::Expr(c) * index_expr(i);
    for (int k = 0; k < isl_aff_dim(aff, isl_dim_div); ++k)
        if (int64_t c = scaled(isl_aff_get_coefficient_val(aff, isl_dim_div, k))) {
            isl_aff *div = isl_aff_get_div(aff, k);
            int64_t dd = 1;
            Halide::Expr q = aff_numerator(div, dd);
            isl_aff_free(div);
            e = e + Halide::Expr(c) * (dd == 1 ? q : q / Halide::Expr(dd));
        }
    isl_val_free(d);
    return e;
}

// A single-valued map's output dimensions as expressions in its input's index variables; none
// where isl gives an output piecewise.
std::optional<std::vector<Halide::Expr>> map_as_exprs(const isl::map &map) {
    isl_pw_multi_aff *pma = isl_pw_multi_aff_from_map(map.copy());
    std::vector<Halide::Expr> out;
    for (int d = 0; pma && d < isl_pw_multi_aff_dim(pma, isl_dim_out); ++d) {
        isl_pw_aff *pa = isl_pw_aff_coalesce(isl_pw_multi_aff_get_pw_aff(pma, d));
        Halide::Expr e;
        if (isl_pw_aff_n_piece(pa) == 1)
            isl_pw_aff_foreach_piece(
                pa,
                [](isl_set *set, isl_aff *aff, void *user) {
                    int64_t den = 1;
                    Halide::Expr n = aff_numerator(aff, den);
                    if (den == 1) *static_cast<Halide::Expr *>(user) = simplify(n);
                    isl_set_free(set);
                    isl_aff_free(aff);
                    return isl_stat_ok;
                },
                &e);
        isl_pw_aff_free(pa);
        if (!e.defined()) break;
        out.push_back(e);
    }
    const bool whole = pma && static_cast<int>(out.size()) == isl_pw_multi_aff_dim(pma, isl_dim_out);
    isl_pw_multi_aff_free(pma);
    if (!whole) return std::nullopt;
    return out;
}

// name[i0, i1, ...], `dims` index variables.
std::string tuple_text(const std::string &name, int dims) {
    std::string s = name + "[";
    for (int d = 0; d < dims; ++d) s += (d ? ", " : "") + index_var(d);
    return s + "]";
}

// Each instance of statement `name` to the row-major offset of the element it writes.
isl::map written_offsets(const PolyModel &m, const std::string &name) {
    const BufferInfo &b = m.buffer(m.statement(name).stage->buffer);
    isl::map writes = isl::manage(isl_map_from_union_map(m.writes.intersect_domain(instances(m, name)).release()));
    return writes.apply_range(isl::manage(row_major_offsets(m.ctx.get(), b)));
}

// An epilogue statement reading the tile's values through `to_product` (its instances to the
// init statement's at the elements it reads), which is not the identity: a permuted store when
// that map is a bijection onto the product's elements.
ContractionPlan::PermutedStore permuted_store(const PolyModel &m, const ContractionPlan &p, const PolyStatement &st, const isl::map &to_product) {
    auto fail = [&](const std::string &why) {
        return UserError("the MatMul's epilogue " + st.stage->tensor + shape_string(st.stage->shape) + " " + why +
                         "; only elementwise epilogues over the product's shape and permutations of them are fused");
    };
    const isl::union_set mine = instances(m, st.name), product = instances(m, p.init);
    if (!to_product.is_bijective() || !isl::union_set(to_product.domain()).is_equal(mine) || !isl::union_set(to_product.range()).is_equal(product))
        throw fail("reads the product at elements that are not a permutation of it");
    ContractionPlan::PermutedStore ps;
    ps.to_product = to_product;
    std::optional<std::vector<Halide::Expr>> at = map_as_exprs(to_product.reverse());
    if (!at) throw fail("reads the product through a map whose inverse isl gives in pieces");
    std::map<std::string, Halide::Expr> y;
    for (size_t d = 0; d < at->size(); ++d) y[index_var(static_cast<int>(d))] = (*at)[d];
    // The indices of its reads composed with the inverse by isl, which simplifies them (a bias
    // read through the permutation is read at the product's column again), else substituted.
    class Reindex : public IRMutator {
    public:
        Reindex(const PolyModel &m, const PolyStatement &st, const isl::map &from_product, const std::map<std::string, Halide::Expr> &y)
            : m_(m), st_(st), from_product_(from_product), y_(y) {}
        using IRMutator::visit;
        Halide::Expr visit(const Call *op) override {
            if (op->name.rfind("buf$", 0) != 0) return IRMutator::visit(op);
            std::vector<Halide::Expr> args;
            for (const auto &a : op->args) args.push_back(index(a));
            return Call::make(op->type, op->name, args, op->call_type, op->func, op->value_index, op->image, op->param);
        }

    private:
        Halide::Expr index(const Halide::Expr &a) const {
            const std::string text = to_isl(a);
            if (!text.empty()) {
                isl::map at(m_.ctx, "{ " + tuple_text(st_.name, st_.out_dims) + " -> [" + text + "] }");
                if (auto e = map_as_exprs(from_product_.apply_range(at))) return cast(a.type(), (*e)[0]);
            }
            return substitute(y_, a);
        }
        const PolyModel &m_;
        const PolyStatement &st_;
        const isl::map &from_product_;
        const std::map<std::string, Halide::Expr> &y_;
    };
    ps.value = Reindex(m, st, to_product.reverse(), y).mutate(st.stage->value);
    const BufferInfo &b = m.buffer(st.stage->buffer);
    Halide::Expr offset = Halide::Expr(int64_t{0});
    int64_t stride = 1;
    for (int d = static_cast<int>(b.shape.size()) - 1; d >= 0; --d) {
        offset = offset + (*at)[d] * Halide::Expr(stride);
        stride *= b.shape[d];
    }
    ps.offset = simplify(offset);
    return ps;
}

// Whether a permuted store's offsets run on by one along each row of every mr x nr tile, and
// the distance between its rows in every tile when that is one constant (else 0).
void tile_layout(const PolyModel &m, const ContractionPlan &p, const PolyStatement &st, ContractionPlan::PermutedStore &ps) {
    const int rank = static_cast<int>(p.stage->shape.size());
    const isl::map offset = ps.to_product.reverse().apply_range(written_offsets(m, st.name));
    const std::string x = tuple_text(p.init, rank);
    // The offset of the next element along dimension `dim`, from the elements whose next one is
    // in the same tile.
    auto next_offset = [&](int dim, int64_t tile) {
        std::string next = p.init + "[";
        for (int d = 0; d < rank; ++d) next += (d ? ", " : "") + index_var(d) + (d == dim ? " + 1" : "");
        const std::string i = index_var(dim), t = std::to_string(tile);
        isl::set within(m.ctx, "{ " + x + " : " + i + " mod " + t + " < " + t + " - 1 }");
        return isl::map(m.ctx, "{ " + x + " -> " + next + "]" + " }").apply_range(offset).intersect_domain(within);
    };
    isl::map along_row = next_offset(rank - 1, p.blocking.nr);
    ps.rows_contiguous = along_row.is_equal(offset.apply_range(isl::map(m.ctx, "{ [o] -> [o + 1] }")).intersect_domain(along_row.domain()));
    isl::map down = next_offset(rank - 2, p.blocking.mr);
    const isl::map here = offset.intersect_domain(down.domain());
    isl::set strides = isl::manage(isl_map_range(isl_map_sum(down.copy(), isl_map_neg(here.copy()))));
    ps.tile_row_stride = 0;
    if (!strides.is_empty()) {
        isl_val *lo = isl_set_dim_min_val(strides.copy(), 0), *hi = isl_set_dim_max_val(strides.copy(), 0);
        if (lo && hi && isl_val_is_int(lo) && isl_val_eq(lo, hi) == isl_bool_true) ps.tile_row_stride = isl_val_get_num_si(lo);
        isl_val_free(lo);
        isl_val_free(hi);
    }
}

// The k from which a tile's k loop is long enough to hide its outputs' memory traffic.
constexpr int64_t kLongK = 256;

// The mc x kc block of A takes the other half of L2.
int64_t block_rows(const Target &t, int64_t mr, int64_t kc) {
    return std::max<int64_t>(mr, t.l2_bytes / 2 / (kc * 4) / mr * mr);
}

} // namespace

GemmBlocking gemm_blocking(const Target &t, int64_t m, int64_t n, int64_t k) {
    GemmBlocking b;
    if (t.arch == Arch::AArch64) {
        // ASIMD multiplies by a lane of a register: two registers carry 8 rows of A, three carry
        // 12 columns of B, and the 8 x 12 accumulators take 24 of the 32 registers.
        b.mr = 8;
        b.nr = 3 * t.lanes(32);
    } else {
        // Two vectors of B per row of the tile; the rows take what is left of the registers
        // after those two and one broadcast of A.
        const int nv = 2;
        b.nr = nv * t.lanes(32);
        b.mr = std::max(1, (t.vector_registers - nv - 1) / nv);
    }
    // Low et al.: kc so that a kc x nr micro-panel of B stays in L1 while the mr x kc
    // micro-panels of A stream through the L1 ways it leaves them (one way kept for C).
    const int64_t l1_way = t.l1d_bytes / t.l1d_ways;
    int64_t a_ways = std::max<int64_t>(1, (t.l1d_ways - 1) * b.mr / (b.mr + b.nr));
    int64_t kc_l1 = std::max<int64_t>(16, a_ways * l1_way / (b.mr * 4));
    // Every panel of k past the first reloads and stores each tile of C, and keeps the tiles in
    // memory between panels. Panels up to half of L2 for the two micro-panels stream them from
    // L2 as fast as the micro-kernel uses them (L2 refills L1 at a line per cycle), so k up to
    // that runs as one panel; longer k in equal panels of at most that.
    int64_t kc_l2 = std::max(kc_l1, t.l2_bytes / 2 / ((b.mr + b.nr) * 4));
    int64_t panels = (k + kc_l2 - 1) / kc_l2;
    b.kc = std::max<int64_t>(1, (k + panels - 1) / panels);
    b.mc = block_rows(t, b.mr, b.kc);
    // The K x nc panel of B each thread packs takes half of its share of the last-level cache.
    int64_t nc = t.llc_bytes / std::max(1, t.cores) / 2 / (std::max<int64_t>(k, 1) * 4);
    b.nc = std::max<int64_t>(b.nr, nc / b.nr * b.nr);
    (void)m;
    (void)n;
    return b;
}

bool graph_has_contraction(const TensorGraph &graph) {
    for (const auto &s : graph.stages)
        if (s.contraction && element_count(s.shape) > 0 && element_count(s.reduce_extents) > 0) return true;
    return false;
}

void plan_contraction(PolyModel &m, const ScheduleOptions &options, const RowEpilogue *row_part) {
    ContractionPlan p;
    for (const auto &st : m.statements) {
        const Stage &s = *st.stage;
        if (s.contraction) {
            if (p.stage && p.stage != &s) throw InternalError("a GEMM part holds two contractions");
            p.stage = &s;
            (st.role == StatementRole::ReduceInit ? p.init : p.update) = st.name;
        }
    }
    if (!p.stage) throw InternalError("plan-contraction: no contraction");
    const Stage &c = *p.stage;
    const int rank = static_cast<int>(c.shape.size());
    const Mul *mul = c.value.as<Mul>();
    if (!mul) throw InternalError("a contraction's body is not a product");
    const std::string im = index_var(rank - 2), in = index_var(rank - 1);
    p.lhs = mul->a;
    p.rhs = mul->b;
    if (uses_var(p.lhs, in) || uses_var(p.rhs, im)) std::swap(p.lhs, p.rhs);
    if (uses_var(p.lhs, in) || uses_var(p.rhs, im)) throw InternalError("a contraction's operands mix its rows and columns");
    p.batch.assign(c.shape.begin(), c.shape.end() - 2);
    p.m = c.shape[rank - 2];
    p.n = c.shape[rank - 1];
    p.k = c.reduce_extents.at(0);
    p.column_sum = column_sum_of_b(m, p);
    // The tile's values: each buffer element to the product's element it holds (the init
    // statement's instance).
    isl::union_map tile_values = m.writes.intersect_domain(instances(m, p.init)).reverse();
    auto identity = [&](const std::string &from) { return isl::union_map(m.ctx, "{ " + tuple_text(from, rank) + " -> " + tuple_text(p.init, rank) + " }"); };
    for (const auto &st : m.statements) {
        if (st.stage == p.stage) continue;
        if (p.column_sum && std::count(p.column_sum->statements.begin(), p.column_sum->statements.end(), st.name)) continue;
        const Stage &s = *st.stage;
        if (st.role != StatementRole::Assign)
            throw UserError("the MatMul's " + s.tensor + shape_string(s.shape) +
                            " is computed apart from its tiles; only elementwise epilogues over the product's shape and permutations of them are fused");
        const isl::union_set mine = instances(m, st.name);
        const isl::union_map reads = m.reads.intersect_domain(mine).apply_range(tile_values);
        const bool same_element = s.shape == c.shape &&
                                  (reads.is_empty() || reads.is_equal(identity(st.name).intersect_domain(mine)));
        if (!same_element) {
            isl::map to_product;
            if (!reads.is_empty()) to_product = isl::manage(isl_map_from_union_map(reads.copy()));
            else if (element_count(s.shape) == element_count(c.shape))
                // A permutation whose values simplified to ones that no longer read the product
                // (a constant): any bijection will do, the row-major one of a reshape.
                to_product = written_offsets(m, st.name).apply_range(written_offsets(m, p.init).reverse());
            else
                throw UserError("the MatMul's " + s.tensor + shape_string(s.shape) +
                                " is computed apart from its tiles; only elementwise epilogues over the product's shape and permutations of them are fused");
            p.permuted[st.name] = permuted_store(m, p, st, to_product);
        }
        tile_values = tile_values.unite(m.writes.intersect_domain(mine).reverse().apply_range(same_element ? identity(st.name) : isl::union_map(p.permuted.at(st.name).to_product)));
        p.epilogue.push_back(st.name);
    }
    for (int d = 0; d + 2 < rank; ++d) p.rhs_batch.push_back(uses_var(p.rhs, index_var(d)));
    std::vector<const Call *> rhs_reads = buffer_reads(p.rhs);
    p.rhs_k_inner = !rhs_reads.empty() && uses_var(rhs_reads.front()->args.back(), reduce_var(0)) && p.k > 1;

    const Target &t = *options.target;
    p.blocking = gemm_blocking(t, p.m, p.n, p.k);
    GemmBlocking &b = p.blocking;
    int64_t batch_count = element_count(p.batch);
    const int threads = std::max(1, options.threads);
    if (!options.parallel || threads == 1) p.split = GemmSplit::None;
    else if (batch_count >= threads) p.split = GemmSplit::Batch;
    else if (p.n <= p.m && p.m >= int64_t{threads} * b.mr) p.split = GemmSplit::Rows;
    else if (p.n >= int64_t{threads} * b.nr) p.split = GemmSplit::Columns;
    else if (p.m >= int64_t{threads} * b.mr) p.split = GemmSplit::Rows;
    int64_t rows = (p.m + b.mr - 1) / b.mr * b.mr;
    if (p.split == GemmSplit::Rows) {
        p.slices = threads;
        p.slice_rows = ((p.m + threads - 1) / threads + b.mr - 1) / b.mr * b.mr;
        rows = p.slice_rows;
    }
    // B packed ahead of time leaves no panel of B for a thread to pack and keep in the last-level
    // cache, which is what bounds nc: one panel of all the columns then packs A once, not once
    // per panel (a 2048 x 3072 A is 25 MB).
    if (options.prepacked_b) b.nc = std::max(b.nc, (p.n + b.nr - 1) / b.nr * b.nr);
    // Panels of columns: as many as the model's nc needs, a multiple of the threads when
    // they share them out, all of about the same width.
    auto width = [&](int64_t count) { return (((p.n + count - 1) / count) + b.nr - 1) / b.nr * b.nr; };
    int64_t panels = (p.n + b.nc - 1) / b.nc;
    if (p.split == GemmSplit::Columns) {
        // Every panel packs A again, so the count is rounded down to the threads' multiple
        // where the wider panels still fit a thread's whole share of the cache (dW's 3 -> 2).
        const int64_t down = panels / threads * threads;
        const bool down_fits = down >= threads && p.k * width(down) * 4 <= t.llc_bytes / std::max(1, t.cores);
        panels = down_fits ? down : (panels + threads - 1) / threads * threads;
    } else if (p.k * width(1) * 4 <= t.llc_bytes / std::max(1, t.cores)) {
        // Likewise one panel of all the columns where it fits that share: A is then packed once,
        // and slices of rows that one thread runs in turn share the packed B (FFN2, dX).
        panels = 1;
    }
    b.nc = width(panels);
    b.mc = std::min(b.mc, rows);
    // Every block of rows reads its panel of B again. Where that panel comes from memory (larger
    // than a core's share of the last-level cache) and all the rows fit L2 rather than its half,
    // one block of them reads it once: the MLM head's 320 rows, its 65 MB of B.
    const int64_t b_panel_bytes = p.k * b.nc * 4;
    if (b.mc < rows && b_panel_bytes > t.llc_bytes / std::max(1, t.cores) && rows * b.kc * 4 <= t.l2_bytes) b.mc = rows;
    p.k_panels = (p.k + b.kc - 1) / b.kc;

    p.a_plain = plain_operand(m, p.lhs, im, rank);
    p.b_plain = plain_operand(m, p.rhs, in, rank);
    std::vector<const Call *> lhs_reads = buffer_reads(p.lhs);
    p.lhs_k_inner = !lhs_reads.empty() && uses_var(lhs_reads.front()->args.back(), reduce_var(0)) && p.k > 1;
    // A is read in place when its rows of one thread fit the L2 block (small M): packing would
    // copy it once per panel of columns for nothing. Rows a multiple of 1 KiB apart share L1
    // sets, and 14 of them evict each other: those are packed.
    if (p.a_plain && !p.a_plain->f16 && p.a_plain->k_stride == 1 && rows <= b.mc && (p.a_plain->x_stride * 4) % 1024 != 0) p.pack_a = false;
    // B likewise, when its micro-panels are read by few tiles of rows: packing would cost a copy
    // of B for the little reuse the packed layout speeds up. Its rows then stream through the
    // caches at B's own stride, which must not alias in L1 the way 1 KiB multiples do.
    // A column sum is taken from the packed micro-panels. A B from memory is read in place by
    // more rows than that where it is read in panels of k (below): every panel then reloads the
    // tiles of C of the thread's rows and columns, which must stay in L2 for it to pay.
    const bool b_in_place_layout = p.b_plain && !p.b_plain->f16 && p.b_plain->x_stride == 1 &&
                                   (p.b_plain->k_stride * 4) % 1024 != 0 && !p.column_sum;
    const bool b_from_memory = p.k * p.n * 4 > t.l2_bytes;
    const int64_t thread_columns = width(p.split == GemmSplit::Columns ? threads : 1);
    const bool k_panels_in_place = b_from_memory && !row_part && rows * thread_columns * 4 <= t.l2_bytes / 2;
    if (b_in_place_layout && (rows <= b.mc || k_panels_in_place)) p.pack_b = false;
    p.b_packable = b_packable_ahead(m, p);
    if (options.prepacked_b) {
        if (!p.b_packable) throw InternalError("plan-contraction: B cannot be packed ahead of time");
        p.prepacked_b = p.pack_b = true;
    }
    p.b_streamed = !p.pack_b && b_from_memory;
    // B streamed in place is read a micro-panel of columns at a time, a row of it per page when
    // its rows are a page long (the FC's 4004 bytes), which the hardware prefetchers do not
    // follow. Panels of k whose rows' pages fit the L1 TLB let every micro-panel of the thread's
    // columns walk the same pages in turn, line after line within each, which they do follow.
    // A row part needs one panel of k.
    if (p.b_streamed && !row_part) {
        const int64_t rows_per_page = std::max<int64_t>(1, t.page_bytes / (p.b_plain->k_stride * 4));
        const int64_t kc = std::min(b.kc, t.l1_dtlb_entries * rows_per_page);
        p.k_panels = (p.k + kc - 1) / kc;
        b.kc = (p.k + p.k_panels - 1) / p.k_panels;
        b.nc = thread_columns;
        b.mc = std::max(b.mc, std::min(rows, block_rows(t, b.mr, b.kc)));
    }
    // All of a thread's rows in one block that fits L2, one panel of k, a panel of packed B that
    // would come from L3, and B's micro-panels runs of memory: B is packed per column of tiles
    // (the MLM head's 320 rows), and the panels of columns are only the threads' shares, since
    // no panel of packed B is kept for a panel's width to bound (A is packed once per panel).
    const auto &bs = p.b_plain;
    const bool b_runs = bs && !bs->f16 && bs->k_stride == 1 && bs->x_stride == p.k;
    if (p.pack_b && !p.prepacked_b && b_runs && p.k_panels == 1 && rows * b.kc * 4 <= t.l2_bytes && b.kc * b.nc * 4 > t.l2_bytes / 2 && !row_part) {
        p.b_packed_per_column = true;
        b.mc = rows;
        b.nc = width(p.split == GemmSplit::Columns ? threads : 1);
    }
    p.b_next_prefetched = p.pack_b && !p.b_packed_per_column && b.kc * b.nc * 4 > t.l2_bytes / 2;
    // A column sum is taken by the first slice's packing, which must then run.
    p.b_shared_by_slices = p.split == GemmSplit::Rows && p.pack_b && !p.prepacked_b && !p.b_packed_per_column && p.n_panels() == 1 &&
                           element_count(p.batch) == 1 && !p.column_sum;
    for (auto &[name, ps] : p.permuted) tile_layout(m, p, m.statement(name), ps);
    if (p.epilogue.empty() && c.buffer_kind == BufferKind::KernelOutput && m.buffer(c.buffer).dtype == DType::Float32)
        p.direct_output = c.buffer;
    // An output that copies the product (a lone MatMul's output stage) is stored to directly too;
    // its statement stays in the tiles' sequence, run by those stores.
    if (p.epilogue.size() == 1 && c.buffer_kind == BufferKind::Scratch) {
        const Stage &copy = *m.statement(p.epilogue[0]).stage;
        // The product's buffer is a double accumulator of the reduction path: read as float.
        const Call *read = strip_float_casts(copy.value).as<Call>();
        if (read && read->name == "buf$" + c.buffer && copy.buffer_kind == BufferKind::KernelOutput && m.buffer(copy.buffer).dtype == DType::Float32) {
            // A permuted copy (merged heads) too, when each tile's rows are runs at a fixed distance.
            auto permuted = p.permuted.find(p.epilogue[0]);
            if (permuted == p.permuted.end()) p.direct_output = copy.buffer;
            else if (permuted->second.rows_contiguous && permuted->second.tile_row_stride > 0) {
                p.direct_output = copy.buffer;
                p.direct_permuted = p.epilogue[0];
            }
        }
    }
    // float16 tensors only where the micro-kernel spreads their lines over its k loop.
    const bool long_loop = p.k >= kLongK && p.pack_a;
    auto prefetched_type = [&](DType t) { return t == DType::Float32 || (t == DType::Float16 && long_loop); };
    std::set<std::string> seen;
    for (const auto &name : p.epilogue) {
        if (p.permuted.count(name)) continue;
        for (const Call *read : buffer_reads(m.statement(name).stage->value)) {
            const BufferInfo &b = m.buffer(read->name.substr(4));
            const Halide::Expr e(read);
            if (b.kind != BufferKind::KernelInput || !prefetched_type(b.dtype) || !uses_var(e, im) || !uses_var(e, in)) continue;
            if (seen.insert(print_expr(e)).second) p.tile_prefetches.push_back(e);
        }
    }
    p.prefetch_line_floats = std::max<int64_t>(1, t.cache_line_bytes / 4);
    if (t.float16_conversion && p.direct_output.empty()) {
        bool rounds = c.dtype == DType::Float16;
        for (const auto &name : p.epilogue) {
            const Stage &st = *m.statement(name).stage;
            rounds |= m.buffer(st.buffer).dtype == DType::Float16 || converts_to_float16(st.value);
        }
        p.staged_float16_epilogue = rounds;
    }
    // A row part needs whole rows at the end of each block of rows: one panel of k and one of
    // columns, and the blocks it keeps written in the product's layout.
    if (row_part && p.k_panels == 1 && p.n_panels() == 1 && p.split != GemmSplit::Columns) {
        bool fits = true;
        for (const auto &name : row_part->blocked) {
            fits &= m.buffer(name).shape == c.shape && p.direct_permuted.empty();
            for (const auto &[st, ps] : p.permuted) fits &= m.statement(st).stage->buffer != name;
        }
        if (fits) {
            p.row_epilogue = *row_part;
            // Behind a long k loop the kernel is bound by its multiply-adds, and the row part,
            // run between the tiles, would wait on reading each output line for ownership.
            // Behind a short one (the attention scores) it is bound by memory, where writing
            // lines that ordinary stores leave in the LLC costs less than streaming them.
            p.row_epilogue->streams_outputs = p.k >= kLongK;
        }
    }
    // Only behind a long k loop: after the attention scores' 64 steps a tile's burst of write
    // prefetches cost more than the stores' wait they save.
    if (p.direct_output.empty() && p.k >= kLongK) {
        std::vector<std::string> stored{c.buffer};
        for (const auto &name : p.epilogue)
            if (!p.permuted.count(name)) stored.push_back(m.statement(name).stage->buffer);
        for (const auto &name : stored) {
            const BufferInfo &b = m.buffer(name);
            if (b.kind != BufferKind::KernelOutput || !prefetched_type(b.dtype) || b.shape != c.shape) continue;
            if (p.row_epilogue && p.row_epilogue->blocked.count(name)) continue;
            if (std::find(p.tile_write_prefetches.begin(), p.tile_write_prefetches.end(), name) == p.tile_write_prefetches.end())
                p.tile_write_prefetches.push_back(name);
        }
    }
    p.lines_in_k_loop = long_loop && (!p.tile_prefetches.empty() || !p.tile_write_prefetches.empty());
    m.contraction = p;
}

std::string contraction_plan_text(const PolyModel &m) {
    if (!m.contraction) return "";
    const ContractionPlan &p = *m.contraction;
    const GemmBlocking &b = p.blocking;
    std::ostringstream os;
    const char *split[] = {"none", "batch", "rows", "columns"};
    os << "contraction " << p.update << ": batch " << shape_string(p.batch) << ", m " << p.m << ", n " << p.n << ", k " << p.k << "\n";
    os << "micro-tile " << b.mr << " x " << b.nr << ", kc " << b.kc << " (" << p.k_panels << " panel" << (p.k_panels > 1 ? "s" : "")
       << "), mc " << b.mc << ", nc " << b.nc << "\n";
    os << "split " << split[static_cast<int>(p.split)];
    if (p.split == GemmSplit::Rows) os << " (" << p.slices << " x " << p.slice_rows << " rows)";
    auto how = [](const std::optional<ContractionPlan::PlainOperand> &plain, bool k_inner) -> std::string {
        if (!plain) return k_inner ? "computed, k innermost" : "computed";
        std::string how = plain->k_stride == 1 ? "transposed in registers" : plain->x_stride == 1 ? "copied" : "gathered";
        return plain->f16 ? how + ", from float16" : how;
    };
    os << "; A " << (p.pack_a ? std::string("packed (") + how(p.a_plain, p.lhs_k_inner) + ")" : std::string("read in place")) << "; B "
       << (p.pack_b ? std::string("packed (") + how(p.b_plain, p.rhs_k_inner) + ")" : std::string("read in place")) << (p.b_streamed ? ", rows prefetched" : "") << "\n";
    os << "epilogue:";
    for (const auto &e : p.epilogue) {
        os << " " << e;
        if (auto ps = p.permuted.find(e); ps != p.permuted.end())
            os << " (permuted: stored at " << print_expr(ps->second.offset) << (ps->second.rows_contiguous ? ", rows contiguous" : "")
               << (ps->second.tile_row_stride ? ", tile rows " + std::to_string(ps->second.tile_row_stride) + " apart" : "") << ")";
    }
    if (!p.direct_output.empty()) os << " (none: full tiles stored to " << p.direct_output << ")";
    if (p.staged_float16_epilogue) os << " (staged: one float16 rounding at a time)";
    os << "\n";
    if (!p.tile_prefetches.empty() || !p.tile_write_prefetches.empty()) {
        os << "prefetched for each tile:";
        for (const auto &e : p.tile_prefetches) os << " " << print_expr(e);
        for (const auto &name : p.tile_write_prefetches) os << " " << name << " (for writing)";
        if (p.lines_in_k_loop) os << ", during the k loop";
        os << "\n";
    }
    if (p.b_next_prefetched) os << "next micro-panel of B prefetched by each column's tiles\n";
    if (p.b_packed_per_column)
        os << "B packed per column of tiles, the next one's source prefetched by the column's tiles\n";
    if (p.b_shared_by_slices) os << "B packed once by a thread for all the slices of rows it runs\n";
    if (p.column_sum) os << "column sum of B to " << p.column_sum->output << ", taken while packing B\n";
    if (p.row_epilogue) {
        os << "row part " << p.row_epilogue->full_rows << " on each " << b.mr << " rows once their block is done";
        if (p.row_epilogue->streams_outputs) os << ", streaming the outputs it does not read back";
        for (const auto &name : p.row_epilogue->blocked) os << "; " << name << " kept per block";
        os << "\n";
    }
    return os.str();
}

} // namespace akg
