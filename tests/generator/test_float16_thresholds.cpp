// compare-float16: `round16(x) OP c` rewritten as `x OP' threshold` must agree with rounding
// then comparing, for every x near the threshold and the constant, specials and random floats.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "passes/compare_rounded_float16.h"

namespace {

float round16(float x) { return static_cast<float>(static_cast<double>(Halide::float16_t(static_cast<double>(x)))); }

bool apply(const std::string &op, float a, float b) {
    if (op == "akg_flt") return a < b;
    if (op == "akg_fle") return a <= b;
    if (op == "akg_fgt") return a > b;
    return a >= b;
}

float from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}
uint32_t to_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

TEST(Float16Thresholds, AgreeWithRoundingThenComparing) {
    const float constants[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.899902344f, 65504.0f, -65504.0f, 0x1p-24f, -0x1p-24f, 0x1p-14f,
                               -0x1p-14f, 0.5f, 1000.0f, -0.333251953f, 2.0f, 3.0f, 2049.0f};
    std::mt19937 rng(7);
    std::uniform_int_distribution<uint32_t> any;
    int rewritten = 0;
    for (const char *op : {"akg_flt", "akg_fle", "akg_fgt", "akg_fge"})
        for (float c : constants) {
            auto t = akg::float16_threshold(op, c);
            if (!t) continue;
            ++rewritten;
            std::vector<float> xs = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 65520.0f, -65520.0f, 65519.996f, -65519.996f};
            for (float centre : {t->threshold, c})
                for (int32_t d = -64; d <= 64; ++d) xs.push_back(from_bits(to_bits(centre) + static_cast<uint32_t>(d)));
            for (int k = 0; k < 20000; ++k) xs.push_back(from_bits(any(rng)));
            for (float x : xs)
                ASSERT_EQ(apply(op, round16(x), c), apply(t->compare, x, t->threshold))
                    << op << " c=" << c << " x=" << x << " threshold " << t->compare << " " << t->threshold;
        }
    EXPECT_GE(rewritten, 60); // all but < -65504 and > 65504
}

TEST(Float16Thresholds, OnlyFiniteFloat16Constants) {
    EXPECT_FALSE(akg::float16_threshold("akg_fle", 0.9f)); // not a float16 value
    EXPECT_FALSE(akg::float16_threshold("akg_fle", INFINITY));
    EXPECT_FALSE(akg::float16_threshold("akg_fle", NAN));
    EXPECT_FALSE(akg::float16_threshold("akg_fgt", 65504.0f));
    EXPECT_FALSE(akg::float16_threshold("akg_flt", -65504.0f));
}

} // namespace
