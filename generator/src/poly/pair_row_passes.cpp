#include "poly/pair_row_passes.h"

#include "poly/group_short_rows.h"
#include "poly/order_band_members.h"
#include "poly/schedule_transforms.h"

#include <algorithm>
#include <map>
#include <set>

#include <isl/aff.h>
#include <isl/schedule_node.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

namespace akg {

namespace {

constexpr int64_t kRowsPerIteration = 2;
// Enough iterations left that every thread still gets several.
constexpr int64_t kMinIterationsPerThreadAfterPairing = 8;
// Rows this short (in elements of the largest tensor) are paired whatever they read (see
// pair_under_mark).
constexpr int64_t kShortRowElements = 256;

// Whether a pass over a row's elements below `band` (a statement that runs more than once per
// iteration of the band: a reduction's updates, an elementwise output; not a reduction's init
// or the store of its result) needs the result of a reduction of the row, directly or through
// other statements (flow dependences): LayerNorm's variance needs the mean, a softmax's
// exponentials the maximum, the softmax gradient's output its sum. Not a reduction whose row
// passes are all independent of it (an elementwise output beside a ReduceMax) or feed it.
bool pass_after_a_reduction(const PolyModel &m, isl_schedule_node *band) {
    std::set<std::string> row_passes;
    isl_union_map *schedule = isl_schedule_node_band_get_partial_schedule_union_map(band);
    schedule = isl_union_map_intersect_domain(schedule, isl_schedule_node_get_domain(band));
    isl_union_map_foreach_map(
        schedule,
        [](isl_map *map, void *user) -> isl_stat {
            if (isl_map_is_injective(map) == isl_bool_false) static_cast<std::set<std::string> *>(user)->insert(isl_map_get_tuple_name(map, isl_dim_in));
            isl_map_free(map);
            return isl_stat_ok;
        },
        &row_passes);
    isl_union_map_free(schedule);
    // Statement-level flow edges, and the statements reached from the reductions' updates.
    std::multimap<std::string, std::string> edges;
    isl_union_map_foreach_map(
        m.dep_flow.get(),
        [](isl_map *map, void *user) -> isl_stat {
            static_cast<std::multimap<std::string, std::string> *>(user)->emplace(isl_map_get_tuple_name(map, isl_dim_in),
                                                                                   isl_map_get_tuple_name(map, isl_dim_out));
            isl_map_free(map);
            return isl_stat_ok;
        },
        &edges);
    std::vector<std::string> work;
    for (const auto &st : m.statements)
        if (st.role == StatementRole::ReduceUpdate && row_passes.count(st.name)) work.push_back(st.name);
    std::set<std::string> reached;
    while (!work.empty()) {
        std::string from = work.back();
        work.pop_back();
        auto [lo, hi] = edges.equal_range(from);
        for (auto e = lo; e != hi; ++e)
            if (e->second != from && reached.insert(e->second).second) work.push_back(e->second);
    }
    for (const auto &name : reached)
        if (row_passes.count(name)) return true;
    return false;
}

// The kernel inputs whose reads move with the band's innermost member (rows read per
// iteration; a bias or gamma every iteration shares does not count).
int row_inputs(const PolyModel &m, isl_schedule_node *band) {
    int n = 0;
    for (const auto &b : m.buffers) {
        if (b.kind != BufferKind::KernelInput) continue;
        isl::union_map reads = isl::manage(accesses_to_buffer(m.reads.get(), b));
        if (reads.is_empty()) continue;
        std::vector<int64_t> strides = member_strides(m, band, &reads);
        n += !strides.empty() && strides.back() != 0;
    }
    return n;
}

// The band of rows below a parallel mark (the loops over the rows of an attention softmax's
// batch, head and query collapse into one parallel loop) over its passes, or null.
isl_schedule_node *parallel_row_band(isl_schedule_node *mark) {
    if (!mark_as<mark::Parallel>(mark)) return nullptr;
    isl_schedule_node *band = isl_schedule_node_child(isl_schedule_node_copy(mark), 0);
    if (coincident_band_over_passes(band)) return band;
    isl_schedule_node_free(band);
    return nullptr;
}

// In a serial kernel (a GEMM's row part, run on a slice of rows inside the GEMM's threads) the
// outermost band of rows over its passes, which stands for the parallel loop: a copy, or null.
isl_schedule_node *serial_row_band(isl_schedule_node *node) {
    if (isl_schedule_node_get_type(node) != isl_schedule_node_band) return nullptr;
    isl_schedule_node *up = isl_schedule_node_copy(node);
    bool outermost = true;
    while (outermost && isl_schedule_node_has_parent(up) == isl_bool_true) {
        up = isl_schedule_node_parent(up);
        outermost = isl_schedule_node_get_type(up) != isl_schedule_node_band;
    }
    isl_schedule_node_free(up);
    if (!outermost) return nullptr;
    isl_schedule_node *band = isl_schedule_node_copy(node);
    if (coincident_band_over_passes(band)) return band;
    isl_schedule_node_free(band);
    return nullptr;
}

struct Context {
    PolyModel *model;
    const ScheduleOptions *options;
};

isl_schedule_node *pair_under_mark(isl_schedule_node *node, void *user) {
    const Context &c = *static_cast<const Context *>(user);
    PolyModel &m = *c.model;
    const bool serial = !c.options->parallel;
    isl_schedule_node *band = serial ? serial_row_band(node) : parallel_row_band(node);
    if (!band) return node;
    const int inner = static_cast<int>(isl_schedule_node_band_n_member(band)) - 1;
    std::vector<int64_t> strides = member_strides(m, band);
    int64_t row_elements = strides.empty() ? 0 : strides.back();
    int64_t row_bytes = row_elements * largest_element_bytes(m);
    // One row input: the passes are light (a LayerNorm), and their reduction chains set the pace.
    // Kernels that read several row tensors per element have enough independent work per row of
    // 768: paired, bias + dropout + residual + LayerNorm f16 ran 1.2x slower (1.0x after its
    // saved residual row), its f32 version and the LayerNorm backward as before or slower. Rows
    // of at most kShortRowElements are paired whatever they read: each row's work is short next
    // to its chain of lane combines, a division or an exponential pass. Unrolled (below): the
    // attention softmax + dropout over rows of 128, float16 1.27 -> 1.03-1.06 ms, float32 1.05
    // -> 0.94 ms at 1 thread; the softmax gradient f16 (one reduction, then the output pass
    // that needs it) 0.51 -> 0.44 ms at 1 thread, 0.25 -> 0.226 at 2 (harness). Always a pass
    // that needs a reduction (pass_after_a_reduction): without one (corpus kernels: a
    // ReduceSum over rows of 43, a ReduceMax over rows of 128 beside an elementwise output, the
    // sum of a softmax's exponentials alone) they ran 1.05-1.4x slower paired. Row sums alone
    // under one-member bands went both ways: a Reshape + Cast + ReduceSum 1.15x faster
    // unpaired (3.8 -> 3.35 ms), a ReduceSum over 320 rows of 768 1.25x slower (6.2 -> 7.8 us).
    bool after = has_reduction_below(m, band) && pass_after_a_reduction(m, band);
    bool short_rows = row_elements <= kShortRowElements;
    bool apply = row_bytes > 0 && row_bytes <= c.options->paired_row_max_bytes && after && (short_rows || row_inputs(m, band) == 1) &&
                 member_extent(band, inner) >= kRowsPerIteration * (serial ? 1 : kMinIterationsPerThreadAfterPairing * c.options->threads) &&
                 !groups_short_rows(m, band);
    if (!apply) {
        isl_schedule_node_free(band);
        return node;
    }
    isl_schedule_node_free(node);
    // Each pass of the nested sequences isl made (a softmax's maximum, exponentials and sum lie
    // in a sequence below the first pass) runs for both rows. Unrolled, each pass's two copies
    // are straight-line code with the row a constant: the attention softmax + dropout f16 1.27
    // -> 1.03-1.06 ms at 1 thread, 0.64 -> 0.53 at 2, its f32 version 1.05 -> 0.94 / 0.535 ->
    // 0.49, LayerNorm f16 0.119 -> 0.108 / 0.062-0.077 -> 0.057-0.062 (as a loop over the pair:
    // 1.24-1.29 and 1.15-1.17 ms for the attention softmaxes). LayerNorm f32 ran 5% slower
    // unrolled (0.146 -> 0.153 ms) and keeps the loop: its float rows have no conversions in
    // each pass's chain.
    bool unrolled = short_rows || largest_element_bytes(m) == 2;
    isl_multi_union_pw_aff *point = nullptr;
    isl_schedule_node *sequence = tile_and_take_point_band(band, kRowsPerIteration, &point);
    isl_schedule_node *above = run_passes_for_the_tile(sequence, point, true, unrolled);
    // Back at the position of `node`: the mark, or (serial) the tiled band below its parent.
    return serial ? isl_schedule_node_child(above, 0) : above;
}

} // namespace

void pair_row_passes(PolyModel &m, const ScheduleOptions &options) {
    Context c{&m, &options};
    map_schedule_bottom_up(m, pair_under_mark, &c);
}

} // namespace akg
