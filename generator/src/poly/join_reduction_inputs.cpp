#include "poly/join_reduction_inputs.h"

#include "poly/schedule_transforms.h"

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include <optional>

namespace akg {

namespace {

// Only reductions whose innermost loop is at least this long take elementwise statements in:
// a short row is read again from the L1 cache, and the side stores in its lane loop cost more
// (bias + dropout + residual + LayerNorm f16, rows of 768: the joined mask output made the
// kernel 1.3-1.4x slower; BatchNorm's rows of 3136 and a whole-tensor sum gained 1.3-1.85x).
constexpr int64_t kMinInnermostExtent = 2048;

// A subtree of the schedule, read so that it can be changed and written back (isl's schedule
// nodes cannot widen a filter or a band's partial schedule in place).
struct Tree {
    isl_schedule_node_type type = isl_schedule_node_leaf;
    // std::optional: a null isl object cannot be copied.
    std::optional<isl::union_set> filter;           // filter nodes
    std::optional<isl::multi_union_pw_aff> partial; // band nodes
    bool permutable = false;
    std::vector<bool> coincident;
    std::vector<Tree> children;
};

// False when the subtree holds a node this pass does not rebuild (marks, extensions, ...).
bool read_tree(isl_schedule_node *node, Tree &t) {
    t.type = isl_schedule_node_get_type(node);
    switch (t.type) {
    case isl_schedule_node_band:
        t.partial = isl::manage(isl_schedule_node_band_get_partial_schedule(node));
        t.permutable = isl_schedule_node_band_get_permutable(node) == isl_bool_true;
        for (int k = 0; k < isl_schedule_node_band_n_member(node); ++k)
            t.coincident.push_back(isl_schedule_node_band_member_get_coincident(node, k) == isl_bool_true);
        break;
    case isl_schedule_node_filter: t.filter = isl::manage(isl_schedule_node_filter_get_filter(node)); break;
    case isl_schedule_node_sequence:
    case isl_schedule_node_set:
    case isl_schedule_node_leaf: break;
    default: return false;
    }
    for (int k = 0, n = isl_schedule_node_n_children(node); k < n; ++k) {
        isl_schedule_node *child = isl_schedule_node_get_child(node, k);
        t.children.emplace_back();
        bool ok = read_tree(child, t.children.back());
        isl_schedule_node_free(child);
        if (!ok) return false;
    }
    return true;
}

// Writes `t` at the leaf `node`; returns the node at the same position.
isl_schedule_node *write_tree(isl_schedule_node *node, const Tree &t) {
    switch (t.type) {
    case isl_schedule_node_band:
        node = isl_schedule_node_insert_partial_schedule(node, t.partial->copy());
        node = isl_schedule_node_band_set_permutable(node, t.permutable);
        for (size_t k = 0; k < t.coincident.size(); ++k) node = isl_schedule_node_band_member_set_coincident(node, static_cast<int>(k), t.coincident[k]);
        node = write_tree(isl_schedule_node_child(node, 0), t.children[0]);
        return isl_schedule_node_parent(node);
    case isl_schedule_node_sequence:
    case isl_schedule_node_set: {
        isl_union_set_list *filters = isl_union_set_list_alloc(isl_schedule_node_get_ctx(node), static_cast<int>(t.children.size()));
        for (const Tree &f : t.children) filters = isl_union_set_list_add(filters, f.filter->copy());
        node = t.type == isl_schedule_node_sequence ? isl_schedule_node_insert_sequence(node, filters) : isl_schedule_node_insert_set(node, filters);
        for (size_t k = 0; k < t.children.size(); ++k) {
            node = isl_schedule_node_child(isl_schedule_node_child(node, static_cast<int>(k)), 0);
            node = write_tree(node, t.children[k].children[0]);
            node = isl_schedule_node_parent(isl_schedule_node_parent(node));
        }
        return node;
    }
    default: return node; // a leaf
    }
}

// Adds the instances `moved` (mapped onto `target`'s instances by `onto`) to the path from `t`
// to the leaf that runs `target`: every filter on it admits them, every band schedules them
// where it schedules their images. False when no such path exists.
bool join_path(Tree &t, const isl::union_set &moved, const isl::union_map &onto, const isl::union_set &target) {
    switch (t.type) {
    case isl_schedule_node_band: {
        isl::union_map at_target = isl::manage(isl_union_map_from_multi_union_pw_aff(t.partial->copy())).intersect_domain(target);
        isl::union_map piece = onto.apply_range(at_target);
        t.partial = t.partial->union_add(isl::manage(isl_multi_union_pw_aff_from_union_map(piece.release())));
        return join_path(t.children[0], moved, onto, target);
    }
    case isl_schedule_node_filter:
        if (!target.is_subset(*t.filter)) return false;
        t.filter = t.filter->unite(moved);
        return join_path(t.children[0], moved, onto, target);
    case isl_schedule_node_sequence:
    case isl_schedule_node_set:
        for (Tree &child : t.children)
            if (target.is_subset(*child.filter)) return join_path(child, moved, onto, target);
        return false;
    default: return true; // the leaf
    }
}

// A bijection from `e`'s instances onto all of `u`'s that read the same element of a kernel
// input; empty when there is none.
isl::union_map same_input_elements(const PolyModel &m, const isl::union_set &e, const isl::union_set &u) {
    for (const BufferInfo &b : m.buffers) {
        if (b.kind != BufferKind::KernelInput) continue;
        isl::union_map reads = isl::manage(accesses_to_buffer(m.reads.get(), b));
        isl::union_map e_reads = reads.intersect_domain(e), u_reads = reads.intersect_domain(u);
        if (e_reads.is_empty() || u_reads.is_empty()) continue;
        isl::union_map onto = e_reads.apply_range(u_reads.reverse());
        if (onto.is_bijective() && onto.domain().is_equal(e) && onto.range().is_equal(u)) return onto;
    }
    return isl::union_map(m.ctx, "{ }");
}

// Tries to move one elementwise child of the sequence or set `node` into a sibling's
// reduction; returns whether it did (`node` then points to the rebuilt node).
bool join_one(PolyModel &m, const isl::union_map &deps, isl_schedule_node *&node) {
    Tree t;
    if (!read_tree(node, t)) return false;
    for (size_t e = 0; e < t.children.size(); ++e) {
        if (t.children[e].type != isl_schedule_node_filter) continue;
        isl::union_set instances = t.children[e].filter->intersect(m.domain);
        const PolyStatement *moved = whole_statement(m, instances);
        if (!moved || moved->role != StatementRole::Assign || moved->out_dims == 0) continue;
        if (!deps.intersect_domain(instances).is_empty() || !deps.intersect_range(instances).is_empty()) continue;
        for (const PolyStatement &update : m.statements) {
            if (update.role != StatementRole::ReduceUpdate || update.stage->reduce_extents.empty() ||
                update.stage->reduce_extents.back() < kMinInnermostExtent)
                continue;
            isl::union_set target = m.domain.intersect(isl::union_set(isl::manage(isl_set_universe(update.space(m.ctx.get())))));
            isl::union_map onto = same_input_elements(m, instances, target);
            if (onto.is_empty()) continue;
            for (size_t c = 0; c < t.children.size(); ++c) {
                if (c == e || !target.is_subset(*t.children[c].filter)) continue;
                Tree joined = t;
                if (!join_path(joined.children[c], instances, onto, target)) continue;
                joined.children.erase(joined.children.begin() + static_cast<long>(e));
                node = write_tree(isl_schedule_node_cut(node), joined);
                m.side_statements.insert(moved->name);
                return true;
            }
        }
    }
    return false;
}

isl_schedule_node *visit(PolyModel &m, const isl::union_map &deps, isl_schedule_node *node) {
    isl_schedule_node_type type = isl_schedule_node_get_type(node);
    if (type == isl_schedule_node_sequence || type == isl_schedule_node_set)
        while (isl_schedule_node_get_type(node) == type && join_one(m, deps, node)) {
        }
    for (int k = 0, n = isl_schedule_node_n_children(node); k < n; ++k)
        node = isl_schedule_node_parent(visit(m, deps, isl_schedule_node_child(node, k)));
    return node;
}

} // namespace

void join_reduction_inputs(PolyModel &m) {
    isl::union_map deps = m.dep_flow.unite(m.dep_false);
    isl_schedule_node *root = visit(m, deps, isl_schedule_get_root(m.schedule.get()));
    m.schedule = isl::manage(isl_schedule_node_get_schedule(root));
    isl_schedule_node_free(root);
}

} // namespace akg
