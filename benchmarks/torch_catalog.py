#!/usr/bin/python3
"""PyTorch eager peer of the catalog kernels, for the side-by-side report (issue 4).

Two implementations per kernel, each at 1 and 2 threads (torch.set_num_threads):
  pytorch_ops     the composite JSON executed op by op with the equivalent torch op
                  (what PyTorch eager does with the unfused graph: one kernel per op);
  pytorch_native  where PyTorch has a library op for the pattern (native_layer_norm,
                  gelu, softmax, log_softmax, ...), the idiomatic torch code a user would write.
float16 ops that PyTorch 1.13 does not implement on CPU run in float32 between casts (counted).
Outputs are materialized (contiguous); in-place updates are copy_() into the input.

Timing: every (kernel, impl, threads) is measured in rounds, interleaved with the others;
each sample is the mean of a batch of calls lasting >= --min-time; the median and the
minimum of the samples are reported (the report uses the minimum, as for the C++ suite). Minor page faults per call are counted with getrusage and reported,
as are the malloc settings in the environment (tools/run-benchmarks.sh runs this with
MALLOC_MMAP_MAX_=0 and a large MALLOC_TRIM_THRESHOLD_ so that freed intermediates stay in
the heap and are not page-faulted in again on every call; without them each large
out-of-place op pays first-touch page faults).

Run with Debian's /usr/bin/python3 (python3-torch); writes JSON (see --out).
"""
import argparse
import functools
import glob
import json
import operator
import os
import platform
import resource
import statistics
import sys
import time

import torch

DT = {"float16": torch.float16, "float32": torch.float32, "float64": torch.float64, "bool": torch.bool,
      "int32": torch.int32, "int64": torch.int64, "int8": torch.int8, "uint8": torch.uint8}


def make_input(desc):
    shape = desc["shape"]
    dtype = DT[desc["data_type"]]
    n = 1
    for s in shape:
        n *= s
    if dtype.is_floating_point:
        t = (0.5 + 0.001 * (torch.arange(n, dtype=torch.float32) % 97)).to(dtype)
    elif dtype == torch.bool:
        t = torch.ones(n, dtype=torch.bool)
    else:
        t = torch.ones(n, dtype=dtype)
    return t.reshape(shape)


def attr(op, name, default=None):
    for a in op.get("attr") or []:
        if a["name"] == name:
            return a["value"]
    return default


class Graph:
    """A composite kernel as a list of torch calls over an environment of named tensors."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.inputs = [d[0] for d in kernel["input_desc"]]
        self.outputs = [d["tensor_name"] for d in kernel["output_desc"]]
        self.steps = []  # (fn, arg-getters, out name, declared dtype)
        self.upcasts = 0
        for op in kernel["op_desc"]:
            self.steps.append(self.compile_op(op))

    @staticmethod
    def getter(desc):
        if "value" in desc and desc.get("value") is not None:
            v = desc["value"]
            return lambda env: v
        name = desc["tensor_name"]
        return lambda env: env[name]

    def compile_op(self, op):
        n = op["name"]
        ins = [[self.getter(d) for d in formal] for formal in op["input_desc"]]
        first = [g[0] for g in ins]
        out = op["output_desc"][0]
        out_name, out_dtype = out["tensor_name"], DT[out["data_type"]]
        out_shape = out["shape"]

        def scal(x, like):
            return x if torch.is_tensor(x) else torch.tensor(x, dtype=like.dtype if torch.is_tensor(like) else torch.float32)

        binary = {"Add": operator.add, "TensorAdd": operator.add, "Sub": operator.sub, "Mul": operator.mul,
                  "RealDiv": operator.truediv, "Div": operator.truediv, "Greater": operator.gt,
                  "GreaterEqual": operator.ge, "Less": operator.lt, "LessEqual": operator.le,
                  "Equal": operator.eq, "NotEqual": operator.ne, "Pow": operator.pow}
        unary = {"Neg": torch.neg, "Abs": torch.abs, "Exp": torch.exp, "Log": torch.log, "Sqrt": torch.sqrt,
                 "Rsqrt": torch.rsqrt, "Tanh": torch.tanh, "Erf": torch.erf,
                 "IsNan": torch.isnan, "IsInf": torch.isinf}
        if n in binary:
            f = binary[n]
            a, b = first
            fn = lambda env: f(a(env), b(env))
        elif n in ("Maximum", "Minimum"):
            f = torch.maximum if n == "Maximum" else torch.minimum
            a, b = first
            fn = lambda env: (lambda x, y: f(scal(x, y), scal(y, x)))(a(env), b(env))
        elif n in unary:
            f = unary[n]
            a = first[0]
            fn = lambda env: f(a(env))
        elif n == "Select":
            c, a, b = first
            fn = lambda env: (lambda x, y: torch.where(c(env), scal(x, y), scal(y, x)))(a(env), b(env))
        elif n == "Cast":
            a = first[0]
            fn = lambda env: a(env).to(out_dtype)
        elif n in ("ReduceSum", "ReduceMax", "ReduceMin"):
            a = first[0]
            axis = attr(op, "axis", [])
            axis = [axis] if isinstance(axis, int) else list(axis)
            keep = bool(attr(op, "keep_dims", False))
            f = {"ReduceSum": torch.sum, "ReduceMax": torch.amax, "ReduceMin": torch.amin}[n]

            def fn(env, a=a, axis=axis, keep=keep, f=f):
                x = a(env)
                dims = axis if axis else list(range(x.dim()))
                r = f(x, dim=dims, keepdim=keep)
                return r.reshape(out_shape) if list(r.shape) != out_shape else r
        elif n in ("MatMul", "BatchMatMul"):
            # MindSpore's attributes: transpose_a / transpose_b swap the last two dimensions; an
            # optional third input is a bias over the columns.
            ta, tb = bool(attr(op, "transpose_a", False)), bool(attr(op, "transpose_b", False))
            a, b = first[0], first[1]
            bias = first[2] if len(first) > 2 else None

            def fn(env, a=a, b=b, bias=bias, ta=ta, tb=tb):
                x, y = a(env), b(env)
                r = torch.matmul(x.transpose(-1, -2) if ta else x, y.transpose(-1, -2) if tb else y)
                return r + bias(env) if bias is not None else r
        elif n == "Reshape":
            a = first[0]
            fn = lambda env: a(env).reshape(out_shape)
        elif n == "Transpose":
            a = first[0]
            perm = attr(op, "perm")
            fn = lambda env: a(env).permute(perm)
        elif n == "BroadcastTo":
            a = first[0]
            fn = lambda env: (lambda x: x.expand(out_shape) if torch.is_tensor(x) else torch.full(out_shape, x, dtype=out_dtype))(a(env))
        elif n == "AddN":
            terms = ins[0]
            fn = lambda env: functools.reduce(torch.add, [t(env) for t in terms])
        elif n in ("InplaceAssign", "Assign"):
            target, value = first[0], first[1]
            fake = first[2] if n == "InplaceAssign" else first[1]

            def fn(env, target=target, value=value, fake=fake):
                target(env).copy_(value(env))
                return fake(env)
        else:
            raise NotImplementedError(f"op {n}")
        return [fn, out_name, out_dtype]

    def run(self, args):
        env = dict(zip((d["tensor_name"] for d in self.inputs), args))
        for fn, name, dtype in self.steps:
            r = fn(env)
            if torch.is_tensor(r) and r.dtype != dtype:
                r = r.to(dtype)
            env[name] = r
        return [env[o].contiguous() for o in self.outputs]

    def prepare(self, args):
        """Runs once; float16 ops not implemented on CPU are rewritten to compute in float32."""
        env = dict(zip((d["tensor_name"] for d in self.inputs), args))
        for step in self.steps:
            fn, name, dtype = step
            try:
                r = fn(env)
            except RuntimeError as e:
                if "Half" not in str(e):
                    raise

                def up(env, fn=fn):
                    view = {k: (v.float() if torch.is_tensor(v) and v.dtype == torch.float16 else v) for k, v in env.items()}
                    return fn(view)
                step[0] = up
                self.upcasts += 1
                r = up(env)
            if torch.is_tensor(r) and r.dtype != dtype:
                r = r.to(dtype)
            env[name] = r


def native_impls():
    """Idiomatic torch code for the patterns PyTorch has library ops for (by input order)."""
    F = torch.nn.functional

    def layernorm(x, g, b):
        y, mean, rstd = torch.native_layer_norm(x, [x.shape[-1]], g, b, 1e-7)
        return [y, mean, rstd]

    def layernorm_f16(x, g, b):
        y, mean, rstd = torch.native_layer_norm(x.float(), [x.shape[-1]], g, b, 1e-7)
        return [y.half(), mean, rstd]

    def bias_gelu(x, b):
        return [F.gelu(x + b, approximate="tanh")]

    def add_relu(a, b):
        return [torch.relu_(a + b)]

    def mlm(x, b):
        return [torch.log_softmax(x + b, dim=-1)]

    def attn(s, mask, keep):
        p = torch.softmax(s * 0.125 + mask, dim=-1)
        return [p, p * keep * (1.0 / 0.9)]

    def bdrl(x, b, keep, res, g, beta):
        s = (x + b) * keep * (1.0 / 0.9) + res
        y, mean, rstd = torch.native_layer_norm(s, [s.shape[-1]], g, beta, 1e-7)
        return [s, y, mean, rstd]

    def embedding(w, t, pos):
        return [(w + t).reshape(-1, pos.shape[0], pos.shape[1]) + pos]

    def softmax_ce(logits, bias, labels):
        z = logits + bias
        logp = torch.log_softmax(z, dim=-1)
        loss = -(labels * logp).sum(dim=-1, keepdim=True)
        grad = (torch.exp(logp) - labels) / z.shape[0]
        return [loss, grad]

    def bn_apply_relu(x, s, ss, g, b):
        n = x.numel() / x.shape[1]
        mean = s / n
        var = ss / n - mean * mean
        y = torch.batch_norm(x.float(), g, b, mean, var, False, 0.0, 1e-5, False)
        return [torch.relu_(y).half(), mean, var]

    def bottleneck_end(x, res, var, mean, g, b):
        y = torch.batch_norm(x.float(), g, b, mean, var, False, 0.0, 1e-5, False)
        return [torch.relu_(y + res).half()]

    def momentum(w, acc, grad, lr):
        g = grad + 1e-4 * w
        acc.mul_(0.9).add_(g)
        w.sub_(lr * acc)
        return [w]

    return {
        "layernorm_fwd_f32": layernorm,
        "layernorm_fwd_f16": layernorm_f16,
        "bias_gelu_f32": bias_gelu,
        "add_relu_f32": add_relu,
        "mlm_bias_log_softmax_f32": mlm,
        "attention_softmax_dropout_f32": attn,
        "bias_dropout_residual_layernorm_f32": bdrl,
        "embedding_sum_f32": embedding,
        "softmax_cross_entropy_f32": softmax_ce,
        "bn_apply_relu_f16": bn_apply_relu,
        "bottleneck_end_f16": bottleneck_end,
    }


# The catalog's MatMul kernels with epilogues (bench_gemm.cpp's table): the PyTorch code a user
# writes for them, from tensors of the kernel's shapes made here, so they run before (and
# whatever the input order of) the kernels' patterns. nn.Linear's addmm carries the bias (its
# beta·C), the rest are eager ops. ta / tb: A stored [K, M], B stored [N, K].
GEMM_SPECS = {
    "gemm_qkv_bias_f32": dict(batch=(), m=2048, n=2304, k=768, epi={"bias"}),
    "gemm_attn_out_bias_residual_f32": dict(batch=(), m=2048, n=768, k=768, epi={"bias", "residual"}),
    "gemm_ffn1_bias_gelu_f32": dict(batch=(), m=2048, n=3072, k=768, epi={"bias", "gelu"}),
    "gemm_ffn1_bias_gelu_f16": dict(batch=(), m=2048, n=3072, k=768, epi={"bias", "gelu"}, f16=True),
    "gemm_ffn2_bias_residual_f32": dict(batch=(), m=2048, n=768, k=3072, epi={"bias", "residual"}),
    "gemm_mlm_head_bias_f32": dict(batch=(), m=320, n=21128, k=768, tb=True, epi={"bias"}),
    "bmm_attn_scores_scale_mask_f32": dict(batch=(16, 12), m=128, n=128, k=64, tb=True, epi={"scale", "mask"}),
    "bmm_attn_context_f32": dict(batch=(16, 12), m=128, n=64, k=128, epi=set()),
    "gemm_qkv_bias_split_heads_f32": dict(batch=(), m=2048, n=2304, k=768, epi={"bias", "split_heads"}),
    "bmm_attn_context_merge_heads_f32": dict(batch=(16, 12), m=128, n=64, k=128, epi={"merge_heads"}),
    "bmm_attn_scores_softmax_dropout_f32": dict(batch=(16, 12), m=128, n=128, k=64, tb=True,
                                                epi={"scale", "key_mask", "softmax_dropout"}),
    "gemm_attn_out_bias_residual_layernorm_f32": dict(batch=(), m=2048, n=768, k=768, epi={"bias", "residual", "layernorm"}),
    "gemm_dx_f32": dict(batch=(), m=2048, n=768, k=3072, tb=True, epi=set()),
    "gemm_dw_bias_grad_f32": dict(batch=(), m=768, n=3072, k=2048, ta=True, epi={"colsum"}),
    "gemm_fc_bias_f32": dict(batch=(), m=32, n=1001, k=2048, epi={"bias"}),
    "gemm_nt_f16": dict(batch=(), m=100352, n=128, k=256, tb=True, epi=set(), f16=True),
}


def gemm_native(spec):
    """-> (fn, info): the eager PyTorch code of one GEMM kernel over inputs made here. float16
    matmuls PyTorch 1.13 does not implement on CPU run in float32 between casts (timed)."""
    f16 = spec.get("f16", False)
    dt = torch.float16 if f16 else torch.float32
    batch, m, n, k = tuple(spec["batch"]), spec["m"], spec["n"], spec["k"]
    epi = spec["epi"]

    def make(shape, scale=1.0):
        t = make_input({"shape": list(shape), "data_type": "float32"}) * scale - 0.25 * scale
        return t.to(dt)

    a = make(batch + ((k, m) if spec.get("ta") else (m, k)), 4.0 / k)
    b = make(batch + ((n, k) if spec.get("tb") else (k, n)))
    bias = make((n,), 0.1) if "bias" in epi else None
    res = make(batch + (m, n)) if "residual" in epi else None
    mask = make((batch[0], 1, m, n), -1.0).float() if "mask" in epi else None
    key_mask = (torch.arange(batch[0] * n).reshape(batch[0], 1, 1, n) % 7 == 6).float() * -10000.0 if "key_mask" in epi else None
    keep = (torch.arange(functools.reduce(operator.mul, batch, 1) * m * n).reshape(batch + (m, n)) % 10 != 3).float() if "softmax_dropout" in epi else None
    gamma = make((n,)) if "layernorm" in epi else None
    beta = make((n,), 0.1) if "layernorm" in epi else None
    F = torch.nn.functional

    def run(cast):
        x = a.float() if cast else a
        w = b.float() if cast else b
        x = x.transpose(-1, -2) if spec.get("ta") else x
        w = w.transpose(-1, -2) if spec.get("tb") else w
        bb = bias.float() if cast and bias is not None else bias
        if "colsum" in epi:
            return [torch.matmul(x, w), b.sum(dim=0)]
        y = torch.addmm(bb, x, w) if bb is not None and not batch else torch.matmul(x, w)
        if "scale" in epi:
            y = y * 0.125
        if "mask" in epi:
            y = y + mask
        if "key_mask" in epi:
            y = y + key_mask
        if "softmax_dropout" in epi:
            p = torch.softmax(y, dim=-1)
            return [p, p * keep * (1 / 0.9)]
        if "residual" in epi:
            y = y + (res.float() if cast else res)
        if "gelu" in epi:
            y = F.gelu(y, approximate="tanh")
        if "layernorm" in epi:
            var, mean = torch.var_mean(y, dim=-1, unbiased=False, keepdim=True)
            return [F.layer_norm(y, (n,), gamma, beta, 1e-7), mean, var, y]
        # BERT's heads (16 x 128 tokens, 12 heads of 64), contiguous as a framework stores them.
        if "split_heads" in epi:
            y = y.reshape(16, 128, 3, 12, 64).permute(2, 0, 3, 1, 4).contiguous()
        if "merge_heads" in epi:
            y = y.permute(0, 2, 1, 3).reshape(2048, 768)
        return [y.to(dt) if cast else y]

    try:
        run(False)
        return (lambda: run(False)), {"float16_upcasts": 0}
    except RuntimeError as e:
        if "Half" not in str(e):
            raise
        run(True)
        return (lambda: run(True)), {"float16_upcasts": 1}


def time_batch(fn, min_time):
    fn()  # warm-up, untimed (as for every implementation of the suite)
    calls = 0
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    t0 = time.perf_counter()
    while True:
        fn()
        calls += 1
        t = time.perf_counter() - t0
        if t >= min_time:
            break
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
    return t / calls, calls, faults


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--patterns", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "patterns"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.05)
    ap.add_argument("--filter", default="")
    args = ap.parse_args()

    threads = [int(t) for t in args.threads.split(",")]
    natives = native_impls()
    cases = []  # (kernel, impl, fn)
    skipped = []
    for path in sorted(glob.glob(os.path.join(args.patterns, "*.json"))):
        name = os.path.splitext(os.path.basename(path))[0]
        if args.filter and args.filter not in name:
            continue
        kernel = json.load(open(path))
        inputs = [make_input(d[0]) for d in kernel["input_desc"]]
        try:
            g = Graph(kernel)
            g.prepare(inputs)
            cases.append((name, "pytorch_ops", (lambda g=g, a=inputs: g.run(a)), {"float16_upcasts": g.upcasts}))
        except Exception as e:  # an op torch cannot run
            skipped.append({"kernel": name, "impl": "pytorch_ops", "error": f"{type(e).__name__}: {e}"})
        if name in natives:
            f = natives[name]
            try:
                f(*inputs)
                cases.append((name, "pytorch_native", (lambda f=f, a=inputs: f(*a)), {}))
            except Exception as e:
                skipped.append({"kernel": name, "impl": "pytorch_native", "error": f"{type(e).__name__}: {e}"})
    for name, spec in GEMM_SPECS.items():
        if args.filter and args.filter not in name:
            continue
        try:
            fn, info = gemm_native(spec)
            cases.append((name, "pytorch_native", fn, info))
        except Exception as e:
            skipped.append({"kernel": name, "impl": "pytorch_native", "error": f"{type(e).__name__}: {e}"})
    for s in skipped:
        print(f"torch_catalog: {s['kernel']}/{s['impl']} skipped: {s['error']}", file=sys.stderr)

    samples = {}
    faults = {}
    calls = {}
    for r in range(args.rounds):
        for name, impl, fn, _ in cases:
            for t in threads:
                torch.set_num_threads(t)
                sec, n, pf = time_batch(fn, args.min_time)
                key = (name, impl, t)
                samples.setdefault(key, []).append(sec * 1e3)
                faults[key] = faults.get(key, 0) + pf
                calls[key] = calls.get(key, 0) + n
        print(f"torch_catalog: round {r + 1}/{args.rounds} done", file=sys.stderr)

    results = []
    for name, impl, _, extra in cases:
        for t in threads:
            key = (name, impl, t)
            results.append({"kernel": name, "impl": impl, "threads": t,
                            "median_ms": statistics.median(samples[key]), "min_ms": min(samples[key]), "samples_ms": samples[key],
                            "page_faults_per_call": faults[key] / calls[key], **extra})
    out = {
        "torch_version": torch.__version__,
        "python": sys.executable,
        "blas": "openblas" if "openblas" in torch.__config__.show().lower() else "see torch.__config__.show()",
        "malloc_env": {k: os.environ.get(k) for k in ("MALLOC_MMAP_MAX_", "MALLOC_TRIM_THRESHOLD_", "LD_PRELOAD")},
        "machine": platform.processor() or platform.machine(),
        "results": results,
        "skipped": skipped,
    }
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print(f"torch_catalog: wrote {args.out} ({len(results)} results, {len(skipped)} skipped)", file=sys.stderr)


if __name__ == "__main__":
    main()
