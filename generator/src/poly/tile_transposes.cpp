#include "poly/tile_transposes.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "poly/schedule_transforms.h"

namespace akg {

namespace {

// Rows up to this many make one tile (49 rows run as 7 blocks of 8, the last one overlapping
// the one before).
constexpr int64_t kMaxTileRows = 64;
constexpr int64_t kBlock = 8; // akg_transpose's blocks of 8 x 8
// Sources with shorter rows are left to vectorize, which unrolls them inside a vector loop over
// the other dimension: 8 float32 channels of NHWC -> NCHW ran 0.93x / 0.80x (1 / 2 threads)
// as tiles; 20 channels 2.2x / 1.5x faster.
constexpr int64_t kMinColumns = 16;
// A computing statement's rows are its vector loop; shorter ones are left to vectorize's
// unrolled rows.
constexpr int64_t kMinStagedRows = 16;

// The coefficients of an affine map from a statement's instances to one integer (an element
// offset), per instance dimension; empty when it is not affine without divisions.
std::vector<int64_t> affine_coefficients(isl_map *offsets) { // taken
    std::vector<int64_t> coefficients;
    isl_pw_multi_aff *pma = isl_pw_multi_aff_from_map(offsets);
    if (pma && isl_pw_multi_aff_n_piece(pma) == 1)
        isl_pw_multi_aff_foreach_piece(
            pma,
            [](isl_set *set, isl_multi_aff *ma, void *user) -> isl_stat {
                auto &out = *static_cast<std::vector<int64_t> *>(user);
                isl_aff *aff = isl_multi_aff_get_at(ma, 0);
                if (isl_aff_dim(aff, isl_dim_div) == 0)
                    for (int d = 0; d < isl_aff_dim(aff, isl_dim_in); ++d) {
                        isl_val *v = isl_aff_get_coefficient_val(aff, isl_dim_in, d);
                        out.push_back(isl_val_is_int(v) == isl_bool_true ? isl_val_get_num_si(v) : 0);
                        isl_val_free(v);
                    }
                isl_aff_free(aff);
                isl_multi_aff_free(ma);
                isl_set_free(set);
                return isl_stat_ok;
            },
            &coefficients);
    isl_pw_multi_aff_free(pma);
    return coefficients;
}

// The unique dimension with coefficient 1, or -1.
int unit_dimension(const std::vector<int64_t> &coefficients) {
    int found = -1;
    for (size_t d = 0; d < coefficients.size(); ++d)
        if (coefficients[d] == 1) {
            if (found >= 0) return -1;
            found = static_cast<int>(d);
        }
    return found;
}

// A statement that reads a kernel input across into a kernel output.
struct Candidate {
    int row_dim = -1;    // the instance dimension innermost in the output (unit stride there)
    int column_dim = -1; // the one innermost in the source
    TransposeTile tile;
    int64_t element_bytes = 0; // of the source
};

// The statement instances' element offsets in buffer `b` through `accesses` (kept).
isl_map *offsets_in(isl_ctx *ctx, isl_union_map *accesses, const PolyStatement &st, const BufferInfo &b) {
    isl_union_map *mine = isl_union_map_intersect_domain(accesses_to_buffer(accesses, b), isl_union_set_from_set(isl_set_universe(st.space(ctx))));
    isl_union_map *offsets = isl_union_map_apply_range(mine, isl_union_map_from_map(row_major_offsets(ctx, b)));
    if (isl_union_map_n_map(offsets) != 1) {
        isl_union_map_free(offsets);
        return nullptr;
    }
    return isl_map_from_union_map(offsets);
}

// The buffers `st` reads.
std::set<std::string> buffers_read_by(const PolyModel &m, const PolyStatement &st) {
    isl_union_map *mine = isl_union_map_intersect_domain(isl_union_map_copy(m.reads.get()), isl_union_set_from_set(isl_set_universe(st.space(m.ctx.get()))));
    std::set<std::string> names;
    isl_union_map_foreach_map(
        mine,
        [](isl_map *map, void *user) -> isl_stat {
            static_cast<std::set<std::string> *>(user)->insert(isl_map_get_tuple_name(map, isl_dim_out));
            isl_map_free(map);
            return isl_stat_ok;
        },
        &names);
    isl_union_map_free(mine);
    return names;
}

bool written_by_kernel(const PolyModel &m, const BufferInfo &b) {
    isl_union_map *writes = accesses_to_buffer(m.writes.get(), b);
    bool written = isl_union_map_is_empty(writes) != isl_bool_true;
    isl_union_map_free(writes);
    return written;
}

// Where a computing statement reads its source: the positions of the row's and the column's
// index among the read's indices, which must be those instance dimensions themselves, in every
// read of the source (the emitter reads them from the transposed array).
bool source_positions(const Stage &stage, const std::string &source, int row_dim, int column_dim, TransposeTile &tile) {
    std::vector<const Halide::Internal::Call *> reads;
    visit_calls(stage.value, [&](const Halide::Internal::Call *c) {
        if (c->name == "buf$" + source) reads.push_back(c);
    });
    if (reads.empty()) return false;
    const auto &args = tile.source_args = reads[0]->args;
    for (const auto *r : reads)
        if (r->args.size() != args.size() || !std::equal(args.begin(), args.end(), r->args.begin(), [](const Halide::Expr &a, const Halide::Expr &b) { return Halide::Internal::equal(a, b); }))
            return false;
    std::string row = index_var(row_dim), column = index_var(column_dim);
    for (size_t k = 0; k < args.size(); ++k) {
        const Halide::Internal::Variable *v = args[k].as<Halide::Internal::Variable>();
        if (v && v->name == row) tile.row_arg = static_cast<int>(k);
        else if (v && v->name == column) tile.column_arg = static_cast<int>(k);
        else if (Halide::Internal::expr_uses_var(args[k], row) || Halide::Internal::expr_uses_var(args[k], column)) return false;
    }
    return tile.row_arg >= 0 && tile.column_arg >= 0;
}

std::map<std::string, Candidate> find_candidates(const PolyModel &m) {
    isl_ctx *ctx = m.ctx.get();
    std::map<std::string, Candidate> found;
    for (const auto &st : m.statements) {
        if (st.role != StatementRole::Assign || st.stage->kind != StageKind::Compute) continue;
        const BufferInfo &out = m.buffer(st.stage->buffer);
        if (out.kind != BufferKind::KernelOutput) continue;
        // Only this statement writes the output.
        isl_union_map *writes_out = accesses_to_buffer(m.writes.get(), out);
        bool alone = isl_union_map_n_map(writes_out) == 1;
        isl_union_map_free(writes_out);
        isl_map *written = alone ? offsets_in(ctx, m.writes.get(), st, out) : nullptr;
        std::vector<int64_t> a = written ? affine_coefficients(written) : std::vector<int64_t>{};
        if (a.size() != static_cast<size_t>(st.out_dims)) continue;
        Candidate c;
        c.row_dim = unit_dimension(a);
        if (c.row_dim < 0) continue;
        // Every read an input the kernel does not write; the source the only one read across
        // the rows, the others along them or not at all.
        bool ok = true;
        std::vector<int64_t> source_coefficients;
        for (const auto &name : buffers_read_by(m, st)) {
            const BufferInfo &in = m.buffer(name);
            isl_map *read = in.kind == BufferKind::KernelInput && !written_by_kernel(m, in) ? offsets_in(ctx, m.reads.get(), st, in) : nullptr;
            std::vector<int64_t> b = read ? affine_coefficients(read) : std::vector<int64_t>{};
            if (b.size() != a.size()) ok = false;
            else if (b[c.row_dim] != 0 && b[c.row_dim] != 1) {
                ok &= c.tile.source.empty();
                c.tile.source = name;
                source_coefficients = b;
            }
            if (!ok) break;
        }
        if (!ok || c.tile.source.empty()) continue;
        c.column_dim = unit_dimension(source_coefficients);
        if (c.column_dim < 0 || c.column_dim == c.row_dim) continue;
        c.element_bytes = dtype_bytes(m.buffer(c.tile.source).dtype);
        c.tile.source_row_stride = source_coefficients[c.row_dim];
        c.tile.output_column_stride = a[c.column_dim];
        const Halide::Internal::Call *copied = m.copy_source(*st.stage);
        c.tile.staged = !(copied && copied->name == "buf$" + c.tile.source);
        if (!c.tile.staged) c.tile.source_args = copied->args;
        if ((c.element_bytes != 2 && c.element_bytes != 4) || c.tile.output_column_stride < 1) continue;
        if (c.tile.staged && !source_positions(*st.stage, c.tile.source, c.row_dim, c.column_dim, c.tile)) continue;
        int64_t rows = st.stage->shape[c.row_dim], columns = st.stage->shape[c.column_dim];
        if (rows < (c.tile.staged ? kMinStagedRows : kBlock) || columns < kMinColumns) continue;
        found.emplace(st.name, c);
    }
    return found;
}

// The instance dimension that member `k` of `band` is for statement `st`: the member's
// schedule must be that dimension alone. -1 otherwise.
int member_dimension(isl_schedule_node *band, int k, const PolyStatement &st) {
    isl_multi_union_pw_aff *mupa = isl_schedule_node_band_get_partial_schedule(band);
    isl_union_map *member = isl_union_map_from_union_pw_aff(isl_multi_union_pw_aff_get_union_pw_aff(mupa, k));
    isl_multi_union_pw_aff_free(mupa);
    member = isl_union_map_intersect_domain(member, isl_union_set_from_set(isl_set_universe(st.space(isl_schedule_node_get_ctx(band)))));
    if (isl_union_map_n_map(member) != 1) {
        isl_union_map_free(member);
        return -1;
    }
    std::vector<int64_t> coefficients = affine_coefficients(isl_map_from_union_map(member));
    int d = unit_dimension(coefficients);
    for (size_t j = 0; j < coefficients.size() && d >= 0; ++j)
        if (static_cast<int>(j) != d && coefficients[j] != 0) d = -1;
    return d;
}

struct Context {
    PolyModel *model;
    std::map<std::string, Candidate> candidates;
    int64_t tile_bytes; // ScheduleOptions::transpose_tile_bytes
};

isl_schedule_node *tile_band(isl_schedule_node *node, void *user) {
    auto &ctx = *static_cast<Context *>(user);
    const PolyModel &m = *ctx.model;
    if (isl_schedule_node_get_type(node) != isl_schedule_node_band || has_band_below(node) || !is_outermost_band(node)) return node;
    int n = isl_schedule_node_band_n_member(node);
    if (n < 2 || isl_schedule_node_band_get_permutable(node) != isl_bool_true) return node;
    for (int k = 0; k < n; ++k)
        if (isl_schedule_node_band_member_get_coincident(node, k) != isl_bool_true) return node;
    std::set<std::string> names;
    add_statement_names(node, names);
    // Every statement a candidate, with the same rows, columns and shape, and each member one
    // instance dimension.
    int row_member = -1, column_member = -1;
    const Candidate *first = nullptr;
    const PolyStatement *first_statement = nullptr;
    for (const auto &name : names) {
        auto c = ctx.candidates.find(name);
        if (c == ctx.candidates.end()) return node;
        const PolyStatement &st = m.statement(name);
        if (st.out_dims != n) return node;
        if (first && (c->second.row_dim != first->row_dim || c->second.column_dim != first->column_dim || c->second.tile.staged ||
                      first->tile.staged || c->second.element_bytes != first->element_bytes || st.stage->shape != first_statement->stage->shape))
            return node; // copies of one shape share their tiles; a computing statement has its own
        first = &c->second;
        first_statement = &st;
        std::vector<bool> seen(n, false);
        for (int k = 0; k < n; ++k) {
            int d = member_dimension(node, k, st);
            if (d < 0 || seen[d]) return node;
            seen[d] = true;
            if (d == c->second.row_dim) {
                if (row_member >= 0 && row_member != k) return node;
                row_member = k;
            }
            if (d == c->second.column_dim) {
                if (column_member >= 0 && column_member != k) return node;
                column_member = k;
            }
        }
    }
    if (!first) return node;

    // The members in their new order: the others as they were, then rows, then columns.
    isl_multi_union_pw_aff *schedule = isl_schedule_node_band_get_partial_schedule(node);
    isl_union_pw_aff_list *members = isl_union_pw_aff_list_alloc(isl_schedule_node_get_ctx(node), n);
    for (int k = 0; k < n; ++k)
        if (k != row_member && k != column_member) members = isl_union_pw_aff_list_add(members, isl_multi_union_pw_aff_get_union_pw_aff(schedule, k));
    members = isl_union_pw_aff_list_add(members, isl_multi_union_pw_aff_get_union_pw_aff(schedule, row_member));
    members = isl_union_pw_aff_list_add(members, isl_multi_union_pw_aff_get_union_pw_aff(schedule, column_member));
    isl_space *space = isl_multi_union_pw_aff_get_space(schedule);
    isl_multi_union_pw_aff_free(schedule);
    node = isl_schedule_node_delete(node);
    node = isl_schedule_node_insert_partial_schedule(node, isl_multi_union_pw_aff_from_union_pw_aff_list(space, members));
    node = isl_schedule_node_band_set_permutable(node, 1);
    for (int k = 0; k < n; ++k) node = isl_schedule_node_band_member_set_coincident(node, k, 1);

    const Shape &shape = first_statement->stage->shape;
    int64_t rows = shape[first->row_dim], columns = shape[first->column_dim];
    int64_t tile_rows = rows <= kMaxTileRows ? rows : kMaxTileRows;
    int64_t tile_columns = std::min(columns, std::max<int64_t>(kBlock, ctx.tile_bytes / first->element_bytes / tile_rows / kBlock * kBlock));
    isl_ctx *ictx = isl_schedule_node_get_ctx(node);
    isl_val_list *sizes = isl_val_list_alloc(ictx, n);
    for (int k = 0; k < n; ++k) sizes = isl_val_list_add(sizes, isl_val_int_from_si(ictx, k == n - 2 ? tile_rows : k == n - 1 ? tile_columns : 1));
    node = isl_schedule_node_band_tile(node, isl_multi_val_from_val_list(isl_schedule_node_band_get_space(node), sizes));
    for (int k = 0; k < n; ++k) node = isl_schedule_node_band_member_set_coincident(node, k, 1);
    node = isl_schedule_node_child(node, 0); // the point band: zeros, then rows and columns
    if (n > 2) {
        node = isl_schedule_node_band_split(node, n - 2);
        node = isl_schedule_node_delete(node); // the members of tile size 1: always 0
    }
    if (first->tile.staged) {
        // Columns, then the rows as the vector loop: the output and the transposed array are
        // contiguous along the rows.
        isl_multi_union_pw_aff *point = isl_schedule_node_band_get_partial_schedule(node);
        node = isl_schedule_node_delete(node);
        node = isl_schedule_node_insert_partial_schedule(node, isl_multi_union_pw_aff_from_union_pw_aff(isl_multi_union_pw_aff_get_union_pw_aff(point, 0)));
        node = isl_schedule_node_band_member_set_coincident(node, 0, 1);
        node = insert_annotated_mark(node, mark::Simd{});
        node = isl_schedule_node_insert_partial_schedule(node, isl_multi_union_pw_aff_from_union_pw_aff(isl_multi_union_pw_aff_get_union_pw_aff(point, 1)));
        node = isl_schedule_node_band_member_set_coincident(node, 0, 1);
        isl_multi_union_pw_aff_free(point);
    }
    node = insert_annotated_mark(node, mark::TransposeTile{first->tile.staged});
    for (const auto &name : names) {
        TransposeTile tile = ctx.candidates.at(name).tile;
        tile.tile_rows = tile_rows;
        tile.tile_columns = tile_columns;
        ctx.model->transpose_tiles[name] = tile;
    }
    return isl_schedule_node_parent(node);
}

} // namespace

void tile_transposes(PolyModel &m, const ScheduleOptions &options) {
    Context ctx{&m, find_candidates(m), options.transpose_tile_bytes};
    if (ctx.candidates.empty()) return;
    map_schedule_bottom_up(m, tile_band, &ctx);
}

} // namespace akg
