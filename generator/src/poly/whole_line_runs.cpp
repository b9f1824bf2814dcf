#include "poly/whole_line_runs.h"

#include "poly/schedule_transforms.h"
#include "poly/stream_outputs.h"

#include <numeric>

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/schedule_node.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

namespace akg {

namespace {

// A block of runs stays a small staging array (16 KiB of floats per tensor).
constexpr int64_t kMaxBlockElements = 4096;
// Enough iterations left that every thread still gets several.
constexpr int64_t kMinIterationsPerThreadAfterBlocking = 16;

// The elements of output `b` one iteration of the band under `mark` (kept) writes, when they
// are one contiguous run within the tensor, every element of which the iteration writes, and
// the kernel writes `b` nowhere else; 0 otherwise.
int64_t run_written(const PolyModel &m, const BufferInfo &b, isl_schedule_node *mark) {
    ParallelIteration iteration(mark);
    isl_union_map *writes = accesses_to_buffer(m.writes.get(), b);
    isl_union_set *writers = isl_union_map_domain(isl_union_map_copy(writes));
    bool all_here = isl_union_set_is_subset(writers, iteration.subtree) == isl_bool_true && isl_union_set_is_empty(writers) != isl_bool_true;
    isl_union_set_free(writers);
    if (!all_here) {
        isl_union_map_free(writes);
        return 0;
    }
    FootprintBox box;
    bool ok = footprint_box(isl_union_map_apply_range(isl_union_map_reverse(isl_union_map_copy(iteration.prefix)), writes), b, box) &&
              contiguous_within_tensor(box.offset, box.extent, b, isl_map_domain(isl_map_copy(box.footprint))) && box_is_footprint(box, b);
    return ok ? element_count(box.extent) : 0;
}

// The runs of `run` elements of `b` that make whole cache lines, and at least
// kMinStreamedRunBytes (what stage-float16 streams).
int64_t runs_per_block(const BufferInfo &b, int64_t run, int64_t line) {
    int64_t bytes = run * dtype_bytes(b.dtype);
    int64_t runs = line / std::gcd(bytes, line);
    while (runs * bytes < kMinStreamedRunBytes) runs *= 2;
    return runs;
}

struct Context {
    const PolyModel *model;
    int64_t line; // ScheduleOptions::cache_line_bytes
    int64_t threads;
};

isl_schedule_node *block_under_mark(isl_schedule_node *node, void *user) {
    const Context &c = *static_cast<const Context *>(user);
    const PolyModel &m = *c.model;
    if (!mark_as<mark::Parallel>(node)) return node;
    isl_schedule_node *band = isl_schedule_node_child(isl_schedule_node_copy(node), 0);
    int n = isl_schedule_node_get_type(band) == isl_schedule_node_band ? isl_schedule_node_band_n_member(band) : 0;
    bool coincident = n > 0;
    for (int k = 0; k < n; ++k) coincident &= isl_schedule_node_band_member_get_coincident(band, k) == isl_bool_true;
    // The runs per iteration of every output streamed when staged that the band writes.
    std::vector<std::pair<const BufferInfo *, int64_t>> runs;
    int64_t block = 1;
    for (const auto &b : m.buffers) {
        if (!coincident || !b.streamed_when_staged) continue;
        int64_t run = run_written(m, b, node);
        if (run == 0 || (run * dtype_bytes(b.dtype)) % c.line == 0) continue;
        runs.emplace_back(&b, run);
        block = std::lcm(block, runs_per_block(b, run, c.line));
    }
    int64_t extent = n > 0 ? member_extent(band, n - 1) : 0, iterations = extent;
    for (int k = 0; k + 1 < n; ++k) iterations *= member_extent(band, k);
    bool apply = !runs.empty() && block > 1 && extent > 0 && extent % block == 0 && iterations / block >= kMinIterationsPerThreadAfterBlocking * c.threads;
    for (const auto &[b, run] : runs) apply &= run * block <= kMaxBlockElements;
    if (!apply) {
        isl_schedule_node_free(band);
        return node;
    }
    // Strip-mine the innermost member: the tile loop stays parallel, the point loop runs the
    // block's iterations in their old order inside the body.
    isl_multi_union_pw_aff *point = nullptr;
    isl_schedule_node *body = tile_and_take_point_band(band, block, &point);
    isl_schedule_node *blocked = isl_schedule_node_parent(isl_schedule_node_parent(insert_point_band(body, point)));
    isl_multi_union_pw_aff_free(point);
    // Keep it only where each iteration now writes one run of whole lines of every such output
    // (the next iteration's run must follow the last one's).
    bool whole = true;
    for (const auto &[b, run] : runs) whole &= run_written(m, *b, blocked) == run * block;
    if (!whole) {
        isl_schedule_node_free(blocked);
        return node;
    }
    isl_schedule_node_free(node);
    return blocked;
}

} // namespace

void give_iterations_whole_lines(PolyModel &m, const ScheduleOptions &options) {
    Context c{&m, options.cache_line_bytes, options.threads};
    map_schedule_bottom_up(m, block_under_mark, &c);
}

} // namespace akg
