#include "frontend/strided_slice.h"

namespace akg {

namespace {

int64_t mask_attr(const CompositeKernel &kernel, const OpDesc &op, const char *name) {
    auto v = attr_int_list(kernel, op, name, false);
    if (v.size() > 1) op_error(kernel, op, std::string("attribute \"") + name + "\" must be an integer");
    return v.empty() ? 0 : v[0];
}

int64_t ceil_div(int64_t a, int64_t b) { return a / b + ((a % b != 0) && ((a < 0) == (b < 0)) ? 1 : 0); }

} // namespace

SlicePlan strided_slice_plan(const CompositeKernel &kernel, const OpDesc &op, const Shape &in) {
    auto begin = attr_int_list(kernel, op, "begin", true);
    auto end = attr_int_list(kernel, op, "end", true);
    auto strides = attr_int_list(kernel, op, "strides", false);
    if (strides.empty()) strides.assign(begin.size(), 1);
    if (end.size() != begin.size() || strides.size() != begin.size())
        op_error(kernel, op, "begin, end and strides must have the same length");
    const int64_t begin_mask = mask_attr(kernel, op, "begin_mask"), end_mask = mask_attr(kernel, op, "end_mask");
    const int64_t ellipsis_mask = mask_attr(kernel, op, "ellipsis_mask"), new_axis_mask = mask_attr(kernel, op, "new_axis_mask");
    const int64_t shrink_mask = mask_attr(kernel, op, "shrink_axis_mask");
    const int entries = static_cast<int>(begin.size()), rank = static_cast<int>(in.size());
    auto bit = [](int64_t mask, int k) { return k < 63 && ((mask >> k) & 1) != 0; };

    int named = 0, ellipses = 0;
    for (int k = 0; k < entries; ++k) {
        if (bit(ellipsis_mask, k)) ++ellipses;
        else if (!bit(new_axis_mask, k)) ++named;
    }
    if (ellipses > 1) op_error(kernel, op, "ellipsis_mask has more than one bit set");
    if (named > rank) op_error(kernel, op, "the slice names " + std::to_string(named) + " dimensions of a rank-" + std::to_string(rank) + " input");

    SlicePlan plan;
    int d = 0;
    auto whole = [&](int dim) {
        plan.out_dims.push_back({dim, 0, 1});
        plan.out_shape.push_back(in[dim]);
    };
    for (int k = 0; k < entries; ++k) {
        if (bit(ellipsis_mask, k)) {
            for (int n = 0; n < rank - named; ++n) whole(d++);
            continue;
        }
        if (bit(new_axis_mask, k)) {
            plan.out_dims.push_back({-1, 0, 1});
            plan.out_shape.push_back(1);
            continue;
        }
        const int64_t n = in[d], s = strides[k];
        if (s == 0) op_error(kernel, op, "strides[" + std::to_string(k) + "] is 0");
        if (bit(shrink_mask, k)) {
            int64_t i = begin[k] < 0 ? begin[k] + n : begin[k];
            if (i < 0 || i >= n)
                op_error(kernel, op, "begin[" + std::to_string(k) + "] = " + std::to_string(begin[k]) + " is out of range for a dimension of " +
                                         std::to_string(n) + " that shrink_axis_mask removes");
            plan.fixed.push_back({d++, i});
            continue;
        }
        int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? n : n - 1;
        auto resolve = [&](int64_t v) { return std::min(std::max(v < 0 ? v + n : v, lo), hi); };
        int64_t b = bit(begin_mask, k) ? (s > 0 ? 0 : n - 1) : resolve(begin[k]);
        int64_t e = bit(end_mask, k) ? (s > 0 ? n : -1) : resolve(end[k]);
        int64_t len = std::max<int64_t>(0, ceil_div(e - b, s));
        plan.out_dims.push_back({d++, b, s});
        plan.out_shape.push_back(len);
    }
    while (d < rank) whole(d++);
    return plan;
}

} // namespace akg
