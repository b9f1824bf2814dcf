// Schedule-tree transformations: parallel marks, vector strip-mining with full/partial tile
// separation, and memory promotion. Each works on isl's schedule tree through the C API
// where the C++ bindings of isl 0.25 lack the call.
#include "poly/schedule_transforms.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>

#include <isl/aff.h>
#include <isl/id.h>
#include <isl/map.h>
#include <isl/printer.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>

namespace akg {

namespace {

using NodeFn = std::function<isl_schedule_node *(isl_schedule_node *)>;

// Applies `fn` to every node, children before parents (isl_schedule_node_map_descendant_bottom_up).
void map_bottom_up(PolyModel &m, NodeFn fn) {
    isl_schedule_node *root = isl_schedule_get_root(m.schedule.get());
    root = isl_schedule_node_map_descendant_bottom_up(
        root,
        [](isl_schedule_node *node, void *user) -> isl_schedule_node * { return (*static_cast<NodeFn *>(user))(node); },
        &fn);
    m.schedule = isl::manage(isl_schedule_node_get_schedule(root));
    isl_schedule_node_free(root);
}

bool is_band(isl_schedule_node *node) { return isl_schedule_node_get_type(node) == isl_schedule_node_band; }



long band_extent(isl_schedule_node *node) { return member_extent(node, 0); }


// Is band member `k` of `node` parallel: does every dependence between instances below the
// node that agree on all outer schedule dimensions and on members 0..k-1 also agree on k?
bool member_is_parallel(isl_schedule_node *node, int k, isl_union_map *deps) {
    isl_union_set *domain = isl_schedule_node_get_domain(node);
    isl_union_map *d = isl_union_map_intersect_range(isl_union_map_intersect_domain(isl_union_map_copy(deps),
                                                                                  isl_union_set_copy(domain)),
                                                     domain);
    isl_union_map *prefix = isl_schedule_node_get_prefix_schedule_relation(node);
    isl_union_map *partial = isl_schedule_node_band_get_partial_schedule_union_map(node);
    isl_union_map *sched = isl_union_map_flat_range_product(prefix, partial);
    int outer = isl_schedule_node_get_schedule_depth(node);
    d = isl_union_map_apply_domain(d, isl_union_map_copy(sched));
    d = isl_union_map_apply_range(d, sched);
    if (isl_union_map_is_empty(d) == isl_bool_true) {
        isl_union_map_free(d);
        return true;
    }
    isl_set *deltas = isl_set_from_union_set(isl_union_map_deltas(d));
    for (int j = 0; j < outer + k; ++j) deltas = isl_set_fix_si(deltas, isl_dim_set, j, 0);
    isl_set *zero = isl_set_fix_si(isl_set_copy(deltas), isl_dim_set, outer + k, 0);
    bool parallel = isl_set_is_subset(deltas, zero) == isl_bool_true;
    isl_set_free(deltas);
    isl_set_free(zero);
    return parallel;
}

// Statements of a band whose schedule is constant over the band (a per-channel statistic in an
// [n, hw] band below the channel loop) go first in a sequence of their own, when nothing of the
// band flows back into them; the others keep the band, whose members' coincidence is then
// recomputed from the dependences.
isl_schedule_node *split_constant_statements(isl_schedule_node *node, isl_union_map *deps) {
    isl_union_set *domain = isl_schedule_node_get_domain(node);
    isl_union_map *partial = isl_schedule_node_band_get_partial_schedule_union_map(node);
    isl_union_map *prefix = isl_schedule_node_get_prefix_schedule_relation(node);
    struct Split {
        isl_union_set *low;
        isl_union_set *high;
        isl_union_map *partial;
        isl_union_map *prefix;
    } split{isl_union_set_empty(isl_union_set_get_space(domain)), isl_union_set_empty(isl_union_set_get_space(domain)), partial,
            prefix};
    isl_union_set_foreach_set(
        domain,
        [](isl_set *set, void *user) -> isl_stat {
            auto &sp = *static_cast<Split *>(user);
            isl_union_set *one = isl_union_set_from_set(set);
            // Constant for each value of the outer prefix: the map prefix -> band values is single-valued
            // with one point per prefix.
            isl_union_map *own = isl_union_map_intersect_domain(isl_union_map_copy(sp.partial), isl_union_set_copy(one));
            isl_union_map *outer = isl_union_map_intersect_domain(isl_union_map_copy(sp.prefix), isl_union_set_copy(one));
            isl_union_map *by_prefix = isl_union_map_apply_range(isl_union_map_reverse(outer), own);
            bool constant = isl_union_map_is_single_valued(by_prefix) == isl_bool_true;
            isl_union_map_free(by_prefix);
            if (constant) sp.low = isl_union_set_union(sp.low, one);
            else sp.high = isl_union_set_union(sp.high, one);
            return isl_stat_ok;
        },
        &split);
    isl_union_set_free(domain);
    isl_union_map_free(partial);
    isl_union_map_free(prefix);
    bool useful = isl_union_set_is_empty(split.low) != isl_bool_true && isl_union_set_is_empty(split.high) != isl_bool_true;
    // Nothing may flow from the varying statements back into the constant ones.
    isl_union_map *back = isl_union_map_intersect_range(isl_union_map_intersect_domain(isl_union_map_copy(deps),
                                                                                     isl_union_set_copy(split.high)),
                                                        isl_union_set_copy(split.low));
    useful = useful && isl_union_map_is_empty(back) == isl_bool_true;
    isl_union_map_free(back);
    if (!useful) {
        isl_union_set_free(split.low);
        isl_union_set_free(split.high);
        return node;
    }
    isl_union_set_list *filters = isl_union_set_list_from_union_set(split.low);
    filters = isl_union_set_list_add(filters, split.high);
    node = isl_schedule_node_insert_sequence(node, filters);
    // node: the sequence; its second child's band is the varying statements'.
    node = isl_schedule_node_child(isl_schedule_node_child(node, 1), 0);
    int n = isl_schedule_node_band_n_member(node);
    for (int k = 0; k < n; ++k) node = isl_schedule_node_band_member_set_coincident(node, k, member_is_parallel(node, k, deps));
    return isl_schedule_node_parent(isl_schedule_node_parent(node));
}

} // namespace

// Is this band at the top of the tree: only the domain, filters and sequences above it?
bool is_outermost_band(isl_schedule_node *node) {
    isl_schedule_node *p = isl_schedule_node_copy(node);
    bool outer = true;
    while (isl_schedule_node_has_parent(p) == isl_bool_true) {
        p = isl_schedule_node_parent(p);
        auto t = isl_schedule_node_get_type(p);
        if (t == isl_schedule_node_band || t == isl_schedule_node_mark) outer = false;
    }
    isl_schedule_node_free(p);
    return outer;
}

isl_map *row_major_offsets(isl_ctx *ctx, const BufferInfo &b) {
    std::string dims, sum;
    int64_t stride = 1;
    for (int d = static_cast<int>(b.shape.size()) - 1; d >= 0; --d) {
        dims = "x" + std::to_string(d) + (dims.empty() ? "" : ", ") + dims;
        sum += (sum.empty() ? "" : " + ") + std::to_string(stride) + "x" + std::to_string(d);
        stride *= b.shape[d];
    }
    return isl_map_read_from_str(ctx, ("{ " + b.name + "[" + dims + "] -> [" + (sum.empty() ? "0" : sum) + "] }").c_str());
}

isl_union_map *accesses_to_buffer(isl_union_map *accesses, const BufferInfo &b) {
    isl_space *space = isl_space_set_alloc(isl_union_map_get_ctx(accesses), 0, b.shape.size());
    space = isl_space_set_tuple_name(space, isl_dim_set, b.name.c_str());
    return isl_union_map_intersect_range(isl_union_map_copy(accesses), isl_union_set_from_set(isl_set_universe(space)));
}

bool computed_and_never_read(const PolyModel &m, const BufferInfo &b) {
    for (const auto &st : m.statements)
        if (st.stage->buffer == b.name && st.stage->kind != StageKind::Compute) return false;
    isl_union_map *reads = accesses_to_buffer(m.reads.get(), b);
    bool unread = isl_union_map_is_empty(reads) == isl_bool_true;
    isl_union_map_free(reads);
    return unread;
}

const PolyStatement *whole_statement(const PolyModel &m, const isl::union_set &instances) {
    if (isl_union_set_n_set(instances.get()) != 1) return nullptr;
    isl::set only = instances.as_set();
    std::string name = isl_set_get_tuple_name(only.get());
    for (const auto &st : m.statements)
        if (st.name == name && only.is_equal(m.domain.extract_set(only.get_space()))) return &st;
    return nullptr;
}

void map_schedule_bottom_up(PolyModel &m, isl_schedule_node *(*fn)(isl_schedule_node *, void *), void *user) {
    isl_schedule_node *root = isl_schedule_get_root(m.schedule.get());
    root = isl_schedule_node_map_descendant_bottom_up(root, fn, user);
    m.schedule = isl::manage(isl_schedule_node_get_schedule(root));
    isl_schedule_node_free(root);
}

int64_t largest_element_bytes(const PolyModel &m) {
    const BufferInfo *largest = nullptr;
    for (const auto &b : m.buffers)
        if (!largest || element_count(b.shape) > element_count(largest->shape)) largest = &b;
    return largest ? dtype_bytes(largest->dtype) : 4;
}

void visit_calls(const Halide::Expr &e, const std::function<void(const Halide::Internal::Call *)> &fn) {
    class Calls : public Halide::Internal::IRVisitor {
    public:
        explicit Calls(const std::function<void(const Halide::Internal::Call *)> &fn) : fn_(fn) {}

    private:
        using IRVisitor::visit;
        void visit(const Halide::Internal::Call *op) override {
            fn_(op);
            IRVisitor::visit(op);
        }
        const std::function<void(const Halide::Internal::Call *)> &fn_;
    } calls(fn);
    e.accept(&calls);
}

void add_statement_names(isl_schedule_node *node, std::set<std::string> &names) {
    isl_union_set *below = isl_schedule_node_get_domain(node);
    isl_union_set_foreach_set(
        below,
        [](isl_set *set, void *user) -> isl_stat {
            static_cast<std::set<std::string> *>(user)->insert(isl_set_get_tuple_name(set));
            isl_set_free(set);
            return isl_stat_ok;
        },
        &names);
    isl_union_set_free(below);
}

bool below_transpose_tile(isl_schedule_node *node) {
    bool below = false;
    isl_schedule_node *up = isl_schedule_node_copy(node);
    while (!below && isl_schedule_node_has_parent(up) == isl_bool_true) {
        up = isl_schedule_node_parent(up);
        below = mark_as<mark::TransposeTile>(up).has_value();
    }
    isl_schedule_node_free(up);
    return below;
}

ParallelIteration::ParallelIteration(isl_schedule_node *mark) {
    band = isl_schedule_node_child(isl_schedule_node_copy(mark), 0);
    isl_schedule_node *inside = isl_schedule_node_child(isl_schedule_node_copy(band), 0);
    depth = isl_schedule_node_get_schedule_depth(inside);
    subtree = isl_schedule_node_get_domain(band);
    prefix = isl_schedule_node_get_prefix_schedule_relation(inside);
    isl_schedule_node_free(inside);
}

ParallelIteration::~ParallelIteration() {
    isl_union_map_free(prefix);
    isl_union_set_free(subtree);
    isl_schedule_node_free(band);
}

isl_schedule_node *insert_point_band(isl_schedule_node *at, isl_multi_union_pw_aff *point) {
    isl_union_set *reaching = isl_schedule_node_get_domain(at);
    if (isl_union_set_is_empty(reaching) == isl_bool_true) {
        isl_union_set_free(reaching);
        return at;
    }
    at = isl_schedule_node_insert_partial_schedule(at, isl_multi_union_pw_aff_intersect_domain(isl_multi_union_pw_aff_copy(point), reaching));
    at = isl_schedule_node_band_set_permutable(at, 1);
    return isl_schedule_node_band_member_set_coincident(at, 0, 1);
}

namespace {

// insert_point_band at the top of every child of `sequence` (a sequence or set node, taken and
// returned); with `nested`, into the children of a child that is itself a sequence or set.
isl_schedule_node *insert_into_passes(isl_schedule_node *sequence, isl_multi_union_pw_aff *point, bool nested, bool unrolled) {
    int passes = isl_schedule_node_n_children(sequence);
    for (int k = 0; k < passes; ++k) {
        isl_schedule_node *at = isl_schedule_node_child(isl_schedule_node_child(sequence, k), 0);
        enum isl_schedule_node_type type = isl_schedule_node_get_type(at);
        if (nested && (type == isl_schedule_node_sequence || type == isl_schedule_node_set)) at = insert_into_passes(at, point, nested, unrolled);
        else {
            at = insert_point_band(at, point);
            if (unrolled && isl_schedule_node_get_type(at) == isl_schedule_node_band) at = isl_schedule_node_band_member_set_ast_loop_type(at, 0, isl_ast_loop_unroll);
        }
        sequence = isl_schedule_node_parent(isl_schedule_node_parent(at));
    }
    return sequence;
}

} // namespace

isl_schedule_node *run_passes_for_the_tile(isl_schedule_node *sequence, isl_multi_union_pw_aff *point, bool nested, bool unrolled) {
    sequence = insert_into_passes(sequence, point, nested, unrolled);
    isl_multi_union_pw_aff_free(point);
    return isl_schedule_node_parent(isl_schedule_node_parent(sequence));
}

size_t body_plans_of_mark(PolyModel &m, isl_schedule_node *&node) {
    mark::Parallel parallel = mark_as<mark::Parallel>(node).value();
    if (parallel.body_plans) return *parallel.body_plans;
    size_t k = std::max(m.float16_stagings.size(), m.row_prefetches.size());
    m.float16_stagings.resize(k + 1);
    m.row_prefetches.resize(k + 1);
    parallel.body_plans = k;
    node = isl_schedule_node_delete(node);
    node = insert_annotated_mark(node, parallel);
    return k;
}

FootprintBox::~FootprintBox() {
    isl_map_free(footprint);
    isl_multi_aff_free(offset);
}

bool footprint_box(isl_union_map *footprint, const BufferInfo &b, FootprintBox &out) {
    out.footprint = isl_map_from_union_map(footprint);
    isl_fixed_box *box = isl_map_get_range_simple_fixed_box_hull(out.footprint);
    bool valid = isl_fixed_box_is_valid(box) == isl_bool_true;
    if (valid) {
        isl_multi_val *size = isl_fixed_box_get_size(box);
        out.offset = isl_fixed_box_get_offset(box);
        for (size_t d = 0; d < b.shape.size(); ++d) {
            isl_val *v = isl_multi_val_get_at(size, d);
            out.extent.push_back(isl_val_get_num_si(v));
            isl_val_free(v);
        }
        isl_multi_val_free(size);
    }
    isl_fixed_box_free(box);
    return valid;
}

bool box_is_footprint(const FootprintBox &box, const BufferInfo &b) {
    isl_map *covered = isl_map_intersect_domain(clamped_box(box.offset, box.extent, b), isl_map_domain(isl_map_copy(box.footprint)));
    bool equal = isl_map_is_equal(covered, box.footprint) == isl_bool_true;
    isl_map_free(covered);
    return equal;
}

// { prefix -> b[x] : offset(prefix) <= x < offset(prefix) + size, 0 <= x < shape } (without
// the last condition when !clamped)
isl_map *clamped_box(isl_multi_aff *offset, const Shape &size, const BufferInfo &b, bool clamped) {
    std::string lhs, rhs, cond;
    for (size_t d = 0; d < size.size(); ++d) {
        std::string y = "y" + std::to_string(d), x = "x" + std::to_string(d);
        lhs += (d ? ", " : "") + y;
        rhs += (d ? ", " : "") + x;
        cond += std::string(d ? " and " : "") + y + " <= " + x + " < " + y + " + " + std::to_string(size[d]);
        if (clamped) cond += " and 0 <= " + x + " < " + std::to_string(b.shape[d]);
    }
    std::string text = "{ " + b.name + "[" + lhs + "] -> " + b.name + "[" + rhs + "] : " + cond + " }";
    isl_map *window = isl_map_read_from_str(isl_multi_aff_get_ctx(offset), text.c_str());
    return isl_map_apply_range(isl_map_from_multi_aff(isl_multi_aff_copy(offset)), window);
}

// The box is one contiguous run of the tensor (ones, then one partial dimension, then whole
// dimensions) and never leaves the tensor at any of the `iterations`: it is then copied with
// one conversion call, without the per-dimension clamping of akg_stage_f16_in/out (which cost
// more than the conversion itself for the 64-element rows of a head split).
bool contiguous_within_tensor(isl_multi_aff *offset, const Shape &size, const BufferInfo &b, isl_set *iterations) {
    size_t first = 0;
    while (first < size.size() && size[first] == 1) ++first;
    for (size_t d = first + 1; d < size.size(); ++d)
        if (size[d] != b.shape[d]) {
            isl_set_free(iterations);
            return false;
        }
    std::string dims, cond;
    for (size_t d = 0; d < b.shape.size(); ++d) {
        dims += (d ? ", " : "") + std::string("x") + std::to_string(d);
        cond += std::string(d ? " and " : "") + "0 <= x" + std::to_string(d) + " < " + std::to_string(b.shape[d]);
    }
    isl_set *tensor = isl_set_read_from_str(isl_multi_aff_get_ctx(offset), ("{ " + b.name + "[" + dims + "] : " + cond + " }").c_str());
    isl_set *touched = isl_map_range(isl_map_intersect_domain(clamped_box(offset, size, b, false), iterations));
    bool within = isl_set_is_subset(touched, tensor) == isl_bool_true;
    isl_set_free(touched);
    isl_set_free(tensor);
    return within;
}

std::vector<std::string> offset_to_c(isl_multi_aff *offset, int depth) {
    isl_multi_aff *named = isl_multi_aff_copy(offset);
    for (int d = 0; d < depth; ++d) named = isl_multi_aff_set_dim_name(named, isl_dim_in, d, ("c" + std::to_string(d)).c_str());
    std::vector<std::string> out;
    for (int d = 0; d < static_cast<int>(isl_multi_aff_size(named)); ++d) {
        isl_aff *aff = isl_multi_aff_get_at(named, d);
        isl_printer *p = isl_printer_set_output_format(isl_printer_to_str(isl_aff_get_ctx(aff)), ISL_FORMAT_C);
        p = isl_printer_print_aff(p, aff);
        char *text = isl_printer_get_str(p);
        out.push_back(text);
        free(text);
        isl_printer_free(p);
        isl_aff_free(aff);
    }
    isl_multi_aff_free(named);
    return out;
}

bool has_band_below(isl_schedule_node *node) {
    bool found = false;
    isl_schedule_node_foreach_descendant_top_down(
        node,
        [](isl_schedule_node *n, void *user) -> isl_bool {
            if (isl_schedule_node_get_type(n) == isl_schedule_node_band) *static_cast<bool *>(user) = true;
            return isl_bool_true;
        },
        &found);
    // foreach_descendant_top_down visits the node itself first.
    if (is_band(node)) {
        int bands = 0;
        isl_schedule_node_foreach_descendant_top_down(
            node,
            [](isl_schedule_node *n, void *user) -> isl_bool {
                if (isl_schedule_node_get_type(n) == isl_schedule_node_band) ++*static_cast<int *>(user);
                return isl_bool_true;
            },
            &bands);
        return bands > 1;
    }
    return found;
}

// The float16 tensors that the statements below `node` access.
int float16_tensors_accessed(const PolyModel &m, isl_schedule_node *node) {
    isl_union_set *domain = isl_schedule_node_get_domain(node);
    isl_union_map *accesses = isl_union_map_intersect_domain(m.reads.unite(m.writes).release(), domain);
    int n = 0;
    for (const auto &b : m.buffers) {
        if (b.dtype != DType::Float16) continue;
        isl_union_map *mine = accesses_to_buffer(accesses, b);
        n += isl_union_map_is_empty(mine) != isl_bool_true;
        isl_union_map_free(mine);
    }
    isl_union_map_free(accesses);
    return n;
}

// A transcendental function (exp, log, tanh, erf, pow, sqrt) costs about as much as this many
// vector loads and stores.
constexpr int64_t kExpensiveMathCost = 16;

// The work of the statement instances below `node`, in tensor accesses: each statement's
// instances (its whole domain, reduction updates included: an upper bound where a filter keeps
// part of one) times the tensors it reads and writes (an AddN of 131 inputs does 132 per
// instance) and kExpensiveMathCost per transcendental call.
int64_t work_below(const PolyModel &m, isl_schedule_node *node) {
    std::set<std::string> names;
    add_statement_names(node, names);
    std::map<std::string, int64_t> tensors; // per statement
    isl_union_map *accesses = m.reads.unite(m.writes).release();
    isl_union_map_foreach_map(
        accesses,
        [](isl_map *map, void *user) -> isl_stat {
            ++(*static_cast<std::map<std::string, int64_t> *>(user))[isl_map_get_tuple_name(map, isl_dim_in)];
            isl_map_free(map);
            return isl_stat_ok;
        },
        &tensors);
    isl_union_map_free(accesses);
    int64_t n = 0;
    for (const auto &st : m.statements) {
        if (!names.count(st.name)) continue;
        int64_t per_instance = std::max<int64_t>(1, tensors[st.name]);
        visit_calls(st.stage->value, [&per_instance](const Halide::Internal::Call *call) {
            if (is_expensive_math(call->name)) per_instance += kExpensiveMathCost;
        });
        n += st.iterations() * per_instance;
    }
    return n;
}

void mark_parallel_loops(PolyModel &m, const ScheduleOptions &options) {
    if (!options.parallel) return;
    const PolyModel *model = &m;
    int64_t max_chunk = options.parallel_chunk, staged_bytes = options.staged_bytes_per_task, serial_accesses = options.serial_accesses;
    long vector_width = options.vector_width;
    std::set<std::string> *serial = &m.serial_statements;
    map_bottom_up(m, [model, max_chunk, staged_bytes, serial_accesses, vector_width, serial](isl_schedule_node *node) {
        if (!is_band(node) || !is_outermost_band(node)) return node;
        // A nest of little work (a bias of 768 elements rounded before the loops that add it;
        // an optimizer update of a 768-element parameter) runs on the calling thread: starting
        // and joining a team costs more than the work (ScheduleOptions::serial_accesses). It
        // is marked like the others all the same (see PolyModel::serial_statements).
        if (work_below(*model, node) <= serial_accesses) add_statement_names(node, *serial);
        // All leading coincident members run in parallel (OpenMP collapse), so that e.g. the
        // batch, head and row loops of an attention softmax all share the work; in a nest
        // without inner bands the innermost member stays for vectorization.
        int n = isl_schedule_node_band_n_member(node), k = 0;
        bool leaf = !has_band_below(node);
        while (k < n && k < 3 && isl_schedule_node_band_member_get_coincident(node, k) == isl_bool_true) ++k;
        if (leaf && k == n && n > 1) k = n - 1;
        // A short innermost member (order-loops put a small output dimension there, e.g. the 3
        // channels of an NHWC output) is unrolled inside the vector loop of the member above
        // it (vectorize_inner_loops): both stay out of the parallel loops.
        if (leaf && n > 2 && k >= n - 1 && member_extent(node, n - 1) < vector_width && member_extent(node, n - 2) >= vector_width) k = n - 2;
        // A member with one value over the band's domain (the missing dimension of a statement
        // in a fused band: a whole reduction's i0 = 0) produces no loop in isl's AST, and the
        // emitter makes the first N loops below a mark::Parallel{N} parallel. Counting such a
        // member would make the next loop parallel, a reduction's loop among them (a race on
        // its accumulator). The mark counts the members that produce loops.
        auto loops_among = [&node](int members) {
            int loops = 0;
            for (int j = 0; j < members; ++j) loops += member_extent(node, j) > 1;
            return loops;
        };
        if (k == 0 || loops_among(k) == 0) return node;
        if (leaf && n == 1) {
            // One long loop: parallel over chunks, vectorized within each. stage-float16 gives
            // each chunk a float copy of every float16 tensor it touches; those copies must
            // stay in the L1 cache (4096-element chunks of three inputs and an output, 64 KB,
            // ran three times slower than 1024-element ones).
            int64_t chunk = max_chunk;
            int halves = float16_tensors_accessed(*model, node);
            while (chunk > 256 && chunk * 4 * halves > staged_bytes) chunk /= 2;
            if (band_extent(node) > chunk) {
                isl_ctx *ctx = isl_schedule_node_get_ctx(node);
                node = isl_schedule_node_band_tile(node, isl_multi_val_from_val_list(isl_schedule_node_band_get_space(node),
                                                                                   isl_val_list_from_val(isl_val_int_from_si(ctx, chunk))));
            }
            return insert_annotated_mark(node, mark::Parallel{1, std::nullopt});
        }
        if (leaf && n == 2 && k == 1 && isl_schedule_node_band_member_get_coincident(node, 1) == isl_bool_true &&
            member_extent(node, 1) < vector_width && member_extent(node, 0) >= 2 * max_chunk) {
            // Long rows of fewer elements than a vector, elementwise (RetinaFace's 233008 anchors
            // x 2 classes, with a broadcast per anchor that keeps the two dimensions apart): one
            // parallel iteration per row ran a call and a vector loop of 2 per row. The rows run
            // in parallel chunks like one long loop; vectorize then unrolls the row's elements
            // inside the vector loop over the chunk's rows (GCC interleaves their loads and
            // stores): 0.80 -> 0.23 ms for one of the losses at 1 thread.
            isl_ctx *ctx = isl_schedule_node_get_ctx(node);
            isl_val_list *sizes = isl_val_list_from_val(isl_val_int_from_si(ctx, max_chunk));
            sizes = isl_val_list_add(sizes, isl_val_int_from_si(ctx, member_extent(node, 1)));
            node = isl_schedule_node_band_tile(node, isl_multi_val_from_val_list(isl_schedule_node_band_get_space(node), sizes));
            for (int j = 0; j < n; ++j) node = isl_schedule_node_band_member_set_coincident(node, j, 1);
            return insert_annotated_mark(node, mark::Parallel{1, std::nullopt});
        }
        if (leaf && n > 1 && k == n - 1 && isl_schedule_node_band_member_get_coincident(node, n - 1) == isl_bool_true) {
            // The vector loop's member is long and the nest touches float16 tensors: the float
            // copies stage-float16 makes of one iteration's rows would not stay in L1 (three
            // rows of 3072: 36 KB). The member is tiled, and its tile loop runs in parallel with
            // the others, so that each task stages one tile of its rows. Not a reduction's
            // member: its tiles would add into the same accumulators from different threads.
            int halves = float16_tensors_accessed(*model, node);
            long inner = member_extent(node, n - 1);
            int64_t tile = max_chunk;
            while (tile > 256 && tile * 4 * halves > staged_bytes) tile /= 2;
            if (halves > 0 && inner * 4 * halves > staged_bytes && inner >= 2 * tile) {
                isl_ctx *ctx = isl_schedule_node_get_ctx(node);
                isl_val_list *sizes = isl_val_list_alloc(ctx, n);
                for (int j = 0; j < n; ++j) sizes = isl_val_list_add(sizes, isl_val_int_from_si(ctx, j == n - 1 ? tile : 1));
                node = isl_schedule_node_band_tile(node, isl_multi_val_from_val_list(isl_schedule_node_band_get_space(node), sizes));
                for (int j = 0; j < n; ++j) node = isl_schedule_node_band_member_set_coincident(node, j, 1);
                return insert_annotated_mark(node, mark::Parallel{loops_among(n), std::nullopt});
            }
        }
        int loops = loops_among(k);
        if (n > k) node = isl_schedule_node_band_split(node, k);
        return insert_annotated_mark(node, mark::Parallel{loops, std::nullopt});
    });
}

void split_bands_by_dimensionality(PolyModel &m) {
    isl::union_map deps = m.dep_flow.unite(m.dep_false);
    isl_union_map *d = deps.get();
    map_bottom_up(m, [d](isl_schedule_node *node) {
        if (!is_band(node) || has_band_below(node)) return node;
        int n = isl_schedule_node_band_n_member(node);
        bool all = true;
        for (int k = 0; k < n; ++k) all &= isl_schedule_node_band_member_get_coincident(node, k) == isl_bool_true;
        return all ? node : split_constant_statements(node, d);
    });
}

isl_set *whole_tiles(isl_union_map *prefix, isl_union_map *point, int64_t size) {
    isl_ctx *ctx = isl_union_map_get_ctx(prefix);
    isl_map *present = isl_set_unwrap(isl_set_from_union_set(isl_union_map_range(isl_union_map_range_product(prefix, point))));
    isl_set *tiles = isl_map_domain(isl_map_copy(present));
    isl_map *all = isl_map_from_domain_and_range(isl_set_copy(tiles),
                                                 isl_set_read_from_str(ctx, ("{ [p] : 0 <= p < " + std::to_string(size) + " }").c_str()));
    isl_set *partial_tiles = isl_map_domain(isl_map_subtract(all, present));
    return isl_set_subtract(tiles, partial_tiles);
}

namespace {

// Whether every statement below `node` lies in one of sink-columns' blocks of columns.
bool in_column_block(const PolyModel &m, isl_schedule_node *node) {
    if (m.column_block_statements.empty()) return false;
    std::set<std::string> below;
    add_statement_names(node, below);
    return std::includes(m.column_block_statements.begin(), m.column_block_statements.end(), below.begin(), below.end());
}

} // namespace

void vectorize_inner_loops(PolyModel &m, const ScheduleOptions &options) {
    int width = options.vector_width, unroll = options.vector_unroll;
    const PolyModel &model = m;
    map_bottom_up(m, [width, unroll, &model](isl_schedule_node *node) {
        if (!is_band(node) || has_band_below(node) || below_transpose_tile(node)) return node;
        int n = isl_schedule_node_band_n_member(node);
        int descended = 0;
        // A short innermost member below a long coincident one (an NHWC output's 3 channels
        // below the pixels, see order-loops): it is unrolled, and the member above it becomes
        // the vector loop, whose statements then store groups of adjacent elements (GCC
        // vectorizes those with interleaving permutes) instead of strided scalars.
        // sink-columns' tiny-row reductions (rows, then the row's few terms) unroll the terms the
        // same way although their member carries the sum: the rows are coincident, so each row
        // adds its terms in order within one vector iteration.
        bool unroll_inner = n > 1 &&
                            (isl_schedule_node_band_member_get_coincident(node, n - 1) == isl_bool_true || in_column_block(model, node)) &&
                            isl_schedule_node_band_member_get_coincident(node, n - 2) == isl_bool_true &&
                            member_extent(node, n - 1) < width && member_extent(node, n - 2) >= width;
        if (unroll_inner) {
            node = isl_schedule_node_band_split(node, n - 1);
            node = isl_schedule_node_child(node, 0);
            node = isl_schedule_node_band_member_set_ast_loop_type(node, 0, isl_ast_loop_unroll);
            node = isl_schedule_node_parent(node);
            --n;
        }
        if (n > 1) {
            node = isl_schedule_node_band_split(node, n - 1);
            node = isl_schedule_node_child(node, 0);
            ++descended;
        }
        if (isl_schedule_node_band_member_get_coincident(node, 0) != isl_bool_true) {
            node = insert_annotated_mark(node, mark::Reduction{});
        } else {
            // Strip-mine by several vectors when the loop is long enough (see vector_unroll),
            // by one vector when it is shorter, not at all below one vector nor in a block of
            // columns (sink-columns sized it).
            long extent = band_extent(node);
            int strip = extent >= width * unroll ? width * unroll : width;
            if (extent >= width && !in_column_block(model, node)) {
                isl_ctx *ctx = isl_schedule_node_get_ctx(node);
                isl_multi_val *sizes = isl_multi_val_from_val_list(
                    isl_schedule_node_band_get_space(node), isl_val_list_from_val(isl_val_int_from_si(ctx, strip)));
                node = isl_schedule_node_band_tile(node, sizes);
                node = isl_schedule_node_child(node, 0); // the point band
                ++descended;
                // Full tiles: prefixes whose every point 0..width-1 exists.
                isl_set *full = whole_tiles(isl_schedule_node_get_prefix_schedule_relation(node),
                                            isl_schedule_node_band_get_partial_schedule_union_map(node), strip);
                isl_map *iso = isl_map_from_domain_and_range(
                    full, isl_set_read_from_str(ctx, ("{ [p] : 0 <= p < " + std::to_string(strip) + " }").c_str()));
                isl_set *option = isl_set_set_tuple_name(isl_map_wrap(iso), "isolate");
                node = isl_schedule_node_band_set_ast_build_options(node, isl_union_set_from_set(option));
            }
            node = insert_annotated_mark(node, mark::Simd{});
        }
        // Return the node at the position of the band that was passed in.
        for (; descended > 0; --descended) node = isl_schedule_node_parent(node);
        return node;
    });
}

namespace {

// Promotes scratch buffer `b` to a local array owned by one iteration of `band` when all its
// users lie below `band` and the footprint of one iteration is a small fixed box. Below the
// parallel band (`inner`), an iteration must also be the only one to touch each element it
// touches: the array is then reused by the next iteration without carrying values across.
bool promote_in_band(PolyModel &m, BufferInfo &b, isl_schedule_node *band, const ScheduleOptions &options, bool inner) {
    isl_schedule_node *inside = isl_schedule_node_child(isl_schedule_node_copy(band), 0);
    int depth = isl_schedule_node_get_schedule_depth(inside);
    isl_union_set *subtree = isl_schedule_node_get_domain(band);
    isl_union_map *prefix = isl_schedule_node_get_prefix_schedule_relation(inside);
    isl_schedule_node_free(inside);
    isl::union_map acc = m.reads.unite(m.writes);
    isl_union_map *mine = accesses_to_buffer(acc.get(), b);
    isl_union_set *users = isl_union_map_domain(isl_union_map_copy(mine));
    bool inside_only = isl_union_set_is_subset(users, subtree) == isl_bool_true;
    isl_union_set_free(users);
    isl_union_set_free(subtree);
    if (!inside_only) {
        isl_union_map_free(mine);
        isl_union_map_free(prefix);
        return false;
    }
    isl_union_map *footprint = isl_union_map_apply_range(isl_union_map_reverse(prefix), mine);
    bool promoted = false;
    if (inner) {
        // { iteration -> iteration' : both touch an element } must be the identity.
        isl_union_map *shared = isl_union_map_apply_range(isl_union_map_copy(footprint), isl_union_map_reverse(isl_union_map_copy(footprint)));
        isl_union_set *iterations = isl_union_map_domain(isl_union_map_copy(footprint));
        isl_union_map *same = isl_union_set_identity(iterations);
        bool private_elements = isl_union_map_is_subset(shared, same) == isl_bool_true;
        isl_union_map_free(shared);
        isl_union_map_free(same);
        if (!private_elements) {
            isl_union_map_free(footprint);
            return false;
        }
    }
    FootprintBox box;
    if (footprint_box(footprint, b, box) && element_count(box.extent) <= options.promotion_limit && element_count(box.extent) < element_count(b.shape)) {
        b.promoted = promoted = true;
        b.local_shape = box.extent;
        b.local_offset_c = offset_to_c(box.offset, depth);
    }
    return promoted;
}

} // namespace

void promote_to_local_buffers(PolyModel &m, const ScheduleOptions &options) {
    // Visit the parallel marks; the band below each is the loop whose iterations own the
    // promoted buffers. A buffer whose footprint in one parallel iteration is too large is
    // tried at the loops inside it, outermost first: fused into one loop over the rows,
    // GeLU's backward pass writes and reads its tanh values in the same row iteration, which
    // then needs a block of them, not the 2048 rows of the parallel iteration's columns.
    struct Ctx {
        PolyModel *m;
        const ScheduleOptions *options;
    } ctx{&m, &options};
    isl_schedule_node *root = isl_schedule_get_root(m.schedule.get());
    isl_schedule_node_foreach_descendant_top_down(
        root,
        [](isl_schedule_node *node, void *user) -> isl_bool {
            auto &c = *static_cast<Ctx *>(user);
            // sink-columns' chunks of rows run their rows in parallel like a parallel loop; a
            // buffer used within a row is promoted within it (a block of the row's columns),
            // not for the whole row.
            bool parallel = mark_as<mark::Parallel>(node).has_value(), row_chunks = mark_as<mark::RowChunks>(node).has_value();
            if (!parallel && !row_chunks) return isl_bool_true;
            isl_schedule_node *band = isl_schedule_node_child(isl_schedule_node_copy(node), 0);
            for (auto &b : c.m->buffers) {
                if (b.kind != BufferKind::Scratch || b.promoted || b.shape.empty()) continue;
                if (!row_chunks && promote_in_band(*c.m, b, band, *c.options, false)) continue;
                struct Inner {
                    Ctx *c;
                    BufferInfo *b;
                    bool done = false;
                } inner{&c, &b};
                isl_schedule_node *below = isl_schedule_node_child(isl_schedule_node_copy(band), 0);
                isl_schedule_node_foreach_descendant_top_down(
                    below,
                    [](isl_schedule_node *n, void *user) -> isl_bool {
                        auto &in = *static_cast<Inner *>(user);
                        if (in.done) return isl_bool_false;
                        if (isl_schedule_node_get_type(n) != isl_schedule_node_band) return isl_bool_true;
                        in.done = promote_in_band(*in.c->m, *in.b, n, *in.c->options, true);
                        return in.done ? isl_bool_false : isl_bool_true;
                    },
                    &inner);
                isl_schedule_node_free(below);
            }
            isl_schedule_node_free(band);
            return isl_bool_true;
        },
        &ctx);
    isl_schedule_node_free(root);
}

bool coincident_band_over_passes(isl_schedule_node *node) {
    bool apply = isl_schedule_node_get_type(node) == isl_schedule_node_band && has_band_below(node);
    for (int k = 0; apply && k < static_cast<int>(isl_schedule_node_band_n_member(node)); ++k)
        apply = isl_schedule_node_band_member_get_coincident(node, k) == isl_bool_true;
    if (apply) {
        isl_schedule_node *body = isl_schedule_node_get_child(node, 0);
        apply = isl_schedule_node_get_type(body) == isl_schedule_node_sequence;
        isl_schedule_node_free(body);
    }
    return apply;
}

bool has_reduction_below(const PolyModel &m, isl_schedule_node *node) {
    isl_union_set *domain = isl_schedule_node_get_domain(node);
    bool found = false;
    for (const auto &st : m.statements) {
        if (st.role != StatementRole::ReduceUpdate || found) continue;
        isl_union_set *mine = isl_union_set_from_set(isl_set_universe(st.space(isl_union_set_get_ctx(domain))));
        mine = isl_union_set_intersect(mine, isl_union_set_copy(domain));
        found = isl_union_set_is_empty(mine) != isl_bool_true;
        isl_union_set_free(mine);
    }
    isl_union_set_free(domain);
    return found;
}

isl_schedule_node *parallel_band_below(isl_schedule_node *mark) {
    std::optional<mark::Parallel> parallel = mark_as<mark::Parallel>(mark);
    if (!parallel || parallel->body_plans) return nullptr;
    const int members = parallel->loops;
    isl_schedule_node *band = isl_schedule_node_child(isl_schedule_node_copy(mark), 0);
    bool ok = isl_schedule_node_get_type(band) == isl_schedule_node_band && members >= 1 &&
              static_cast<int>(isl_schedule_node_band_n_member(band)) == members && has_band_below(band);
    for (int k = 0; ok && k < members; ++k) ok = isl_schedule_node_band_member_get_coincident(band, k) == isl_bool_true;
    if (ok) return band;
    isl_schedule_node_free(band);
    return nullptr;
}

isl_schedule_node *tile_and_take_point_band(isl_schedule_node *band, int64_t block, isl_multi_union_pw_aff **point) {
    int n = isl_schedule_node_band_n_member(band);
    isl_ctx *ctx = isl_schedule_node_get_ctx(band);
    isl_val_list *sizes = isl_val_list_alloc(ctx, n);
    for (int k = 0; k < n; ++k) sizes = isl_val_list_add(sizes, isl_val_int_from_si(ctx, k == n - 1 ? block : 1));
    band = isl_schedule_node_band_tile(band, isl_multi_val_from_val_list(isl_schedule_node_band_get_space(band), sizes));
    for (int k = 0; k < n; ++k) band = isl_schedule_node_band_member_set_coincident(band, k, 1);
    isl_schedule_node *inner = isl_schedule_node_child(band, 0);
    isl_multi_union_pw_aff *all = isl_schedule_node_band_get_partial_schedule(inner);
    *point = isl_multi_union_pw_aff_from_union_pw_aff(isl_multi_union_pw_aff_get_at(all, n - 1));
    isl_multi_union_pw_aff_free(all);
    return isl_schedule_node_delete(inner);
}

long member_extent(isl_schedule_node *node, int member) {
    isl_union_map *partial = isl_schedule_node_band_get_partial_schedule_union_map(node);
    isl_union_set *range = isl_union_map_range(isl_union_map_intersect_domain(partial, isl_schedule_node_get_domain(node)));
    isl_set *values = isl_set_from_union_set(range);
    isl_val *lo = isl_set_dim_min_val(isl_set_copy(values), member);
    isl_val *hi = isl_set_dim_max_val(values, member);
    long extent = isl_val_is_int(lo) && isl_val_is_int(hi) ? isl_val_get_num_si(hi) - isl_val_get_num_si(lo) + 1 : 0;
    isl_val_free(lo);
    isl_val_free(hi);
    return extent;
}


} // namespace akg
