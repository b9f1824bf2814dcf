// akg-random-graphs: writes random but valid composite JSON kernels (MindSpore GraphKernel's
// format, as in patterns/ and ../shared/akg-corpus) for differential testing of the generator
// against the reference evaluator (`akg-gen check DIR`).
//
// Each graph is a random chain/DAG of the ops both sides support (15% of them starting with a
// MatMul or BatchMatMul of two inputs whose result the chain reads): elementwise unary and binary
// ops (transcendental ones on domain-safe operands), comparisons + Select, logic, numpy
// broadcasts, reductions over random axes with and without keep_dims, casts between float32,
// float16, int32 and bool, Reshape, Transpose, ExpandDims, Tile, BroadcastTo, inline constants,
// AddN, ElemAny, InplaceAssign/Assign, and several outputs; in half of the graphs also the ops
// of docs/OPS.md (issue 39: rounding, trigonometry, integer division and modulo, Select*,
// Argmax/Argmin, scans, StridedSlice and the other layout ops, data-dependent indexing on fresh
// index inputs, pooling, int8/uint8/int64 arithmetic). Shapes have rank 1-4 with sizes
// such as 1 and primes, and few elements so that a batch is quick (2048 a tensor; 16384 in
// the 15% of graphs with wide rows such as 127, 255, 513, 1000).
//
// The graphs are built so that a correct generator passes the AKG tolerances: every tensor has
// a bound on its magnitude (operands are scaled down by powers of two when it grows), operands
// of Log/Sqrt/Rsqrt/Reciprocal/RealDiv/Pow are made positive explicitly (|x| + c), and
// operations whose result jumps at a threshold (comparisons, casts to int32/bool, casts to
// float16 followed by more arithmetic) only see "exact" values: values that float32 code and
// the double-precision reference compute identically.
//
// Deterministic: the same --seed gives the same files (our own integer draws; no
// std::*_distribution, whose algorithms differ between standard libraries).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

using json = nlohmann::json;
using Shape = std::vector<int64_t>;

uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

class Rng {
public:
    explicit Rng(uint64_t seed) : s_(mix(seed)) {}
    uint64_t next() { return s_ = mix(s_); }
    int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
    int range(int lo, int hi) { return lo + below(hi - lo + 1); } // inclusive
    bool chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }
    template <class T> const T &pick(const std::vector<T> &v) { return v[static_cast<size_t>(below(static_cast<int>(v.size())))]; }

private:
    uint64_t s_;
};

int64_t count(const Shape &s) {
    int64_t n = 1;
    for (auto d : s) n *= d;
    return n;
}

bool is_float(const std::string &dt) { return dt == "float32" || dt == "float16"; }
bool is_int(const std::string &dt) { return dt == "int32" || dt == "int8" || dt == "uint8" || dt == "int64"; }

// A tensor of the graph, with what the generator knows about its values.
struct Tensor {
    std::string name;
    Shape shape;
    std::string dtype;
    double bound = 1;     // |value| <= bound
    double lo = 0;        // when positive: value >= lo > 0
    bool positive = false;
    bool exact = true;    // float32 code and the double reference compute it identically
    bool noisy = false;   // a float16 rounding of an inexact value: only layout ops may read it
    bool is_input = false;
    bool assigned = false; // an input already written by InplaceAssign/Assign
    int uses = 0;
};

struct Options {
    int64_t max_elements = 2048; // per tensor
    int min_ops = 2, max_ops = 14;
};

class GraphBuilder {
public:
    // The matrix product start draws from its own stream, so that graphs without one are the
    // graphs this seed gave before matrix products were added.
    // So do the ops of docs/OPS.md (issue 39): the new stream decides whether a graph uses them
    // and which to insert between the old steps, so the other graphs are the ones before them.
    GraphBuilder(uint64_t seed, const Options &o)
        : rng_(seed), mm_rng_(seed ^ 0x6d61746d756cull), nr_(seed ^ 0x6e65776f7073ull), opt_(o) {}

    json build(const std::string &name) {
        main_dtype_ = rng_.chance(0.6) ? "float32" : "float16";
        // Sometimes wide rows (several vector tiles and a remainder, parallel chunks).
        wide_ = rng_.chance(0.15);
        if (wide_) opt_.max_elements *= 8;
        int n_ops = rng_.range(opt_.min_ops, opt_.max_ops);
        // The first tensor: a kernel input of a random shape, or in 15% of the graphs a matrix
        // product of two inputs, which the chain then reads first.
        if (mm_rng_.chance(0.15)) matmul_start();
        else new_input(random_shape(), main_dtype_);
        // Half of the graphs also use the ops of docs/OPS.md, in about a third of their steps.
        const bool new_ops = nr_.chance(0.5);
        int guard = 0;
        while (ops_.size() < static_cast<size_t>(n_ops) && guard++ < 400) {
            if (new_ops && nr_.chance(0.35)) new_step();
            else step();
        }
        return finish(name);
    }

private:
    Rng rng_;
    Rng mm_rng_;
    Rng nr_; // the ops of docs/OPS.md
    Options opt_;
    std::string main_dtype_;
    bool wide_ = false;
    std::vector<Tensor> pool_;   // every tensor: inputs and op results
    json inputs_ = json::array();
    json ops_ = json::array();
    int next_input_ = 0, next_output_ = 0, next_const_ = 0;

    // ---------- shapes ----------
    int64_t random_dim() {
        static const std::vector<int64_t> small = {1, 1, 1, 2, 3, 4, 5, 7, 8, 11, 13, 16, 17, 31, 32, 37, 64, 6, 9, 12};
        static const std::vector<int64_t> wide = {1, 1, 3, 5, 17, 64, 127, 128, 255, 256, 513, 1000};
        return wide_ && rng_.chance(0.5) ? rng_.pick(wide) : rng_.pick(small);
    }
    Shape random_shape() {
        int rank = rng_.range(1, 4);
        Shape s;
        for (int d = 0; d < rank; ++d) s.push_back(random_dim());
        shrink(s);
        return s;
    }
    void shrink(Shape &s) {
        while (count(s) > opt_.max_elements) {
            size_t d = static_cast<size_t>(std::max_element(s.begin(), s.end()) - s.begin());
            s[d] = std::max<int64_t>(1, s[d] / 2 - (s[d] % 2 == 0 ? 1 : 0)); // 64 -> 31, 37 -> 17, 16 -> 7
        }
    }
    // A shape that broadcasts with `s` (numpy): some dims 1, maybe fewer leading dims, or the
    // other way round (1-dims of `s` stretched, a new leading dim).
    Shape broadcast_partner(const Shape &s) {
        Shape t = s;
        int kind = rng_.below(10);
        if (kind < 4) {
            for (auto &d : t)
                if (rng_.chance(0.4)) d = 1;
        } else if (kind < 6) {
            int drop = rng_.range(1, static_cast<int>(t.size()));
            t.erase(t.begin(), t.begin() + drop);
            if (t.empty()) t = {1};
            for (auto &d : t)
                if (rng_.chance(0.2)) d = 1;
        } else if (kind < 8) {
            for (auto &d : t)
                if (d == 1 && rng_.chance(0.7)) d = random_dim();
            if (t.size() < 4 && rng_.chance(0.4)) t.insert(t.begin(), random_dim());
        } else if (kind < 9) {
            t = {1};
        }
        if (count(broadcast(s, t)) > opt_.max_elements) return s;
        return t;
    }
    static bool broadcastable(const Shape &a, const Shape &b) {
        size_t r = std::max(a.size(), b.size());
        for (size_t k = 0; k < r; ++k) {
            int64_t x = k < a.size() ? a[a.size() - 1 - k] : 1, y = k < b.size() ? b[b.size() - 1 - k] : 1;
            if (x != y && x != 1 && y != 1) return false;
        }
        return true;
    }
    static Shape broadcast(const Shape &a, const Shape &b) {
        size_t r = std::max(a.size(), b.size());
        Shape out(r);
        for (size_t k = 0; k < r; ++k) {
            int64_t x = k < a.size() ? a[a.size() - 1 - k] : 1, y = k < b.size() ? b[b.size() - 1 - k] : 1;
            out[r - 1 - k] = x == 1 ? y : x;
        }
        return out;
    }

    // ---------- JSON ----------
    static json desc(const Tensor &t) {
        return json{{"data_type", t.dtype}, {"format", "DefaultFormat"}, {"shape", t.shape}, {"tensor_name", t.name}};
    }
    static json attr(const std::string &name, json value, const std::string &type) {
        return json{{"name", name}, {"value", std::move(value)}, {"data_type", type}};
    }

    int new_input(const Shape &shape, const std::string &dtype) {
        Tensor t;
        t.name = "input_" + std::to_string(next_input_++);
        t.shape = shape;
        t.dtype = dtype;
        t.is_input = true;
        t.exact = true;
        t.bound = is_float(dtype) ? 6 : (is_int(dtype) ? 8 : 1);
        if (dtype == "bool") t.bound = 1;
        inputs_.push_back(json::array({desc(t)}));
        pool_.push_back(t);
        return static_cast<int>(pool_.size()) - 1;
    }

    // An inline constant operand (shape [1]); returns its desc and fills `info`.
    json constant(const std::string &dtype, double v, Tensor *info) {
        Tensor t;
        t.name = "const_" + std::to_string(next_const_++);
        t.shape = {1};
        t.dtype = dtype;
        t.bound = std::max(std::fabs(v), 1e-30);
        t.positive = v > 0;
        t.lo = v;
        t.exact = true;
        json d = desc(t);
        if (dtype == "bool") d["value"] = v != 0;
        else if (is_int(dtype)) d["value"] = static_cast<int64_t>(v);
        else d["value"] = v;
        if (info) *info = t;
        return d;
    }
    double random_constant(const std::string &dtype) {
        static const std::vector<double> vals = {0.5, 2.0, -1.0, 0.125, 3.0, -0.25, 1.5, 0.044708251953125, 0.7978845834732056, 1.0};
        if (dtype == "int32") return rng_.range(-3, 3);
        if (dtype == "uint8") return rng_.range(0, 3);
        if (is_int(dtype)) return rng_.range(-3, 3);
        return rng_.pick(vals);
    }

    // One op: inputs are pool indices or inline constants (json descs with "value").
    struct Operand {
        int index = -1; // pool index, or -1 for a constant
        json const_desc;
        Tensor info;
    };
    Operand of(int i) {
        Operand o;
        o.index = i;
        o.info = pool_[static_cast<size_t>(i)];
        return o;
    }
    Operand konst(const std::string &dtype, double v) {
        Operand o;
        o.const_desc = constant(dtype, v, &o.info);
        return o;
    }

    int emit(const std::string &op, const std::vector<std::vector<Operand>> &ins, Tensor out, json attrs = nullptr) {
        json in_desc = json::array();
        for (const auto &group : ins) {
            json g = json::array();
            for (const auto &o : group) {
                if (o.index >= 0) {
                    g.push_back(desc(pool_[static_cast<size_t>(o.index)]));
                    pool_[static_cast<size_t>(o.index)].uses++;
                } else g.push_back(o.const_desc);
            }
            in_desc.push_back(g);
        }
        out.name = "output_0_" + std::to_string(next_output_++);
        out.is_input = false;
        out.uses = 0;
        if (!out.positive) out.lo = 0;
        if (out.dtype == "bool") out.bound = 1;
        json o = {{"attr", attrs}, {"impl_path", ""}, {"input_desc", in_desc}, {"name", op}, {"output_desc", json::array({desc(out)})}};
        ops_.push_back(o);
        pool_.push_back(out);
        return static_cast<int>(pool_.size()) - 1;
    }

    // ---------- choosing operands ----------
    // A pool tensor satisfying `ok`, preferring recent ones (chains) but sometimes any (DAGs).
    template <class F> int choose(F ok) {
        std::vector<int> c;
        for (int i = 0; i < static_cast<int>(pool_.size()); ++i)
            if (ok(pool_[static_cast<size_t>(i)])) c.push_back(i);
        if (c.empty()) return -1;
        if (rng_.chance(0.55)) return c.back();
        if (rng_.chance(0.5) && c.size() > 1) return c[c.size() - 2];
        return rng_.pick(c);
    }
    int choose_float(bool need_exact = false) {
        return choose([&](const Tensor &t) { return is_float(t.dtype) && !t.noisy && (!need_exact || t.exact); });
    }
    // A float operand; a new input when none fits.
    int float_operand(bool need_exact = false) {
        int i = choose_float(need_exact);
        if (i < 0 || rng_.chance(0.08)) i = new_input(random_shape(), main_dtype_);
        return i;
    }

    // Scales tensor i by a power of two until its bound is at most `limit`.
    int tame(int i, double limit) {
        const Tensor t = pool_[static_cast<size_t>(i)];
        if (t.bound <= limit || !is_float(t.dtype)) return i;
        double scale = 1;
        while (t.bound * scale > limit) scale /= 2;
        if (rng_.chance(0.25) && limit >= 1) {
            Tensor out = t;
            out.bound = 1;
            out.exact = false;
            out.positive = false;
            return emit("Tanh", {{of(i)}}, out);
        }
        Tensor out = t;
        out.bound = t.bound * scale;
        out.lo = t.lo * scale;
        // Scaling by a power of two is exact.
        return emit("Mul", {{of(i)}, {konst(t.dtype, scale)}}, out);
    }

    // A positive version of tensor i (value >= lo >= 0.1), bounded by `limit`.
    int make_positive(int i, double limit = 16) {
        i = tame(i, limit);
        const Tensor &t = pool_[static_cast<size_t>(i)];
        if (t.positive && t.lo >= 0.1) return i;
        const std::string dt = t.dtype;
        if (dt == "int32") {
            Tensor a = t;
            int ai = emit("Abs", {{of(i)}}, a);
            Tensor p = pool_[static_cast<size_t>(ai)];
            p.bound += 1;
            p.positive = true;
            p.lo = 1;
            return emit("Add", {{of(ai)}, {konst("int32", 1)}}, p);
        }
        if (rng_.chance(0.2)) { // exp(x) with |x| <= 2
            int x = tame(i, 2);
            Tensor e = pool_[static_cast<size_t>(x)];
            double b = e.bound;
            e.bound = std::exp(b);
            e.positive = true;
            e.lo = std::exp(-b);
            e.exact = false;
            return emit("Exp", {{of(x)}}, e);
        }
        double c = rng_.chance(0.5) ? 0.5 : 1.0;
        Tensor a = t;
        int ai = emit("Abs", {{of(i)}}, a);
        Tensor p = pool_[static_cast<size_t>(ai)];
        p.bound += c;
        p.positive = true;
        p.lo = c;
        p.exact = false;
        return emit("Add", {{of(ai)}, {konst(dt, c)}}, p);
    }

    // A second operand broadcasting with tensor `a`, of dtype `dt`: a pool tensor, an inline
    // constant or a new input.
    Operand partner(int a, const std::string &dt, bool need_exact) {
        const Shape &sa = pool_[static_cast<size_t>(a)].shape;
        int r = rng_.below(10);
        if (r < 2) { // a bigger tensor: the result broadcasts `a` (a statistic against its rows)
            int b = choose([&](const Tensor &t) {
                return t.dtype == dt && !t.noisy && (!need_exact || t.exact) && count(t.shape) > count(sa) &&
                       broadcastable(sa, t.shape) && count(broadcast(sa, t.shape)) <= opt_.max_elements;
            });
            if (b >= 0) return of(b);
        }
        if (r < 5) {
            int b = choose([&](const Tensor &t) {
                return t.dtype == dt && !t.noisy && (!need_exact || t.exact) && broadcastable(sa, t.shape) &&
                       count(broadcast(sa, t.shape)) <= opt_.max_elements;
            });
            if (b >= 0) return of(b);
        }
        if (r < 7) return konst(dt, random_constant(dt));
        return of(new_input(broadcast_partner(sa), dt));
    }

    // ---------- the matrix product start ----------
    // MatMul or BatchMatMul (batch dims 1-2, a size-1 batch dim on one side now and then: numpy
    // broadcasting) with random transposes; K of 1, primes and powers of two up to 300, M and N
    // small primes and powers of two; float32 inputs, or float16 ones with dst_type float16 or
    // float32 (the graph's dtype). The result has at most max_elements elements and each input at
    // most 4x that (K is the point). Its inputs are fresh N(0,1) kernel inputs, so the sum of K
    // products has standard deviation sqrt(K): its bound is 9 of those (36 K when smaller, the
    // exact bound for inputs within 6), and it is scaled by a power of two to at most 8.
    void matmul_start() {
        Rng &r = mm_rng_;
        static const std::vector<int64_t> ks = {1, 1, 2, 3, 5, 7, 8, 16, 17, 31, 32, 61, 64, 97, 127, 128, 131, 256, 257, 300};
        static const std::vector<int64_t> mns = {1, 2, 3, 4, 5, 7, 8, 11, 13, 16, 17, 31, 32, 64};
        int64_t k = r.pick(ks), m = r.pick(mns), n = r.pick(mns);
        const bool batched = r.chance(0.4);
        Shape batch, batch_a, batch_b;
        if (batched) {
            int nb = r.range(1, 2);
            for (int d = 0; d < nb; ++d) batch.push_back(r.pick(std::vector<int64_t>{1, 2, 3, 4, 5}));
            batch_a = batch_b = batch;
            for (size_t d = 0; d < batch.size(); ++d)
                if (batch[d] > 1 && r.chance(0.25)) (r.chance(0.5) ? batch_a : batch_b)[d] = 1;
        }
        auto fits = [&] {
            return count(batch) * m * n <= opt_.max_elements && count(batch_a) * m * k <= 4 * opt_.max_elements &&
                   count(batch_b) * k * n <= 4 * opt_.max_elements;
        };
        while (!fits()) {
            int64_t &d = m >= n ? m : n;
            if (d == 1) break;
            d = std::max<int64_t>(1, d / 2);
        }
        while (!fits() && k > 1) k = std::max<int64_t>(1, k / 2 - 1);
        const bool ta = r.chance(0.5), tb = r.chance(0.5);
        const std::string in_dt = main_dtype_ == "float16" || r.chance(0.3) ? "float16" : "float32";
        Shape sa = batch_a, sb = batch_b;
        const Shape tail_a = ta ? Shape{k, m} : Shape{m, k}, tail_b = tb ? Shape{n, k} : Shape{k, n};
        sa.insert(sa.end(), tail_a.begin(), tail_a.end());
        sb.insert(sb.end(), tail_b.begin(), tail_b.end());
        int a = new_input(sa, in_dt), b = new_input(sb, in_dt);
        Tensor out = pool_[static_cast<size_t>(a)];
        out.shape = batch;
        out.shape.push_back(m);
        out.shape.push_back(n);
        out.dtype = main_dtype_;
        out.exact = false;
        out.positive = false;
        // A float16 product is rounded where the kernel stores it: only layout ops may read it
        // (the reference does not round between ops).
        out.noisy = main_dtype_ == "float16";
        const double kd = static_cast<double>(k);
        out.bound = std::min(36 * kd, std::max(36.0, 9 * std::sqrt(kd)));
        json attrs = json::array({attr("transpose_a", ta, "bool"), attr("transpose_b", tb, "bool"),
                                  attr("dst_type", main_dtype_, "str")});
        if (r.chance(0.7)) {
            attrs.push_back(attr("left_format", "DefaultFormat", "str"));
            attrs.push_back(attr("right_format", "DefaultFormat", "str"));
        }
        if (!batched && r.chance(0.3)) attrs.push_back(attr("pack_b", r.chance(0.5), "bool"));
        int p = emit(batched ? "BatchMatMul" : "MatMul", {{of(a)}, {of(b)}}, out, attrs);
        p = tame(p, 8);
        // Now and then its heads split or merged: a transpose or a reshape of it, which the
        // generator stores where it moves each element.
        if (r.chance(0.25)) permute(p, r);
        // Now and then a softmax over its rows, which the generator runs on each panel of rows
        // as soon as the GEMM has done them (a float16 product is rounded: not read but by layout ops).
        else if (!out.noisy && r.chance(0.3)) row_softmax(p);
        // Now and then B's sum over k beside the product, a bias gradient beside its weight
        // gradient (the generator takes it while packing B).
        if (!batched && in_dt == "float32" && r.chance(0.3)) {
            Tensor s = pool_[static_cast<size_t>(b)];
            const bool keep = r.chance(0.5);
            s.shape = keep ? (tb ? Shape{n, 1} : Shape{1, n}) : Shape{n};
            s.bound = pool_[static_cast<size_t>(b)].bound * kd;
            s.exact = false;
            s.positive = false;
            emit("ReduceSum", {{of(b)}}, s, json::array({attr("axis", json::array({tb ? 1 : 0}), "listInt"), attr("keep_dims", keep, "bool")}));
        }
    }

    // softmax(x) over the last axis of tensor x, its sums kept as [.., 1].
    int row_softmax(int x) {
        const Tensor t = pool_[static_cast<size_t>(x)];
        const int last = static_cast<int>(t.shape.size()) - 1;
        const json axis = json::array({attr("axis", json::array({last}), "listInt"), attr("keep_dims", true, "bool")});
        Tensor mx = t;
        mx.shape.back() = 1;
        const int m = emit("ReduceMax", {{of(x)}}, mx, axis);
        Tensor d = t;
        d.bound = 2 * t.bound;
        d.exact = false;
        d.positive = false;
        const int di = emit("Sub", {{of(x)}, {of(m)}}, d);
        Tensor e = d;
        e.bound = 1;
        e.positive = -d.bound > -80.0;
        e.lo = e.positive ? std::exp(-d.bound) : 0;
        const int ei = emit("Exp", {{of(di)}}, e);
        Tensor sum = e;
        sum.shape.back() = 1;
        sum.bound = static_cast<double>(t.shape.back());
        sum.positive = true;
        sum.lo = 1; // the maximum's own term
        const int si = emit("ReduceSum", {{of(ei)}}, sum, axis);
        Tensor q = e;
        q.positive = false;
        return emit("RealDiv", {{of(ei)}, {of(si)}}, q);
    }

    // A random transpose of tensor i, or a reshape that splits or merges its dimensions.
    int permute(int i, Rng &r) {
        const Tensor t = pool_[static_cast<size_t>(i)];
        Tensor out = t;
        const int rank = static_cast<int>(t.shape.size());
        if (rank >= 2 && r.chance(0.5)) {
            std::vector<int64_t> perm(static_cast<size_t>(rank));
            for (int d = 0; d < rank; ++d) perm[static_cast<size_t>(d)] = d;
            for (int d = rank - 1; d > 0; --d) std::swap(perm[static_cast<size_t>(d)], perm[static_cast<size_t>(r.below(d + 1))]);
            for (int d = 0; d < rank; ++d) out.shape[static_cast<size_t>(d)] = t.shape[static_cast<size_t>(perm[static_cast<size_t>(d)])];
            return emit("Transpose", {{of(i)}}, out, json::array({attr("perm", perm, "listInt")}));
        }
        // Merge two neighbours, or split one at its smallest factor.
        Shape s = t.shape;
        const int d = r.below(rank);
        int64_t f = 2;
        while (f < s[static_cast<size_t>(d)] && s[static_cast<size_t>(d)] % f != 0) ++f;
        if (d + 1 < rank && (r.chance(0.5) || s.size() >= 4 || f >= s[static_cast<size_t>(d)])) {
            s[static_cast<size_t>(d)] *= s[static_cast<size_t>(d) + 1];
            s.erase(s.begin() + d + 1);
        } else if (f < s[static_cast<size_t>(d)] && s.size() < 4) {
            s[static_cast<size_t>(d)] /= f;
            s.insert(s.begin() + d + 1, f);
        }
        out.shape = s;
        return emit("Reshape", {{of(i)}}, out, json::array({attr("shape", s, "listInt")}));
    }

    // ---------- ops ----------
    void step() {
        int r = rng_.below(100);
        if (r < 14) unary();
        else if (r < 34) binary();
        else if (r < 42) compare_select();
        else if (r < 54) reduce();
        else if (r < 64) cast();
        else if (r < 80) layout();
        else if (r < 84) add_n();
        else if (r < 88) logic();
        else if (r < 93) int_ops();
        else if (r < 97) inplace();
        else elem_any();
    }

    void unary() {
        static const std::vector<std::string> names = {"Neg", "Abs", "Exp", "Log", "Sqrt", "Rsqrt", "Reciprocal", "Tanh", "Erf"};
        const std::string op = rng_.pick(names);
        int i = float_operand();
        Tensor out = pool_[static_cast<size_t>(i)];
        const double b = out.bound;
        if (op == "Neg" || op == "Abs") {
            out.positive = op == "Abs" ? false : false;
            emit(op, {{of(i)}}, out);
            return;
        }
        out.exact = false;
        out.positive = false;
        if (op == "Exp") {
            i = tame(i, 3);
            out = pool_[static_cast<size_t>(i)];
            out.exact = false;
            out.bound = std::exp(out.bound);
            out.positive = true;
            out.lo = std::exp(-pool_[static_cast<size_t>(i)].bound);
        } else if (op == "Tanh" || op == "Erf") {
            out.bound = 1;
        } else {
            i = make_positive(i);
            const Tensor &p = pool_[static_cast<size_t>(i)];
            out = p;
            out.exact = false;
            if (op == "Log") { out.bound = std::max(std::fabs(std::log(p.lo)), std::log(p.bound)) + 0.01; out.positive = false; }
            else if (op == "Sqrt") { out.bound = std::sqrt(p.bound); out.lo = std::sqrt(p.lo); }
            else if (op == "Rsqrt") { out.bound = 1 / std::sqrt(p.lo); out.lo = 1 / std::sqrt(p.bound); }
            else { out.bound = 1 / p.lo; out.lo = 1 / p.bound; }
        }
        (void)b;
        emit(op, {{of(i)}}, out);
    }

    void binary() {
        static const std::vector<std::string> names = {"Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow", "Add", "Mul", "TensorAdd"};
        const std::string op = rng_.pick(names);
        int a = tame(float_operand(), 32);
        const std::string dt = pool_[static_cast<size_t>(a)].dtype;
        Operand b = partner(a, dt, false);
        if (b.index >= 0) {
            b = of(tame(b.index, 32));
            // taming emitted ops; the first operand may still be the same
        }
        if (op == "RealDiv" || op == "Pow") {
            if (op == "Pow" && rng_.chance(0.3)) { // any sign, integer exponent (x^2, x^3)
                a = tame(a, 4);
                b = konst(dt, rng_.chance(0.5) ? 2.0 : 3.0);
            } else if (op == "Pow") {
                a = make_positive(a, 8);
                if (b.index >= 0) {
                    int e = tame(b.index, 1.5);
                    b = of(e);
                } else b = konst(dt, rng_.pick(std::vector<double>{0.5, 2.0, -1.0, 1.5, 3.0}));
            } else {
                if (b.index >= 0) b = of(make_positive(b.index));
                else b = konst(dt, rng_.pick(std::vector<double>{0.5, 2.0, 3.0, -4.0, 0.125}));
            }
        }
        const Tensor &ta = pool_[static_cast<size_t>(a)];
        const Tensor &tb = b.index >= 0 ? pool_[static_cast<size_t>(b.index)] : b.info;
        if (!broadcastable(ta.shape, tb.shape)) return;
        Tensor out = ta;
        out.shape = broadcast(ta.shape, tb.shape);
        if (count(out.shape) > opt_.max_elements) return;
        out.positive = false;
        out.exact = false;
        out.lo = 0;
        if (op == "Add" || op == "TensorAdd" || op == "Sub") {
            out.bound = ta.bound + tb.bound;
            if (op != "Sub" && ta.positive && tb.positive) { out.positive = true; out.lo = ta.lo + tb.lo; }
        } else if (op == "Mul") {
            out.bound = ta.bound * tb.bound;
            if (ta.positive && tb.positive) { out.positive = true; out.lo = ta.lo * tb.lo; }
        } else if (op == "RealDiv") {
            double den = b.index >= 0 ? tb.lo : std::fabs(tb.lo);
            out.bound = ta.bound / den;
        } else if (op == "Maximum" || op == "Minimum") {
            out.bound = std::max(ta.bound, tb.bound);
            out.exact = ta.exact && tb.exact;
            if (op == "Maximum" && (ta.positive || tb.positive)) { out.positive = true; out.lo = std::max(ta.positive ? ta.lo : 0, tb.positive ? tb.lo : 0); }
            if (op == "Minimum" && ta.positive && tb.positive) { out.positive = true; out.lo = std::min(ta.lo, tb.lo); }
        } else if (!ta.positive) { // Pow of any sign by 2 or 3
            out.bound = std::pow(ta.bound, tb.bound);
        } else { // Pow: base in [lo, bound], |exponent| <= e
            double e = tb.bound;
            out.bound = std::max(std::pow(ta.bound, e), std::pow(ta.lo, -e));
            out.positive = true;
            out.lo = std::min(std::pow(ta.bound, -e), std::pow(ta.lo, e));
        }
        if (out.bound > 1e4) return; // would overflow our budget; skip
        emit(op, {{of(a)}, {b}}, out);
    }

    static const char *random_cmp(Rng &r) {
        static const char *n[] = {"Greater", "GreaterEqual", "Less", "LessEqual", "Equal", "NotEqual"};
        return n[r.below(6)];
    }

    // cond = Compare(a, b) on exact values; Select(cond, x, y).
    void compare_select() {
        int a = choose([&](const Tensor &t) { return (is_float(t.dtype) || t.dtype == "int32") && t.exact && !t.noisy; });
        if (a < 0) a = new_input(random_shape(), main_dtype_);
        const std::string dt = pool_[static_cast<size_t>(a)].dtype;
        Operand b = partner(a, dt, true);
        const Tensor &ta = pool_[static_cast<size_t>(a)];
        const Tensor &tb = b.index >= 0 ? pool_[static_cast<size_t>(b.index)] : b.info;
        Tensor c = ta;
        c.dtype = "bool";
        c.shape = broadcast(ta.shape, tb.shape);
        c.exact = true;
        c.positive = false;
        int ci = emit(random_cmp(rng_), {{of(a)}, {b}}, c);
        if (rng_.chance(0.25)) return; // the bool itself (an output or a later operand)
        // Select(cond, x, y) with x, y of one float dtype, broadcasting with cond.
        int x = -1;
        if (rng_.chance(0.15)) x = choose([&](const Tensor &t) { return t.dtype == "int32"; });
        if (x < 0) x = float_operand();
        const std::string fdt = pool_[static_cast<size_t>(x)].dtype;
        Operand y = partner(x, fdt, false);
        const Tensor &tx = pool_[static_cast<size_t>(x)];
        const Tensor &ty = y.index >= 0 ? pool_[static_cast<size_t>(y.index)] : y.info;
        const Tensor &tc = pool_[static_cast<size_t>(ci)];
        if (!broadcastable(tx.shape, ty.shape)) return;
        Shape s = broadcast(tx.shape, ty.shape);
        if (!broadcastable(s, tc.shape)) return;
        s = broadcast(s, tc.shape);
        if (count(s) > opt_.max_elements) return;
        Tensor out = tx;
        out.shape = s;
        out.bound = std::max(tx.bound, ty.bound);
        out.exact = tx.exact && ty.exact;
        out.positive = tx.positive && ty.positive;
        out.lo = std::min(tx.lo, ty.lo);
        emit("Select", {{of(ci)}, {of(x)}, {y}}, out);
    }

    json axis_attr(std::vector<int> axes, int rank) {
        // Negative axes sometimes; a single int sometimes; [] for all axes sometimes.
        if (static_cast<int>(axes.size()) == rank && rng_.chance(0.3)) return attr("axis", json::array(), "listInt");
        json a = json::array();
        for (int x : axes) a.push_back(rng_.chance(0.3) ? x - rank : x);
        if (a.size() == 1 && rng_.chance(0.3)) return attr("axis", a[0], "int");
        return attr("axis", a, "listInt");
    }

    void reduce() {
        static const std::vector<std::string> names = {"ReduceSum", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"};
        std::string op = rng_.pick(names);
        int i = choose([&](const Tensor &t) { return (is_float(t.dtype) || t.dtype == "int32") && !t.noisy; });
        if (i < 0) i = new_input(random_shape(), main_dtype_);
        const Tensor t0 = pool_[static_cast<size_t>(i)];
        int rank = static_cast<int>(t0.shape.size());
        std::vector<int> axes;
        for (int d = 0; d < rank; ++d)
            if (rng_.chance(0.45)) axes.push_back(d);
        if (axes.empty()) axes.push_back(rng_.below(rank));
        int64_t n = 1;
        for (int d : axes) n *= t0.shape[static_cast<size_t>(d)];
        if (op == "ReduceProd" && (n > 8 || t0.dtype == "int32")) op = "ReduceSum";
        if (op == "ReduceSum" && is_float(t0.dtype)) i = tame(i, 4);
        if (op == "ReduceProd") i = tame(i, 1.5);
        if (t0.dtype == "int32" && op == "ReduceSum" && t0.bound * static_cast<double>(n) > 1e6) op = "ReduceMax";
        const Tensor &t = pool_[static_cast<size_t>(i)];
        bool keep = rng_.chance(0.5);
        Tensor out = t;
        out.shape.clear();
        for (int d = 0; d < rank; ++d) {
            bool red = std::find(axes.begin(), axes.end(), d) != axes.end();
            if (!red) out.shape.push_back(t.shape[static_cast<size_t>(d)]);
            else if (keep) out.shape.push_back(1);
        }
        if (out.shape.empty()) out.shape = {1};
        out.positive = false;
        if (op == "ReduceSum") { out.bound = t.bound * static_cast<double>(n); out.exact = t.dtype == "int32"; }
        else if (op == "ReduceProd") { out.bound = std::pow(t.bound, static_cast<double>(n)); out.exact = false; }
        else { out.exact = t.exact; out.positive = t.positive; }
        json attrs = json::array({axis_attr(axes, rank), attr("keep_dims", keep, "bool")});
        if (rng_.chance(0.2)) attrs.push_back(attr("enable_atomic_add", false, "bool"));
        int m = emit(op, {{of(i)}}, out, attrs);
        if (op == "ReduceMax" && is_float(t.dtype) && keep && rng_.chance(0.5)) softmax_exponent(i, m);
    }

    // exp(x - max(x)) over the axes `m` reduced, a softmax's exponent (the generator drops the
    // exp's overflow clamp there); now and then exp(max(x) - x) instead, which it must not.
    void softmax_exponent(int x, int m) {
        const Tensor t = pool_[static_cast<size_t>(x)];
        const bool reversed = rng_.chance(0.2);
        Tensor d = t;
        d.bound = 2 * t.bound;
        d.exact = false;
        d.positive = false;
        d.lo = 0;
        int di = reversed ? emit("Sub", {{of(m)}, {of(x)}}, d) : emit("Sub", {{of(x)}, {of(m)}}, d);
        if (reversed) di = tame(di, 3);
        Tensor e = pool_[static_cast<size_t>(di)];
        const double exponent_bound = e.bound; // |exponent| <= this
        e.exact = false;
        e.bound = reversed ? std::exp(exponent_bound) : 1;
        // Positive only where no value underflows (float16: e^-16 is below its subnormals).
        const double lowest = -exponent_bound;
        e.positive = lowest > (t.dtype == "float16" ? -15.0 : -80.0);
        e.lo = e.positive ? std::exp(lowest) : 0;
        emit("Exp", {{of(di)}}, e);
    }

    void cast() {
        int i = choose([&](const Tensor &t) { return !t.noisy; });
        if (i < 0) return;
        const Tensor t = pool_[static_cast<size_t>(i)];
        std::vector<std::string> targets;
        if (is_float(t.dtype)) {
            targets.push_back(t.dtype == "float32" ? "float16" : "float32");
            if (t.exact) { targets.push_back("int32"); targets.push_back("bool"); }
        } else if (t.dtype == "int32") {
            targets = {"float32", "float16", "bool"};
        } else if (is_int(t.dtype)) {
            targets = {"float32", "float16", "bool", "int32"};
        } else {
            targets = {"float32", "float16", "int32"};
        }
        Tensor out = t;
        out.dtype = rng_.pick(targets);
        if (out.dtype == "float16" && is_float(t.dtype) && !t.exact) out.noisy = true;
        if (out.dtype == "int32" || out.dtype == "bool") { out.positive = false; out.exact = true; }
        if (out.dtype == "float16" && t.bound > 1000) return;
        // The reference keeps int32 -> float32 values exact (double); float32 code rounds above 2^24.
        if (is_int(t.dtype) && out.dtype == "float32" && t.bound > 16777216.0) out.exact = false;
        if (is_int(t.dtype) && out.dtype == "float16" && t.bound > 2048) { out.exact = false; out.noisy = true; }
        json attrs = json::array({attr("dst_type", out.dtype, "str")});
        if (rng_.chance(0.3)) attrs.push_back(attr("is_backed_cast", false, "bool"));
        emit("Cast", {{of(i)}}, out, attrs);
    }

    // All factorizations of n into `rank` factors would be too many; build one at random.
    Shape random_reshape(const Shape &s) {
        int64_t n = count(s);
        std::vector<int64_t> primes;
        int64_t m = n;
        for (int64_t p = 2; p * p <= m; ++p)
            while (m % p == 0) { primes.push_back(p); m /= p; }
        if (m > 1) primes.push_back(m);
        int rank = rng_.range(1, 4);
        Shape out(static_cast<size_t>(rank), 1);
        for (int64_t p : primes) out[static_cast<size_t>(rng_.below(rank))] *= p;
        return out;
    }

    void layout() {
        int i = choose([&](const Tensor &) { return true; });
        const Tensor t = pool_[static_cast<size_t>(i)];
        int rank = static_cast<int>(t.shape.size());
        Tensor out = t;
        int r = rng_.below(5);
        if (r == 0) { // Reshape
            out.shape = random_reshape(t.shape);
            json target = out.shape;
            if (rng_.chance(0.25)) target[static_cast<size_t>(rng_.below(static_cast<int>(out.shape.size())))] = -1;
            emit("Reshape", {{of(i)}}, out, json::array({attr("shape", target, "listInt")}));
        } else if (r == 1) { // Transpose
            std::vector<int64_t> perm(static_cast<size_t>(rank));
            for (int d = 0; d < rank; ++d) perm[static_cast<size_t>(d)] = d;
            for (int d = rank - 1; d > 0; --d) std::swap(perm[static_cast<size_t>(d)], perm[static_cast<size_t>(rng_.below(d + 1))]);
            for (int d = 0; d < rank; ++d) out.shape[static_cast<size_t>(d)] = t.shape[static_cast<size_t>(perm[static_cast<size_t>(d)])];
            emit("Transpose", {{of(i)}}, out, json::array({attr("perm", perm, "listInt")}));
        } else if (r == 2) { // ExpandDims
            if (rank >= 4) return;
            int a = rng_.range(0, rank);
            out.shape.insert(out.shape.begin() + a, 1);
            json ax = rng_.chance(0.3) ? json(a - rank - 1) : json(a);
            if (rng_.chance(0.3)) ax = json::array({ax});
            emit("ExpandDims", {{of(i)}}, out, json::array({attr("axis", ax, ax.is_array() ? "listInt" : "int")}));
        } else if (r == 3) { // Tile
            std::vector<int64_t> mult;
            int extra = rank < 4 && rng_.chance(0.3) ? 1 : 0;
            for (int d = 0; d < rank + extra; ++d) mult.push_back(rng_.chance(0.5) ? 1 : rng_.range(2, 3));
            Shape s(static_cast<size_t>(extra), 1);
            s.insert(s.end(), t.shape.begin(), t.shape.end());
            for (size_t d = 0; d < s.size(); ++d) s[d] *= mult[d];
            if (count(s) > opt_.max_elements) return;
            out.shape = s;
            emit("Tile", {{of(i)}}, out, json::array({attr("multiples", mult, "listInt")}));
        } else { // BroadcastTo
            Shape s = t.shape;
            for (auto &d : s)
                if (d == 1 && rng_.chance(0.6)) d = random_dim();
            if (s.size() < 4 && rng_.chance(0.4)) s.insert(s.begin(), random_dim());
            if (count(s) > opt_.max_elements) return;
            out.shape = s;
            emit("BroadcastTo", {{of(i)}}, out, json::array({attr("shape", s, "listInt")}));
        }
    }

    void add_n() {
        int a = tame(float_operand(), 16);
        const Tensor ta = pool_[static_cast<size_t>(a)];
        std::vector<Operand> group = {of(a)};
        int n = rng_.range(2, 4);
        for (int k = 1; k < n; ++k) {
            int b = choose([&](const Tensor &t) { return t.dtype == ta.dtype && t.shape == ta.shape && !t.noisy && t.bound <= 16; });
            if (b < 0 || rng_.chance(0.3)) b = new_input(ta.shape, ta.dtype);
            group.push_back(of(b));
        }
        Tensor out = ta;
        out.bound = 0;
        out.exact = false;
        out.positive = true;
        out.lo = 0;
        for (auto &o : group) {
            const Tensor &t = pool_[static_cast<size_t>(o.index)];
            out.bound += t.bound;
            out.positive = out.positive && t.positive;
            out.lo += t.positive ? t.lo : 0;
        }
        emit("AddN", {group}, out);
    }

    void logic() {
        int a = choose([&](const Tensor &t) { return t.dtype == "bool"; });
        if (a < 0 || rng_.chance(0.15)) {
            if (rng_.chance(0.5)) a = new_input(random_shape(), "bool");
            else {
                int f = float_operand();
                Tensor o = pool_[static_cast<size_t>(f)];
                o.dtype = "bool";
                o.exact = true;
                a = emit(rng_.chance(0.5) ? "IsNan" : "IsInf", {{of(f)}}, o);
            }
        }
        int r = rng_.below(3);
        Tensor out = pool_[static_cast<size_t>(a)];
        if (r == 0) { emit("LogicalNot", {{of(a)}}, out); return; }
        Operand b = partner(a, "bool", true);
        const Tensor &tb = b.index >= 0 ? pool_[static_cast<size_t>(b.index)] : b.info;
        out.shape = broadcast(out.shape, tb.shape);
        emit(r == 1 ? "LogicalAnd" : "LogicalOr", {{of(a)}, {b}}, out);
    }

    void int_ops() {
        int a = choose([&](const Tensor &t) { return t.dtype == "int32"; });
        if (a < 0 || rng_.chance(0.2)) a = new_input(random_shape(), "int32");
        static const std::vector<std::string> names = {"Add", "Sub", "Mul", "Maximum", "Minimum", "Neg", "Abs", "RealDiv"};
        std::string op = rng_.pick(names);
        Tensor out = pool_[static_cast<size_t>(a)];
        out.positive = false;
        if (op == "Neg" || op == "Abs") { emit(op, {{of(a)}}, out); return; }
        Operand b = partner(a, "int32", true);
        if (op == "RealDiv" && b.index >= 0) b = of(make_positive(b.index));
        if (op == "RealDiv" && b.index < 0) b = konst("int32", rng_.pick(std::vector<double>{2, 3, -2, 5}));
        const Tensor &ta = pool_[static_cast<size_t>(a)];
        const Tensor &tb = b.index >= 0 ? pool_[static_cast<size_t>(b.index)] : b.info;
        out = ta;
        out.positive = false;
        out.shape = broadcast(ta.shape, tb.shape);
        if (count(out.shape) > opt_.max_elements) return;
        if (op == "Mul") out.bound = ta.bound * tb.bound;
        else if (op == "Add" || op == "Sub") out.bound = ta.bound + tb.bound;
        else out.bound = std::max(ta.bound, tb.bound);
        // Integer arithmetic wraps around (two's complement) on both sides: let it, sometimes.
        if (out.bound > 1e6 && rng_.chance(0.5)) op = "Maximum", out.bound = std::max(ta.bound, tb.bound);
        out.bound = std::min(out.bound, 2147483648.0);
        emit(op, {{of(a)}, {b}}, out);
    }

    // InplaceAssign(ref, value, passthrough) or Assign(ref, value): ref is a kernel input of the
    // value's shape and dtype (an existing one when possible, so reads of it before the write
    // are exercised).
    void inplace() {
        int v = choose([&](const Tensor &t) { return !t.is_input && !t.noisy && t.dtype != "bool"; });
        if (v < 0) return;
        const Tensor tv = pool_[static_cast<size_t>(v)];
        int ref = -1;
        if (rng_.chance(0.6))
            ref = choose([&](const Tensor &t) { return t.is_input && !t.assigned && t.shape == tv.shape && t.dtype == tv.dtype; });
        if (ref < 0) ref = new_input(tv.shape, tv.dtype);
        pool_[static_cast<size_t>(ref)].assigned = true;
        if (rng_.chance(0.25)) {
            Tensor out = tv;
            emit("Assign", {{of(ref)}, {of(v)}}, out);
            return;
        }
        int p = rng_.chance(0.5) ? v : choose([&](const Tensor &t) { return !t.is_input; });
        if (p < 0) p = v;
        Tensor out = pool_[static_cast<size_t>(p)];
        out.is_input = false;
        out.assigned = false;
        bool fake = rng_.chance(0.6);
        emit("InplaceAssign", {{of(ref)}, {of(v)}, {of(p)}}, out, json::array({attr("fake_output", fake, "bool")}));
    }

    void elem_any() {
        int i = choose([&](const Tensor &t) { return t.exact; });
        if (i < 0) return;
        Tensor out = pool_[static_cast<size_t>(i)];
        out.dtype = "float32";
        out.shape = {1};
        out.exact = true;
        out.positive = false;
        out.bound = 1;
        emit("ElemAny", {{of(i)}}, out);
    }

    // ---------- the ops of docs/OPS.md (issue 39) ----------
    // Their choices come from nr_ (operands still from rng_, through choose and the helpers).
    void new_step() {
        int r = nr_.below(100);
        if (r < 16) new_unary();
        else if (r < 30) new_binary();
        else if (r < 38) select_cmp();
        else if (r < 48) new_int_ops();
        else if (r < 58) new_reduce();
        else if (r < 76) new_layout();
        else if (r < 90) indexing();
        else pool2d();
    }

    const Tensor &T(int i) const { return pool_[static_cast<size_t>(i)]; }
    Tensor info_of(const Operand &o) const { return o.index >= 0 ? T(o.index) : o.info; }

    // Scales tensor i by a power of two (exact) until its bound is at most `limit`.
    int scale_to(int i, double limit) {
        const Tensor t = T(i);
        if (t.bound <= limit || !is_float(t.dtype)) return i;
        double scale = 1;
        while (t.bound * scale > limit) scale /= 2;
        Tensor out = t;
        out.bound = t.bound * scale;
        out.lo = t.lo * scale;
        return emit("Mul", {{of(i)}, {konst(t.dtype, scale)}}, out);
    }
    // An exact float operand (a new input when none fits).
    int exact_float() {
        int i = choose_float(true);
        if (i < 0 || nr_.chance(0.1)) i = new_input(random_shape(), main_dtype_);
        return i;
    }
    // Maximum(|x|, c) (exact, >= c), sometimes negated: a nonzero divisor made of an exact tensor.
    int nonzero_exact(int i, double c) {
        const Tensor t = T(i);
        Tensor a = t;
        a.positive = false;
        int ai = t.dtype == "uint8" ? i : emit("Abs", {{of(i)}}, a);
        Tensor m = T(ai);
        m.positive = true;
        m.lo = c;
        m.bound = std::max(m.bound, c);
        int mi = emit("Maximum", {{of(ai)}, {konst(t.dtype, c)}}, m);
        if (t.dtype != "uint8" && nr_.chance(0.3)) {
            Tensor n = T(mi);
            n.positive = false;
            mi = emit("Neg", {{of(mi)}}, n);
            pool_[static_cast<size_t>(mi)].lo = c; // |value| >= c
        }
        return mi;
    }
    // A NaN-quarantined result (an op on a fresh input the reference fills partly outside the
    // op's domain): only layout ops read it; sometimes Select(IsFinite(x), x, 0) cleans it.
    void quarantine(int r, double bound) {
        Tensor &t = pool_[static_cast<size_t>(r)];
        t.noisy = true;
        t.exact = false;
        t.positive = false;
        if (!nr_.chance(0.6)) return;
        Tensor c = T(r);
        c.dtype = "bool";
        c.noisy = false;
        c.exact = true;
        int ci = emit(nr_.chance(0.5) ? "IsFinite" : "IsNan", {{of(r)}}, c);
        Tensor s = T(r);
        s.noisy = false;
        s.bound = bound;
        if (ops_.back()["name"] == "IsNan") emit("Select", {{of(ci)}, {konst(s.dtype, 0.0)}, {of(r)}}, s);
        else emit("Select", {{of(ci)}, {of(r)}, {konst(s.dtype, 0.0)}}, s);
    }

    void new_unary() {
        static const std::vector<std::string> names = {"Round", "Floor", "Sign", "IsFinite", "Sin", "Cos", "Asin", "ACos",
                                                       "Atan", "Asinh", "Acosh", "Expm1", "FastGeLU", "ZerosLike", "AddMinValue"};
        const std::string op = nr_.pick(names);
        if (op == "Round" || op == "Floor" || op == "Sign") {
            // Discontinuous: exact operands only (an exact value times a power of two is exact).
            int i = -1;
            if (nr_.chance(0.2)) i = choose([&](const Tensor &t) { return is_int(t.dtype); });
            if (i < 0) {
                i = exact_float();
                if (op != "Sign" && T(i).bound < 16 && nr_.chance(0.6)) {
                    Tensor m = T(i);
                    double k = nr_.pick(std::vector<double>{2, 4, 8});
                    m.bound *= k;
                    m.lo *= k;
                    i = emit("Mul", {{of(i)}, {konst(m.dtype, k)}}, m);
                }
            }
            Tensor out = T(i);
            out.positive = false;
            out.exact = true;
            out.bound = op == "Sign" ? 1 : out.bound + 1;
            if (op == "Round" && is_float(out.dtype) && nr_.chance(0.25)) out.dtype = "int32";
            emit(op, {{of(i)}}, out);
            return;
        }
        if (op == "IsFinite") {
            int i = choose([&](const Tensor &t) { return !t.noisy && t.dtype != "bool"; });
            if (i < 0) return;
            Tensor out = T(i);
            out.dtype = "bool";
            out.exact = true;
            out.positive = false;
            emit(op, {{of(i)}}, out);
            return;
        }
        if (op == "ZerosLike") {
            int i = choose([&](const Tensor &) { return true; });
            Tensor out = T(i);
            out.bound = 1e-30;
            out.exact = true;
            out.noisy = false;
            out.positive = false;
            emit(op, {{of(i)}}, out);
            return;
        }
        if (op == "AddMinValue") {
            int i = choose([&](const Tensor &t) { return !t.noisy && (is_float(t.dtype) || is_int(t.dtype)); });
            if (i < 0) return;
            Tensor out = T(i);
            // float32 code adds 2^-126 and rounds (x unchanged unless tiny); the reference does not
            // round float32 results. float16 sums of float16 values round alike.
            if (out.dtype == "float32") out.exact = false;
            out.bound += 1e-7;
            emit(op, {{of(i)}}, out);
            return;
        }
        if ((op == "Asin" || op == "ACos" || op == "Acosh") && nr_.chance(0.2)) {
            // A fresh input read directly: the reference gives it values mostly in the domain
            // (1/16 outside: NaN on both sides).
            int i = new_input(random_shape(), main_dtype_);
            Tensor out = T(i);
            out.bound = op == "Acosh" ? 3 : 3.2;
            int r = emit(op, {{of(i)}}, out);
            quarantine(r, out.bound);
            return;
        }
        int i = float_operand();
        Tensor out = T(i);
        out.exact = false;
        out.positive = false;
        if (op == "Asin" || op == "ACos") {
            int v = nr_.below(3);
            if (v == 0) { // exact: scaled into [-1, 1] by a power of two
                i = scale_to(i, 1);
            } else if (v == 1) { // tanh(x), |x| <= 2: |value| <= 0.97
                i = tame(i, 2);
                if (T(i).bound > 2) i = scale_to(i, 2);
                Tensor t = T(i);
                t.bound = std::tanh(t.bound);
                t.exact = false;
                t.positive = false;
                i = emit("Tanh", {{of(i)}}, t);
            } else { // x / (1 + |x|), |x| <= 8: |value| <= 8/9
                i = scale_to(i, 8);
                Tensor a = T(i);
                a.positive = false;
                int ai = emit("Abs", {{of(i)}}, a);
                Tensor p = T(ai);
                p.bound += 1;
                p.positive = true;
                p.lo = 1;
                p.exact = false;
                int pi = emit("Add", {{of(ai)}, {konst(p.dtype, 1.0)}}, p);
                Tensor q = T(i);
                q.bound = q.bound / (1 + q.bound);
                q.exact = false;
                q.positive = false;
                i = emit("RealDiv", {{of(i)}, {of(pi)}}, q);
            }
            out = T(i);
            out.exact = false;
            out.positive = false;
            out.bound = op == "Asin" ? 1.6 : 3.2;
        } else if (op == "Acosh") {
            // |x| + c: c = 1 is exact in float16; float32 keeps away from acosh's infinite slope at 1.
            i = scale_to(i, 16);
            Tensor a = T(i);
            a.positive = false;
            int ai = emit("Abs", {{of(i)}}, a);
            double c = T(ai).dtype == "float16" ? nr_.pick(std::vector<double>{1, 2}) : nr_.pick(std::vector<double>{1.5, 2});
            Tensor p = T(ai);
            p.bound += c;
            p.positive = true;
            p.lo = c;
            p.exact = p.dtype == "float16" && T(ai).exact;
            i = emit("Add", {{of(ai)}, {konst(p.dtype, c)}}, p);
            out = T(i);
            out.exact = false;
            out.positive = false;
            out.bound = std::acosh(out.bound) + 0.01;
        } else if (op == "Sin" || op == "Cos") {
            i = tame(i, 16);
            out = T(i);
            out.exact = false;
            out.positive = false;
            out.bound = 1;
        } else if (op == "Atan") {
            out.bound = 1.58;
        } else if (op == "Asinh") {
            out.bound = std::asinh(out.bound) + 0.01;
        } else if (op == "Expm1") {
            i = tame(i, 3);
            out = T(i);
            out.exact = false;
            out.positive = false;
            out.bound = std::expm1(out.bound);
        } else { // FastGeLU: |value| <= |x|
            i = tame(i, 16);
            out = T(i);
            out.exact = false;
            out.positive = false;
        }
        emit(op, {{of(i)}}, out);
    }

    // A nonzero divisor for FloorDiv/Mod/FloorMod/Div of dtype dt broadcasting with `a`; `lo`
    // gets a lower bound of its magnitude.
    Operand divisor(int a, const std::string &dt, double *lo) {
        int v = nr_.below(3);
        if (v == 0) {
            double c;
            if (is_float(dt)) c = nr_.pick(std::vector<double>{2, -2, 0.5, 3, -1.5, 0.25, 5, -1});
            else if (dt == "uint8") c = nr_.pick(std::vector<double>{1, 2, 3, 5, 7});
            else c = nr_.pick(std::vector<double>{2, -2, 3, 5, -7, 1});
            *lo = std::fabs(c);
            return konst(dt, c);
        }
        if (v == 1) { // a fresh input: the reference gives divisors of FloorDiv/Mod/FloorMod ±(|N| + 1) (ints ±[1, 8])
            *lo = 1;
            return of(new_input(broadcast_partner(T(a).shape), dt));
        }
        int b = choose([&](const Tensor &t) {
            return t.dtype == dt && t.exact && !t.noisy && broadcastable(T(a).shape, t.shape) &&
                   count(broadcast(T(a).shape, t.shape)) <= opt_.max_elements;
        });
        if (b < 0) b = new_input(broadcast_partner(T(a).shape), dt);
        const double c = is_float(dt) ? 0.5 : 1;
        *lo = c;
        return of(nonzero_exact(b, c));
    }

    void new_binary() {
        static const std::vector<std::string> names = {"Div", "FloorDiv", "Mod", "FloorMod", "Atan2", "FloorDiv", "FloorMod"};
        const std::string op = nr_.pick(names);
        int a;
        Operand b;
        double lo = 1;
        if (op == "Div") {
            a = tame(float_operand(), 32);
            const std::string dt = T(a).dtype;
            b = partner(a, dt, false);
            if (b.index >= 0) b = of(make_positive(b.index));
            else b = konst(dt, nr_.pick(std::vector<double>{0.5, 2.0, 3.0, -4.0, 0.125}));
            lo = b.index >= 0 ? T(b.index).lo : std::fabs(b.info.lo);
        } else if (op == "Atan2") {
            // atan2 jumps at y = ±0 for x < 0: y exact, or positive.
            a = float_operand();
            if (!T(a).exact) a = make_positive(a);
            b = partner(a, T(a).dtype, false);
        } else {
            // Discontinuous at multiples of the divisor: exact operands (the kernel divides in double).
            a = exact_float();
            if (T(a).bound < 16 && nr_.chance(0.5)) {
                Tensor m = T(a);
                m.bound *= 4;
                a = emit("Mul", {{of(a)}, {konst(m.dtype, 4.0)}}, m);
            }
            b = divisor(a, T(a).dtype, &lo);
        }
        const Tensor ta = T(a), tb = info_of(b);
        if (!broadcastable(ta.shape, tb.shape)) return;
        Tensor out = ta;
        out.shape = broadcast(ta.shape, tb.shape);
        if (count(out.shape) > opt_.max_elements) return;
        out.positive = false;
        out.lo = 0;
        if (op == "Div") { out.exact = false; out.bound = ta.bound / lo; }
        else if (op == "Atan2") { out.exact = false; out.bound = 3.15; }
        else if (op == "FloorDiv") { out.exact = true; out.bound = ta.bound / lo + 1; }
        else if (op == "Mod") { out.exact = true; out.bound = ta.bound; }
        else { out.exact = ta.dtype == "float16"; out.bound = std::max(tb.bound, ta.bound); } // r + b rounds in float32
        if (out.bound > 1e4) return;
        emit(op, {{of(a)}, {b}}, out);
    }

    // SelectGE/GT/LE/LT(a, b, c, d) = a op b ? c : d, comparing exact values.
    void select_cmp() {
        static const std::vector<std::string> names = {"SelectGE", "SelectGT", "SelectLE", "SelectLT"};
        const std::string op = nr_.pick(names);
        int a = choose([&](const Tensor &t) { return (is_float(t.dtype) || is_int(t.dtype)) && t.exact && !t.noisy; });
        if (a < 0) a = new_input(random_shape(), main_dtype_);
        Operand b = partner(a, T(a).dtype, true);
        // The branches: of the comparison's dtype (AKG's Select* kernels), or any other one.
        int c = -1;
        if (nr_.chance(0.5)) c = choose([&](const Tensor &t) { return t.dtype == T(a).dtype && !t.noisy; });
        if (c < 0) c = float_operand();
        Operand d = partner(c, T(c).dtype, false);
        const Tensor ta = T(a), tb = info_of(b), tc = T(c), td = info_of(d);
        if (!broadcastable(ta.shape, tb.shape)) return;
        Shape s = broadcast(ta.shape, tb.shape);
        if (!broadcastable(s, tc.shape)) return;
        s = broadcast(s, tc.shape);
        if (!broadcastable(s, td.shape)) return;
        s = broadcast(s, td.shape);
        if (count(s) > opt_.max_elements) return;
        Tensor out = tc;
        out.shape = s;
        out.bound = std::max(tc.bound, td.bound);
        out.exact = tc.exact && td.exact;
        out.positive = tc.positive && td.positive;
        out.lo = std::min(tc.lo, td.lo);
        emit(op, {{of(a)}, {b}, {of(c)}, {d}}, out);
    }

    // Arithmetic on int8, uint8, int32 and int64 (wrapping on both sides; int64 values stay
    // below 2^53, which the reference's doubles hold exactly), and casts to and from them.
    void new_int_ops() {
        static const std::vector<std::string> dts = {"int8", "uint8", "int64", "int32", "int8", "int64"};
        const std::string dt = nr_.pick(dts);
        if (nr_.chance(0.2)) { // a cast into dt of an exact value within its range
            int f = choose([&](const Tensor &t) { return (is_float(t.dtype) || is_int(t.dtype)) && t.exact && !t.noisy && t.dtype != dt && t.bound <= 100; });
            if (f < 0) return;
            Tensor out = T(f);
            out.dtype = dt;
            out.exact = true;
            out.positive = false;
            if (dt == "uint8") { // non-negative values only
                Tensor a = T(f);
                a.positive = false;
                f = emit("Abs", {{of(f)}}, a);
            }
            emit("Cast", {{of(f)}}, out, json::array({attr("dst_type", dt, "str")}));
            return;
        }
        int a = choose([&](const Tensor &t) { return t.dtype == dt; });
        if (a < 0 || nr_.chance(0.25)) a = new_input(random_shape(), dt);
        static const std::vector<std::string> names = {"Add", "Sub", "Mul", "Div", "RealDiv", "FloorDiv", "Mod", "FloorMod",
                                                       "Neg", "Abs", "Sign", "Maximum", "Minimum", "Add", "Mul"};
        const std::string op = nr_.pick(names);
        const double wrap = dt == "int8" ? 128 : dt == "uint8" ? 255 : dt == "int32" ? 2147483648.0 : 9007199254740992.0;
        Tensor out = T(a);
        out.positive = false;
        out.exact = true;
        if (op == "Neg" || op == "Abs" || op == "Sign") {
            if (op == "Sign") out.bound = 1;
            emit(op, {{of(a)}}, out);
            return;
        }
        const bool division = op == "Div" || op == "RealDiv" || op == "FloorDiv" || op == "Mod" || op == "FloorMod";
        // No INT_MIN / -1 (undefined in C): a dividend that may have wrapped gets a positive divisor.
        if (division && T(a).bound >= wrap / 2 && dt != "uint8") return;
        double lo = 1;
        Operand b = division ? divisor(a, dt, &lo) : partner(a, dt, true);
        const Tensor ta = T(a), tb = info_of(b);
        if (!broadcastable(ta.shape, tb.shape)) return;
        out.shape = broadcast(ta.shape, tb.shape);
        if (count(out.shape) > opt_.max_elements) return;
        if (op == "Mul") out.bound = ta.bound * tb.bound;
        else if (op == "Add" || op == "Sub") out.bound = ta.bound + tb.bound;
        else if (division) out.bound = std::max(ta.bound, tb.bound);
        else out.bound = std::max(ta.bound, tb.bound);
        if (dt == "int64" && out.bound > 1e12) return; // keep int64 values exact in doubles
        out.bound = std::min(out.bound, wrap);
        emit(op, {{of(a)}, {b}}, out);
    }

    void new_reduce() {
        int r = nr_.below(10);
        if (r < 4) { // Argmax/Argmin over one axis of exact values (ties: the first on both sides)
            int i = choose([&](const Tensor &t) { return (is_float(t.dtype) || is_int(t.dtype)) && t.exact && !t.noisy; });
            if (i < 0) i = new_input(random_shape(), main_dtype_);
            const Tensor t = T(i);
            const int rank = static_cast<int>(t.shape.size());
            int axis = nr_.below(rank);
            Tensor out = t;
            out.shape.erase(out.shape.begin() + axis);
            if (out.shape.empty()) out.shape = {1};
            out.dtype = nr_.chance(0.7) ? "int32" : "int64";
            out.exact = true;
            out.positive = false;
            out.bound = static_cast<double>(t.shape[static_cast<size_t>(axis)]);
            json ax = nr_.chance(0.3) ? json(axis - rank) : json(axis);
            if (nr_.chance(0.3)) ax = json::array({ax});
            emit(nr_.chance(0.5) ? "Argmax" : "Argmin", {{of(i)}}, out, json::array({attr("axis", ax, ax.is_array() ? "listInt" : "int")}));
            return;
        }
        if (r < 5) { // ElemAll of exact values
            int i = choose([&](const Tensor &t) { return t.exact && !t.noisy; });
            if (i < 0) return;
            Tensor out = T(i);
            out.dtype = nr_.pick(std::vector<std::string>{"float32", "float32", "int32", "bool"});
            out.shape = {1};
            out.exact = true;
            out.positive = false;
            out.bound = 1;
            emit("ElemAll", {{of(i)}}, out);
            return;
        }
        // CumSum / CumProd, exclusive and reverse.
        const bool prod = nr_.chance(0.35);
        int i = choose([&](const Tensor &t) { return (is_float(t.dtype) || t.dtype == "int32" || t.dtype == "int64") && !t.noisy; });
        if (i < 0) i = new_input(random_shape(), main_dtype_);
        const int rank = static_cast<int>(T(i).shape.size());
        const int axis = nr_.below(rank);
        const int64_t n = T(i).shape[static_cast<size_t>(axis)];
        if (prod && (n > 64 || (!is_float(T(i).dtype) && n > 8))) return;
        if (is_float(T(i).dtype)) i = prod ? scale_to(i, n > 8 ? 1 : 1.5) : tame(i, 4);
        const Tensor t = T(i);
        Tensor out = t;
        out.positive = false;
        if (prod) { out.bound = std::pow(std::max(t.bound, 1.0), static_cast<double>(n)); out.exact = !is_float(t.dtype); }
        else { out.bound = t.bound * static_cast<double>(n); out.exact = !is_float(t.dtype); }
        if (t.dtype == "int64" && out.bound > 1e12) return;
        if (t.dtype == "int32") out.bound = std::min(out.bound, 2147483648.0);
        json attrs = json::array();
        json ax = nr_.chance(0.3) ? json(axis - rank) : json(axis);
        if (nr_.chance(0.2)) ax = json::array({ax});
        if (axis != 0 || nr_.chance(0.7)) attrs.push_back(attr("axis", ax, ax.is_array() ? "listInt" : "int"));
        if (nr_.chance(0.6)) attrs.push_back(attr("exclusive", nr_.chance(0.5), "bool"));
        if (nr_.chance(0.6)) attrs.push_back(attr("reverse", nr_.chance(0.5), "bool"));
        emit(prod ? "CumProd" : "CumSum", {{of(i)}}, out, attrs.empty() ? json(nullptr) : attrs);
    }

    // docs/OPS.md's StridedSlice shape rule; false for an empty result or an error.
    struct SliceEntry {
        int kind = 0; // 0 a dimension, 1 ellipsis, 2 new axis, 3 shrink
        int64_t begin = 0, end = 0, stride = 1;
        bool bmask = false, emask = false;
    };
    static bool slice_shape(const Shape &in, const std::vector<SliceEntry> &es, Shape *out) {
        out->clear();
        int consuming = 0;
        for (const auto &e : es) consuming += e.kind == 0 || e.kind == 3;
        const int rank = static_cast<int>(in.size());
        if (consuming > rank) return false;
        int d = 0;
        for (const auto &e : es) {
            if (e.kind == 1) {
                for (int k = 0; k < rank - consuming; ++k) out->push_back(in[static_cast<size_t>(d++)]);
                continue;
            }
            if (e.kind == 2) { out->push_back(1); continue; }
            const int64_t n = in[static_cast<size_t>(d++)];
            if (e.kind == 3) {
                int64_t b = e.begin < 0 ? e.begin + n : e.begin;
                if (b < 0 || b >= n) return false;
                continue;
            }
            const int64_t s = e.stride;
            auto fix = [&](int64_t v) {
                if (v < 0) v += n;
                return s > 0 ? std::clamp<int64_t>(v, 0, n) : std::clamp<int64_t>(v, -1, n - 1);
            };
            int64_t b = e.bmask ? (s > 0 ? 0 : n - 1) : fix(e.begin);
            int64_t en = e.emask ? (s > 0 ? n : -1) : fix(e.end);
            int64_t len = s > 0 ? (en - b + s - 1) / s : (b - en + (-s) - 1) / (-s);
            if (len <= 0) return false;
            out->push_back(len);
        }
        for (; d < rank; ++d) out->push_back(in[static_cast<size_t>(d)]);
        if (out->empty()) out->push_back(1);
        return true;
    }

    void strided_slice(int i) {
        const Tensor t = T(i);
        const int rank = static_cast<int>(t.shape.size());
        for (int attempt = 0; attempt < 8; ++attempt) {
            int ndims = nr_.range(1, rank);
            std::vector<SliceEntry> es(static_cast<size_t>(ndims));
            bool ellipsis = nr_.chance(0.2);
            if (ellipsis) es.insert(es.begin() + nr_.range(0, ndims), SliceEntry{1});
            if (nr_.chance(0.15)) es.insert(es.begin() + nr_.range(0, static_cast<int>(es.size())), SliceEntry{2});
            // The input dims of the entries.
            int consuming = ndims, d = 0;
            for (auto &e : es) {
                if (e.kind == 1) { d += rank - consuming; continue; }
                if (e.kind == 2) continue;
                const int64_t n = t.shape[static_cast<size_t>(d++)];
                if (nr_.chance(0.12)) {
                    e.kind = 3;
                    e.begin = nr_.range(static_cast<int>(-n), static_cast<int>(n - 1));
                    e.end = e.begin + 1;
                    continue;
                }
                e.stride = nr_.pick(std::vector<int64_t>{1, 1, 1, 2, 3, -1, -1, -2});
                e.begin = nr_.range(static_cast<int>(-n - 2), static_cast<int>(n + 1));
                e.end = nr_.range(static_cast<int>(-n - 2), static_cast<int>(n + 1));
                if (nr_.chance(0.3)) { // a usual slice
                    e.begin = e.stride > 0 ? nr_.range(0, static_cast<int>(n - 1)) : nr_.range(0, static_cast<int>(n - 1));
                    e.end = e.stride > 0 ? nr_.range(static_cast<int>(e.begin + 1), static_cast<int>(n)) : nr_.range(-1, static_cast<int>(e.begin - 1));
                    if (e.end == -1) e.emask = true; // -1 would be n - 1
                }
                if (nr_.chance(0.2)) e.bmask = true;
                if (nr_.chance(0.2)) e.emask = true;
            }
            Shape out_shape;
            if (!slice_shape(t.shape, es, &out_shape) || out_shape.size() > 4 || count(out_shape) > opt_.max_elements) continue;
            json begin = json::array(), end = json::array(), strides = json::array();
            int bm = 0, em = 0, elm = 0, nam = 0, sam = 0;
            for (size_t k = 0; k < es.size(); ++k) {
                const auto &e = es[k];
                begin.push_back(e.kind == 1 || e.kind == 2 ? 0 : e.begin);
                end.push_back(e.kind == 1 || e.kind == 2 ? 1 : e.end);
                strides.push_back(e.kind == 0 ? e.stride : 1);
                if (e.kind == 0 && e.bmask) bm |= 1 << k;
                if (e.kind == 0 && e.emask) em |= 1 << k;
                if (e.kind == 1) elm |= 1 << k;
                if (e.kind == 2) nam |= 1 << k;
                if (e.kind == 3) sam |= 1 << k;
            }
            json attrs = json::array({attr("begin", begin, "listInt"), attr("end", end, "listInt")});
            bool all_one = true;
            for (const auto &e : es) all_one = all_one && (e.kind != 0 || e.stride == 1);
            if (!all_one || nr_.chance(0.7)) attrs.push_back(attr("strides", strides, "listInt"));
            auto mask = [&](const char *name, int v) {
                if (v != 0 || nr_.chance(0.3)) attrs.push_back(attr(name, v, "int"));
            };
            mask("begin_mask", bm);
            mask("end_mask", em);
            mask("ellipsis_mask", elm);
            mask("new_axis_mask", nam);
            mask("shrink_axis_mask", sam);
            Tensor out = t;
            out.shape = out_shape;
            emit("StridedSlice", {{of(i)}}, out, attrs);
            return;
        }
    }

    void new_layout() {
        const int r = nr_.below(8);
        if (r == 6) { one_hot(); return; }
        int i = choose([&](const Tensor &t) { return r != 2 || t.dtype != "bool"; });
        if (i < 0) return;
        const Tensor t = T(i);
        const int rank = static_cast<int>(t.shape.size());
        Tensor out = t;
        if (r <= 1) {
            strided_slice(i);
        } else if (r == 2) { // PadAkg
            json head = json::array(), tail = json::array();
            Shape s;
            for (int d = 0; d < rank; ++d) {
                int h = nr_.chance(0.5) ? 0 : nr_.range(1, 3), tl = nr_.chance(0.5) ? 0 : nr_.range(1, 3);
                head.push_back(h);
                tail.push_back(tl);
                s.push_back(t.shape[static_cast<size_t>(d)] + h + tl);
            }
            if (count(s) > opt_.max_elements) return;
            double v = is_float(t.dtype) ? nr_.pick(std::vector<double>{0, 0, 1, -2.5, 0.5}) : nr_.pick(std::vector<double>{0, 0, 1, 3});
            json attrs = json::array({attr("head", head, "listInt"), attr("tail", tail, "listInt")});
            if (v != 0 || nr_.chance(0.5)) attrs.push_back(is_float(t.dtype) ? attr("pad_val", v, "float") : attr("pad_val", static_cast<int64_t>(v), "int"));
            out.shape = s;
            out.bound = std::max(t.bound, std::fabs(v));
            out.positive = t.positive && v > 0;
            out.lo = std::min(t.lo, v);
            emit("PadAkg", {{of(i)}}, out, attrs);
        } else if (r == 3) { // UnPadAkg
            json tail = json::array();
            Shape s;
            for (int d = 0; d < rank; ++d) {
                int64_t n = t.shape[static_cast<size_t>(d)];
                int64_t tl = n > 1 && nr_.chance(0.6) ? nr_.range(1, static_cast<int>(std::min<int64_t>(n - 1, 5))) : 0;
                tail.push_back(tl);
                s.push_back(n - tl);
            }
            out.shape = s;
            emit("UnPadAkg", {{of(i)}}, out, json::array({attr("tail", tail, "listInt")}));
        } else if (r == 4) { // Concat along one axis
            const int axis = nr_.below(rank);
            std::vector<Operand> parts = {of(i)};
            int64_t total = t.shape[static_cast<size_t>(axis)];
            const int n = nr_.range(2, 3);
            for (int k = 1; k < n; ++k) {
                int b = -1;
                if (nr_.chance(0.5))
                    b = choose([&](const Tensor &u) {
                        if (u.dtype != t.dtype || u.shape.size() != t.shape.size()) return false;
                        for (int d = 0; d < rank; ++d)
                            if (d != axis && u.shape[static_cast<size_t>(d)] != t.shape[static_cast<size_t>(d)]) return false;
                        return true;
                    });
                if (b < 0) {
                    Shape s = t.shape;
                    s[static_cast<size_t>(axis)] = nr_.pick(std::vector<int64_t>{1, 2, 3, 5, 8, 13});
                    b = new_input(s, t.dtype);
                }
                parts.push_back(of(b));
                total += T(b).shape[static_cast<size_t>(axis)];
            }
            out.shape[static_cast<size_t>(axis)] = total;
            if (count(out.shape) > opt_.max_elements) return;
            for (const auto &p : parts) {
                const Tensor &u = T(p.index);
                out.bound = std::max(out.bound, u.bound);
                out.exact = out.exact && u.exact;
                out.noisy = out.noisy || u.noisy;
                out.positive = out.positive && u.positive;
                out.lo = std::min(out.lo, u.lo);
            }
            json ax = nr_.chance(0.3) ? json(axis - rank) : json(axis);
            emit("Concat", {parts}, out, json::array({attr("axis", ax, "int")}));
        } else if (r == 5) { // EquivFormat: a reshape
            out.shape = random_reshape(t.shape);
            json target = out.shape;
            if (nr_.chance(0.25)) target[static_cast<size_t>(nr_.below(static_cast<int>(out.shape.size())))] = -1;
            emit("EquivFormat", {{of(i)}}, out, nr_.chance(0.2) ? json(nullptr) : json::array({attr("shape", target, "listInt")}));
        } else { // TransData between default formats: a copy
            std::vector<std::string> fmts = {"DefaultFormat", "ND"};
            if (rank == 4) { fmts.push_back("NCHW"); fmts.push_back("NHWC"); }
            json attrs = nr_.chance(0.1) ? json(nullptr)
                                         : json::array({attr("src_format", nr_.pick(fmts), "str"), attr("dst_format", nr_.pick(fmts), "str")});
            emit("TransData", {{of(i)}}, out, attrs);
        }
    }

    // A fresh int32/int64 index input (the reference fills it with mostly in-range indices).
    int index_input(const Shape &s) {
        int i = new_input(s, nr_.chance(0.6) ? "int32" : "int64");
        pool_[static_cast<size_t>(i)].bound = 1e4;
        return i;
    }
    Shape small_shape(int max_rank, int64_t max_count) {
        static const std::vector<int64_t> dims = {1, 2, 3, 4, 5, 7, 8, 11, 13};
        Shape s;
        int rank = nr_.range(1, max_rank);
        for (int d = 0; d < rank; ++d) s.push_back(nr_.pick(dims));
        while (count(s) > max_count) {
            auto it = std::max_element(s.begin(), s.end());
            *it = std::max<int64_t>(1, *it / 2);
        }
        return s;
    }

    void one_hot() {
        Shape s = small_shape(3, 256);
        const int64_t depth = nr_.pick(std::vector<int64_t>{1, 2, 3, 5, 8, 10, 16, 17});
        const int rank = static_cast<int>(s.size());
        int axis = nr_.chance(0.5) ? -1 : nr_.range(0, rank);
        Shape o = s;
        o.insert(axis < 0 ? o.end() : o.begin() + axis, depth);
        if (count(o) > opt_.max_elements) return;
        const int idx = index_input(s);
        const std::string dt = nr_.chance(0.7) ? main_dtype_ : "int32";
        double on = nr_.pick(std::vector<double>{1, 1, 2, -1}), off = nr_.pick(std::vector<double>{0, 0, -1, 3});
        if (is_float(dt) && nr_.chance(0.3)) on = 0.5;
        Tensor out = T(idx);
        out.dtype = dt;
        out.shape = o;
        out.bound = std::max(std::fabs(on), std::fabs(off));
        out.exact = true;
        out.positive = false;
        out.is_input = false;
        emit("OneHot", {{of(idx)}, {konst(dt, on)}, {konst(dt, off)}}, out,
             json::array({attr("depth", depth, "int"), attr("axis", axis, "int")}));
    }

    void indexing() {
        const int r = nr_.below(4);
        int x = choose([&](const Tensor &t) { return t.dtype != "bool" && (r <= 1 || !t.noisy); });
        if (x < 0 || nr_.chance(0.1)) x = new_input(random_shape(), main_dtype_);
        if (r >= 2 && is_float(T(x).dtype)) x = tame(x, 8);
        const Tensor t = T(x);
        const int rank = static_cast<int>(t.shape.size());
        Tensor out = t;
        out.positive = false;
        if (r == 0) { // Gather along an axis
            const int axis = nr_.below(rank);
            Shape is = small_shape(2, 64);
            Shape o(t.shape.begin(), t.shape.begin() + axis);
            o.insert(o.end(), is.begin(), is.end());
            o.insert(o.end(), t.shape.begin() + axis + 1, t.shape.end());
            if (count(o) > opt_.max_elements || o.size() > 4) return;
            out.shape = o;
            int idx = index_input(is);
            json ax = nr_.chance(0.3) ? json(axis - rank) : json(axis);
            if (nr_.chance(0.3)) ax = json::array({ax});
            json attrs = axis == 0 && nr_.chance(0.3) ? json(nullptr) : json::array({attr("axis", ax, ax.is_array() ? "listInt" : "int")});
            emit("Gather", {{of(x)}, {of(idx)}}, out, attrs);
        } else if (r == 1) { // GatherNd
            const int q = nr_.range(1, rank);
            Shape is = small_shape(2, 32);
            Shape o = is;
            o.insert(o.end(), t.shape.begin() + q, t.shape.end());
            is.push_back(q);
            if (count(o) > opt_.max_elements || o.size() > 4) return;
            out.shape = o;
            int idx = index_input(is);
            emit("GatherNd", {{of(x)}, {of(idx)}}, out);
        } else if (r == 2) { // TensorScatterAdd
            const int q = nr_.range(1, rank);
            Shape lead = small_shape(2, 16);
            Shape is = lead;
            if (q == 1 && lead.size() == 1 && nr_.chance(0.4)) {} // rank-1 indices: q = 1
            else is.push_back(q);
            Shape us = lead;
            us.insert(us.end(), t.shape.begin() + q, t.shape.end());
            if (count(us) > opt_.max_elements) return;
            int idx = index_input(is);
            int u = -1;
            if (nr_.chance(0.4))
                u = choose([&](const Tensor &v) { return v.dtype == t.dtype && v.shape == us && !v.noisy && v.bound <= 8; });
            if (u < 0) u = new_input(us, t.dtype);
            const double n = static_cast<double>(count(lead));
            out.bound = t.bound + n * T(u).bound;
            out.exact = !is_float(t.dtype);
            if (t.dtype == "int64" && out.bound > 1e12) return;
            if (!is_float(t.dtype)) out.bound = std::min(out.bound, t.dtype == "int8" ? 128.0 : t.dtype == "uint8" ? 255.0 : 2147483648.0);
            emit("TensorScatterAdd", {{of(x)}, {of(idx)}, {of(u)}}, out);
        } else { // UnsortedSegmentSum
            const int k = nr_.range(1, rank);
            Shape ids(t.shape.begin(), t.shape.begin() + k);
            const int64_t ns = nr_.pick(std::vector<int64_t>{1, 2, 3, 5, 8, 13, 16});
            Shape o = {ns};
            o.insert(o.end(), t.shape.begin() + k, t.shape.end());
            if (count(o) > opt_.max_elements || o.size() > 4) return;
            int idx = index_input(ids);
            out.shape = o;
            out.bound = t.bound * static_cast<double>(count(ids));
            out.exact = !is_float(t.dtype);
            if (t.dtype == "int64" && out.bound > 1e12) return;
            if (!is_float(t.dtype)) out.bound = std::min(out.bound, t.dtype == "int8" ? 128.0 : t.dtype == "uint8" ? 255.0 : 2147483648.0);
            emit("UnsortedSegmentSum", {{of(x)}, {of(idx)}}, out, json::array({attr("num_segments", ns, "int")}));
        }
    }

    // Pool2D (max/avg, NCHW/NHWC, pads, strides, ceil mode, global) and GlobalPool2D on a rank-4
    // float tensor. Every window holds an input element (an all-padding window gives -inf).
    void pool2d() {
        int x = choose([&](const Tensor &t) { return is_float(t.dtype) && !t.noisy && t.shape.size() == 4; });
        if (x < 0 || nr_.chance(0.3)) {
            Shape s = {nr_.pick(std::vector<int64_t>{1, 1, 2, 3}), nr_.pick(std::vector<int64_t>{1, 3, 4, 5, 8}),
                       nr_.pick(std::vector<int64_t>{1, 2, 3, 5, 7, 8, 11, 16, 17}), nr_.pick(std::vector<int64_t>{1, 2, 3, 5, 7, 8, 11, 16, 17})};
            shrink(s);
            x = new_input(s, main_dtype_);
        }
        const Tensor t = T(x);
        const bool nhwc = nr_.chance(0.4);
        const size_t hd = nhwc ? 1 : 2, wd = nhwc ? 2 : 3;
        const bool is_max = nr_.chance(0.5);
        const std::string layout = nhwc ? "NHWC" : "NCHW";
        Tensor out = t;
        out.positive = is_max && t.positive;
        out.exact = is_max && t.exact;
        const int g = nr_.below(10);
        if (g < 2) { // global
            out.shape[hd] = 1;
            out.shape[wd] = 1;
            json attrs = json::array({attr("pool_type", is_max ? "max" : "avg", "str"), attr("data_layout", layout, "str")});
            if (g == 0) {
                emit("GlobalPool2D", {{of(x)}}, out, attrs);
            } else {
                attrs.push_back(attr("global", true, "bool"));
                attrs.push_back(attr("kernel_size", json::array({1, 1}), "listInt"));
                emit("Pool2D", {{of(x)}}, out, attrs);
            }
            return;
        }
        const int64_t H = t.shape[hd], W = t.shape[wd];
        const int64_t kh = nr_.range(1, static_cast<int>(std::min<int64_t>(H + 1, 4))), kw = nr_.range(1, static_cast<int>(std::min<int64_t>(W + 1, 4)));
        const int64_t sh = nr_.range(1, 3), sw = nr_.range(1, 3);
        int64_t pt = 0, pb = 0, pl = 0, pr = 0;
        if (nr_.chance(0.5)) {
            pt = nr_.range(0, static_cast<int>(kh - 1));
            pb = nr_.range(0, static_cast<int>(kh - 1));
            pl = nr_.range(0, static_cast<int>(kw - 1));
            pr = nr_.range(0, static_cast<int>(kw - 1));
        }
        int round_mode = nr_.chance(0.4) ? 1 : 0;
        auto size = [&](int64_t n, int64_t a, int64_t b, int64_t k, int64_t s, int mode) -> int64_t {
            const int64_t span = n + a + b - k;
            if (span < 0) return 0;
            return (mode == 1 ? (span + s - 1) / s : span / s) + 1;
        };
        auto ok = [&](int64_t n, int64_t a, int64_t o, int64_t s) { return o >= 1 && (o - 1) * s - a < n; };
        int64_t oh = size(H, pt, pb, kh, sh, round_mode), ow = size(W, pl, pr, kw, sw, round_mode);
        if (!ok(H, pt, oh, sh) || !ok(W, pl, ow, sw)) {
            round_mode = 0;
            oh = size(H, pt, pb, kh, sh, 0);
            ow = size(W, pl, pr, kw, sw, 0);
        }
        if (!ok(H, pt, oh, sh) || !ok(W, pl, ow, sw)) return;
        out.shape[hd] = oh;
        out.shape[wd] = ow;
        json attrs = json::array({attr("pool_type", is_max ? "max" : "avg", "str"), attr("data_layout", layout, "str"),
                                  attr("kernel_size", json::array({kh, kw}), "listInt"),
                                  attr("strides", json::array({sh, sw}), "listInt")});
        if (pt + pb + pl + pr > 0 || nr_.chance(0.5)) attrs.push_back(attr("pad", json::array({pt, pb, pl, pr}), "listInt"));
        if (round_mode || nr_.chance(0.5)) attrs.push_back(attr("round_mode", round_mode, "int"));
        if (nr_.chance(0.3)) attrs.push_back(attr("global", false, "bool"));
        emit("Pool2D", {{of(x)}}, out, attrs);
    }

    json finish(const std::string &name) {
        json outs = json::array();
        std::vector<int> chosen;
        for (int i = 0; i < static_cast<int>(pool_.size()); ++i) {
            const Tensor &t = pool_[static_cast<size_t>(i)];
            if (t.is_input) continue;
            if (t.uses == 0 || rng_.chance(0.12)) chosen.push_back(i);
        }
        if (chosen.empty()) {
            // Only inputs: add one op so that the kernel has an output.
            int i = float_operand();
            Tensor o = pool_[static_cast<size_t>(i)];
            chosen.push_back(emit("Neg", {{of(i)}}, o));
        }
        // A random order of the outputs.
        for (size_t k = chosen.size(); k > 1; --k) std::swap(chosen[k - 1], chosen[static_cast<size_t>(rng_.below(static_cast<int>(k)))]);
        for (int i : chosen) {
            outs.push_back(desc(pool_[static_cast<size_t>(i)]));
        }
        // Sometimes a tensor is listed twice.
        if (rng_.chance(0.05)) outs.push_back(outs[static_cast<size_t>(rng_.below(static_cast<int>(outs.size())))]);
        json k = {{"composite", true},
                  {"composite_graph", name},
                  {"id", 0},
                  {"input_desc", inputs_},
                  {"op", name},
                  {"op_desc", ops_},
                  {"output_desc", outs},
                  {"platform", "AKG"},
                  {"process", "cpu"}};
        return k;
    }
};

void usage() {
    std::cerr << "usage: akg-random-graphs [--seed S] [--count N] [--first I] [--max-elements E] [--max-ops K] -o DIR\n"
                 "Writes N random composite JSON kernels DIR/rand_S_I.json (I = first..first+N-1).\n"
                 "The same seed and index always give the same graph.\n";
}

} // namespace

int main(int argc, char **argv) {
    uint64_t seed = 1;
    int n = 100, first = 0;
    std::string dir;
    Options opt;
    for (int k = 1; k < argc; ++k) {
        std::string a = argv[k];
        auto val = [&]() -> std::string {
            if (k + 1 >= argc) { usage(); std::exit(2); }
            return argv[++k];
        };
        if (a == "--seed") seed = std::stoull(val());
        else if (a == "--count") n = std::stoi(val());
        else if (a == "--first") first = std::stoi(val());
        else if (a == "--max-elements") opt.max_elements = std::stoll(val());
        else if (a == "--max-ops") opt.max_ops = std::stoi(val());
        else if (a == "-o" || a == "--output") dir = val();
        else if (a == "-h" || a == "--help") { usage(); return 0; }
        else { usage(); return 2; }
    }
    if (dir.empty() || n < 0) { usage(); return 2; }
    opt.min_ops = std::min(opt.min_ops, opt.max_ops);
    std::filesystem::create_directories(dir);
    for (int i = first; i < first + n; ++i) {
        std::string name = "rand_" + std::to_string(seed) + "_" + std::to_string(i);
        GraphBuilder g(mix(seed) ^ mix(static_cast<uint64_t>(i) + 0x51ed), opt);
        json k = g.build(name);
        std::ofstream out(dir + "/" + name + ".json");
        out << k.dump(1) << "\n";
        if (!out) { std::cerr << "akg-random-graphs: cannot write " << dir << "/" << name << ".json\n"; return 1; }
    }
    return 0;
}
