#include "poly/pair_row_passes.h"

#include "poly/group_short_rows.h"
#include "poly/order_band_members.h"
#include "poly/schedule_transforms.h"

#include <algorithm>

#include <isl/aff.h>
#include <isl/schedule_node.h>
#include <isl/union_set.h>

namespace akg {

namespace {

constexpr int64_t kRowsPerIteration = 2;
// Longer rows keep the core busy on their own (a log-softmax over 21128 columns).
constexpr int64_t kMaxRowBytes = 16 * 1024;
// Enough iterations left that every thread still gets several (two threads assumed).
constexpr int64_t kMinIterationsAfterPairing = 16;

bool has_reduction(const PolyModel &m, isl_schedule_node *band) {
    isl_union_set *domain = isl_schedule_node_get_domain(band);
    bool found = false;
    for (const auto &st : m.statements) {
        if (st.role != StatementRole::ReduceUpdate) continue;
        isl_union_set *mine = isl_union_set_from_set(isl_set_universe(st.space(isl_union_set_get_ctx(domain))));
        mine = isl_union_set_intersect(mine, isl_union_set_copy(domain));
        found |= isl_union_set_is_empty(mine) != isl_bool_true;
        isl_union_set_free(mine);
    }
    isl_union_set_free(domain);
    return found;
}

// The kernel inputs whose reads move with the band's one member (rows read per iteration; a
// bias or gamma every iteration shares does not count).
int row_inputs(const PolyModel &m, isl_schedule_node *band) {
    int n = 0;
    for (const auto &b : m.buffers) {
        if (b.kind != BufferKind::KernelInput) continue;
        isl::union_map reads = isl::manage(accesses_to_buffer(m.reads.get(), b));
        if (reads.is_empty()) continue;
        std::vector<int64_t> strides = member_strides(m, band, &reads);
        n += !strides.empty() && strides[0] != 0;
    }
    return n;
}

isl_schedule_node *pair_under_mark(isl_schedule_node *node, void *user) {
    PolyModel &m = *static_cast<PolyModel *>(user);
    isl_schedule_node *band = one_dimensional_parallel_band(node);
    if (!band) return node;
    std::vector<int64_t> strides = member_strides(m, band);
    int64_t row_bytes = strides.empty() ? 0 : strides[0] * largest_element_bytes(m);
    isl_schedule_node *body = isl_schedule_node_get_child(band, 0);
    bool passes = isl_schedule_node_get_type(body) == isl_schedule_node_sequence;
    isl_schedule_node_free(body);
    // One row input: the passes are light (a LayerNorm), and their reduction chains set the pace.
    // Kernels that read several row tensors per element have enough independent work per row:
    // paired, bias + dropout + residual + LayerNorm f16 ran 1.2x slower, its f32 version and the
    // LayerNorm backward as before.
    bool apply = passes && row_bytes > 0 && row_bytes <= kMaxRowBytes && has_reduction(m, band) && row_inputs(m, band) == 1 &&
                 member_extent(band, 0) >= kRowsPerIteration * kMinIterationsAfterPairing && !groups_short_rows(m, band);
    if (!apply) {
        isl_schedule_node_free(band);
        return node;
    }
    isl_schedule_node_free(node);
    isl_multi_union_pw_aff *point = nullptr;
    isl_schedule_node *sequence = tile_and_take_point_band(band, kRowsPerIteration, &point);
    return run_passes_for_the_tile(sequence, point);
}

} // namespace

void pair_row_passes(PolyModel &m) {
    map_schedule_bottom_up(m, pair_under_mark, &m);
}

} // namespace akg
