// Pool2D and GlobalPool2D (docs/OPS.md): max or average pooling over H and W of a rank-4 NCHW or
// NHWC tensor. Max takes the window's elements inside the input (padding never wins; NaN
// propagates; a window wholly in the padding gives -inf); avg divides the sum of those elements
// by kh * kw (padding counts as zeros, TVM topi's count_include_pad). Global pooling (attr
// `global`, or GlobalPool2D) is the max or mean over all of H and W, keeping them as size 1.
#include <algorithm>
#include <cmath>
#include <limits>

#include "dtype.h"
#include "ops.h"

namespace akg::reference {
namespace {

struct PoolParams {
  bool max = true;
  bool nhwc = false;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1;
  int64_t top = 0, bottom = 0, left = 0, right = 0;
};

// [a, b] from an attr holding one int (both) or two.
void pair_attr(const OpCall &call, const std::string &name, int64_t *a, int64_t *b) {
  const std::vector<int64_t> v = call.int_list_attr(name);
  if (v.size() == 1) {
    *a = *b = v[0];
  } else if (v.size() == 2) {
    *a = v[0];
    *b = v[1];
  } else {
    call.fail("attr '" + name + "' must hold 2 ints, got " + call.attr(name)->dump());
  }
}

void read_type_and_layout(const OpCall &call, PoolParams *p) {
  const std::string type = call.string_attr("pool_type", "");
  if (type != "max" && type != "avg") call.fail("attr 'pool_type' must be \"max\" or \"avg\", got \"" + type + "\"");
  p->max = type == "max";
  const std::string layout = call.string_attr("data_layout", "NCHW");
  if (layout != "NCHW" && layout != "NHWC") {
    call.fail("attr 'data_layout' must be \"NCHW\" or \"NHWC\", got \"" + layout + "\"");
  }
  p->nhwc = layout == "NHWC";
}

Tensor pool(const OpCall &call, bool global_op) {
  call.expect_inputs(1);
  const Tensor &x = call.in(0);
  if (x.shape.size() != 4) call.fail("input must have rank 4, got " + shape_to_string(x.shape));
  PoolParams p;
  read_type_and_layout(call, &p);
  const bool global = global_op || call.bool_attr("global", false);
  const int64_t n = x.shape[0];
  const int64_t c = p.nhwc ? x.shape[3] : x.shape[1];
  const int64_t h = p.nhwc ? x.shape[1] : x.shape[2];
  const int64_t w = p.nhwc ? x.shape[2] : x.shape[3];
  int64_t oh = 1, ow = 1;
  if (global) {
    p.kh = h;
    p.kw = w;
  } else {
    pair_attr(call, "kernel_size", &p.kh, &p.kw);
    pair_attr(call, "strides", &p.sh, &p.sw);
    if (p.kh <= 0 || p.kw <= 0) call.fail("kernel_size must be positive");
    if (p.sh <= 0 || p.sw <= 0) call.fail("strides must be positive");
    if (call.attr("pad") != nullptr) {
      const std::vector<int64_t> pad = call.int_list_attr("pad");
      if (pad.size() != 4) call.fail("attr 'pad' must hold 4 ints [top, bottom, left, right]");
      for (int64_t e : pad) {
        if (e < 0) call.fail("attr 'pad' must not be negative");
      }
      p.top = pad[0], p.bottom = pad[1], p.left = pad[2], p.right = pad[3];
    }
    const int64_t round_mode = call.int_attr("round_mode", 0);
    if (round_mode != 0 && round_mode != 1) call.fail("attr 'round_mode' must be 0 (floor) or 1 (ceil)");
    auto extent = [&](int64_t size, int64_t k, int64_t s, int64_t pads) {
      const int64_t span = size + pads - k;
      if (span < 0) return int64_t{0};
      return (round_mode == 1 ? (span + s - 1) / s : span / s) + 1;
    };
    oh = extent(h, p.kh, p.sh, p.top + p.bottom);
    ow = extent(w, p.kw, p.sw, p.left + p.right);
    if (oh <= 0 || ow <= 0) call.fail("the window is larger than the padded input");
  }

  const Shape out_shape = p.nhwc ? Shape{n, oh, ow, c} : Shape{n, c, oh, ow};
  // Element (b, ch, y, x) of a tensor of this layout with spatial extents (hh, ww).
  auto at = [&](int64_t b, int64_t ch, int64_t y, int64_t xx, int64_t hh, int64_t ww) {
    return p.nhwc ? ((b * hh + y) * ww + xx) * c + ch : ((b * c + ch) * hh + y) * ww + xx;
  };
  const double divisor = static_cast<double>(p.kh * p.kw);
  Tensor r{out_shape, call.out_dtype, std::vector<double>(static_cast<size_t>(element_count(out_shape)))};
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          const int64_t y0 = oy * p.sh - p.top, x0 = ox * p.sw - p.left;
          double acc = p.max ? -std::numeric_limits<double>::infinity() : 0.0;
          for (int64_t y = std::max<int64_t>(y0, 0); y < std::min(y0 + p.kh, h); ++y) {
            for (int64_t xx = std::max<int64_t>(x0, 0); xx < std::min(x0 + p.kw, w); ++xx) {
              const double v = x.data[at(b, ch, y, xx, h, w)];
              if (!p.max) {
                acc += v;
              } else if (std::isnan(v) || v > acc) {
                acc = std::isnan(acc) ? acc : v;
              }
            }
          }
          r.data[at(b, ch, oy, ox, oh, ow)] = p.max ? acc : acc / divisor;
        }
      }
    }
  }
  const DtypeInfo info(call.out_dtype);
  if (info.cls() != DtypeClass::Float) {
    for (double &v : r.data) v = info.convert(v);
  }
  return r;
}

}  // namespace

void add_pool_ops(OpTable *table) {
  (*table)["Pool2D"] = [](const OpCall &call) { return pool(call, false); };
  (*table)["GlobalPool2D"] = [](const OpCall &call) { return pool(call, true); };
}

}  // namespace akg::reference
