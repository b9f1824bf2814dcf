#include "passes/compare_rounded_float16.h"

#include <cmath>

namespace akg {

using namespace Halide::Internal;

namespace {

uint16_t bits_of(float v) { return Halide::float16_t(static_cast<double>(v)).to_bits(); }
float value_of(uint16_t b) { return static_cast<float>(static_cast<double>(Halide::float16_t::make_from_bits(b))); }
bool mantissa_even(uint16_t b) { return (b & 1u) == 0; }

// The next float16 above (below) a finite one, in value order; past the largest finite value,
// the value 2^16 that rounding treats as its neighbour (65520 rounds to infinity).
float next_up(uint16_t b) {
    if (b == 0x7bffu) return 65536.0f;
    if (b == 0x8000u) return value_of(0x0001u);
    return value_of((b & 0x8000u) ? static_cast<uint16_t>(b - 1u) : static_cast<uint16_t>(b + 1u));
}
float next_down(uint16_t b) {
    if (b == 0xfbffu) return -65536.0f;
    if (b == 0x0000u) return value_of(0x8001u);
    return value_of((b & 0x8000u) ? static_cast<uint16_t>(b + 1u) : static_cast<uint16_t>(b - 1u));
}
uint16_t bits_up(uint16_t b) { return b == 0x8000u ? 0x0001u : (b & 0x8000u) ? static_cast<uint16_t>(b - 1u) : static_cast<uint16_t>(b + 1u); }
uint16_t bits_down(uint16_t b) { return b == 0x0000u ? 0x8001u : (b & 0x8000u) ? static_cast<uint16_t>(b + 1u) : static_cast<uint16_t>(b - 1u); }

// round16(x) <= c  <=>  x <= m (or x < m), m the midpoint between c and the next float16 up.
Float16Threshold at_most(uint16_t c) {
    float m = (value_of(c) + next_up(c)) * 0.5f; // exact: float16 midpoints are floats
    // A tie goes to the neighbour with the even mantissa (65520, past 65504, to infinity).
    return {mantissa_even(c) ? "akg_fle" : "akg_flt", m};
}
// round16(x) >= c  <=>  x >= m (or x > m), m the midpoint between the next float16 down and c.
Float16Threshold at_least(uint16_t c) {
    float m = (next_down(c) + value_of(c)) * 0.5f;
    return {mantissa_even(c) ? "akg_fge" : "akg_fgt", m};
}

bool is_finite_float16(float c) {
    if (!std::isfinite(c)) return false;
    uint16_t b = bits_of(c);
    return (b & 0x7c00u) != 0x7c00u && value_of(b) == c;
}

const char *mirrored(const std::string &compare) {
    if (compare == "akg_flt") return "akg_fgt";
    if (compare == "akg_fle") return "akg_fge";
    if (compare == "akg_fgt") return "akg_flt";
    return "akg_fle";
}

class Rewrite : public IRMutator {
    using IRMutator::visit;
    Halide::Expr visit(const Call *op) override {
        Halide::Expr e = IRMutator::visit(op);
        const Call *call = e.as<Call>();
        if (!call || call->args.size() != 2) return e;
        std::string compare = call->name;
        if (compare != "akg_flt" && compare != "akg_fle" && compare != "akg_fgt" && compare != "akg_fge") return e;
        Halide::Expr a = call->args[0], b = call->args[1];
        if (a.as<FloatImm>()) { // c OP round16(x)  ->  round16(x) OP' c
            std::swap(a, b);
            compare = mirrored(compare);
        }
        Halide::Expr x = float16_rounded_operand(a);
        const FloatImm *c = b.as<FloatImm>();
        if (!x.defined() || !c) return e;
        auto t = float16_threshold(compare, static_cast<float>(c->value));
        if (!t) return e;
        return Call::make(call->type, t->compare, {x, Halide::Expr(t->threshold)}, call->call_type);
    }
};

} // namespace

std::optional<Float16Threshold> float16_threshold(const std::string &compare, float c) {
    if (!is_finite_float16(c)) return std::nullopt;
    uint16_t b = bits_of(c);
    if (c == 0.0f) b = 0x0000u; // +0 and -0 are the same value: take +0 (its neighbours are the subnormals)
    if (compare == "akg_fle") return at_most(b);
    if (compare == "akg_fge") return at_least(b);
    // round16(x) < c  <=>  round16(x) <= the float16 below c; > likewise.
    if (compare == "akg_flt") return b == 0xfbffu ? std::nullopt : std::optional<Float16Threshold>(at_most(bits_down(b)));
    if (compare == "akg_fgt") return b == 0x7bffu ? std::nullopt : std::optional<Float16Threshold>(at_least(bits_up(b)));
    return std::nullopt;
}

void compare_rounded_float16(TensorGraph &graph) {
    for (auto &s : graph.stages)
        if (s.kind != StageKind::Input && s.value.defined()) s.value = Rewrite().mutate(s.value);
}

} // namespace akg
