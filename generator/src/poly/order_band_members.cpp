#include "poly/order_band_members.h"

#include "poly/schedule_transforms.h"
#include "poly/stream_outputs.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>

namespace akg {

namespace {

// An output dimension this short is unrolled in the vector loop of the input's contiguous one.
constexpr long kShortOutputExtent = 8;

// The single affine piece of a pw_aff, or null.
isl_aff *single_aff(isl_pw_aff *pa) {
    isl_aff *out = nullptr;
    if (isl_pw_aff_n_piece(pa) == 1)
        isl_pw_aff_foreach_piece(
            pa,
            [](isl_set *set, isl_aff *aff, void *user) -> isl_stat {
                isl_set_free(set);
                *static_cast<isl_aff **>(user) = aff;
                return isl_stat_ok;
            },
            &out);
    isl_pw_aff_free(pa);
    return out;
}

int64_t coefficient(isl_aff *aff, int dim) {
    isl_val *v = isl_aff_get_coefficient_val(aff, isl_dim_in, dim);
    int64_t c = isl_val_is_int(v) ? isl_val_get_num_si(v) : 0;
    isl_val_free(v);
    return c;
}

// The row-major address (in elements) of the largest buffer that the statements in `domain`
// access, as an affine function of the loop variables of one of those statements (null when
// not affine); `statement` receives that statement's space.
// `among`: the accesses to consider (reads and writes by default, or writes only).
// `prefer_written`: of buffers of the same size, one that is written wins (else the first).
isl_aff *largest_access_address(const PolyModel &m, isl_union_set *domain, isl_space **statement, const isl::union_map *among = nullptr, bool prefer_written = false) {
    *statement = nullptr;
    isl_union_map *accesses = isl_union_map_intersect_domain(among ? among->copy() : m.reads.unite(m.writes).release(), domain);
    // Whether a buffer is written matters only to break ties in favour of written buffers.
    isl_union_map *writes =
        prefer_written ? isl_union_map_intersect_domain(m.writes.copy(), isl_union_map_domain(isl_union_map_copy(accesses))) : nullptr;
    const BufferInfo *largest = nullptr;
    bool largest_written = false;
    for (const auto &b : m.buffers) {
        if (b.shape.empty() || (largest && element_count(b.shape) < element_count(largest->shape))) continue;
        bool tie = largest && element_count(b.shape) == element_count(largest->shape);
        if (tie && (!prefer_written || largest_written)) continue;
        isl_union_map *mine = accesses_to_buffer(accesses, b);
        bool accessed = isl_union_map_is_empty(mine) != isl_bool_true;
        isl_union_map_free(mine);
        if (!accessed) continue;
        bool is_written = false;
        if (writes) {
            isl_union_map *written = accesses_to_buffer(writes, b);
            is_written = isl_union_map_is_empty(written) != isl_bool_true;
            isl_union_map_free(written);
        }
        if (tie && !is_written) continue;
        largest = &b;
        largest_written = is_written;
    }
    isl_union_map_free(writes);
    if (!largest) {
        isl_union_map_free(accesses);
        return nullptr;
    }
    isl_map *linear = row_major_offsets(isl_union_map_get_ctx(accesses), *largest);
    isl_union_map *address = isl_union_map_apply_range(accesses, isl_union_map_from_map(linear));
    isl_map_list *list = isl_union_map_get_map_list(address);
    isl_map *first = isl_map_list_size(list) > 0 ? isl_map_list_get_at(list, 0) : nullptr;
    isl_map_list_free(list);
    isl_union_map_free(address);
    if (!first) return nullptr;
    *statement = isl_space_domain(isl_map_get_space(first));
    isl_pw_multi_aff *pma = isl_pw_multi_aff_from_map(first);
    isl_aff *addr = single_aff(isl_pw_multi_aff_get_pw_aff(pma, 0));
    isl_pw_multi_aff_free(pma);
    return addr;
}

// The loop variable that a one-dimensional schedule function of `statement` follows (an input
// dimension with coefficient ±1, nothing else), or -1.
int followed_variable(isl_union_pw_aff *upa, isl_space *statement) {
    isl_space *space = isl_space_add_dims(isl_space_from_domain(isl_space_copy(statement)), isl_dim_out, 1);
    isl_aff *member = single_aff(isl_union_pw_aff_extract_pw_aff(upa, space));
    isl_union_pw_aff_free(upa);
    if (!member) return -1;
    int dims = isl_aff_dim(member, isl_dim_in), var = -1, uses = 0;
    for (int k = 0; k < dims; ++k)
        if (coefficient(member, k) != 0) var = k, ++uses;
    bool unit = uses == 1 && std::abs(coefficient(member, var)) == 1;
    isl_aff_free(member);
    return unit ? var : -1;
}

struct OrderContext {
    const PolyModel &m;
    bool outputs_streamed; // stream-outputs will write the kernel's outputs around the cache
};

isl_schedule_node *order_members(isl_schedule_node *node, void *user) {
    const OrderContext &ctx = *static_cast<const OrderContext *>(user);
    const PolyModel &m = ctx.m;
    if (isl_schedule_node_get_type(node) != isl_schedule_node_band || !is_outermost_band(node)) return node;
    int n = isl_schedule_node_band_n_member(node);
    if (n < 2 || isl_schedule_node_band_get_permutable(node) != isl_bool_true) return node;
    for (int j = 0; j < n; ++j)
        if (isl_schedule_node_band_member_get_coincident(node, j) != isl_bool_true) return node;
    std::vector<int64_t> strides = member_strides(m, node);
    // A copy that moves whole rows (attention heads split out of [tokens, hidden] or merged
    // back) reads and writes tensors of the same size with the same unit-stride member; the
    // order above follows the input (the first of the largest buffers). Each other member is
    // ordered by the larger of its two strides instead, so that the inner one jumps the least
    // in either tensor: splitting heads then runs head-outer, writing in order and reading rows
    // 768 elements apart, rather than token-outer with twelve output streams 8192 elements
    // apart (1.1-1.5x). Kernels whose outputs stream-outputs will write around the cache (whole
    // lines in any order) keep the input's order: their reads are what a stride slows down.
    if (!ctx.outputs_streamed) {
        std::vector<int64_t> output_first = member_strides(m, node, nullptr, true);
        auto unit_member = [](const std::vector<int64_t> &s) { return std::find(s.begin(), s.end(), 1) - s.begin(); };
        if (output_first != strides && unit_member(output_first) == unit_member(strides))
            for (int j = 0; j < n; ++j) strides[j] = std::max(strides[j], output_first[j]);
    }
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return strides[a] > strides[b]; });
    // A transposing copy whose output's contiguous dimension is short (NCHW -> NHWC with 3
    // channels): that member goes innermost, below the input's contiguous one, so that each
    // vector iteration reads contiguous inputs and writes whole groups of adjacent outputs
    // (vectorize unrolls it) rather than storing every element with a stride.
    if (!has_band_below(node)) {
        std::vector<int64_t> written = member_strides(m, node, &m.writes);
        for (int j = 0; j < n; ++j)
            if (written[order[j]] == 1 && j != n - 1 && strides[order[n - 1]] == 1 && member_extent(node, order[j]) <= kShortOutputExtent) {
                int moved = order[j];
                order.erase(order.begin() + j);
                order.push_back(moved);
                break;
            }
    }
    if (std::is_sorted(order.begin(), order.end())) return node;
    isl_multi_union_pw_aff *partial = isl_schedule_node_band_get_partial_schedule(node);
    isl_multi_union_pw_aff *ordered = isl_multi_union_pw_aff_copy(partial);
    for (int j = 0; j < n; ++j) ordered = isl_multi_union_pw_aff_set_at(ordered, j, isl_multi_union_pw_aff_get_at(partial, order[j]));
    isl_multi_union_pw_aff_free(partial);
    node = isl_schedule_node_delete(node);
    node = isl_schedule_node_insert_partial_schedule(node, ordered);
    node = isl_schedule_node_band_set_permutable(node, 1);
    for (int j = 0; j < n; ++j) node = isl_schedule_node_band_member_set_coincident(node, j, 1);
    return node;
}

} // namespace

std::vector<int64_t> member_strides(const PolyModel &m, isl_schedule_node *band, const isl::union_map *among, bool prefer_written) {
    int n = isl_schedule_node_band_n_member(band);
    std::vector<int64_t> strides(n, 0);
    isl_space *statement = nullptr;
    isl_aff *addr = largest_access_address(m, isl_schedule_node_get_domain(band), &statement, among, prefer_written);
    isl_multi_union_pw_aff *partial = isl_schedule_node_band_get_partial_schedule(band);
    for (int j = 0; addr && j < n; ++j) {
        int var = followed_variable(isl_multi_union_pw_aff_get_at(partial, j), statement);
        if (var >= 0) strides[j] = std::abs(coefficient(addr, var));
    }
    isl_multi_union_pw_aff_free(partial);
    isl_aff_free(addr);
    isl_space_free(statement);
    return strides;
}

void order_band_members(PolyModel &m, const ScheduleOptions &options) {
    OrderContext ctx{m, kernel_footprint_bytes(m) > options.stream_outputs_above_bytes};
    map_schedule_bottom_up(m, order_members, &ctx);
}

int64_t sequential_contiguous_loops(const PolyModel &m) {
    struct Ctx {
        const PolyModel *m;
        int64_t count = 0;
    } ctx{&m};
    isl_schedule_node *root = isl_schedule_get_root(m.schedule.get());
    isl_schedule_node_foreach_descendant_top_down(
        root,
        [](isl_schedule_node *node, void *user) -> isl_bool {
            auto &c = *static_cast<Ctx *>(user);
            if (isl_schedule_node_get_type(node) != isl_schedule_node_band) return isl_bool_true;
            int n = isl_schedule_node_band_n_member(node);
            isl_union_set *domain = isl_schedule_node_get_domain(node);
            isl_multi_union_pw_aff *partial = isl_schedule_node_band_get_partial_schedule(node);
            for (const auto &st : c.m->statements) {
                if (st.role != StatementRole::Assign) continue;
                isl_set *own = isl_union_set_extract_set(domain, st.space(c.m->ctx.get()));
                bool present = isl_set_is_empty(own) != isl_bool_true;
                if (!present) {
                    isl_set_free(own);
                    continue;
                }
                isl_space *statement = nullptr;
                isl_aff *addr = largest_access_address(*c.m, isl_union_set_from_set(own), &statement);
                for (int j = 0; addr && j < n; ++j) {
                    if (isl_schedule_node_band_member_get_coincident(node, j) == isl_bool_true) continue;
                    int var = followed_variable(isl_multi_union_pw_aff_get_at(partial, j), statement);
                    if (var >= 0 && std::abs(coefficient(addr, var)) == 1) ++c.count;
                }
                isl_aff_free(addr);
                isl_space_free(statement);
            }
            isl_multi_union_pw_aff_free(partial);
            isl_union_set_free(domain);
            return isl_bool_true;
        },
        &ctx);
    isl_schedule_node_free(root);
    return ctx.count;
}

int64_t loop_order_inversions(const PolyModel &m) {
    // The statement with the most iterations.
    const PolyStatement *main = nullptr;
    int64_t most = -1;
    for (const auto &st : m.statements) {
        int64_t n = st.iterations();
        if (n > most) most = n, main = &st;
    }
    if (!main) return 0;
    isl_union_set *domain = isl_union_set_from_set(isl_union_set_extract_set(m.domain.get(), main->space(m.ctx.get())));
    isl_space *statement = nullptr;
    isl_aff *addr = largest_access_address(m, isl_union_set_copy(domain), &statement);
    if (!addr) {
        isl_union_set_free(domain);
        isl_space_free(statement);
        return 0;
    }
    // Its schedule, outermost first: the stride of each dimension that follows a loop variable.
    isl_union_map *schedule = isl_union_map_intersect_domain(isl_schedule_get_map(m.schedule.get()), domain);
    isl_map *map = isl_map_from_union_map(schedule);
    isl_multi_pw_aff *mpa = isl_multi_pw_aff_from_pw_multi_aff(isl_pw_multi_aff_from_map(map));
    std::vector<int64_t> strides;
    for (int j = 0; j < static_cast<int>(isl_multi_pw_aff_size(mpa)); ++j) {
        isl_union_pw_aff *upa = isl_union_pw_aff_from_pw_aff(isl_multi_pw_aff_get_at(mpa, j));
        int var = followed_variable(upa, statement);
        if (var >= 0) strides.push_back(std::abs(coefficient(addr, var)));
    }
    isl_multi_pw_aff_free(mpa);
    isl_aff_free(addr);
    isl_space_free(statement);
    // An outer loop over the contiguous dimension (stride 1) is not counted: sink-columns tiles
    // it and moves its point loop innermost.
    int64_t inversions = 0;
    for (size_t a = 0; a < strides.size(); ++a)
        for (size_t b = a + 1; b < strides.size(); ++b) inversions += strides[a] > 1 && strides[a] < strides[b];
    return inversions;
}

} // namespace akg
