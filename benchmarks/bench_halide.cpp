// Halide 14 peers: the same Halide IR our front end produces (akg::lower_to_halide: one stage
// per op, tensor reads as calls, reductions over r0..), turned into Halide Funcs (one Func per
// stage, an RDom update per reduction, one output Func per kernel output and in-place write),
// scheduled by Halide's Adams2019 and Mullapudi2016 autoscheduler plugins (from the
// libhalide14-0-dev package) and JIT-compiled for the host. The pipelines read and write the
// kernel's own buffers; in-place updates are written into the input buffer they update.
// Halide's parallel loops run on OpenMP (a custom do_par_for) so that the thread count can be
// set per benchmark, like ours.
#include "bench_common.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#ifdef AKG_BENCH_HAVE_HALIDE
#include <Halide.h>

#include "frontend/composite_kernel.h"
#include "lower/lower_to_halide.h"
#include "lower/tensor_graph.h"
#include "passes/materialize.h"
#include "passes/math_identities.h"
#include "passes/simplify_stages.h"
#endif

#ifndef AKG_HALIDE_PLUGIN_DIR
#define AKG_HALIDE_PLUGIN_DIR "/usr/lib/x86_64-linux-gnu/halide14"
#endif

namespace akgbench {

#ifndef AKG_BENCH_HAVE_HALIDE

int register_halide(const akg_kernel *const *, size_t, const std::string &) {
    std::fprintf(stderr, "bench_catalog: built without the generator (Halide/isl): Halide peers skipped\n");
    return 0;
}

#else

namespace {

using namespace Halide;
using namespace Halide::Internal;

int g_threads = 2;

int omp_do_par_for(JITUserContext *ctx, int (*f)(JITUserContext *, int, uint8_t *), int min, int extent,
                   uint8_t *closure) {
    int status = 0;
#pragma omp parallel for num_threads(g_threads) schedule(dynamic) reduction(| : status)
    for (int i = min; i < min + extent; ++i) status |= f(ctx, i, closure);
    return status;
}

struct Unsupported : std::runtime_error {
    using std::runtime_error::runtime_error;
};

Type storage_type(akg::DType t) {
    switch (t) {
    case akg::DType::Float16: return Float(16);
    case akg::DType::Float32: return Float(32);
    case akg::DType::Float64: return Float(64);
    case akg::DType::Int8: return Int(8);
    case akg::DType::UInt8: return UInt(8);
    case akg::DType::Int32: return Int(32);
    case akg::DType::Int64: return Int(64);
    case akg::DType::Bool: return UInt(8);
    }
    return Float(32);
}

std::vector<Var> vars_of(size_t rank) { // Halide's dimension 0 is the innermost (last) tensor index
    std::vector<Var> v;
    for (size_t d = rank; d-- > 0;) v.push_back(Var(akg::index_var(static_cast<int>(d))));
    return v;
}

struct Converter {
    const akg::TensorGraph &g;
    std::map<std::string, Func> funcs;
    std::map<std::string, ImageParam> params;
    size_t max_reduce_rank = 0; // rank of the largest Func holding a reduction

    // Rewrites a stage expression: Int64 index arithmetic → Int32, i<d>/r<d> → Vars/RVars,
    // tensor reads → Func/ImageParam calls, akg_* math → Halide math.
    struct Mutator : IRMutator {
        Converter &c;
        const RDom *rdom = nullptr;
        size_t nred = 0;
        explicit Mutator(Converter &conv) : c(conv) {}
        using IRMutator::visit;
        Expr visit(const IntImm *op) override {
            if (op->type.bits() == 64) return make_const(Int(32), op->value);
            return op;
        }
        Expr visit(const Variable *op) override {
            if (op->name.size() > 1 && op->name[0] == 'r' && rdom) {
                int d = std::stoi(op->name.substr(1));
                return (*rdom)[static_cast<int>(nred) - 1 - d];
            }
            if (op->name.size() > 1 && op->name[0] == 'i') return Var(op->name);
            throw Unsupported("free variable " + op->name);
        }
        Expr visit(const Cast *op) override {
            Expr v = mutate(op->value);
            Type t = op->type.is_int() && op->type.bits() == 64 ? Int(32) : op->type;
            return v.type() == t ? v : Cast::make(t, v);
        }
        Expr visit(const Call *op) override {
            std::vector<Expr> args;
            for (const Expr &a : op->args) args.push_back(mutate(a));
            const bool buffer_read = op->name.rfind("buf$", 0) == 0;
            if (akg::is_tensor_read(op) || buffer_read) {
                std::string name = buffer_read ? op->name.substr(4) : op->name.substr(2);
                std::vector<Expr> rev(args.rbegin(), args.rend());
                for (auto &e : rev)
                    if (e.type() != Int(32)) e = cast<int>(e);
                auto p = c.params.find(name);
                if (p != c.params.end()) {
                    Expr v = rev.empty() ? p->second() : p->second(rev);
                    return v.type() == op->type ? v : Cast::make(op->type, v);
                }
                auto f = c.funcs.find(name);
                if (f == c.funcs.end()) throw Unsupported("read of unknown tensor " + name);
                Expr v = rev.empty() ? f->second() : f->second(rev);
                return v.type() == op->type ? v : Cast::make(op->type, v);
            }
            const std::string &n = op->name;
            if (n == "akg_exp" || n == "akg_exp_no_overflow") return exp(args[0]);
            // Float16-precision variants (ops declared float16): Halide's fast_exp, accurate to
            // about the last 5 bits of a float, a like-for-like cheaper polynomial.
            if (n == "akg_exp_h" || n == "akg_exp_h_no_overflow") return fast_exp(args[0]);
            if (n == "akg_tanh_h") return 1.0f - 2.0f / (fast_exp(2.0f * args[0]) + 1.0f);
            if (n == "akg_tanh_plus_one_h") return 2.0f / (1.0f + fast_exp(-2.0f * args[0]));
            if (n == "akg_div_one_plus_exp_h") return args[0] / (1.0f + fast_exp(args[1]));
            if (n == "akg_log") return log(args[0]);
            if (n == "akg_sqrt") return sqrt(args[0]);
            if (n == "akg_rsqrt") return 1.0f / sqrt(args[0]);
            // Halide's tanh() is a scalar libm call ("does not vectorize well"); give Halide its
            // best vectorizable form, through its polynomial exp.
            if (n == "akg_tanh") return 1.0f - 2.0f / (exp(2.0f * args[0]) + 1.0f);
            if (n == "akg_tanh_plus_one") return 2.0f / (1.0f + exp(-2.0f * args[0]));
            if (n == "akg_div_one_plus_exp") return args[0] / (1.0f + exp(args[1]));
            if (n == "akg_erf") return erf(args[0]);
            if (n == "akg_pow") return pow(args[0], args[1]);
            if (n == "akg_abs") return op->type.is_float() ? abs(args[0]) : cast(op->type, abs(args[0]));
            if (n == "akg_feq") return args[0] == args[1];
            if (n == "akg_fne") return args[0] != args[1];
            if (n == "akg_flt") return args[0] < args[1];
            if (n == "akg_fle") return args[0] <= args[1];
            if (n == "akg_fgt") return args[0] > args[1];
            if (n == "akg_fge") return args[0] >= args[1];
            if (n == "akg_isnan") return is_nan(args[0]);
            if (n == "akg_isinf") return is_inf(args[0]);
            if (n == "akg_idiv") return args[0] / args[1];
            if (op->is_intrinsic() || op->call_type == Call::PureIntrinsic) return Call::make(op->type, op->name, args, op->call_type);
            throw Unsupported("math function " + n + " has no Halide equivalent here");
        }
    };

    explicit Converter(const akg::TensorGraph &graph) : g(graph) {}

    Expr convert(const Expr &e, const RDom *r = nullptr, size_t nred = 0) {
        Mutator m(*this);
        m.rdom = r;
        m.nred = nred;
        return m.mutate(e);
    }

    // After materialize_and_inline, the graph's remaining (materialized) stages read buffers
    // (in<k>, out<k>, t<k>); every such stage becomes a Func, every kernel input an ImageParam.
    void build() {
        for (const akg::Stage &s : g.stages) {
            if (s.kind == akg::StageKind::Input) {
                ImageParam p(storage_type(s.dtype), static_cast<int>(s.shape.size()), "in_" + std::to_string(params.size()));
                params.emplace(s.tensor, p);
                if (!s.buffer.empty()) params.emplace(s.buffer, p);
                continue;
            }
            if (!s.materialized) continue;
            Func f("s" + std::to_string(funcs.size()));
            std::vector<Var> v = vars_of(s.shape.size());
            std::vector<Expr> ve(v.begin(), v.end());
            if (s.kind == akg::StageKind::Compute) {
                if (ve.empty()) f() = convert(s.value);
                else f(v) = convert(s.value);
            } else {
                Region region;
                for (size_t d = s.reduce_extents.size(); d-- > 0;)
                    region.emplace_back(Expr(0), Expr(static_cast<int>(s.reduce_extents[d])));
                RDom r(region);
                max_reduce_rank = std::max(max_reduce_rank, s.shape.size() + s.reduce_extents.size());
                Expr body = convert(s.value, &r, s.reduce_extents.size());
                Type t = body.type();
                Expr init;
                switch (s.reduce_kind) {
                case akg::ReduceKind::Sum: init = make_zero(t); break;
                case akg::ReduceKind::Prod: init = make_one(t); break;
                case akg::ReduceKind::Max: init = t.min(); break;
                case akg::ReduceKind::Min: init = t.max(); break;
                }
                if (ve.empty()) f() = init;
                else f(v) = init;
                FuncRef ref = ve.empty() ? f() : f(ve);
                switch (s.reduce_kind) {
                case akg::ReduceKind::Sum: ref = ref + body; break;
                case akg::ReduceKind::Prod: ref = ref * body; break;
                case akg::ReduceKind::Max: ref = max(ref, body); break;
                case akg::ReduceKind::Min: ref = min(ref, body); break;
                }
            }
            funcs.emplace(s.tensor, f);
            if (!s.inplace_write && !s.buffer.empty()) funcs.emplace(s.buffer, f);
        }
    }
};

struct HalidePeer {
    std::string error;
    Pipeline pipeline;
    std::vector<ImageParam> params;       // kernel inputs, in order
    std::vector<Buffer<>> in_buffers, out_buffers;
    double schedule_seconds = 0;
    std::string note;
    bool ready = false;
};

Buffer<> wrap(Type t, void *p, const akg::Shape &shape) {
    std::vector<int> sizes;
    for (size_t d = shape.size(); d-- > 0;) sizes.push_back(static_cast<int>(shape[d]));
    if (sizes.empty()) return Buffer<>(t, p, 0, static_cast<const halide_dimension_t *>(nullptr));
    return Buffer<>(t, p, sizes);
}

// Halide 14 detects this CPU as Sapphire Rapids and would emit AVX512-FP16 for float16 math,
// which a CPU without avx512_fp16 (e.g. AMD Zen 4) does not have: drop the feature there.
Target host_target() {
    Target t = get_host_target();
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    bool fp16 = false;
    while (std::getline(cpuinfo, line))
        if (line.rfind("flags", 0) == 0) {
            fp16 = line.find(" avx512_fp16") != std::string::npos;
            break;
        }
    if (!fp16 && t.has_feature(Target::AVX512_SapphireRapids)) t = t.without_feature(Target::AVX512_SapphireRapids);
    return t;
}

void load_plugins() {
    static bool loaded = false;
    if (loaded) return;
    loaded = true;
    load_plugin(AKG_HALIDE_PLUGIN_DIR "/libautoschedule_adams2019.so");
    load_plugin(AKG_HALIDE_PLUGIN_DIR "/libautoschedule_mullapudi2016.so");
}

void prepare(HalidePeer &h, const akg_kernel *k, KernelBuffers &b, const std::string &root, const std::string &scheduler) {
    akg::CompositeKernel kernel = akg::load_composite(root + "/" + k->pattern_file);
    akg::validate_composite(kernel);
    // The front end's Halide IR after its normalization (elementwise producers inlined into
    // their consumers unless expensive and reused; index maps simplified with loop bounds):
    // one Func per remaining stage, so the autoschedulers see the graph our scheduler sees.
    akg::TensorGraph g = akg::lower_to_halide(kernel);
    akg::materialize_and_inline(g);
    akg::simplify_stages(g);
    akg::rewrite_math_identities(g);
    Converter c(g);
    c.build();
    std::vector<Func> outs;
    for (size_t i = 0; i < kernel.outputs.size(); ++i) {
        const akg::Stage *found = nullptr;
        for (const akg::Stage &st : g.stages)
            if (st.materialized && !st.inplace_write && st.kind != akg::StageKind::Input &&
                st.buffer_kind == akg::BufferKind::KernelOutput && st.buffer_index == static_cast<int>(i))
                found = &st;
        if (!found) throw Unsupported("no stage stores kernel output " + std::to_string(i));
        const akg::Stage &s = *found;
        Func o("out" + std::to_string(i));
        std::vector<Var> v = vars_of(kernel.outputs[i].shape.size());
        Type st = storage_type(kernel.outputs[i].dtype);
        Expr val;
        if (s.kind == akg::StageKind::Input) {
            std::vector<Expr> ve(v.begin(), v.end());
            val = c.params.at(s.tensor)(ve);
        } else {
            std::vector<Expr> ve(v.begin(), v.end());
            val = ve.empty() ? c.funcs.at(s.tensor)() : c.funcs.at(s.tensor)(ve);
        }
        if (v.empty()) o() = cast(st, val);
        else o(v) = cast(st, val);
        outs.push_back(o);
        h.out_buffers.push_back(wrap(st, b.pointers[k->num_inputs + i], kernel.outputs[i].shape));
    }
    for (const akg::Stage &s : g.stages) {
        if (!s.inplace_write) continue;
        Func o("inplace" + std::to_string(outs.size()));
        std::vector<Var> v = vars_of(s.shape.size());
        std::vector<Expr> ve(v.begin(), v.end());
        Type st = storage_type(s.dtype);
        if (v.empty()) o() = cast(st, c.funcs.at(s.tensor)());
        else o(v) = cast(st, c.funcs.at(s.tensor)(ve));
        outs.push_back(o);
        h.out_buffers.push_back(wrap(st, b.pointers[static_cast<size_t>(s.buffer_index)], s.shape));
    }
    for (size_t i = 0; i < kernel.inputs.size(); ++i) {
        ImageParam p = c.params.at(kernel.inputs[i].name);
        for (size_t d = 0; d < kernel.inputs[i].shape.size(); ++d)
            p.dim(static_cast<int>(d)).set_estimate(0, static_cast<int>(kernel.inputs[i].shape[kernel.inputs[i].shape.size() - 1 - d]));
        h.params.push_back(p);
        h.in_buffers.push_back(wrap(p.type(), b.pointers[i], kernel.inputs[i].shape));
    }
    for (size_t i = 0; i < outs.size(); ++i) {
        Region est;
        for (int d = 0; d < h.out_buffers[i].dimensions(); ++d) est.emplace_back(Expr(0), Expr(h.out_buffers[i].dim(d).extent()));
        if (!est.empty()) outs[i].set_estimates(est);
    }
    h.pipeline = Pipeline(outs);
    Target target = host_target();
    load_plugins();
    auto t0 = std::chrono::steady_clock::now();
    // Adams2019's beam search (default beam 32, 5 passes) explodes on the 4-D attention
    // softmaxes (>500k states per pass, >8 GB, minutes): every pipeline with a reduction over
    // 4 or more loop dimensions (output + reduced) gets its greedy mode (HL_BEAM_SIZE=1, one
    // pass), and the report says so. AKG_BENCH_ADAMS_BEAM overrides the choice.
    const char *beam_env = std::getenv("AKG_BENCH_ADAMS_BEAM");
    std::string beam = beam_env ? beam_env : (c.max_reduce_rank >= 4 ? "1" : "");
    if (scheduler == "Adams2019" && !beam.empty()) {
        setenv("HL_BEAM_SIZE", beam.c_str(), 1);
        h.note = "beam " + beam;
    } else unsetenv("HL_BEAM_SIZE");
    h.pipeline.auto_schedule(scheduler, target, MachineParams(2, 32 << 20, 40));
    unsetenv("HL_BEAM_SIZE");
    h.pipeline.jit_handlers().custom_do_par_for = omp_do_par_for;
    h.pipeline.compile_jit(target);
    h.schedule_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (size_t i = 0; i < h.params.size(); ++i) h.params[i].set(h.in_buffers[i]);
    h.ready = true;
}

void run(benchmark::State &state, const akg_kernel *k, std::shared_ptr<HalidePeer> h, const std::string &root,
         const std::string &scheduler) {
    const int threads = static_cast<int>(state.range(0));
    KernelBuffers &b = buffers_for(k);
    if (!h->ready && h->error.empty()) {
        try {
            prepare(*h, k, b, root, scheduler);
        } catch (const Unsupported &e) {
            h->error = std::string("not converted to Halide Funcs: ") + e.what();
        } catch (const Halide::Error &e) {
            h->error = std::string("Halide failed: ") + e.what();
        } catch (const std::exception &e) {
            h->error = std::string("failed: ") + e.what();
        }
        if (!h->error.empty()) std::fprintf(stderr, "bench_catalog: %s/halide_%s skipped: %s\n", k->name, scheduler.c_str(), h->error.c_str());
    }
    if (!h->ready) {
        state.SkipWithError(h->error.c_str());
        return;
    }
    g_threads = threads;
    Realization r(h->out_buffers);
    h->pipeline.realize(r); // warm-up, untimed (as for every implementation)
    for (auto _ : state) h->pipeline.realize(r);
    set_counters(state, k, threads);
    state.counters["schedule_s"] = h->schedule_seconds;
    if (!h->note.empty()) state.SetLabel(h->note);
}

} // namespace

int register_halide(const akg_kernel *const *kernels, size_t count, const std::string &root) {
    if (const char *off = std::getenv("AKG_BENCH_NO_HALIDE"); off && *off) {
        std::fprintf(stderr, "bench_catalog: AKG_BENCH_NO_HALIDE set: Halide peers skipped\n");
        return 0;
    }
    int n = 0;
    for (const char *sched : {"Adams2019", "Mullapudi2016"}) {
        std::string impl = std::string("halide_") + sched;
        for (size_t i = 0; i < count; ++i) {
            const akg_kernel *k = kernels[i];
            auto h = std::make_shared<HalidePeer>();
            std::string s = sched;
            register_timed(k->name, impl, [k, h, root, s](benchmark::State &st) { run(st, k, h, root, s); });
            ++n;
        }
    }
    return n;
}

#endif

} // namespace akgbench
