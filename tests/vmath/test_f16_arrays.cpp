// The float16 array conversions (akg_f16_to_f32_n, akg_f32_to_f16_n: hardware vcvtph2ps /
// vcvtps2ph where the target has them, masked tails) and the box staging of the generator's
// stage-float16 pass (akg_stage_f16_in/out), against the element functions; and the
// non-temporal store helpers of the stream-outputs pass; the short-row sums of the group-rows pass;
// the tile transposes of the tile-transposes pass.
#include "akg_kernel_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

uint32_t bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

bool same(float a, float b) { return std::isnan(a) ? std::isnan(b) : bits(a) == bits(b); }

TEST(Float16Arrays, EveryHalfWidensLikeTheElementFunction) {
    std::vector<uint16_t> h(65536);
    for (int i = 0; i < 65536; ++i) h[i] = static_cast<uint16_t>(i);
    // Every length up to two vectors and beyond, at several offsets: full vectors and tails.
    for (int offset : {0, 1, 7}) {
        for (int n = 0; n <= 40; ++n) {
            std::vector<float> out(n + 2, 12345.0f);
            akg_f16_to_f32_n(h.data() + 1000 * offset + 31744 - 20, out.data() + 1, n); // around inf/NaN
            for (int i = 0; i < n; ++i) ASSERT_TRUE(same(out[i + 1], akg_f16_to_f32(h[1000 * offset + 31744 - 20 + i]))) << n << " " << i;
            EXPECT_EQ(out[0], 12345.0f);
            EXPECT_EQ(out[n + 1], 12345.0f) << "wrote past the end, n = " << n;
        }
    }
    std::vector<float> all(65536);
    akg_f16_to_f32_n(h.data(), all.data(), 65536);
    for (int i = 0; i < 65536; ++i) ASSERT_TRUE(same(all[i], akg_f16_to_f32(h[i]))) << i;
}

// The block arrays of the generator's float16 staging whose length is no multiple of 16: the
// first n floats as akg_f16_to_f32_n gives them, +0 up to the whole vector, nothing written past
// it; the source, a heap array of exactly n halves, is read for n elements only (a read past it
// shows up under AddressSanitizer, in the sanitized CI run).
TEST(Float16Arrays, PaddedBlocksHoldWholeVectors) {
    for (int n = 0; n <= 40; ++n) {
        std::vector<uint16_t> h(n);
        for (int i = 0; i < n; ++i) h[i] = static_cast<uint16_t>(31744 - 20 + 3 * i); // around inf/NaN
        const int padded = AKG_F16_BLOCK_FLOATS(n);
        ASSERT_EQ(padded % 16, 0);
        ASSERT_GE(padded, n);
        ASSERT_LT(padded, n + 16);
        alignas(64) float out[64];
        std::fill(std::begin(out), std::end(out), 12345.0f);
        akg_f16_to_f32_padded(h.data(), out, n);
        for (int i = 0; i < n; ++i) ASSERT_TRUE(same(out[i], akg_f16_to_f32(h[i]))) << n << " " << i;
        for (int i = n; i < padded; ++i) ASSERT_TRUE(same(out[i], 0.0f)) << n << " " << i;
        for (int i = padded; i < 64; ++i) ASSERT_EQ(out[i], 12345.0f) << "wrote past the vectors, n = " << n;
    }
}

TEST(Float16Arrays, FloatsNarrowLikeTheElementFunction) {
    std::mt19937 rng(7);
    std::vector<float> x;
    for (float s : {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.996f, 65520.0f, 1e10f, 0x1p-25f, 0x1p-24f, 0x1.8p-25f, 0x1p-14f,
                    6.1e-5f, INFINITY, -INFINITY, NAN})
        x.push_back(s);
    std::uniform_int_distribution<uint32_t> any;
    while (x.size() < 100000) {
        float f;
        uint32_t u = any(rng);
        // Mostly the float16 range, where rounding matters.
        if (x.size() % 2) u = (u & 0x807fffffu) | ((100u + u % 50u) << 23);
        std::memcpy(&f, &u, sizeof f);
        x.push_back(f);
    }
    for (int n : {0, 1, 15, 16, 17, 31, 33, 100000}) {
        std::vector<uint16_t> h(n + 1, 0xabcd);
        akg_f32_to_f16_n(x.data(), h.data(), n);
        for (int i = 0; i < n; ++i) {
            uint16_t want = akg_f32_to_f16(x[i]);
            bool nan = (want & 0x7c00) == 0x7c00 && (want & 0x3ff);
            if (nan) ASSERT_TRUE((h[i] & 0x7c00) == 0x7c00 && (h[i] & 0x3ff)) << i;
            else ASSERT_EQ(h[i], want) << "x = " << x[i] << ", n = " << n;
        }
        EXPECT_EQ(h[n], 0xabcd) << "wrote past the end, n = " << n;
    }
}

TEST(Float16Arrays, RoundMatchesTheConversionPair) {
    std::mt19937 rng(11);
    std::uniform_int_distribution<uint32_t> any;
    for (int i = 0; i < 2000000; ++i) {
        uint32_t u = any(rng);
        float f;
        std::memcpy(&f, &u, sizeof f);
        ASSERT_TRUE(same(akg_round_f16(f), akg_f16_to_f32(akg_f32_to_f16(f)))) << f;
    }
    // Every float within 64 ulps of each float16 boundary the rounding treats specially: the
    // subnormal/normal boundary 2^-14, the smallest subnormal 2^-24 and half of it, 2^15 (where
    // the exponent clamp starts), the largest float16 65504, the overflow threshold 65520, inf.
    for (float edge : {0x1p-14f, 0x1p-24f, 0x1p-25f, 0x1p15f, 65504.0f, 65520.0f, 0x1p16f, INFINITY, 0.0f})
        for (int32_t d = -64; d <= 64; ++d)
            for (uint32_t sign : {0u, 0x80000000u}) {
                uint32_t u = (bits(edge) + static_cast<uint32_t>(d)) | sign;
                float f;
                std::memcpy(&f, &u, sizeof f);
                ASSERT_TRUE(same(akg_round_f16(f), akg_f16_to_f32(akg_f32_to_f16(f)))) << std::hex << u;
            }
}

TEST(Float16Arrays, ScalarConversionsMatchTheVectorizableOnes) {
    // akg_*_scalar (F16C instructions, for statements outside loops) against the integer code.
    for (uint32_t h = 0; h < 65536; ++h)
        ASSERT_TRUE(same(akg_f16_to_f32_scalar(static_cast<uint16_t>(h)), akg_f16_to_f32(static_cast<uint16_t>(h)))) << h;
    std::mt19937 rng(5);
    std::uniform_int_distribution<uint32_t> any;
    for (int i = 0; i < 1000000; ++i) {
        uint32_t u = any(rng);
        float f;
        std::memcpy(&f, &u, sizeof f);
        uint16_t want = akg_f32_to_f16(f), got = akg_f32_to_f16_scalar(f);
        bool nan = (want & 0x7c00) == 0x7c00 && (want & 0x3ff);
        if (nan) ASSERT_TRUE((got & 0x7c00) == 0x7c00 && (got & 0x3ff)) << u;
        else ASSERT_EQ(got, want) << u;
        ASSERT_TRUE(same(akg_round_f16_scalar(f), akg_round_f16(f))) << u;
    }
}

// The value of the float16 bits h in [0, 0x7c00] (0x7c00 as 2^16, the step after 65504).
double half_value(uint32_t h) {
    const int e = static_cast<int>(h >> 10), m = static_cast<int>(h & 0x3ff);
    return e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
}
uint32_t nan_widened(uint32_t h) { return ((h & 0x8000u) << 16) | 0x7fc00000u | ((h & 0x3ffu) << 13); }
uint16_t nan_narrowed(uint32_t u) { return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7e00u | ((u >> 13) & 0x3ffu)); }

// Every path of each conversion (the element functions, the array ones with their hardware
// loops and tails: vcvtph2ps / vcvtps2ph on x86, fcvtl / fcvtn on aarch64; the one-instruction
// scalar ones; the streamed narrowing) against an oracle of its own, bit for bit, NaN payloads
// included: a NaN keeps its sign and the top of its payload and comes back quiet.
TEST(Float16Arrays, EveryHalfWidensToItsValueOnEveryPath) {
    std::vector<uint16_t> h(65536 + 1);
    std::vector<uint32_t> want(65536);
    for (uint32_t i = 0; i < 65536; ++i) {
        h[i] = static_cast<uint16_t>(i);
        const uint32_t a = i & 0x7fffu;
        if (a > 0x7c00u) {
            want[i] = nan_widened(i);
        } else {
            const double v = a == 0x7c00u ? static_cast<double>(INFINITY) : half_value(a);
            want[i] = bits(static_cast<float>((i & 0x8000u) ? -v : v));
        }
    }
    for (int offset : {0, 1}) { // the vectors at both alignments of the source
        std::vector<float> out(65536);
        akg_f16_to_f32_n(h.data() + offset, out.data(), 65536 - offset);
        for (uint32_t i = 0; i + offset < 65536; ++i) ASSERT_EQ(bits(out[i]), want[i + offset]) << std::hex << i + offset;
    }
    for (uint32_t i = 0; i < 65536; ++i) {
        ASSERT_EQ(bits(akg_f16_to_f32(h[i])), want[i]) << std::hex << i;
        ASSERT_EQ(bits(akg_f16_to_f32_scalar(h[i])), want[i]) << std::hex << i;
        ASSERT_EQ(bits(akg_vm_detail::f16_to_f32_soft(h[i])), want[i]) << std::hex << i;
    }
}

TEST(Float16Arrays, MidpointsRoundToEvenOnEveryPath) {
    std::vector<float> x;
    std::vector<uint16_t> want;
    auto add = [&](float f, uint32_t h) { x.push_back(f), want.push_back(static_cast<uint16_t>(h)); };
    // Each midpoint between neighbouring halves (65520 between 65504 and inf), and one float ulp
    // either side of it, both signs.
    for (uint32_t h = 0; h < 0x7c00u; ++h) {
        const float mid = static_cast<float>((half_value(h) + half_value(h + 1)) / 2); // exact
        for (uint32_t sign : {0u, 0x8000u}) {
            const float s = sign ? -1.0f : 1.0f;
            add(s * mid, ((h & 1) ? h + 1 : h) | sign);
            add(s * std::nextafter(mid, 0.0f), h | sign);
            add(s * std::nextafter(mid, INFINITY), (h + 1) | sign);
        }
    }
    for (uint32_t u : {0x7f800001u, 0x7fa00000u, 0x7fc00000u, 0x7fffffffu, 0x7f802000u, 0xff800001u, 0xffc02000u, 0xffffe000u}) {
        float f;
        std::memcpy(&f, &u, sizeof f);
        add(f, nan_narrowed(u));
    }
    add(INFINITY, 0x7c00u), add(-INFINITY, 0xfc00u), add(0.0f, 0), add(-0.0f, 0x8000u), add(1e30f, 0x7c00u), add(-1e-30f, 0x8000u);
    const int64_t n = static_cast<int64_t>(x.size());
    for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(akg_f32_to_f16(x[i]), want[i]) << std::hexfloat << x[i];
        ASSERT_EQ(akg_f32_to_f16_scalar(x[i]), want[i]) << std::hexfloat << x[i];
        ASSERT_EQ(akg_vm_detail::f32_to_f16_soft(x[i]), want[i]) << std::hexfloat << x[i];
    }
    for (int64_t offset : {0, 1, 3}) { // whole vectors and every tail length
        std::vector<uint16_t> out(x.size()), streamed(x.size() + 32);
        akg_f32_to_f16_n(x.data() + offset, out.data(), n - offset);
        akg_stream_f32_to_f16_n(x.data() + offset, streamed.data() + offset, n - offset);
        akg_stream_fence();
        for (int64_t i = 0; i + offset < n; ++i) {
            ASSERT_EQ(out[i], want[i + offset]) << std::hexfloat << x[i + offset];
            ASSERT_EQ(streamed[i + offset], want[i + offset]) << std::hexfloat << x[i + offset];
        }
    }
}

// A [5, 7, 37] float16 tensor; boxes partly outside it are clamped, and nothing outside the
// tensor or the box's in-tensor part is touched.
TEST(Float16Arrays, StagingCopiesTheClampedBox) {
    const int64_t shape[] = {5, 7, 37};
    std::vector<uint16_t> tensor(5 * 7 * 37 + 8);
    for (size_t i = 0; i < tensor.size(); ++i) tensor[i] = akg_f32_to_f16(static_cast<float>(i) * 0.25f);
    const int64_t box[] = {2, 3, 40};
    for (int64_t o0 : {-1, 0, 4})
        for (int64_t o1 : {-2, 1, 5})
            for (int64_t o2 : {-3, 0, 5}) {
                const int64_t offset[] = {o0, o1, o2};
                std::vector<float> local(2 * 3 * 40, -7.0f);
                akg_stage_f16_in(tensor.data(), 3, shape, offset, box, local.data());
                for (int64_t a = 0; a < 2; ++a)
                    for (int64_t b = 0; b < 3; ++b)
                        for (int64_t c = 0; c < 40; ++c) {
                            int64_t x = o0 + a, y = o1 + b, z = o2 + c;
                            bool inside = x >= 0 && x < 5 && y >= 0 && y < 7 && z >= 0 && z < 37;
                            float got = local[(a * 3 + b) * 40 + c];
                            if (inside) ASSERT_EQ(got, akg_f16_to_f32(tensor[(x * 7 + y) * 37 + z]));
                            else ASSERT_EQ(got, -7.0f);
                        }
                // Back out: only the in-tensor part of the box is written.
                std::vector<uint16_t> copy = tensor;
                std::vector<float> values(2 * 3 * 40);
                for (size_t i = 0; i < values.size(); ++i) values[i] = 1000.0f + static_cast<float>(i);
                akg_stage_f16_out(copy.data(), 3, shape, offset, box, values.data());
                for (int64_t x = 0; x < 5; ++x)
                    for (int64_t y = 0; y < 7; ++y)
                        for (int64_t z = 0; z < 37; ++z) {
                            int64_t a = x - o0, b = y - o1, c = z - o2;
                            bool in_box = a >= 0 && a < 2 && b >= 0 && b < 3 && c >= 0 && c < 40;
                            uint16_t want = in_box ? akg_f32_to_f16(values[(a * 3 + b) * 40 + c]) : tensor[(x * 7 + y) * 37 + z];
                            ASSERT_EQ(copy[(x * 7 + y) * 37 + z], want);
                        }
                for (size_t i = 5 * 7 * 37; i < copy.size(); ++i) ASSERT_EQ(copy[i], tensor[i]);
            }
}

} // namespace

// The non-temporal store helpers of the generator's stream-outputs pass: every length, at every
// element offset from a cache line (the unaligned head, whole aligned vectors, the tail), copy
// or convert exactly the n elements asked for, the same bits as the ordinary helpers (or, for
// akg_stream_u16_n, the bits given).
TEST(StreamStores, CopyExactlyTheElementsAskedForAtEveryAlignment) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-70000.0f, 70000.0f);
    std::vector<float> src(300);
    for (auto &x : src) x = dist(rng);
    src[5] = std::nanf(""), src[6] = -0.0f, src[7] = 1e-7f; // NaN, -0, a float16 subnormal
    alignas(64) static float dst[400];
    alignas(64) static uint16_t half[400], expected[400];
    for (int offset = 0; offset < 40; ++offset) {
        for (int n : {0, 1, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 128, 255}) {
            std::fill(std::begin(dst), std::end(dst), 12345.0f);
            akg_stream_f32_n(src.data(), dst + offset, n);
            akg_stream_fence();
            for (int i = 0; i < 400; ++i) {
                bool inside = i >= offset && i < offset + n;
                ASSERT_TRUE(same(dst[i], inside ? src[i - offset] : 12345.0f)) << "offset " << offset << " n " << n << " at " << i;
            }
            std::fill(std::begin(half), std::end(half), uint16_t{0xabcd});
            std::fill(std::begin(expected), std::end(expected), uint16_t{0xabcd});
            akg_stream_f32_to_f16_n(src.data(), half + offset, n);
            akg_stream_fence();
            akg_f32_to_f16_n(src.data(), expected + offset, n);
            for (int i = 0; i < 400; ++i) ASSERT_EQ(half[i], expected[i]) << "offset " << offset << " n " << n << " at " << i;
            // Bits streamed as they are (float16 outputs chosen between constants).
            std::vector<uint16_t> bits(src.size());
            for (size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<uint16_t>(rng());
            std::fill(std::begin(half), std::end(half), uint16_t{0xabcd});
            akg_stream_u16_n(bits.data(), half + offset, n);
            akg_stream_fence();
            for (int i = 0; i < 400; ++i) {
                bool inside = i >= offset && i < offset + n;
                ASSERT_EQ(half[i], inside ? bits[i - offset] : uint16_t{0xabcd}) << "bits: offset " << offset << " n " << n << " at " << i;
            }
        }
    }
}

// The short-row sums of the group-rows pass: the vector code (a transposing tree across 16
// rows) adds in the order of the portable code (lanes j % 16, then akg_combine_lanes<16>), so
// both give the same bits, for every row length below 64, partial groups, float16 and float32
// rows, strides that leave gaps; no sum is written past `rows`.
template <typename T> void check_row_sums(T (*make)(float)) {
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> value(-100.0f, 100.0f);
    for (int64_t n = 1; n < 64; ++n)
        for (int64_t gap : {0, 3})
            for (int64_t rows = 1; rows <= 16; ++rows) {
                const int64_t stride = n + gap;
                std::vector<T> src(static_cast<size_t>(stride * (rows - 1) + n)); // ends where the last row does
                for (auto &x : src) x = make(value(gen));
                float fast[17], portable[17];
                for (float &s : fast) s = 777.0f;
                akg_row_sums(src.data(), stride, n, rows, fast);
                akg_row_sums_portable(src.data(), stride, n, rows, portable);
                for (int64_t r = 0; r < rows; ++r) {
                    ASSERT_TRUE(same(fast[r], portable[r])) << "n " << n << " rows " << rows << " row " << r;
                    double exact = 0;
                    for (int64_t j = 0; j < n; ++j) exact += akg_row_element(src.data() + r * stride + j);
                    ASSERT_NEAR(fast[r], exact, 1e-4 * 100 * n) << "n " << n << " row " << r;
                }
                for (int64_t r = rows; r < 17; ++r) ASSERT_EQ(fast[r], 777.0f) << "wrote past the rows, rows = " << rows;
            }
    // Rows of -0 (the lanes start at the row's first 16 elements in both, not at +0 + them).
    for (int64_t n : {5, 16, 49}) {
        std::vector<T> zeros(static_cast<size_t>(n * 3), make(-0.0f));
        float fast[3], portable[3];
        akg_row_sums(zeros.data(), n, n, 3, fast);
        akg_row_sums_portable(zeros.data(), n, n, 3, portable);
        for (int r = 0; r < 3; ++r) ASSERT_TRUE(same(fast[r], portable[r])) << "n " << n;
    }
}

TEST(RowSums, VectorTreeAddsInThePortableOrder) {
    check_row_sums<float>([](float x) { return x; });
    check_row_sums<uint16_t>([](float x) { return akg_f32_to_f16(x); });
}

TEST(RowSums, SpecialValuesPropagate) {
    std::vector<float> rows(16 * 49, 1.0f);
    rows[3 * 49 + 48] = NAN;                  // the masked tail of row 3
    rows[5 * 49 + 0] = INFINITY;              // row 5
    rows[6 * 49 + 1] = INFINITY, rows[6 * 49 + 40] = -INFINITY; // row 6: inf - inf
    float sums[16];
    akg_row_sums_f32(rows.data(), 49, 49, 16, sums);
    EXPECT_TRUE(std::isnan(sums[3]));
    EXPECT_EQ(sums[5], INFINITY);
    EXPECT_TRUE(std::isnan(sums[6]));
    EXPECT_EQ(sums[0], 49.0f);
    EXPECT_EQ(sums[15], 49.0f);
}

// akg_transpose (tile-transposes): every element of the tile lands at its transposed place with
// its bits unchanged (signalling-NaN patterns included), for tiles of whole 8 x 8 blocks, of
// rows and columns left over, and of fewer than 8 of either; nothing outside the tile is written.
template <typename T>
void check_transpose() {
    std::mt19937 rng(7);
    for (int64_t rows : {1, 3, 7, 8, 9, 16, 17, 49})
        for (int64_t cols : {1, 5, 8, 13, 16, 24, 37}) {
            const int64_t in_stride = cols + 3, out_stride = rows + 5;
            std::vector<T> in(static_cast<size_t>(rows * in_stride));
            for (auto &x : in) {
                uint32_t bits32 = rng();
                std::memcpy(&x, &bits32, sizeof x);
            }
            const T sentinel = in[0];
            std::vector<T> out(static_cast<size_t>(cols * out_stride + 1), sentinel);
            T *target = out.data() + 1; // not aligned
            akg_transpose(in.data(), in_stride, target, out_stride, rows, cols);
            for (int64_t c = 0; c < cols; ++c)
                for (int64_t r = 0; r < out_stride; ++r) {
                    const T &got = target[c * out_stride + r];
                    const T &want = r < rows ? in[static_cast<size_t>(r * in_stride + c)] : sentinel;
                    ASSERT_EQ(std::memcmp(&got, &want, sizeof(T)), 0) << "rows " << rows << " cols " << cols << " at column " << c << " row " << r;
                }
            ASSERT_EQ(std::memcmp(&out[0], &sentinel, sizeof(T)), 0) << "wrote before the tile";
        }
}

TEST(Transpose, SixteenBitTilesMoveEveryElement) { check_transpose<uint16_t>(); }
TEST(Transpose, StreamedTilesWriteTheirRunExactly) {
    // Tiles of whole output rows, one run each, at every alignment of the run's start.
    std::mt19937 rng(11);
    for (int64_t rows : {8, 9, 49})
        for (int64_t cols : {8, 37, 160})
            for (int64_t shift : {0, 1, 5, 31}) {
                std::vector<uint16_t> in(static_cast<size_t>(rows * (cols + 2)));
                for (auto &x : in) x = static_cast<uint16_t>(rng());
                std::vector<uint16_t> out(static_cast<size_t>(rows * cols + 80), 0xabcd), want = out;
                uint16_t *run = out.data() + shift;
                akg_transpose_streamed(in.data(), cols + 2, run, rows, cols);
                akg_stream_fence();
                for (int64_t c = 0; c < cols; ++c)
                    for (int64_t r = 0; r < rows; ++r) want[static_cast<size_t>(shift + c * rows + r)] = in[static_cast<size_t>(r * (cols + 2) + c)];
                ASSERT_EQ(out, want) << "rows " << rows << " cols " << cols << " shift " << shift;
            }
}
TEST(Transpose, ThirtyTwoBitTilesMoveEveryElement) {
    check_transpose<float>();
    check_transpose<int32_t>();
}
