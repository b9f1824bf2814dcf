// Scheduling with isl's Pluto-style scheduler.
//
// The options decide fusion (see STACK-NOTES): with isl's defaults, the last statement of a
// softmax is not fused and column loops are merged through parametric shifts. Scheduling each
// component as a whole, without maximizing band depth or serializing SCCs, and preferring
// outer coincidence gives one parallel row loop that contains the reductions and the
// elementwise tail in sequence.
#include "poly/bounded_schedule.h"
#include "poly/fuse_sibling_reductions.h"
#include "poly/join_reduction_inputs.h"
#include "poly/order_band_members.h"
#include "poly/poly_model.h"
#include "poly/schedule_small_extents.h"
#include "poly/schedule_transforms.h"

#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include <isl/ctx.h>
#include <isl/options.h>
#include <isl/schedule.h>

namespace akg {

namespace {

// The scheduler's ILPs grow combinatorially with the number of statements of one component:
// a chain of 50 row reductions, each feeding the next through a broadcast, kept it busy for
// many minutes. The fused schedule gets this many isl operations (every catalog kernel needs
// under 30000; the 14 largest corpus kernels were checked unaffected); beyond that the kernel
// gets the unfused schedule (one loop nest per statement, as --unfused), which needs no ILP.
// AKG_ISL_MAX_SCHEDULE_OPERATIONS overrides it (0: no limit).
constexpr unsigned long kMaxScheduleOperations = 300000;

unsigned long max_schedule_operations() {
    if (const char *e = std::getenv("AKG_ISL_MAX_SCHEDULE_OPERATIONS")) return std::strtoul(e, nullptr, 10);
    return kMaxScheduleOperations;
}

// One statement's own loop nest. Within a statement, the output dimensions carry no dependence
// (coincident); reduced dimensions do.
isl_schedule *statement_nest(const PolyModel &m, const PolyStatement &st) {
    isl_ctx *ctx = m.ctx.get();
    int n = st.out_dims + st.reduce_dims;
    isl::set own = isl::manage(isl_union_set_extract_set(m.domain.get(), st.space(ctx))); // keeps the union set
    isl_schedule *one = isl_schedule_from_domain(isl_union_set_from_set(own.copy()));
    if (n == 0) return one;
    isl_map *identity = isl_map_identity(isl_space_map_from_set(isl_set_get_space(own.get())));
    identity = isl_map_intersect_domain(identity, own.copy());
    isl_multi_union_pw_aff *id = isl_multi_union_pw_aff_from_union_map(isl_union_map_from_map(identity));
    // The identity map's range has no tuple name; schedule spaces must be unnamed.
    id = isl_multi_union_pw_aff_reset_tuple_id(id, isl_dim_out);
    isl_schedule_node *node = isl_schedule_get_root(one);
    isl_schedule_free(one);
    node = isl_schedule_node_child(node, 0);
    node = isl_schedule_node_insert_partial_schedule(node, id);
    for (int d = 0; d < n; ++d) node = isl_schedule_node_band_member_set_coincident(node, d, d < st.out_dims);
    one = isl_schedule_node_get_schedule(node);
    isl_schedule_node_free(node);
    return one;
}

// The unfused schedule (the ablation): program order, one loop nest per statement.
void sequence_schedule(PolyModel &m) {
    isl_schedule *seq = nullptr;
    for (const auto &st : m.statements) {
        isl_schedule *one = statement_nest(m, st);
        seq = seq ? isl_schedule_sequence(seq, one) : one;
    }
    m.schedule = isl::manage(seq ? seq : isl_schedule_from_domain(m.domain.copy()));
}

// Whether `reader`'s reads of `buffer` vary along its innermost dimension (a bias read by
// column, not a per-row value): composing the reads with "same iterations but the last" must
// give no element the reads did not already give.
bool read_along_innermost(const PolyModel &m, const PolyStatement &reader, const BufferInfo &buffer) {
    int n = reader.out_dims + reader.reduce_dims;
    if (n == 0) return false;
    isl_ctx *ctx = m.ctx.get();
    isl_space *space = reader.space(ctx);
    isl_space *element = isl_space_set_tuple_name(isl_space_set_alloc(ctx, 0, buffer.shape.size()), isl_dim_set, buffer.name.c_str());
    isl_set *domain = isl_union_set_extract_set(m.domain.get(), isl_space_copy(space));
    isl_map *reads = isl_union_map_extract_map(m.reads.get(), isl_space_map_from_domain_and_range(space, element));
    isl_map *same_but_last = isl_map_universe(isl_space_map_from_set(isl_set_get_space(domain)));
    for (int d = 0; d + 1 < n; ++d) same_but_last = isl_map_equate(same_but_last, isl_dim_in, d, isl_dim_out, d);
    same_but_last = isl_map_intersect_range(isl_map_intersect_domain(same_but_last, isl_set_copy(domain)), domain);
    isl_map *varied = isl_map_apply_range(same_but_last, isl_map_copy(reads));
    bool along = isl_map_is_subset(varied, reads) != isl_bool_true;
    isl_map_free(varied);
    isl_map_free(reads);
    return along;
}

// Broadcast operands computed from kernel inputs alone: statements that read only kernel inputs
// and whose every reader has at least kBroadcastReuse times their iterations and reads them
// along its innermost dimension (a float32 bias rounded to float16 once, see materialize.h).
// They run first, each in a nest of its own: fused with their readers, isl makes their
// dimension (the bias's column) the outer loop of the whole kernel and walks the large tensors
// down their columns (bias + GeLU in float16: 25x slower), and fusing them buys nothing, as
// they read no intermediate value. A per-row value (LayerNorm's rsqrt of an input variance)
// stays fused: it is computed inside the row loop that uses it.
std::vector<const PolyStatement *> broadcast_operands(const PolyModel &m) {
    std::vector<const PolyStatement *> found;
    for (const auto &st : m.statements) {
        const BufferInfo &written = m.buffer(st.stage->buffer);
        if (st.role != StatementRole::Assign || written.kind != BufferKind::Scratch) continue;
        isl_union_set *own = isl_union_set_from_set(isl_union_set_extract_set(m.domain.get(), st.space(m.ctx.get())));
        isl_union_map *reads = isl_union_map_intersect_domain(m.reads.copy(), own);
        bool inputs_only = true;
        for (const auto &b : m.buffers) {
            if (b.kind == BufferKind::KernelInput) continue;
            isl_union_map *to_b = accesses_to_buffer(reads, b);
            inputs_only &= isl_union_map_is_empty(to_b) == isl_bool_true;
            isl_union_map_free(to_b);
        }
        isl_union_map_free(reads);
        if (!inputs_only) continue;
        isl_union_map *readers = accesses_to_buffer(m.reads.get(), written);
        isl_union_set *reader_domain = isl_union_map_domain(readers);
        bool broadcast = isl_union_set_is_empty(reader_domain) != isl_bool_true;
        for (const auto &reader : m.statements) {
            isl_set *part = isl_union_set_extract_set(reader_domain, reader.space(m.ctx.get()));
            if (isl_set_is_empty(part) != isl_bool_true &&
                (reader.iterations() < kBroadcastReuse * st.iterations() || !read_along_innermost(m, reader, written)))
                broadcast = false;
            isl_set_free(part);
        }
        isl_union_set_free(reader_domain);
        if (broadcast) found.push_back(&st);
    }
    return found;
}

// The cost model's traffic term: the bytes of every buffer each top-level loop nest accesses,
// summed over the nests (a buffer read by two nests counts twice). A whole buffer per nest is a
// crude footprint, but it is what decides between one pass over a tensor and two.
int64_t memory_traffic(const PolyModel &m) {
    isl_schedule_node *root = isl_schedule_get_root(m.schedule.get());
    isl_schedule_node *top = isl_schedule_node_child(root, 0);
    std::vector<isl_union_set *> nests;
    if (isl_schedule_node_get_type(top) == isl_schedule_node_sequence || isl_schedule_node_get_type(top) == isl_schedule_node_set) {
        for (int k = 0; k < isl_schedule_node_n_children(top); ++k) {
            // Below the filter: a filter node's own domain is what reaches it, before filtering.
            isl_schedule_node *below = isl_schedule_node_child(isl_schedule_node_get_child(top, k), 0);
            nests.push_back(isl_schedule_node_get_domain(below));
            isl_schedule_node_free(below);
        }
    } else {
        nests.push_back(isl_schedule_node_get_domain(top));
    }
    isl_schedule_node_free(top);
    isl_union_map *accesses = m.reads.unite(m.writes).release();
    int64_t bytes = 0;
    for (isl_union_set *nest : nests) {
        isl_union_map *mine = isl_union_map_intersect_domain(isl_union_map_copy(accesses), nest);
        for (const auto &b : m.buffers) {
            isl_union_map *to_b = accesses_to_buffer(mine, b);
            if (isl_union_map_is_empty(to_b) != isl_bool_true) bytes += element_count(b.shape) * dtype_bytes(b.dtype);
            isl_union_map_free(to_b);
        }
        isl_union_map_free(mine);
    }
    isl_union_map_free(accesses);
    return bytes;
}

// The loops of a schedule (band nodes), and whether every outermost band's first member is
// parallel (coincident).
void count_loops(const PolyModel &m, int64_t &loops, bool &outer_parallel) {
    struct Count {
        int64_t loops = 0;
        bool outer_parallel = true;
    } count;
    isl_schedule_node *root = isl_schedule_get_root(m.schedule.get());
    isl_schedule_node_foreach_descendant_top_down(
        root,
        [](isl_schedule_node *node, void *user) -> isl_bool {
            auto &c = *static_cast<Count *>(user);
            if (isl_schedule_node_get_type(node) != isl_schedule_node_band) return isl_bool_true;
            ++c.loops;
            if (is_outermost_band(node) && isl_schedule_node_band_member_get_coincident(node, 0) != isl_bool_true) c.outer_parallel = false;
            return isl_bool_true;
        },
        &count);
    isl_schedule_node_free(root);
    loops = count.loops;
    outer_parallel = count.outer_parallel;
}

// Orders candidate schedules: fewer loop-order inversions first (walking memory in order
// matters most), then less memory traffic. `loops` and `outer_parallel` decide between the
// two fused candidates only (see compute_schedule).
struct ScheduleCost {
    int64_t inversions, traffic, loops, scalar_loops;
    bool outer_parallel;
    bool operator<(const ScheduleCost &o) const { return inversions != o.inversions ? inversions < o.inversions : traffic < o.traffic; }
};

ScheduleCost schedule_cost(PolyModel &m, const ScheduleOptions &options) {
    fuse_sibling_reductions(m); // as the pipeline will, so that both candidates are compared as run
    join_reduction_inputs(m);
    order_band_members(m, options);
    ScheduleCost cost{loop_order_inversions(m), memory_traffic(m), 0, sequential_contiguous_loops(m), true};
    count_loops(m, cost.loops, cost.outer_parallel);
    return cost;
}

// Schedules found, by candidate and schedule constraints (as text), for the whole process.
class ScheduleCache {
public:
    struct Entry {
        ScheduleOutcome outcome;
        std::string schedule;
        bool small_extents; // found on extents cut to kSmallExtent (schedule_small_extents.h)
    };
    std::optional<Entry> find(const std::string &key) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = entries_.find(key);
        if (it == entries_.end()) return std::nullopt;
        return it->second;
    }
    void insert(const std::string &key, Entry entry) {
        std::lock_guard<std::mutex> lock(mutex_);
        entries_.emplace(key, std::move(entry));
    }

private:
    std::mutex mutex_;
    std::unordered_map<std::string, Entry> entries_;
};

ScheduleCache &schedule_cache() {
    static ScheduleCache cache;
    return cache;
}

// CPU seconds for the first candidate (beyond them the kernel gets the unfused schedule) and
// for the second (beyond them the first is kept). Every catalog and corpus kernel schedules each
// candidate in well under a second; the searches that blow up do not end in minutes.
constexpr int kFusedCandidateSeconds = 3;
constexpr int kFewerLoopsCandidateSeconds = 1;
// Beyond them, the same problem on every dimension cut to this many values (see
// schedule_small_extents.h).
constexpr int kSmallExtent = 16;

// isl's schedule of `rest` after the preamble (a copy is used), or null when isl stopped at its
// operation quota or time bound (`outcome` says which). `fuse_inner_loops`: the second
// candidate, see compute_schedule.
isl_schedule *fused_candidate(PolyModel &m, const isl::union_set &rest, const isl::union_map &deps, const isl::union_map &proximity,
                              isl_schedule *preamble, bool fuse_inner_loops, ScheduleOutcome &outcome) {
    isl_ctx *ctx = m.ctx.get();
    isl_options_set_schedule_whole_component(ctx, fuse_inner_loops ? 0 : 1);
    isl_options_set_schedule_outer_coincidence(ctx, fuse_inner_loops ? 0 : 1);
    isl_schedule_constraints *sc = isl_schedule_constraints_on_domain(rest.copy());
    sc = isl_schedule_constraints_set_validity(sc, deps.copy());
    sc = isl_schedule_constraints_set_coincidence(sc, deps.copy());
    sc = isl_schedule_constraints_set_proximity(sc, proximity.copy());
    int seconds = schedule_seconds(fuse_inner_loops ? kFewerLoopsCandidateSeconds : kFusedCandidateSeconds);
    // The variants of a kernel for each target pose isl the same problem: solve it once.
    char *text = isl_schedule_constraints_to_str(sc);
    std::string key = std::string(fuse_inner_loops ? "fewer-loops " : "fused ") + std::to_string(seconds) + " " + (text ? text : "");
    free(text);
    isl_schedule *fused = nullptr;
    bool small_extents = false;
    if (auto cached = schedule_cache().find(key)) {
        isl_schedule_constraints_free(sc);
        outcome = cached->outcome;
        small_extents = cached->small_extents;
        if (outcome == ScheduleOutcome::Done) fused = isl_schedule_read_from_str(ctx, cached->schedule.c_str());
    } else {
        fused = compute_schedule_bounded(sc, seconds, max_schedule_operations(), outcome);
        if (!fused && (outcome == ScheduleOutcome::TimedOut || outcome == ScheduleOutcome::OverQuota)) {
            ScheduleOutcome small_outcome;
            fused = schedule_on_small_extents(rest, deps, proximity, kSmallExtent, seconds, max_schedule_operations(), small_outcome);
            if (fused) {
                outcome = ScheduleOutcome::Done;
                small_extents = true;
            }
        }
        char *result = fused ? isl_schedule_to_str(fused) : nullptr;
        schedule_cache().insert(key, {outcome, result ? result : "", small_extents});
        free(result);
    }
    if (small_extents)
        m.schedule_notes.push_back(std::string(fuse_inner_loops ? "fewer-loops" : "fused") + " candidate over its time bound at full extents: " +
                                   "scheduled on extents cut to " + std::to_string(kSmallExtent) + ", legal on the whole domain");
    if (fused && preamble) fused = isl_schedule_sequence(isl_schedule_copy(preamble), fused);
    return fused;
}

} // namespace

void compute_schedule(PolyModel &m, const ScheduleOptions &options) {
    isl_ctx *ctx = m.ctx.get();
    isl::union_map deps = m.dep_flow.unite(m.dep_false);
    if (!options.fuse) {
        sequence_schedule(m);
        m.schedule_notes.push_back("unfused: --unfused");
        return;
    }
    isl_options_set_schedule_maximize_band_depth(ctx, 0);
    isl_options_set_schedule_serialize_sccs(ctx, 0);
    // No constant shifts: they would merge the column loops of different statements into
    // one loop with guards (767 + r0, 1534 + i1) instead of a sequence of clean loops.
    isl_options_set_schedule_max_constant_term(ctx, 0);
    // Loop permutations and fusions need coefficients of 0 and 1 only; bounding them keeps the
    // scheduler's ILPs small (unbounded, a reshape between [233008,1] and [8,29126] kept it busy
    // for minutes with coefficients in the tens of thousands).
    isl_options_set_schedule_max_coefficient(ctx, 1);
    // Broadcast operands first, each in its own nest; isl schedules the rest.
    std::vector<const PolyStatement *> first = broadcast_operands(m);
    isl::union_set rest = m.domain;
    isl_schedule *preamble = nullptr;
    for (const PolyStatement *st : first) {
        isl_schedule *one = statement_nest(m, *st);
        rest = rest.subtract(isl::manage(isl_schedule_get_domain(one)));
        preamble = preamble ? isl_schedule_sequence(preamble, one) : one;
    }
    deps = deps.intersect_domain(rest).intersect_range(rest);
    // Proximity adds the fusion hints (dep_input) to the dependences.
    isl::union_map proximity = deps.unite(m.dep_input.intersect_domain(rest).intersect_range(rest));
    // The first candidate schedules each component as a whole and prefers outer coincidence.
    ScheduleOutcome outcome = ScheduleOutcome::Done;
    isl_schedule *fused = fused_candidate(m, rest, deps, proximity, preamble, false, outcome);
    if (outcome == ScheduleOutcome::OverQuota || outcome == ScheduleOutcome::TimedOut) {
        isl_schedule_free(preamble);
        sequence_schedule(m);
        m.schedule_notes.push_back(std::string("unfused: isl's fused schedule was ") + outcome_name(outcome));
        return;
    }
    m.schedule = isl::manage(fused);
    if (m.schedule.is_null()) throw InternalError("isl's scheduler failed");
    ScheduleCost fused_cost = schedule_cost(m, options);
    isl::schedule kept = m.schedule;
    // The second one schedules each strongly connected component on its own and does not
    // insist on coincident outer members: below a parallel column loop it can then fuse the
    // row loops of an elementwise producer, a column reduction and an elementwise consumer,
    // whose reduction is not coincident (GeLU's backward pass with its bias gradient: one
    // pass over the rows instead of three, and no tanh scratch tensor). It is kept when it
    // has fewer loops and is no worse otherwise, including parallelism and vectorization
    // (sequential_contiguous_loops: fusing softmax's exponentials into the loop of their sum
    // has fewer loops too, but runs that loop scalar, 8x slower).
    isl_schedule *fewer_loops = fused_candidate(m, rest, deps, proximity, preamble, true, outcome);
    if (!fewer_loops) m.schedule_notes.push_back(std::string("fewer-loops candidate ") + outcome_name(outcome) + ": not considered");
    isl_options_set_schedule_whole_component(ctx, 1);
    isl_options_set_schedule_outer_coincidence(ctx, 1);
    isl_schedule_free(preamble);
    if (fewer_loops) {
        m.schedule = isl::manage(fewer_loops);
        ScheduleCost cost = schedule_cost(m, options);
        bool better = cost.loops < fused_cost.loops && !(fused_cost < cost) && (cost.outer_parallel || !fused_cost.outer_parallel) &&
                      cost.scalar_loops <= fused_cost.scalar_loops;
        if (better) {
            kept = m.schedule;
            fused_cost = cost;
        }
        m.schedule_notes.push_back(better ? "fewer-loops candidate kept" : "fewer-loops candidate not better");
    }
    // Cost model: fusion must not cost locality. Fusing per-channel statistics into an NCHW
    // BatchNorm apply makes the channel the outer loop and walks the batch inside it, a stride
    // of a whole image per step; the unfused schedule streams. And isl's fusion can split
    // sibling column reductions (LayerNorm's dgamma and dbeta) into two passes over the
    // gradient where the unfused schedule, once fuse-reductions merges them, makes one. Keep
    // whichever schedule walks the largest statement's memory in order with fewer inversions,
    // then with less traffic (fused on a tie).
    sequence_schedule(m);
    ScheduleCost unfused_cost = schedule_cost(m, options);
    m.schedule_notes.push_back(unfused_cost < fused_cost ? "unfused: walks memory in order with fewer inversions or less traffic" : "fused");
    m.schedule = unfused_cost < fused_cost ? m.schedule : kept;
}

} // namespace akg
