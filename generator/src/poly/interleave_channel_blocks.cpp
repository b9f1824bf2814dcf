#include "poly/interleave_channel_blocks.h"

#include "poly/order_band_members.h"
#include "poly/schedule_transforms.h"

#include <algorithm>

#include <isl/aff.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>

namespace akg {

namespace {

// Blocks are kept small enough that every thread gets two (balanced for 1, 2 and 4 threads).
constexpr int64_t kMinBlocksPerThread = 2;

struct Ctx {
    PolyModel *m;
    const ScheduleOptions *options;
};

int64_t largest_stride(const PolyModel &m, isl_schedule_node *band) {
    std::vector<int64_t> strides = member_strides(m, band);
    return strides.empty() ? 0 : *std::max_element(strides.begin(), strides.end());
}

// Whether a band below `node` has a stride larger than `stride` with a band of smaller (known,
// non-zero) stride below it.
bool has_inversion_below(const PolyModel &m, isl_schedule_node *node, int64_t stride, bool larger_seen) {
    bool found = false;
    int n = isl_schedule_node_n_children(node);
    for (int k = 0; k < n && !found; ++k) {
        isl_schedule_node *child = isl_schedule_node_get_child(node, k);
        bool seen = larger_seen;
        if (isl_schedule_node_get_type(child) == isl_schedule_node_band) {
            int64_t s = largest_stride(m, child);
            if (larger_seen && s > 0 && s < stride) found = true;
            if (s > stride) seen = true;
        }
        found = found || has_inversion_below(m, child, stride, seen);
        isl_schedule_node_free(child);
    }
    return found;
}

// Inserts `point` above the first band (top-down) whose stride is below `stride`, or at the
// leaves; returns the node at the same position.
isl_schedule_node *place(const PolyModel &m, isl_schedule_node *node, isl_multi_union_pw_aff *point, int64_t stride) {
    auto insert_here = [&](isl_schedule_node *at) { return insert_point_band(at, point); };
    enum isl_schedule_node_type type = isl_schedule_node_get_type(node);
    if (type == isl_schedule_node_leaf) return insert_here(node);
    if (type == isl_schedule_node_band) {
        int64_t s = largest_stride(m, node);
        if (s > 0 && s < stride) return insert_here(node);
    }
    int n = isl_schedule_node_n_children(node);
    for (int k = 0; k < n; ++k) {
        node = isl_schedule_node_child(node, k);
        node = place(m, node, point, stride);
        node = isl_schedule_node_parent(node);
    }
    return node;
}

isl_schedule_node *interleave_under_mark(isl_schedule_node *node, void *user) {
    auto &c = *static_cast<Ctx *>(user);
    isl_schedule_node *band = parallel_band_below(node);
    if (!band) return node;
    if (isl_schedule_node_band_n_member(band) != 1) {
        isl_schedule_node_free(band);
        return node;
    }
    int64_t stride = largest_stride(*c.m, band);
    bool apply = stride > 1 && has_inversion_below(*c.m, band, stride, false);
    int64_t trips = apply ? member_extent(band, 0) : 0;
    int64_t block = 1;
    while (block * stride * largest_element_bytes(*c.m) < c.options->channel_block_bytes && block * 2 * kMinBlocksPerThread * c.options->threads <= trips) block *= 2;
    if (!apply || block < 2) {
        isl_schedule_node_free(band);
        return node;
    }
    isl_schedule_node_free(node);
    isl_multi_union_pw_aff *partial = nullptr;
    isl_schedule_node *point = tile_and_take_point_band(band, block, &partial);
    point = place(*c.m, point, partial, stride);
    isl_multi_union_pw_aff_free(partial);
    // Back to the mark above the tile loop.
    return isl_schedule_node_parent(isl_schedule_node_parent(point));
}

} // namespace

void interleave_channel_blocks(PolyModel &m, const ScheduleOptions &options) {
    Ctx ctx{&m, &options};
    map_schedule_bottom_up(m, interleave_under_mark, &ctx);
}

} // namespace akg
