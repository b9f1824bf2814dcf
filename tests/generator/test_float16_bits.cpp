// float16_bits_of_constants (the emitter's float16 outputs chosen between constants): the bits it
// stores must be those of the conversion it replaces (akg_f32_to_f16, itself bit-identical to
// vcvtps2ph: tests/vmath), for every float16 value, every midpoint between two of them and the
// floats next to those midpoints (round to nearest even), and random floats.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "akg_vmath.h"
#include "codegen/float16_bits.h"

namespace {

using namespace Halide::Internal;

// The bits float16_bits_of_constants gives for the float constant `v`, or -1 when it declines.
int bits_of(float v) {
    Halide::Expr e = akg::float16_bits_of_constants(FloatImm::make(Halide::Float(32), v));
    if (!e.defined()) return -1;
    const uint64_t *u = as_const_uint(e);
    EXPECT_TRUE(u && e.type() == Halide::UInt(16)) << e;
    return u ? static_cast<int>(*u) : -2;
}

TEST(Float16Bits, ConstantsGetTheBitsOfTheirConversion) {
    std::vector<float> values;
    for (uint32_t h = 0; h < 0x10000; ++h) {
        if ((h & 0x7c00) == 0x7c00) continue; // infinities and NaNs
        const float v = akg_f16_to_f32(static_cast<uint16_t>(h));
        values.push_back(v);
        if ((h & 0x7fff) == 0x7bff) continue; // the largest: no finite half above it
        const float next = akg_f16_to_f32(static_cast<uint16_t>(h + 1)), mid = (v + next) / 2; // exact
        values.insert(values.end(), {mid, std::nextafter(mid, -INFINITY), std::nextafter(mid, INFINITY)});
    }
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> any(-65504.0f, 65504.0f);
    for (int k = 0; k < 200000; ++k) values.push_back(any(rng));
    values.insert(values.end(), {0x1p-25f, -0x1p-25f, 0x1p-26f, 0x1p-30f, 1e-10f, -0.0f});
    for (float v : values) {
        if (std::fabs(v) > 65504.0f) continue;
        ASSERT_EQ(bits_of(v), akg_f32_to_f16(v)) << "constant " << v;
    }
}

TEST(Float16Bits, ComputedValuesAndUnrepresentableConstantsKeepTheConversion) {
    EXPECT_EQ(bits_of(NAN), -1);
    EXPECT_EQ(bits_of(INFINITY), -1);
    EXPECT_EQ(bits_of(-INFINITY), -1);
    EXPECT_EQ(bits_of(65520.0f), -1); // overflows to infinity
    Halide::Expr x = Variable::make(Halide::Float(32), "x"), keep = Variable::make(Halide::Bool(), "keep");
    EXPECT_FALSE(akg::float16_bits_of_constants(x).defined());
    EXPECT_FALSE(akg::float16_bits_of_constants(Select::make(keep, x, Halide::Expr(0.0f))).defined());
    EXPECT_FALSE(akg::float16_bits_of_constants(x * 2.0f).defined());
}

TEST(Float16Bits, SelectsAndBoolsChooseBits) {
    Halide::Expr keep = Variable::make(Halide::Bool(), "keep"), other = Variable::make(Halide::Bool(), "other");
    Halide::Expr mask = akg::float16_bits_of_constants(Select::make(keep, Halide::Expr(1.0f), Halide::Expr(0.0f)));
    ASSERT_TRUE(mask.defined());
    const Select *s = mask.as<Select>();
    ASSERT_TRUE(s && s->type == Halide::UInt(16)) << mask;
    EXPECT_EQ(*as_const_uint(s->true_value), 0x3c00u);
    EXPECT_EQ(*as_const_uint(s->false_value), 0u);
    // Nested selects of constants.
    Halide::Expr three = Select::make(keep, Halide::Expr(-2.0f), Select::make(other, Halide::Expr(0.5f), Halide::Expr(-0.0f)));
    Halide::Expr bits = akg::float16_bits_of_constants(three);
    ASSERT_TRUE(bits.defined());
    const Select *inner = bits.as<Select>()->false_value.as<Select>();
    ASSERT_TRUE(inner);
    EXPECT_EQ(*as_const_uint(bits.as<Select>()->true_value), 0xc000u);
    EXPECT_EQ(*as_const_uint(inner->true_value), 0x3800u);
    EXPECT_EQ(*as_const_uint(inner->false_value), 0x8000u);
    // A bool cast to float: 1 or 0.
    Halide::Expr cast = akg::float16_bits_of_constants(Cast::make(Halide::Float(32), keep));
    ASSERT_TRUE(cast.defined() && cast.as<Select>());
    EXPECT_EQ(*as_const_uint(cast.as<Select>()->true_value), 0x3c00u);
}

} // namespace
