#include "poly/fuse_sibling_reductions.h"

#include "poly/schedule_transforms.h"

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

namespace akg {

namespace {

// One child of a sequence: its filter, and the bands below it when they form a plain chain.
struct Child {
    isl::union_set filter;
    isl::union_set instances; // the statement instances that reach the filter's subtree
    std::vector<isl::multi_union_pw_aff> bands;
    std::vector<std::vector<bool>> coincident;
    std::vector<bool> permutable;
    bool chain = true;                        // filter -> band* -> leaf
    const PolyStatement *update = nullptr;    // the filter is one whole update statement
};

Child describe(const PolyModel &m, isl_schedule_node *filter) {
    Child c;
    c.filter = isl::manage(isl_schedule_node_filter_get_filter(filter));
    isl_schedule_node *node = isl_schedule_node_child(isl_schedule_node_copy(filter), 0);
    c.instances = isl::manage(isl_schedule_node_get_domain(node));
    while (isl_schedule_node_get_type(node) == isl_schedule_node_band) {
        c.bands.push_back(isl::manage(isl_schedule_node_band_get_partial_schedule(node)));
        std::vector<bool> flags;
        for (int k = 0; k < isl_schedule_node_band_n_member(node); ++k)
            flags.push_back(isl_schedule_node_band_member_get_coincident(node, k) == isl_bool_true);
        c.coincident.push_back(flags);
        c.permutable.push_back(isl_schedule_node_band_get_permutable(node) == isl_bool_true);
        node = isl_schedule_node_child(node, 0);
    }
    c.chain = isl_schedule_node_get_type(node) == isl_schedule_node_leaf;
    isl_schedule_node_free(node);
    const PolyStatement *whole = whole_statement(m, c.instances);
    if (whole && whole->role == StatementRole::ReduceUpdate) c.update = whole;
    return c;
}

// The one map of `x`, its statement renamed to `to`.
isl::map single_map(const isl::union_map &x, const std::string *to) {
    isl_map *map = isl_map_from_union_map(x.copy());
    if (to) map = isl_map_set_tuple_name(map, isl_dim_in, to->c_str());
    return isl::manage(map);
}

bool same_up_to_name(const Child &a, const Child &b) {
    if (!a.update || !b.update || !a.chain || !b.chain || a.bands.size() != b.bands.size()) return false;
    if (a.update->out_dims != b.update->out_dims || a.update->reduce_dims != b.update->reduce_dims) return false;
    const std::string &name = a.update->name;
    isl::set renamed = isl::manage(isl_set_set_tuple_name(b.instances.as_set().release(), name.c_str()));
    if (!a.instances.as_set().is_equal(renamed)) return false;
    for (size_t k = 0; k < a.bands.size(); ++k) {
        isl::union_map ma = isl::union_map::from(a.bands[k]), mb = isl::union_map::from(b.bands[k]);
        if (isl_union_map_n_map(ma.get()) != 1 || isl_union_map_n_map(mb.get()) != 1) return false;
        if (!single_map(ma, nullptr).is_equal(single_map(mb, &name))) return false;
    }
    return true;
}

// Whether a dependence leads from `from`'s instances to `to`'s.
bool depends(const isl::union_map &deps, const isl::union_set &to, const isl::union_set &from) {
    return !deps.intersect_domain(from).intersect_range(to).is_empty();
}

// Replaces the sequence or set at `seq` by a sequence of `children` (band chains, filtered by
// their instances); returns the new sequence node.
isl_schedule_node *rebuild(isl_schedule_node *seq, const std::vector<Child> &children) {
    isl_union_set_list *filters = isl_union_set_list_alloc(isl_schedule_node_get_ctx(seq), static_cast<int>(children.size()));
    for (const auto &c : children) filters = isl_union_set_list_add(filters, c.instances.copy());
    isl_schedule_node *node = isl_schedule_node_cut(seq);
    node = isl_schedule_node_insert_sequence(node, filters);
    for (size_t k = 0; k < children.size(); ++k) {
        node = isl_schedule_node_child(node, static_cast<int>(k)); // the filter
        node = isl_schedule_node_child(node, 0);                  // its leaf
        int depth = 0;
        for (size_t b = 0; b < children[k].bands.size(); ++b) {
            node = isl_schedule_node_insert_partial_schedule(node, children[k].bands[b].copy());
            node = isl_schedule_node_band_set_permutable(node, children[k].permutable[b]);
            for (size_t mbr = 0; mbr < children[k].coincident[b].size(); ++mbr)
                node = isl_schedule_node_band_member_set_coincident(node, static_cast<int>(mbr), children[k].coincident[b][mbr]);
            node = isl_schedule_node_child(node, 0);
            ++depth;
        }
        for (int up = 0; up < depth + 2; ++up) node = isl_schedule_node_parent(node);
    }
    return node;
}

struct Walk {
    PolyModel *m;
    isl::union_map deps;
};

// The children of a sequence or set node, with one level of nested sequences flattened (a
// set of two sequences, one per reduction and its initialization, is common): since a set's
// children may run in any order, the concatenation of its children's sequences is one valid
// order.
std::vector<Child> flattened_children(const PolyModel &m, isl_schedule_node *node) {
    std::vector<Child> children;
    int n = isl_schedule_node_n_children(node);
    for (int k = 0; k < n; ++k) {
        isl_schedule_node *filter = isl_schedule_node_get_child(node, k);
        isl_schedule_node *below = isl_schedule_node_get_child(filter, 0);
        if (isl_schedule_node_get_type(below) == isl_schedule_node_sequence) {
            for (int g = 0; g < isl_schedule_node_n_children(below); ++g) {
                isl_schedule_node *inner = isl_schedule_node_get_child(below, g);
                children.push_back(describe(m, inner));
                isl_schedule_node_free(inner);
            }
        } else {
            children.push_back(describe(m, filter));
        }
        isl_schedule_node_free(below);
        isl_schedule_node_free(filter);
    }
    return children;
}

isl_schedule_node *fuse_in_sequence(isl_schedule_node *seq, Walk &w) {
    std::vector<Child> children = flattened_children(*w.m, seq);
    for (const auto &c : children)
        if (!c.chain) return seq; // rebuilding keeps only band chains
    bool merged = false;
    for (size_t i = 0; i < children.size(); ++i) {
        for (size_t j = i + 1; j < children.size() && !merged; ++j) {
            if (!same_up_to_name(children[i], children[j]) || depends(w.deps, children[j].instances, children[i].instances)) continue;
            // The children between them that the later update needs (transitively) move up
            // before the earlier one, the others stay after the merged child.
            std::vector<bool> needed(children.size(), false);
            for (size_t k = j; k-- > i + 1;) {
                bool feeds = depends(w.deps, children[j].instances, children[k].instances);
                for (size_t l = k + 1; l < j && !feeds; ++l) feeds = needed[l] && depends(w.deps, children[l].instances, children[k].instances);
                needed[k] = feeds;
            }
            bool legal = true;
            for (size_t k = i + 1; k < j && legal; ++k) legal = !needed[k] || !depends(w.deps, children[k].instances, children[i].instances);
            // A needed child must not depend on one that stays behind either.
            for (size_t k = i + 1; k < j && legal; ++k)
                for (size_t l = i + 1; l < k && legal; ++l)
                    legal = !(needed[k] && !needed[l] && depends(w.deps, children[k].instances, children[l].instances));
            if (!legal) continue;
            Child a = children[i];
            const Child &b = children[j];
            a.filter = a.filter.unite(b.filter);
            a.instances = a.instances.unite(b.instances);
            for (size_t t = 0; t < a.bands.size(); ++t) {
                a.bands[t] = a.bands[t].union_add(b.bands[t]);
                for (size_t mbr = 0; mbr < a.coincident[t].size(); ++mbr)
                    a.coincident[t][mbr] = a.coincident[t][mbr] && b.coincident[t][mbr];
                a.permutable[t] = a.permutable[t] && b.permutable[t];
            }
            a.update = nullptr; // a merged child is not merged again
            std::vector<Child> order(children.begin(), children.begin() + static_cast<long>(i));
            for (size_t k = i + 1; k < j; ++k)
                if (needed[k]) order.push_back(children[k]);
            order.push_back(a);
            for (size_t k = i + 1; k < j; ++k)
                if (!needed[k]) order.push_back(children[k]);
            order.insert(order.end(), children.begin() + static_cast<long>(j) + 1, children.end());
            children = order;
            merged = true;
        }
        if (merged) break;
    }
    if (!merged) return seq;
    return rebuild(seq, children);
}

isl_schedule_node *visit(isl_schedule_node *node, Walk &w) {
    enum isl_schedule_node_type type = isl_schedule_node_get_type(node);
    if (type == isl_schedule_node_sequence || type == isl_schedule_node_set) node = fuse_in_sequence(node, w);
    int n = isl_schedule_node_n_children(node);
    for (int k = 0; k < n; ++k) {
        node = isl_schedule_node_child(node, k);
        node = visit(node, w);
        node = isl_schedule_node_parent(node);
    }
    return node;
}

} // namespace

void fuse_sibling_reductions(PolyModel &model) {
    Walk w{&model, model.dep_flow.unite(model.dep_false)};
    isl_schedule_node *root = isl_schedule_get_root(model.schedule.get());
    root = visit(root, w);
    model.schedule = isl::manage(isl_schedule_node_get_schedule(root));
    isl_schedule_node_free(root);
}

} // namespace akg
