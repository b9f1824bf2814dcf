#include "poly/join_reduction_inputs.h"

#include "poly/schedule_transforms.h"

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include <algorithm>
#include <optional>

namespace akg {

namespace {

// Only reductions at least this long take independent elementwise statements in. Not joined,
// the statement is a loop nest of its own over the whole tensor, which reads the input a second
// time from memory: row reductions of 43 to 128 elements with an elementwise output of the same
// rows (a softmax's exponentials, written out and summed) ran 1.1-2.2x faster joined (27
// corpus kernels, none slower), whatever the lane loop's side stores cost. Column sums over
// fewer rows went both ways (over [32, 128, 384]'s 32 rows: 0.72-2.0x) and rows of 2 (which
// sink-columns turns into columns) 2x slower: such reductions join from 2048 (BatchNorm's rows
// of 3136 and a whole-tensor sum gained 1.3-1.85x). Next to a saved value's feeding side, which
// loads the input anyway, they join at any length (next_to_feeding_side).
constexpr int64_t kMinJoinedRow = 32;
constexpr int64_t kMinJoinedColumn = 2048;

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

// A bijection from `e`'s instances onto all of `u`'s that read the element of `buffer` that it
// writes; empty when there is none.
isl::union_map written_then_read(const PolyModel &m, const BufferInfo &buffer, const isl::union_set &e, const isl::union_set &u) {
    isl::union_map writes = isl::manage(accesses_to_buffer(m.writes.get(), buffer)).intersect_domain(e);
    isl::union_map reads = isl::manage(accesses_to_buffer(m.reads.get(), buffer)).intersect_domain(u);
    if (writes.is_empty() || reads.is_empty()) return isl::union_map(m.ctx, "{ }");
    isl::union_map onto = writes.apply_range(reads.reverse());
    if (onto.is_bijective() && onto.domain().is_equal(e) && onto.range().is_equal(u)) return onto;
    return isl::union_map(m.ctx, "{ }");
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

// The instances of `update`.
isl::union_set instances_of(const PolyModel &m, const PolyStatement &update) {
    return m.domain.intersect(isl::union_set(isl::manage(isl_set_universe(update.space(m.ctx.get())))));
}

// How the saved value `moved` (materialize's saved_for_later_passes: written once, read by a
// reduction and by later passes) joins the reduction that reads it: a bijection onto the
// update's instances reading each element it writes. Nothing may lead into it. `uncovered`:
// its dependences, other than to the update, whose targets do not depend on the update
// instance its element joins; those that do need the reduction's result and run after the
// whole reduction, hence after the moved instance. Empty if none.
isl::union_map saved_value_join(const PolyModel &m, const isl::union_map &deps, const PolyStatement &moved, const isl::union_set &instances,
                                const isl::union_set &target, isl::union_map &uncovered) {
    const BufferInfo &saved = m.buffer(moved.stage->buffer);
    isl::union_map none(m.ctx, "{ }");
    if (!saved.saved_for_later_passes || !deps.intersect_range(instances).is_empty()) return none;
    isl::union_map onto = written_then_read(m, saved, instances, target);
    if (onto.is_empty()) return none;
    isl::union_map later = deps.intersect_domain(instances).subtract_range(target);
    uncovered = later.subtract(onto.apply_range(deps.intersect_domain(target)));
    return onto;
}

// A statement that reads a saved value already joined into the reduction (a feeding side) at
// the element it writes, and that nothing depends on (the saved value's float16 output copy):
// a bijection onto the update instances where those elements join, so that it joins them too,
// stored after the side that computes its value. Empty if none.
isl::union_map dependent_side_join(const PolyModel &m, const isl::union_map &deps, const isl::union_set &instances, const isl::union_set &target) {
    isl::union_map none(m.ctx, "{ }");
    isl::union_map incoming = deps.intersect_range(instances);
    if (!deps.intersect_domain(instances).is_empty() || incoming.is_empty()) return none;
    for (const PolyStatement &side : m.statements) {
        if (!m.feeding_side_statements.count(side.name)) continue;
        const BufferInfo &saved = m.buffer(side.stage->buffer);
        isl::union_map side_onto = written_then_read(m, saved, instances_of(m, side), target);
        isl::union_map reads = isl::manage(accesses_to_buffer(m.reads.get(), saved));
        isl::union_map onto = reads.intersect_domain(instances).apply_range(reads.intersect_domain(target).reverse());
        if (side_onto.is_empty() || !onto.is_bijective() || !onto.domain().is_equal(instances) || !onto.range().is_equal(target)) continue;
        if (incoming.is_subset(side_onto.apply_range(onto.reverse()))) return onto;
    }
    return none;
}

// An independent statement (no dependence touches it) that reads a kernel input element for
// element like a feeding side already joined into the reduction (bias + dropout + residual +
// LayerNorm's dropout mask output, next to the residual sum that reads the same random
// values): a bijection onto the update instances where those elements join. The side's lane
// loop loads the input anyway, so it joins however short the row. Empty if none.
isl::union_map next_to_feeding_side(const PolyModel &m, const isl::union_set &instances, const isl::union_set &target) {
    for (const PolyStatement &side : m.statements) {
        if (!m.feeding_side_statements.count(side.name)) continue;
        isl::union_set side_instances = instances_of(m, side);
        isl::union_map side_onto = written_then_read(m, m.buffer(side.stage->buffer), side_instances, target);
        isl::union_map to_side = same_input_elements(m, instances, side_instances);
        if (!side_onto.is_empty() && !to_side.is_empty()) return to_side.apply_range(side_onto);
    }
    return isl::union_map(m.ctx, "{ }");
}

// An independent statement that reads a kernel input element for element like a statement W
// whose values a reduction reads element for element (softmax backward over [160, 30522]:
// its shifted logits, written out, next to the gradient that the column sum adds up): W's
// instances, to join W's leaf, and the bijection onto them; nothing when there is none. The
// statement then reads the input where W reads it instead of in a pass of its own: column sums
// over 160 and 1024 rows 1.1-1.3x faster. Not for columns of kMinJoinedColumn rows or more: a
// [4096, 768] one ran 0.89-0.92x (its own pass streamed the output; the column walk cannot).
std::pair<isl::union_set, isl::union_map> next_to_reduced_value(const PolyModel &m, const PolyStatement &moved, const isl::union_set &instances,
                                                                const isl::union_set &update) {
    for (const PolyStatement &writer : m.statements) {
        if (&writer == &moved || writer.role != StatementRole::Assign || m.side_statements.count(writer.name)) continue;
        isl::union_set written = instances_of(m, writer);
        if (written_then_read(m, m.buffer(writer.stage->buffer), written, update).is_empty()) continue;
        isl::union_map onto = same_input_elements(m, instances, written);
        if (!onto.is_empty()) return {written, onto};
    }
    return {isl::union_set(m.ctx, "{ }"), isl::union_map(m.ctx, "{ }")};
}

// The instances that run after all of `target`'s below `t`: those of the children after the
// one holding target in each sequence on the way to it. A set on the way becomes a sequence
// with that child first (a set's children are independent: any order is legal).
isl::union_set ordered_after(Tree &t, const isl::union_set &target, isl::union_set after) {
    if (t.type == isl_schedule_node_set || t.type == isl_schedule_node_sequence) {
        auto holds = [&](const Tree &child) { return target.is_subset(*child.filter); };
        auto it = std::find_if(t.children.begin(), t.children.end(), holds);
        if (it == t.children.end()) return after;
        if (t.type == isl_schedule_node_set) {
            std::rotate(t.children.begin(), it, it + 1);
            it = t.children.begin();
            t.type = isl_schedule_node_sequence;
        }
        for (auto later = it + 1; later != t.children.end(); ++later) after = after.unite(*later->filter);
        return ordered_after(*it, target, after);
    }
    return t.children.empty() ? after : ordered_after(t.children[0], target, after);
}

// `t` (a sequence) with each child that is a set or a sequence replaced by that node's
// children, filtered by both: the order of a sequence kept, a set's taken as it is listed.
Tree spliced(const Tree &t) {
    Tree flat = t;
    flat.children.clear();
    for (const Tree &child : t.children) {
        const Tree &inner = child.children[0];
        if (inner.type != isl_schedule_node_set && inner.type != isl_schedule_node_sequence) {
            flat.children.push_back(child);
            continue;
        }
        for (const Tree &grandchild : inner.children) {
            flat.children.push_back(grandchild);
            flat.children.back().filter = grandchild.filter->intersect(*child.filter);
        }
    }
    return flat;
}

// Tries to move one elementwise child of the sequence or set `t` (read from `node`) into a
// sibling's reduction; returns whether it did (`node` then points to the rebuilt node).
// `saved_only`: only saved values (see saved_value_join); `beside_writers`: also next to a
// reduced value's writer (next_to_reduced_value).
bool join_child(PolyModel &m, const isl::union_map &deps, const Tree &t, bool saved_only, bool beside_writers, isl_schedule_node *&node) {
    for (size_t e = 0; e < t.children.size(); ++e) {
        if (t.children[e].type != isl_schedule_node_filter) continue;
        isl::union_set instances = t.children[e].filter->intersect(m.domain);
        const PolyStatement *moved = whole_statement(m, instances);
        if (!moved || moved->role != StatementRole::Assign || moved->out_dims == 0) continue;
        bool independent = !saved_only && deps.intersect_domain(instances).is_empty() && deps.intersect_range(instances).is_empty();
        for (const PolyStatement &update : m.statements) {
            if (update.role != StatementRole::ReduceUpdate || update.stage->reduce_extents.empty()) continue;
            isl::union_set target = instances_of(m, update);
            // An independent statement joins a long reduction reading the same input; a saved
            // value joins the reduction that reads it, however short the row: it then costs a
            // store where the reduction would load it back.
            isl::union_map onto(m.ctx, "{ }"), uncovered(m.ctx, "{ }");
            bool feeds = false;
            const int64_t min_extent = reduces_along_rows(*update.stage) ? kMinJoinedRow : kMinJoinedColumn;
            if (independent && update.stage->reduce_extents.back() >= min_extent) onto = same_input_elements(m, instances, target);
            if (onto.is_empty() && independent) onto = next_to_feeding_side(m, instances, target);
            if (onto.is_empty() && !independent) {
                onto = saved_value_join(m, deps, *moved, instances, target, uncovered);
                feeds = !onto.is_empty();
            }
            if (onto.is_empty() && !independent) onto = dependent_side_join(m, deps, instances, target);
            // Next to a reduced value's writer: the statement joins that writer's leaf as a
            // statement of its own (not a side of the reduction's lane loop).
            bool beside_writer = false;
            if (onto.is_empty() && independent && beside_writers && (reduces_along_rows(*update.stage) || update.stage->reduce_extents.back() < kMinJoinedColumn)) {
                auto [written, to_writer] = next_to_reduced_value(m, *moved, instances, target);
                onto = to_writer;
                if (!onto.is_empty()) target = written, beside_writer = true;
            }
            if (onto.is_empty()) continue;
            for (size_t c = 0; c < t.children.size(); ++c) {
                if (c == e || !target.is_subset(*t.children[c].filter)) continue;
                Tree joined = t;
                if (!join_path(joined.children[c], instances, onto, target)) continue;
                joined.children.erase(joined.children.begin() + static_cast<long>(e));
                // A saved value's other readers that do not need the reduction's result (its
                // float16 output) must run after the reduction's loops, now that it is computed
                // there.
                if (feeds && !uncovered.range().is_subset(ordered_after(joined, target, isl::union_set(m.ctx, "{ }")))) continue;
                node = write_tree(isl_schedule_node_cut(node), joined);
                if (!beside_writer) m.side_statements.insert(moved->name);
                if (feeds) m.feeding_side_statements.insert(moved->name);
                return true;
            }
        }
    }
    return false;
}

bool join_one(PolyModel &m, const isl::union_map &deps, bool beside_writers, isl_schedule_node *&node) {
    Tree t;
    if (!read_tree(node, t)) return false;
    if (join_child(m, deps, t, false, beside_writers, node)) return true;
    // A saved value that isl scheduled in a set or sequence with other statements (the
    // initialization of the reduction's accumulator) joins from the flattened sequence.
    if (t.type != isl_schedule_node_sequence) return false;
    Tree flat = spliced(t);
    return flat.children.size() > t.children.size() && join_child(m, deps, flat, true, false, node);
}

isl_schedule_node *visit(PolyModel &m, const isl::union_map &deps, bool beside_writers, isl_schedule_node *node) {
    isl_schedule_node_type type = isl_schedule_node_get_type(node);
    if (type == isl_schedule_node_sequence || type == isl_schedule_node_set)
        while (isl_schedule_node_get_type(node) == type && join_one(m, deps, beside_writers, node)) {
        }
    for (int k = 0, n = isl_schedule_node_n_children(node); k < n; ++k)
        node = isl_schedule_node_parent(visit(m, deps, beside_writers, isl_schedule_node_child(node, k)));
    return node;
}

} // namespace

void join_reduction_inputs(PolyModel &m) {
    isl::union_map deps = m.dep_flow.unite(m.dep_false);
    // Until nothing more joins: a statement may join next to a feeding side that a later part
    // of the walk joined (the dropout mask output next to the residual sum).
    size_t joined;
    do {
        joined = m.side_statements.size();
        isl_schedule_node *root = visit(m, deps, false, isl_schedule_get_root(m.schedule.get()));
        m.schedule = isl::manage(isl_schedule_node_get_schedule(root));
        isl_schedule_node_free(root);
    } while (m.side_statements.size() > joined);
    // Then next to reduced values' writers, once every side has joined: a writer that is a
    // saved value must join its reduction first (bias + dropout + residual + LayerNorm's mask
    // output belongs next to the residual sum in the lane loop, not in a loop of their own).
    isl_schedule_node *root = visit(m, deps, true, isl_schedule_get_root(m.schedule.get()));
    m.schedule = isl::manage(isl_schedule_node_get_schedule(root));
    isl_schedule_node_free(root);
}

} // namespace akg
