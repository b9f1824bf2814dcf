#include "codegen/float16_bits.h"

#include <cmath>

namespace akg {

using Halide::Expr;
using namespace Halide::Internal;

Expr float16_bits_of_constants(const Expr &value) {
    if (const FloatImm *f = value.as<FloatImm>()) {
        if (!std::isfinite(f->value) || std::fabs(f->value) > 65504.0) return Expr();
        return make_const(Halide::UInt(16), Halide::float16_t(f->value).to_bits());
    }
    if (const Select *s = value.as<Select>()) {
        Expr t = float16_bits_of_constants(s->true_value), f = float16_bits_of_constants(s->false_value);
        if (!t.defined() || !f.defined()) return Expr();
        return Select::make(s->condition, t, f);
    }
    // A bool as a float: 1 or 0.
    if (const Cast *c = value.as<Cast>(); c && c->type.is_float() && c->value.type().is_bool())
        return Select::make(c->value, make_const(Halide::UInt(16), Halide::float16_t(1.0).to_bits()), make_const(Halide::UInt(16), 0));
    return Expr();
}

} // namespace akg
