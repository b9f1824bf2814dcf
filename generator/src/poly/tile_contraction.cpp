// tile-contraction (tile_contraction.h).
#include "poly/tile_contraction.h"

#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/union_map.h>

#include "poly/schedule_annotation.h"

namespace akg {

namespace {

std::string list(const std::vector<std::string> &items) {
    std::string s;
    for (const auto &i : items) s += (s.empty() ? "" : ", ") + i;
    return s;
}

std::string floor_div(const std::string &x, int64_t d) { return d == 1 ? x : "floor((" + x + ")/" + std::to_string(d) + ")"; }

// A permuted store's pieces are written for a stand-in over the product's indices, V<name>.
std::string stand_in(const std::string &statement) { return "V" + statement; }

// One band member per entry of `parts`, each a list of "Stmt[vars] -> [(expr)]" pieces. A
// permuted store runs where the product's element it stores does: its stand-in's pieces are
// pulled back through its map to the product.
isl_multi_union_pw_aff *band(isl_ctx *ctx, const std::vector<std::vector<std::string>> &members, const ContractionPlan &p) {
    isl_multi_union_pw_aff *mupa = nullptr;
    for (const auto &pieces : members) {
        std::string text = "{ " + [&] {
            std::string s;
            for (const auto &p : pieces) s += (s.empty() ? "" : "; ") + p;
            return s;
        }() + " }";
        isl_union_map *umap = isl_union_map_read_from_str(ctx, text.c_str());
        if (!umap) throw InternalError("tile-contraction: bad schedule function " + text);
        for (const auto &[name, ps] : p.permuted) {
            isl_map *to_stand_in = isl_map_set_tuple_name(ps.to_product.copy(), isl_dim_out, stand_in(name).c_str());
            isl_union_map *own = isl_union_map_apply_range(isl_union_map_from_map(to_stand_in), isl_union_map_copy(umap));
            isl_space *space = isl_space_set_tuple_name(isl_space_range(isl_map_get_space(ps.to_product.get())), isl_dim_set, stand_in(name).c_str());
            umap = isl_union_map_subtract_domain(umap, isl_union_set_from_set(isl_set_universe(space)));
            umap = isl_union_map_union(umap, own);
        }
        isl_multi_union_pw_aff *member = isl_multi_union_pw_aff_from_union_map(umap);
        mupa = mupa ? isl_multi_union_pw_aff_flat_range_product(mupa, member) : member;
    }
    return mupa;
}

isl_union_set *filter(isl_ctx *ctx, const std::vector<std::string> &statements, isl_union_set *domain) {
    isl_union_set *f = isl_union_set_empty(isl_union_set_get_space(domain));
    for (const auto &s : statements) {
        isl_union_set *one = isl_union_set_read_from_str(ctx, ("{ " + s + " }").c_str());
        f = isl_union_set_union(f, isl_union_set_intersect(one, isl_union_set_copy(domain)));
    }
    return f;
}

// Below `node` (taken, a leaf): a sequence of the statements `before`, the statements `rest`
// and the statements `after`, each of the others with a band over its index `panel` (none where
// `panel` is empty); returns the leaf under `rest`.
isl_schedule_node *around(isl_schedule_node *node, const std::vector<std::string> &before, const std::vector<std::string> &rest,
                          const std::vector<std::string> &after, const std::string &panel) {
    if (before.empty() && after.empty()) return node;
    isl_ctx *ctx = isl_schedule_node_get_ctx(node);
    isl_union_set *dom = isl_schedule_node_get_domain(node);
    std::vector<std::string> order = before;
    const int at = static_cast<int>(order.size());
    order.push_back("");
    order.insert(order.end(), after.begin(), after.end());
    isl_union_set_list *seq = isl_union_set_list_alloc(ctx, static_cast<int>(order.size()));
    for (const auto &o : order) seq = isl_union_set_list_add(seq, filter(ctx, o.empty() ? rest : std::vector<std::string>{o}, dom));
    isl_union_set_free(dom);
    node = isl_schedule_node_insert_sequence(node, seq);
    for (size_t k = 0; k < order.size(); ++k) {
        if (order[k].empty() || panel.empty()) continue;
        node = isl_schedule_node_child(isl_schedule_node_child(node, static_cast<int>(k)), 0);
        node = isl_schedule_node_insert_partial_schedule(node, isl_multi_union_pw_aff_read_from_str(ctx, ("[{ " + order[k] + " -> [(" + panel + ")] }]").c_str()));
        node = isl_schedule_node_parent(isl_schedule_node_parent(node));
    }
    return isl_schedule_node_child(isl_schedule_node_child(node, at), 0);
}

} // namespace

void tile_contraction(PolyModel &m, const ScheduleOptions &options) {
    (void)options;
    const ContractionPlan &p = *m.contraction;
    const GemmBlocking &b = p.blocking;
    isl_ctx *ctx = m.ctx.get();
    const int nb = static_cast<int>(p.batch.size());
    const std::string im = index_var(nb), in = index_var(nb + 1), rk = reduce_var(0);

    // Tuples and domains.
    std::vector<std::string> out_vars, bvars;
    for (int d = 0; d < nb + 2; ++d) out_vars.push_back(index_var(d));
    for (int d = 0; d < nb; ++d) bvars.push_back("b" + std::to_string(d));
    std::vector<std::string> upd_vars = out_vars;
    upd_vars.push_back(rk);
    auto tuple = [](const std::string &name, const std::vector<std::string> &vars) { return name + "[" + list(vars) + "]"; };
    std::string batch_bounds;
    for (int d = 0; d < nb; ++d) batch_bounds += " and 0 <= b" + std::to_string(d) + " < " + std::to_string(p.batch[d]);
    const bool rows = p.split == GemmSplit::Rows;
    std::vector<std::string> pb_vars = bvars, pa_vars = bvars;
    if (rows) pb_vars.push_back("s");
    pb_vars.push_back("jr");
    pa_vars.insert(pa_vars.end(), {"jt", "pt", "ir"});
    const std::string pb = tuple("PackB", pb_vars), pa = tuple("PackA", pa_vars);
    // The row part runs on micro-panel ir of rows, like A's packing.
    const bool row_part = p.row_epilogue.has_value();
    std::vector<std::string> rp_vars = bvars;
    rp_vars.push_back("ir");
    const std::string rp = tuple("RowPart", rp_vars);
    // B read in place packs only its last micro-panel, when that one is partial (zero-padded);
    // B packed ahead of time, none.
    const bool has_pb = !p.prepacked_b && (p.pack_b || p.n % b.nr != 0);
    const std::string jr_first = std::to_string(p.pack_b ? 0 : p.n_tiles() - 1);
    std::string pb_dom = "{ " + pb + " : " + jr_first + " <= jr < " + std::to_string(p.n_tiles()) + batch_bounds +
                         (rows ? " and 0 <= s < " + std::to_string(p.slices) : "") + " }";
    std::string pa_dom = "{ " + pa + " : 0 <= jt < " + std::to_string(p.n_panels()) + " and 0 <= pt < " + std::to_string(p.k_panels) +
                         " and 0 <= ir < " + std::to_string(p.m_tiles()) + batch_bounds + " }";
    // A column sum of B is taken by PackB: its statements leave the schedule.
    isl_union_set *domain = isl_union_set_copy(m.domain.get());
    if (p.column_sum)
        for (const auto &name : p.column_sum->statements)
            domain = isl_union_set_subtract(domain, isl_union_set_from_set(isl_set_universe(m.statement(name).space(ctx))));
    isl_union_set *scheduled = isl_union_set_copy(domain);
    if (has_pb) domain = isl_union_set_union(domain, isl_union_set_read_from_str(ctx, pb_dom.c_str()));
    if (p.pack_a) domain = isl_union_set_union(domain, isl_union_set_read_from_str(ctx, pa_dom.c_str()));
    if (row_part) {
        std::string rp_dom = "{ " + rp + " : 0 <= ir < " + std::to_string(p.m_tiles()) + batch_bounds + " }";
        domain = isl_union_set_union(domain, isl_union_set_read_from_str(ctx, rp_dom.c_str()));
    }

    std::vector<std::string> tiles = {p.init, p.update};
    tiles.insert(tiles.end(), p.epilogue.begin(), p.epilogue.end());
    // A statement in the pieces of a band (a permuted store through its stand-in), and in filters.
    auto stmt = [&](const std::string &name) {
        return name == p.update ? tuple(name, upd_vars) : tuple(p.permuted.count(name) ? stand_in(name) : name, out_vars);
    };
    auto instances = [&](const std::string &name) {
        if (!p.permuted.count(name)) return stmt(name);
        std::vector<std::string> vars;
        for (int d = 0; d < m.statement(name).out_dims; ++d) vars.push_back(index_var(d));
        return tuple(name, vars);
    };

    // The outer band: batch, slice, column panel.
    std::vector<std::vector<std::string>> outer;
    int parallel_loops = 0;
    for (int d = 0; d < nb; ++d) {
        if (p.batch[d] == 1) continue;
        std::vector<std::string> f;
        for (const auto &t : tiles) f.push_back(stmt(t) + " -> [(" + index_var(d) + ")]");
        if (has_pb) f.push_back(pb + " -> [(b" + std::to_string(d) + ")]");
        if (p.pack_a) f.push_back(pa + " -> [(b" + std::to_string(d) + ")]");
        if (row_part) f.push_back(rp + " -> [(b" + std::to_string(d) + ")]");
        outer.push_back(f);
        parallel_loops += p.split == GemmSplit::Batch || p.split == GemmSplit::Rows || p.split == GemmSplit::Columns;
    }
    if (rows) {
        std::vector<std::string> f;
        for (const auto &t : tiles) f.push_back(stmt(t) + " -> [(" + floor_div(im, p.slice_rows) + ")]");
        if (has_pb) f.push_back(pb + " -> [(s)]");
        if (p.pack_a) f.push_back(pa + " -> [(" + floor_div(std::to_string(b.mr) + "ir", p.slice_rows) + ")]");
        if (row_part) f.push_back(rp + " -> [(" + floor_div(std::to_string(b.mr) + "ir", p.slice_rows) + ")]");
        outer.push_back(f);
        ++parallel_loops;
    }
    {
        std::vector<std::string> f;
        for (const auto &t : tiles) f.push_back(stmt(t) + " -> [(" + floor_div(in, b.nc) + ")]");
        if (has_pb) f.push_back(pb + " -> [(" + floor_div(std::to_string(b.nr) + "jr", b.nc) + ")]");
        if (p.pack_a) f.push_back(pa + " -> [(jt)]");
        if (row_part) f.push_back(rp + " -> [(0)]");
        outer.push_back(f);
        parallel_loops += p.split == GemmSplit::Columns;
    }
    if (p.split == GemmSplit::None) parallel_loops = 0;

    isl_schedule *sched = isl_schedule_from_domain(domain);
    isl_schedule_node *node = isl_schedule_get_root(sched);
    isl_schedule_free(sched);
    node = isl_schedule_node_child(node, 0);
    node = isl_schedule_node_insert_partial_schedule(node, band(ctx, outer, p));
    for (int k = 0; k < parallel_loops; ++k) node = isl_schedule_node_band_member_set_coincident(node, k, 1);
    if (parallel_loops) {
        node = insert_annotated_mark(node, mark::Parallel{parallel_loops, std::nullopt});
        node = isl_schedule_node_child(node, 0);
    }
    node = isl_schedule_node_child(node, 0);
    std::vector<std::string> tile_dom;
    for (const auto &t : tiles) tile_dom.push_back(instances(t));
    std::vector<std::string> rest_dom = tile_dom;
    if (p.pack_a) rest_dom.push_back(pa);
    if (row_part) rest_dom.push_back(rp);
    // B packed per column of tiles runs inside the block, in the column loop; else before it.
    const bool pb_per_column = has_pb && p.b_packed_per_column;
    if (has_pb && !pb_per_column) node = around(node, {pb}, rest_dom, {}, "jr");
    // The rest: panel of k, block of rows.
    {
        std::vector<std::string> pt, it;
        for (const auto &t : tiles) {
            std::string panel = t == p.init ? "0" : t == p.update ? floor_div(rk, b.kc) : std::to_string(p.k_panels - 1);
            pt.push_back(stmt(t) + " -> [(" + panel + ")]");
            it.push_back(stmt(t) + " -> [(" + floor_div(im, b.mc) + ")]");
        }
        if (p.pack_a) {
            pt.push_back(pa + " -> [(pt)]");
            it.push_back(pa + " -> [(" + floor_div(std::to_string(b.mr) + "ir", b.mc) + ")]");
        }
        if (row_part) {
            pt.push_back(rp + " -> [(" + std::to_string(p.k_panels - 1) + ")]");
            it.push_back(rp + " -> [(" + floor_div(std::to_string(b.mr) + "ir", b.mc) + ")]");
        }
        if (pb_per_column) {
            // One panel of k, one block of rows: the slice's, if any.
            pt.push_back(pb + " -> [(0)]");
            it.push_back(pb + " -> [(" + std::string(rows ? "s" : "0") + ")]");
        }
        node = isl_schedule_node_insert_partial_schedule(node, band(ctx, {pt, it}, p));
    }
    node = isl_schedule_node_child(node, 0);
    // Within the block: A's micro-panels, the tiles, then the row part on each panel of rows.
    {
        std::vector<std::string> before, after;
        if (p.pack_a) before.push_back(pa);
        if (row_part) after.push_back(rp);
        std::vector<std::string> rest = tile_dom;
        if (pb_per_column) rest.push_back(pb);
        node = around(node, before, rest, after, "ir");
    }
    if (pb_per_column) {
        // The column loop, then in each column its micro-panel of B packed before the tiles.
        std::vector<std::string> jr;
        for (const auto &t : tiles) jr.push_back(stmt(t) + " -> [(" + floor_div(in, b.nr) + ")]");
        jr.push_back(pb + " -> [(jr)]");
        node = isl_schedule_node_child(isl_schedule_node_insert_partial_schedule(node, band(ctx, {jr}, p)), 0);
        node = around(node, {pb}, tile_dom, {}, "");
    }
    // Tiles of mr x nr, the micro-kernel's: a micro-panel of B reused across the block's rows
    // (BLIS's order), but rows outermost where A and B are both read in place from the caches:
    // there the next tile's A is the one the micro-kernel prefetches, and a tile of A is then
    // reused from L1 across the columns instead of read again from L2.
    {
        std::vector<std::string> jr, ir;
        for (const auto &t : tiles) {
            jr.push_back(stmt(t) + " -> [(" + floor_div(in, b.nr) + ")]");
            ir.push_back(stmt(t) + " -> [(" + floor_div(im, b.mr) + ")]");
        }
        const bool rows_outer = !p.pack_a && !p.pack_b && !p.b_streamed;
        node = isl_schedule_node_insert_partial_schedule(node, pb_per_column ? band(ctx, {ir}, p) : rows_outer ? band(ctx, {ir, jr}, p) : band(ctx, {jr, ir}, p));
    }
    node = isl_schedule_node_child(node, 0);
    node = insert_annotated_mark(node, mark::MicroKernel{b.mr, b.nr});
    node = isl_schedule_node_child(node, 0);
    {
        isl_union_set *d = isl_schedule_node_get_domain(node);
        isl_union_set_list *s3 = isl_union_set_list_alloc(ctx, static_cast<int>(tiles.size()));
        for (const auto &t : tiles) s3 = isl_union_set_list_add(s3, filter(ctx, {instances(t)}, d));
        isl_union_set_free(d);
        node = isl_schedule_node_insert_sequence(node, s3);
        for (size_t k = 0; k < tiles.size(); ++k) {
            node = isl_schedule_node_child(isl_schedule_node_child(node, static_cast<int>(k)), 0);
            std::vector<std::vector<std::string>> point = {{stmt(tiles[k]) + " -> [(" + im + ")]"}, {stmt(tiles[k]) + " -> [(" + in + ")]"}};
            if (tiles[k] == p.update) point.push_back({stmt(tiles[k]) + " -> [(" + rk + ")]"});
            node = isl_schedule_node_insert_partial_schedule(node, band(ctx, point, p));
            node = isl_schedule_node_parent(isl_schedule_node_parent(node));
        }
    }
    isl_schedule *result = isl_schedule_node_get_schedule(node);
    isl_schedule_node_free(node);
    if (!result) throw InternalError("tile-contraction: isl could not build the schedule tree");

    // Legality: every dependence of the products and their epilogue goes forward in time.
    isl_union_map *time = isl_schedule_get_map(result);
    isl_union_map *deps = isl_union_map_union(isl_union_map_copy(m.dep_flow.get()), isl_union_map_copy(m.dep_false.get()));
    deps = isl_union_map_intersect_range(isl_union_map_intersect_domain(deps, isl_union_set_copy(scheduled)), isl_union_set_copy(scheduled));
    if (row_part) {
        // The row part reads its panel of rows once every statement of those rows' tiles is done.
        std::string row = "RowPart[";
        for (int d = 0; d < nb; ++d) row += index_var(d) + ", ";
        row += floor_div(im, b.mr) + "]";
        std::string text;
        for (const auto &t : tiles)
            if (!p.permuted.count(t)) text += (text.empty() ? "" : "; ") + stmt(t) + " -> " + row;
        isl_union_map *reads = isl_union_map_read_from_str(ctx, ("{ " + text + " }").c_str());
        if (!reads) throw InternalError("tile-contraction: bad row part dependence " + text);
        deps = isl_union_map_union(deps, isl_union_map_intersect_domain(reads, isl_union_set_copy(scheduled)));
    }
    isl_union_set_free(scheduled);
    isl_union_map *earlier = isl_union_map_lex_lt_union_map(isl_union_map_copy(time), time);
    bool legal = isl_union_map_is_subset(deps, earlier) == isl_bool_true;
    isl_union_map_free(deps);
    isl_union_map_free(earlier);
    if (!legal) {
        isl_schedule_free(result);
        throw InternalError("tile-contraction: the GEMM schedule violates a dependence");
    }
    m.schedule = isl::manage(result);
}

} // namespace akg
