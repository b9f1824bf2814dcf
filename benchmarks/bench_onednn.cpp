// oneDNN peers of the catalog kernels that have an equivalent primitive or primitive chain
// (with post-ops where oneDNN can fuse). Every case computes the kernel's outputs from its
// inputs in the same dtypes, reading and writing the kernel's own buffers (plain layouts);
// "onednn_nChw16c" cases first reorder the 4-D tensors once into oneDNN's preferred blocked
// layout (outside the timing) and run there, as a network kept in that layout would.
// A primitive oneDNN does not implement for a dtype on this CPU is reported as skipped.
#include "bench_common.h"

#include <omp.h>

#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#ifdef AKG_BENCH_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace akgbench {

#ifndef AKG_BENCH_HAVE_DNNL

int register_onednn(const akg_kernel *const *, size_t) {
    std::fprintf(stderr, "bench_catalog: oneDNN not found at build time (apt-get install libdnnl-dev): oneDNN peers skipped\n");
    return 0;
}

#else

namespace {

using dnnl::algorithm;
using dnnl::memory;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using flags = dnnl::normalization_flags;

dnnl::engine &eng() {
    static dnnl::engine e(dnnl::engine::kind::cpu, 0);
    return e;
}

dt dtype_of(akg_dtype d) { return d == AKG_DTYPE_FLOAT16 ? dt::f16 : dt::f32; }

struct Step {
    dnnl::primitive prim;
    std::unordered_map<int, memory> args;
};

struct Case {
    std::vector<Step> steps;
    std::string impls() const {
        std::string r;
        for (auto &st : steps) {
            const char *n = nullptr;
            if (dnnl_primitive_desc_query(st.prim.get_primitive_desc(), dnnl_query_impl_info_str, 0, &n) == dnnl_success && n)
                r += (r.empty() ? "" : ", ") + std::string(n);
        }
        return r;
    }
    std::vector<memory> keep; // blocked copies etc.
    void run(dnnl::stream &s) {
        for (auto &st : steps) st.prim.execute(s, st.args);
        s.wait();
    }
};

// Builds a case from the kernel's buffers; throws dnnl::error when unimplemented.
using Builder = std::function<Case(const akg_kernel *, KernelBuffers &, bool blocked)>;

memory::dims dims_of(const akg_tensor_def &t) { return memory::dims(t.shape, t.shape + t.rank); }

memory wrap(const akg_tensor_def &t, void *p, const memory::dims &d, tag tg) {
    return memory(memory::desc(d, dtype_of(t.dtype), tg), eng(), p);
}
memory wrap(const akg_tensor_def &t, void *p) {
    memory::dims d = dims_of(t);
    tag tg = d.size() == 1 ? tag::a : d.size() == 2 ? tag::ab : d.size() == 3 ? tag::abc : tag::abcd;
    return wrap(t, p, d, tg);
}

// A 4-D NCHW tensor in plain layout, or a blocked copy (nChw16c) made once.
memory act(Case &c, const akg_tensor_def &t, void *p, bool blocked) {
    memory plain = wrap(t, p);
    if (!blocked) return plain;
    memory b(memory::desc(dims_of(t), dtype_of(t.dtype), tag::nChw16c), eng());
    dnnl::stream s(eng());
    dnnl::reorder(plain, b).execute(s, plain, b);
    s.wait();
    c.keep.push_back(b);
    return b;
}

Case layernorm_fwd(const akg_kernel *k, KernelBuffers &b, bool) {
    Case c;
    auto &x = k->inputs[0];
    int64_t rows = x.shape[0], cols = x.shape[1];
    memory src = wrap(x, b.pointers[0]);
    memory dst = wrap(k->outputs[0], b.pointers[k->num_inputs + 0]);
    memory mean(memory::desc({rows}, dt::f32, tag::a), eng(), b.pointers[k->num_inputs + 1]);
    memory var(memory::desc({rows}, dt::f32, tag::a), eng(), b.pointers[k->num_inputs + 2]);
    memory gamma(memory::desc({cols}, dt::f32, tag::a), eng(), b.pointers[1]);
    memory beta(memory::desc({cols}, dt::f32, tag::a), eng(), b.pointers[2]);
    dnnl::layer_normalization_forward::desc d(dnnl::prop_kind::forward_training, src.get_desc(), mean.get_desc(), 1e-7f,
                                              flags::use_scale | flags::use_shift);
    dnnl::layer_normalization_forward::primitive_desc pd(d, eng());
    if (pd.dst_desc() != dst.get_desc()) throw dnnl::error(dnnl_unimplemented, "dst layout");
    c.steps.push_back({dnnl::layer_normalization_forward(pd),
                       {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var},
                        {DNNL_ARG_SCALE, gamma}, {DNNL_ARG_SHIFT, beta}}});
    return c;
}

Case layernorm_bwd_dx(const akg_kernel *k, KernelBuffers &b, bool) {
    // inputs: dy, x, variance, mean, gamma (the pattern's order); output dx.
    Case c;
    int64_t rows = k->inputs[0].shape[0], cols = k->inputs[0].shape[1];
    memory dy = wrap(k->inputs[0], b.pointers[0]);
    memory x = wrap(k->inputs[1], b.pointers[1]);
    memory var(memory::desc({rows}, dt::f32, tag::a), eng(), b.pointers[2]);
    memory mean(memory::desc({rows}, dt::f32, tag::a), eng(), b.pointers[3]);
    memory gamma(memory::desc({cols}, dt::f32, tag::a), eng(), b.pointers[4]);
    memory dx = wrap(k->outputs[0], b.pointers[k->num_inputs]);
    dnnl::layer_normalization_forward::desc fd(dnnl::prop_kind::forward_training, x.get_desc(), mean.get_desc(), 1e-7f,
                                               flags::use_scale);
    dnnl::layer_normalization_forward::primitive_desc fpd(fd, eng());
    // oneDNN 2.6 has no backward_data with a scale: prop_kind::backward also computes
    // dgamma ([C], into a scratch buffer).
    dnnl::layer_normalization_backward::desc bd(dnnl::prop_kind::backward, dx.get_desc(), x.get_desc(),
                                                mean.get_desc(), 1e-7f, flags::use_scale);
    dnnl::layer_normalization_backward::primitive_desc pd(bd, eng(), fpd);
    memory dgamma(memory::desc({cols}, dt::f32, tag::a), eng());
    c.keep.push_back(dgamma);
    c.steps.push_back({dnnl::layer_normalization_backward(pd),
                       {{DNNL_ARG_SRC, x}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var},
                        {DNNL_ARG_SCALE, gamma}, {DNNL_ARG_DIFF_SRC, dx}, {DNNL_ARG_DIFF_SCALE, dgamma}}});
    return c;
}

Step binary_step(algorithm alg, const memory &a, const memory &bm, const memory &dst, const dnnl::post_ops &po,
                 const std::vector<memory> &post_srcs, const dnnl::primitive_attr *base_attr = nullptr) {
    dnnl::primitive_attr attr = base_attr ? *base_attr : dnnl::primitive_attr();
    attr.set_post_ops(po);
    dnnl::binary::desc d(alg, a.get_desc(), bm.get_desc(), dst.get_desc());
    dnnl::binary::primitive_desc pd(d, attr, eng());
    Step s{dnnl::binary(pd), {{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, bm}, {DNNL_ARG_DST, dst}}};
    for (size_t i = 0; i < post_srcs.size(); ++i)
        if (post_srcs[i]) s.args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1] = post_srcs[i];
    return s;
}

Case bias_gelu_f32(const akg_kernel *k, KernelBuffers &b, bool) {
    Case c;
    auto &x = k->inputs[0];
    memory src = wrap(x, b.pointers[0]);
    memory bias = wrap(k->inputs[1], b.pointers[1], {1, x.shape[1]}, tag::ab);
    memory dst = wrap(k->outputs[0], b.pointers[k->num_inputs]);
    dnnl::post_ops po;
    po.append_eltwise(1.0f, algorithm::eltwise_gelu_tanh, 0.f, 0.f);
    c.steps.push_back(binary_step(algorithm::binary_add, src, bias, dst, po, {memory()}));
    return c;
}

Case bias_gelu_f16(const akg_kernel *k, KernelBuffers &b, bool) {
    // inputs: bias (f32), x (f16); outputs: x + bias (f16), gelu(x + bias) (f16)
    Case c;
    auto &x = k->inputs[1];
    memory src = wrap(x, b.pointers[1]);
    memory bias = wrap(k->inputs[0], b.pointers[0], {1, x.shape[1]}, tag::ab);
    memory sum = wrap(k->outputs[0], b.pointers[k->num_inputs]);
    memory dst = wrap(k->outputs[1], b.pointers[k->num_inputs + 1]);
    c.steps.push_back(binary_step(algorithm::binary_add, src, bias, sum, dnnl::post_ops(), {}));
    dnnl::eltwise_forward::desc ed(dnnl::prop_kind::forward_inference, algorithm::eltwise_gelu_tanh, sum.get_desc(), 0.f, 0.f);
    dnnl::eltwise_forward::primitive_desc epd(ed, eng());
    if (epd.dst_desc() != dst.get_desc()) throw dnnl::error(dnnl_unimplemented, "dst layout");
    c.steps.push_back({dnnl::eltwise_forward(epd), {{DNNL_ARG_SRC, sum}, {DNNL_ARG_DST, dst}}});
    return c;
}

Case add_relu(const akg_kernel *k, KernelBuffers &b, bool blocked) {
    Case c;
    memory a = act(c, k->inputs[0], b.pointers[0], blocked);
    memory s = act(c, k->inputs[1], b.pointers[1], blocked);
    memory dst = blocked ? memory(a.get_desc(), eng()) : wrap(k->outputs[0], b.pointers[k->num_inputs]);
    if (blocked) c.keep.push_back(dst);
    dnnl::post_ops po;
    po.append_eltwise(1.0f, algorithm::eltwise_relu, 0.f, 0.f);
    c.steps.push_back(binary_step(algorithm::binary_add, a, s, dst, po, {memory()}));
    return c;
}

Case bias_log_softmax(const akg_kernel *k, KernelBuffers &b, bool) {
    Case c;
    auto &x = k->inputs[0];
    memory src = wrap(x, b.pointers[0]);
    memory bias = wrap(k->inputs[1], b.pointers[1], {1, x.shape[1]}, tag::ab);
    memory dst = wrap(k->outputs[0], b.pointers[k->num_inputs]);
    c.steps.push_back(binary_step(algorithm::binary_add, src, bias, dst, dnnl::post_ops(), {}));
    dnnl::logsoftmax_forward::desc d(dnnl::prop_kind::forward_inference, dst.get_desc(), 1);
    dnnl::logsoftmax_forward::primitive_desc pd(d, eng());
    c.steps.push_back({dnnl::logsoftmax_forward(pd), {{DNNL_ARG_SRC, dst}, {DNNL_ARG_DST, dst}}});
    return c;
}

Case attention_softmax_dropout(const akg_kernel *k, KernelBuffers &b, bool) {
    // inputs: scores, additive mask [B,1,1,S], keep mask; outputs: softmax, dropped softmax
    Case c;
    memory scores = wrap(k->inputs[0], b.pointers[0]);
    memory mask = wrap(k->inputs[1], b.pointers[1]);
    memory keep = wrap(k->inputs[2], b.pointers[2]);
    memory prob = wrap(k->outputs[0], b.pointers[k->num_inputs]);
    memory out = wrap(k->outputs[1], b.pointers[k->num_inputs + 1]);
    dnnl::primitive_attr scale;
    scale.set_scales(DNNL_ARG_SRC_0, 0, {0.125f});
    c.steps.push_back(binary_step(algorithm::binary_add, scores, mask, prob, dnnl::post_ops(), {}, &scale));
    dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, prob.get_desc(), 3);
    dnnl::softmax_forward::primitive_desc pd(d, eng());
    c.steps.push_back({dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, prob}, {DNNL_ARG_DST, prob}}});
    dnnl::post_ops po;
    po.append_eltwise(1.0f, algorithm::eltwise_linear, 1.0f / 0.9f, 0.f);
    c.steps.push_back(binary_step(algorithm::binary_mul, prob, keep, out, po, {memory()}));
    return c;
}

Case bias_dropout_residual_layernorm(const akg_kernel *k, KernelBuffers &b, bool) {
    // inputs: x, bias, keep mask, residual, gamma, beta; outputs: sum, y, mean, variance
    Case c;
    auto &x = k->inputs[0];
    int64_t rows = x.shape[0], cols = x.shape[1];
    memory src = wrap(x, b.pointers[0]);
    memory bias = wrap(k->inputs[1], b.pointers[1], {1, cols}, tag::ab);
    memory keep = wrap(k->inputs[2], b.pointers[2]);
    memory res = wrap(k->inputs[3], b.pointers[3]);
    memory gamma(memory::desc({cols}, dt::f32, tag::a), eng(), b.pointers[4]);
    memory beta(memory::desc({cols}, dt::f32, tag::a), eng(), b.pointers[5]);
    memory sum = wrap(k->outputs[0], b.pointers[k->num_inputs]);
    memory y = wrap(k->outputs[1], b.pointers[k->num_inputs + 1]);
    memory mean(memory::desc({rows}, dt::f32, tag::a), eng(), b.pointers[k->num_inputs + 2]);
    memory var(memory::desc({rows}, dt::f32, tag::a), eng(), b.pointers[k->num_inputs + 3]);
    dnnl::post_ops po;
    po.append_binary(algorithm::binary_mul, keep.get_desc());
    po.append_eltwise(1.0f, algorithm::eltwise_linear, 1.0f / 0.9f, 0.f);
    po.append_binary(algorithm::binary_add, res.get_desc());
    c.steps.push_back(binary_step(algorithm::binary_add, src, bias, sum, po, {keep, memory(), res}));
    dnnl::layer_normalization_forward::desc d(dnnl::prop_kind::forward_training, sum.get_desc(), mean.get_desc(), 1e-7f,
                                              flags::use_scale | flags::use_shift);
    dnnl::layer_normalization_forward::primitive_desc pd(d, eng());
    c.steps.push_back({dnnl::layer_normalization_forward(pd),
                       {{DNNL_ARG_SRC, sum}, {DNNL_ARG_DST, y}, {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var},
                        {DNNL_ARG_SCALE, gamma}, {DNNL_ARG_SHIFT, beta}}});
    return c;
}

Case embedding_sum(const akg_kernel *k, KernelBuffers &b, bool) {
    Case c;
    memory::dims d3 = dims_of(k->outputs[0]);
    memory w = wrap(k->inputs[0], b.pointers[0], d3, tag::abc);
    memory t = wrap(k->inputs[1], b.pointers[1], d3, tag::abc);
    memory pos = wrap(k->inputs[2], b.pointers[2], {1, d3[1], d3[2]}, tag::abc);
    memory dst = wrap(k->outputs[0], b.pointers[k->num_inputs]);
    // As two primitives: with the broadcast add as a binary post-op oneDNN 2.6 falls back to
    // its reference implementation (~100x slower).
    c.steps.push_back(binary_step(algorithm::binary_add, w, t, dst, dnnl::post_ops(), {}));
    c.steps.push_back(binary_step(algorithm::binary_add, dst, pos, dst, dnnl::post_ops(), {}));
    return c;
}

// BatchNorm apply (inference form: the given statistics) + ReLU. For bn_apply_relu the
// pattern derives mean/variance from the batch sums first ([C] work, negligible); oneDNN is
// given them directly.
Case bn_relu(const akg_kernel *k, KernelBuffers &b, bool blocked) {
    Case c;
    int64_t ch = k->inputs[0].shape[1];
    memory x = act(c, k->inputs[0], b.pointers[0], blocked);
    memory y = blocked ? memory(x.get_desc(), eng()) : wrap(k->outputs[0], b.pointers[k->num_inputs]);
    if (blocked) c.keep.push_back(y);
    auto vec = [&](int i) { return memory(memory::desc({ch}, dt::f32, tag::a), eng(), b.pointers[i]); };
    dnnl::batch_normalization_forward::desc d(dnnl::prop_kind::forward_inference, x.get_desc(), 1e-5f,
                                              flags::use_global_stats | flags::use_scale | flags::use_shift |
                                                  flags::fuse_norm_relu);
    dnnl::batch_normalization_forward::primitive_desc pd(d, eng());
    c.steps.push_back({dnnl::batch_normalization_forward(pd),
                       {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}, {DNNL_ARG_MEAN, vec(1)}, {DNNL_ARG_VARIANCE, vec(2)},
                        {DNNL_ARG_SCALE, vec(3)}, {DNNL_ARG_SHIFT, vec(4)}}});
    if (pd.workspace_desc().get_size() > 0) {
        memory ws(pd.workspace_desc(), eng());
        c.keep.push_back(ws);
        c.steps.back().args[DNNL_ARG_WORKSPACE] = ws;
    }
    return c;
}

// BatchNorm (given statistics) then residual add + ReLU (binary with a ReLU post-op, in place).
Case bn_residual_relu(const akg_kernel *k, KernelBuffers &b, bool blocked) {
    Case c;
    int64_t ch = k->inputs[0].shape[1];
    memory x = act(c, k->inputs[0], b.pointers[0], blocked);
    memory res = act(c, k->inputs[1], b.pointers[1], blocked);
    memory y = blocked ? memory(x.get_desc(), eng()) : wrap(k->outputs[0], b.pointers[k->num_inputs]);
    if (blocked) c.keep.push_back(y);
    auto vec = [&](int i) { return memory(memory::desc({ch}, dt::f32, tag::a), eng(), b.pointers[i]); };
    dnnl::batch_normalization_forward::desc d(dnnl::prop_kind::forward_inference, x.get_desc(), 1e-5f,
                                              flags::use_global_stats | flags::use_scale | flags::use_shift);
    dnnl::batch_normalization_forward::primitive_desc pd(d, eng());
    c.steps.push_back({dnnl::batch_normalization_forward(pd),
                       {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}, {DNNL_ARG_MEAN, vec(3)}, {DNNL_ARG_VARIANCE, vec(2)},
                        {DNNL_ARG_SCALE, vec(4)}, {DNNL_ARG_SHIFT, vec(5)}}});
    dnnl::post_ops po;
    po.append_eltwise(1.0f, algorithm::eltwise_relu, 0.f, 0.f);
    c.steps.push_back(binary_step(algorithm::binary_add, y, res, y, po, {memory()}));
    return c;
}

Case bias_residual_relu(const akg_kernel *k, KernelBuffers &b, bool blocked) {
    // inputs: x, bias [C], residual
    Case c;
    auto &x = k->inputs[0];
    memory src = act(c, x, b.pointers[0], blocked);
    memory res = act(c, k->inputs[2], b.pointers[2], blocked);
    memory bias = wrap(k->inputs[1], b.pointers[1], {1, x.shape[1], 1, 1}, tag::abcd);
    memory dst = blocked ? memory(src.get_desc(), eng()) : wrap(k->outputs[0], b.pointers[k->num_inputs]);
    if (blocked) c.keep.push_back(dst);
    dnnl::post_ops po;
    po.append_binary(algorithm::binary_add, res.get_desc());
    po.append_eltwise(1.0f, algorithm::eltwise_relu, 0.f, 0.f);
    c.steps.push_back(binary_step(algorithm::binary_add, src, bias, dst, po, {res, memory()}));
    return c;
}

struct Mapping {
    const char *kernel;
    Builder build;
    bool has_blocked; // also run in nChw16c
    const char *what;
};

const std::vector<Mapping> &mappings() {
    static const std::vector<Mapping> m = {
        {"layernorm_fwd_f32", layernorm_fwd, false, "layer_normalization fwd (training: mean/var out)"},
        {"layernorm_fwd_f16", layernorm_fwd, false, "layer_normalization fwd f16"},
        {"layernorm_bwd_dx_f32", layernorm_bwd_dx, false, "layer_normalization bwd (also dgamma)"},
        {"bias_gelu_f32", bias_gelu_f32, false, "binary add + gelu_tanh post-op"},
        {"bias_gelu_f16", bias_gelu_f16, false, "binary add, eltwise gelu_tanh"},
        {"add_relu_f32", add_relu, false, "binary add + relu post-op"},
        {"mlm_bias_log_softmax_f32", bias_log_softmax, false, "binary add, logsoftmax in place"},
        {"attention_softmax_dropout_f32", attention_softmax_dropout, false,
         "binary add (src0 scale), softmax in place, binary mul + linear post-op"},
        {"bias_dropout_residual_layernorm_f32", bias_dropout_residual_layernorm, false,
         "binary add + (mul, linear, add) post-ops, layer_normalization"},
        {"embedding_sum_f32", embedding_sum, false, "binary add, binary add (broadcast) in place"},
        {"bn_apply_relu_f16", bn_relu, true, "batch_normalization (global stats, fused relu)"},
        {"bottleneck_end_f16", bn_residual_relu, true, "batch_normalization, binary add + relu post-op"},
        {"conv_bias_residual_relu_f16", bias_residual_relu, true, "binary add + (add, relu) post-ops"},
    };
    return m;
}

struct Prepared {
    std::unique_ptr<Case> c;
    std::string error;
    bool tried = false;
};

void run_case(benchmark::State &state, const akg_kernel *k, const Mapping *m, bool blocked,
              std::shared_ptr<Prepared> prep) {
    const int threads = static_cast<int>(state.range(0));
    omp_set_num_threads(threads);
    KernelBuffers &b = buffers_for(k);
    if (!prep->tried) {
        prep->tried = true;
        try {
            prep->c = std::make_unique<Case>(m->build(k, b, blocked));
        } catch (const dnnl::error &e) {
            prep->error = std::string("oneDNN 2.6 cannot build it on this CPU: ") + e.what();
            for (size_t i = 0; i < k->num_inputs; ++i)
                if (k->inputs[i].dtype == AKG_DTYPE_FLOAT16) {
                    prep->error += " (float16 kernel: oneDNN 2.6 has no implementation of it for this CPU)";
                    break;
                }
        }
    }
    if (!prep->c) {
        state.SkipWithError(prep->error.c_str());
        return;
    }
    dnnl::stream s(eng());
    prep->c->run(s); // warm-up, untimed (as for every implementation)
    for (auto _ : state) prep->c->run(s);
    set_counters(state, k, threads);
    state.SetLabel(std::string(m->what) + " [" + prep->c->impls() + "]");
}

} // namespace

int register_onednn(const akg_kernel *const *kernels, size_t count) {
    int n = 0;
    for (const Mapping &m : mappings()) {
        const akg_kernel *k = nullptr;
        for (size_t i = 0; i < count; ++i)
            if (std::string(kernels[i]->name) == m.kernel) k = kernels[i];
        if (!k) continue;
        for (int blocked = 0; blocked <= (m.has_blocked ? 1 : 0); ++blocked) {
            auto prep = std::make_shared<Prepared>();
            const Mapping *mp = &m;
            register_timed(k->name, blocked ? "onednn_nChw16c" : "onednn",
                           [k, mp, blocked, prep](benchmark::State &s) { run_case(s, k, mp, blocked != 0, prep); });
            ++n;
        }
    }
    return n;
}

#endif

} // namespace akgbench
