#include "poly/plan_reductions.h"

#include <algorithm>
#include <sstream>

#include "poly/schedule_transforms.h"

namespace akg {

namespace {

// The loop the AST builds for member 0 of `band` (kept), when both its bounds are the same
// constant for every iteration of the loops around it (the emitter's `for (c = lo; c <= hi; ...)`):
// its number of iterations; 0 otherwise.
int64_t constant_trips(isl_schedule_node *band) {
    isl_union_map *prefix = isl_schedule_node_get_prefix_schedule_relation(band);
    isl_union_map *member = isl_schedule_node_band_get_partial_schedule_union_map(band);
    isl_union_set *points = isl_union_map_range(isl_union_map_range_product(prefix, member));
    if (isl_union_set_n_set(points) != 1) {
        isl_union_set_free(points);
        return 0;
    }
    isl_map *loop = isl_set_unwrap(isl_set_from_union_set(points)); // { prefix -> [member values] }
    if (isl_map_dim(loop, isl_dim_out) != 1) {
        isl_map_free(loop);
        return 0;
    }
    // The single constant of `bound` on all its pieces, or nothing.
    auto constant = [](isl_pw_aff *bound, int64_t &value) {
        struct Pieces {
            bool constant = true, seen = false;
            int64_t value = 0;
        } pieces;
        isl_pw_aff_foreach_piece(
            bound,
            [](isl_set *set, isl_aff *aff, void *user) -> isl_stat {
                auto &p = *static_cast<Pieces *>(user);
                if (isl_aff_is_cst(aff) != isl_bool_true) {
                    p.constant = false;
                } else {
                    isl_val *v = isl_aff_get_constant_val(aff);
                    int64_t k = isl_val_is_int(v) ? isl_val_get_num_si(v) : 0;
                    p.constant &= isl_val_is_int(v) == isl_bool_true && (!p.seen || k == p.value);
                    p.value = k, p.seen = true;
                    isl_val_free(v);
                }
                isl_set_free(set);
                isl_aff_free(aff);
                return isl_stat_ok;
            },
            &pieces);
        isl_pw_aff_free(bound);
        value = pieces.value;
        return pieces.constant && pieces.seen;
    };
    int64_t lo = 0, hi = 0;
    bool known = constant(isl_map_dim_min(isl_map_copy(loop), 0), lo) && constant(isl_map_dim_max(loop, 0), hi);
    return known && hi >= lo ? hi - lo + 1 : 0;
}

// The accumulator between loop levels: double for long float sums (their partial sums stay
// exact enough), unsigned for int32 sums and products, so that OpenMP's own combination of the
// lanes wraps as the reference does.
ReductionPlan accumulator_plan(const PolyStatement &st, const ScheduleOptions &o) {
    const Stage &s = *st.stage;
    ReductionPlan plan;
    plan.accumulator = s.value.type();
    if (s.reduce_kind == ReduceKind::Sum && s.value.type().is_float() && element_count(s.reduce_extents) >= o.double_lanes_from_terms)
        plan.accumulator = Halide::Float(64);
    if ((s.reduce_kind == ReduceKind::Sum || s.reduce_kind == ReduceKind::Prod) && s.value.type() == Halide::Int(32))
        plan.accumulator = Halide::UInt(32);
    return plan;
}

// The lanes of the nest of `updates` (its innermost loop: `trips` iterations when constant, else
// 0), whole-kernel or not.
void plan_lanes(PolyModel &m, const std::vector<const PolyStatement *> &updates, int64_t trips, bool whole_kernel, const ScheduleOptions &o) {
    bool split = whole_kernel && trips >= o.whole_reduction_split_from;
    int lanes = split || trips >= o.reduction_wide_lanes_from ? o.reduction_wide_lanes : o.reduction_lanes;
    bool double_lanes = false;
    for (const PolyStatement *st : updates) {
        ReductionPlan &plan = m.reduction_plans[st->name];
        plan.lane = plan.accumulator;
        if (plan.accumulator == Halide::Float(64) && st->stage->value.type() == Halide::Float(32)) {
            int64_t longest = 1;
            for (const auto &e : st->stage->reduce_extents) longest = std::max<int64_t>(longest, e);
            if (longest / lanes < o.double_lanes_from_terms) plan.lane = Halide::Float(32);
        }
        double_lanes |= plan.lane == Halide::Float(64);
    }
    if (double_lanes) lanes = o.reduction_lanes; // as many vectors of doubles as wide lanes of floats
    for (const PolyStatement *st : updates) {
        ReductionPlan &plan = m.reduction_plans[st->name];
        plan.lanes = lanes;
        plan.chunks = split ? o.whole_reduction_chunks : 0;
        bool float_groups = plan.lane == Halide::Float(64) && st->stage->reduce_kind == ReduceKind::Sum && st->stage->value.type() == Halide::Float(32);
        plan.float_lane_blocks = float_groups ? o.float_lane_blocks : 0;
    }
}

// Whether every band member above the reduction mark `node` (kept) is a loop of its nest: a
// reduction into one element whose loops take more than one value each (a loop of one value
// is still a loop around the nest in the AST). Nothing outside such a nest runs in parallel.
bool only_reduction_loops_above(isl_schedule_node *node) {
    bool only = true;
    isl_schedule_node *at = isl_schedule_node_copy(node);
    while (only && isl_schedule_node_has_parent(at) == isl_bool_true) {
        at = isl_schedule_node_parent(at);
        if (isl_schedule_node_get_type(at) == isl_schedule_node_band) {
            for (int k = 0; k < isl_schedule_node_band_n_member(at) && only; ++k) only = member_extent(at, k) != 1;
        } else if (isl_schedule_node_get_type(at) == isl_schedule_node_mark) {
            only = !mark_as<mark::Parallel>(at);
        }
    }
    isl_schedule_node_free(at);
    return only;
}

struct Planning {
    PolyModel *m;
    const ScheduleOptions *o;
};

isl_schedule_node *plan_below_mark(isl_schedule_node *node, void *user) {
    if (!mark_as<mark::Reduction>(node)) return node;
    auto &p = *static_cast<Planning *>(user);
    std::set<std::string> names;
    add_statement_names(node, names);
    std::vector<const PolyStatement *> updates;
    for (const auto &name : names) {
        const PolyStatement &st = p.m->statement(name);
        if (st.role == StatementRole::ReduceUpdate && !p.m->side_statements.count(name)) updates.push_back(&st);
    }
    if (updates.empty()) return node;
    isl_schedule_node *band = isl_schedule_node_child(isl_schedule_node_copy(node), 0);
    int64_t trips = isl_schedule_node_get_type(band) == isl_schedule_node_band && isl_schedule_node_band_n_member(band) == 1 ? constant_trips(band) : 0;
    isl_schedule_node_free(band);
    bool whole_kernel = std::all_of(updates.begin(), updates.end(), [](const PolyStatement *st) { return element_count(st->stage->shape) == 1; }) &&
                        only_reduction_loops_above(node);
    plan_lanes(*p.m, updates, trips, whole_kernel, *p.o);
    return node;
}

} // namespace

void plan_reductions(PolyModel &m, const ScheduleOptions &options) {
    m.reduction_plans.clear();
    // Nests below no mark::Reduction: lanes for a loop of unknown length.
    for (const auto &st : m.statements)
        if (st.role == StatementRole::ReduceUpdate) {
            m.reduction_plans[st.name] = accumulator_plan(st, options);
            plan_lanes(m, {&st}, 0, false, options);
        }
    Planning planning{&m, &options};
    map_schedule_bottom_up(m, &plan_below_mark, &planning);
    m.column_sum_block_rows = options.column_sum_block_rows;
    m.chunk_sums_block = options.chunk_sums_block;
}

std::string reduction_plans_text(const PolyModel &m) {
    auto name = [](Halide::Type t) {
        if (t.is_float()) return t.bits() == 64 ? std::string("double") : std::string("float");
        return std::string(t.is_uint() ? "uint" : "int") + std::to_string(t.bits());
    };
    std::ostringstream os;
    for (const auto &[statement, plan] : m.reduction_plans) {
        os << statement << ": accumulator " << name(plan.accumulator) << ", " << plan.lanes << " " << name(plan.lane) << " lanes";
        if (plan.float_lane_blocks) os << " in groups of " << plan.float_lane_blocks << " float blocks";
        if (plan.chunks) os << ", " << plan.chunks << " chunks";
        os << "\n";
    }
    os << "column sums: blocks of " << m.column_sum_block_rows << " rows; chunks' sums added by blocks of " << m.chunk_sums_block << " elements\n";
    return os.str();
}

} // namespace akg
