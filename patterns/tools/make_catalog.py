#!/usr/bin/env python3
"""Build the akg kernel catalog: composite JSON files in MindSpore/AKG's format.

Every pattern is a Python function of a size table. Running this script writes, for each
pattern NAME,
    patterns/NAME.json                 the full-size kernel (real BERT-base / ResNet-50 shapes)
    tests/patterns_small/NAME.json     the same graph at small odd sizes (the test twin)
and then
    patterns/meson.build               `catalog_patterns = [...]`: the stems of all patterns/*.json
    patterns/README.md                 the catalog table and per-kernel input/output notes

Standard library only; the output is deterministic (keys sorted as MindSpore dumps them,
indent=1). Usage:
    python3 patterns/tools/make_catalog.py            # (re)write everything
    python3 patterns/tools/make_catalog.py --check    # exit 1 if any file would change
    python3 patterns/tools/make_catalog.py --list     # print the pattern names
"""

import argparse
import json
import math
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))          # the project root
PATTERN_DIR = os.path.join(ROOT, 'patterns')
SMALL_DIR = os.path.join(ROOT, 'tests', 'patterns_small')

# --------------------------------------------------------------------------------------------
# Numbers as MindSpore writes them: an inline constant carries the value its dtype can hold.
# --------------------------------------------------------------------------------------------


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def f16(x):
    return struct.unpack('<e', struct.pack('<e', x))[0]


def round_to(dtype, x):
    if dtype == 'float32':
        return f32(x)
    if dtype == 'float16':
        return f16(x)
    if dtype == 'int32':
        return int(x)
    if dtype == 'bool':
        return bool(x)
    raise ValueError(dtype)


FLT_MAX = f32(3.4028234663852886e38)
DTYPE_BYTES = {'float32': 4, 'float16': 2, 'int32': 4, 'bool': 1}

# --------------------------------------------------------------------------------------------
# Shape rules (numpy broadcasting, reductions, reshape, transpose)
# --------------------------------------------------------------------------------------------


def broadcast(*shapes):
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = set()
        for s in shapes:
            j = i - (rank - len(s))
            if j >= 0:
                dims.add(s[j])
        dims.discard(1)
        if len(dims) > 1:
            raise ValueError('shapes %r do not broadcast' % (shapes,))
        out.append(dims.pop() if dims else 1)
    return out


def reduce_shape(shape, axis, keep_dims):
    rank = len(shape)
    axes = set(range(rank)) if axis == [] else {a % rank for a in axis}
    if keep_dims:
        return [1 if i in axes else d for i, d in enumerate(shape)]
    return [d for i, d in enumerate(shape) if i not in axes]


def reshape_shape(shape, new):
    n = math.prod(shape)
    new = list(new)
    if -1 in new:
        k = new.index(-1)
        rest = math.prod(d for i, d in enumerate(new) if i != k)
        new[k] = n // rest
    if math.prod(new) != n:
        raise ValueError('reshape %r -> %r changes the element count' % (shape, new))
    return new


# --------------------------------------------------------------------------------------------
# The graph builder
# --------------------------------------------------------------------------------------------

COMPARE_OPS = ('Greater', 'GreaterEqual', 'Less', 'LessEqual', 'Equal', 'NotEqual')


class T:
    """A tensor of the graph: a kernel input, an inline constant or an op output."""

    def __init__(self, g, shape, dtype, kind, fmt='DefaultFormat', value=None):
        self.g, self.shape, self.dtype, self.kind = g, list(shape), dtype, kind
        self.fmt, self.value, self._name = fmt, value, None

    @property
    def name(self):
        # MindSpore numbers the parameters of a fused graph (inputs and constants alike) in the
        # order the op list first uses them: input_0, input_1, ...; op results are output_0_<k>.
        if self._name is None:
            if self.kind == 'out':
                raise AssertionError('op output without a name')
            self._name = 'input_%d' % self.g.next_in
            self.g.next_in += 1
        return self._name

    def desc(self, formal=None):
        d = {'data_type': self.dtype, 'format': self.fmt, 'shape': list(self.shape),
             'tensor_name': self.name}
        if formal is not None:
            d['name'] = formal
        if self.value is not None:
            d['value'] = self.value
        return d


class Graph:
    def __init__(self, sizes):
        self.s = sizes
        self.next_in = 0
        self.next_out = 0
        self.inputs = []      # (T, role, domain) in ABI order
        self.ops = []
        self.outputs = []     # (T, role)

    # ---- leaves ----
    def inp(self, shape, dtype, role, domain='normal', fmt='DefaultFormat'):
        t = T(self, shape, dtype, 'in', fmt)
        self.inputs.append((t, role, domain))
        return t

    def const(self, value, dtype):
        return T(self, [1], dtype, 'const', value=round_to(dtype, value))

    # ---- generic op ----
    def op(self, name, inputs, shape, dtype, attrs=None, fmt=None):
        in_desc = []
        for i, x in enumerate(inputs):
            if isinstance(x, list):            # variadic (AddN): one inner list, all 'input_0'
                in_desc.append([t.desc('input_%d' % i) for t in x])
            else:
                in_desc.append([x.desc('input_%d' % i)])
        out = T(self, shape, dtype, 'out', fmt or 'DefaultFormat')
        out._name = 'output_0_%d' % self.next_out
        self.next_out += 1
        attr = None
        if attrs:
            attr = [{'data_type': dt, 'name': n, 'value': v} for (n, dt, v) in attrs]
        self.ops.append({'attr': attr, 'impl_path': '', 'input_desc': in_desc, 'name': name,
                         'output_desc': [out.desc('output_0')]})
        return out

    # ---- elementwise ----
    def _bin(self, name, a, b, out_dtype=None):
        if a.dtype != b.dtype:
            raise ValueError('%s: dtypes %s and %s differ' % (name, a.dtype, b.dtype))
        return self.op(name, [a, b], broadcast(a.shape, b.shape), out_dtype or a.dtype)

    def add(self, a, b, name='Add'):
        return self._bin(name, a, b)

    def sub(self, a, b):
        return self._bin('Sub', a, b)

    def mul(self, a, b):
        return self._bin('Mul', a, b)

    def div(self, a, b):
        return self._bin('RealDiv', a, b)

    def maximum(self, a, b):
        return self._bin('Maximum', a, b)

    def minimum(self, a, b):
        return self._bin('Minimum', a, b)

    def cmp(self, name, a, b):
        assert name in COMPARE_OPS
        return self._bin(name, a, b, 'bool')

    def unary(self, name, a):
        return self.op(name, [a], a.shape, a.dtype)

    def cast(self, a, dtype, backed=True):
        attrs = [('dst_type', 'str', dtype)]
        if backed:
            attrs.append(('is_backed_cast', 'bool', False))
        return self.op('Cast', [a], a.shape, dtype, attrs)

    def select(self, c, a, b):
        assert c.dtype == 'bool' and a.dtype == b.dtype
        return self.op('Select', [c, a, b], broadcast(c.shape, a.shape, b.shape), a.dtype)

    def addn(self, xs):
        shape = broadcast(*[x.shape for x in xs])
        return self.op('AddN', [list(xs)], shape, xs[0].dtype,
                       [('dyn_input_sizes', 'listInt', [len(xs)]), ('n', 'int', len(xs))])

    # ---- reductions and layout ----
    def reduce(self, name, a, axis, keep_dims, atomic=False):
        attrs = [('axis', 'listInt', list(axis)), ('keep_dims', 'bool', keep_dims)]
        if atomic:
            attrs.append(('enable_atomic_add', 'bool', True))
        return self.op(name, [a], reduce_shape(a.shape, axis, keep_dims), a.dtype, attrs)

    def reduce_sum(self, a, axis, keep_dims, atomic=False):
        return self.reduce('ReduceSum', a, axis, keep_dims, atomic)

    def reduce_max(self, a, axis, keep_dims):
        return self.reduce('ReduceMax', a, axis, keep_dims)

    def reshape(self, a, shape_attr):
        return self.op('Reshape', [a], reshape_shape(a.shape, shape_attr), a.dtype,
                       [('shape', 'listInt', list(shape_attr))])

    def transpose(self, a, perm, fmt=None):
        return self.op('Transpose', [a], [a.shape[p] for p in perm], a.dtype,
                       [('perm', 'listInt', list(perm))], fmt)

    def broadcast_to(self, a, shape):
        broadcast(a.shape, shape)
        return self.op('BroadcastTo', [a], list(shape), a.dtype,
                       [('shape', 'listInt', list(shape))])

    # ---- matrix products ----
    def matmul(self, a, b, ta=False, tb=False, dst=None, batched=False, attrs=None):
        """MatMul (2-D) or BatchMatMul (leading batch axes broadcast) of a and b, transposed as
        transpose_a/transpose_b say; attrs in the order MindSpore's GPU expander writes them,
        unless a corpus kernel's own attr list is given."""
        dst = dst or a.dtype
        if a.dtype != b.dtype:
            raise ValueError('MatMul: dtypes %s and %s differ' % (a.dtype, b.dtype))
        if (a.shape[-2] if ta else a.shape[-1]) != (b.shape[-1] if tb else b.shape[-2]):
            raise ValueError('MatMul: %r . %r do not chain' % (a.shape, b.shape))
        if not batched and (len(a.shape) != 2 or len(b.shape) != 2):
            raise ValueError('MatMul: operands must be 2-D; use batched=True')
        M = a.shape[-1] if ta else a.shape[-2]
        N = b.shape[-2] if tb else b.shape[-1]
        batch = broadcast(a.shape[:-2], b.shape[:-2]) if batched else []
        if attrs is None:
            attrs = [('transpose_a', 'bool', ta), ('transpose_b', 'bool', tb),
                     ('dst_type', 'str', dst), ('left_format', 'str', 'DefaultFormat'),
                     ('right_format', 'str', 'DefaultFormat')]
        return self.op('BatchMatMul' if batched else 'MatMul', [a, b], list(batch) + [M, N], dst,
                       attrs)

    # ---- side effects ----
    def inplace_assign(self, ref, value, passthrough, fake_output):
        assert ref.kind == 'in', 'InplaceAssign must write a kernel input'
        return self.op('InplaceAssign', [ref, value, passthrough], passthrough.shape,
                       passthrough.dtype, [('fake_output', 'bool', fake_output)])

    def out(self, t, role):
        self.outputs.append((t, role))

    # ---- the composite JSON ----
    def to_json(self, name):
        used = set()
        for op in self.ops:
            for lst in op['input_desc']:
                for d in lst:
                    used.add(d['tensor_name'])
        for t, role, _ in self.inputs:
            if t.name not in used:
                raise AssertionError('%s: input %s (%s) is never used' % (name, t.name, role))
        return {
            'composite': True,
            'id': zlib.crc32(name.encode()) % 1000000,
            'input_desc': [[t.desc()] for t, _, _ in self.inputs],
            'op': name,
            'op_desc': self.ops,
            'output_desc': [t.desc() for t, _ in self.outputs],
            'platform': 'AKG',
            'process': 'cpu',
            'version': 1,
        }


# --------------------------------------------------------------------------------------------
# Sizes. FULL: BERT-base pre-training (batch 16 x seq 128, hidden 768, 12 x 64 heads, FFN 3072,
# vocab 21128, 20 masked tokens per sample) and ResNet-50 (batch 32, NCHW, 1001 classes).
# SMALL: odd sizes, none a multiple of 16, same graph.
# --------------------------------------------------------------------------------------------

FULL = dict(
    B=16, S=128, T=2048, H=768, NH=12, HD=64, F=3072, V=21128, M=320,
    WR=768, WC=3072,                         # the weight matrix of the optimizer kernels
    N=32,
    C1=256, H1=56, W1=56,                    # ResNet-50 stage 1 (conv2_x)
    C2=512, H2=28, W2=28,                    # stage 2 (conv3_x)
    C3=1024, H3=14, W3=14,                   # stage 3 (conv4_x)
    C4=2048, H4=7, W4=7,                     # stage 4 (conv5_x)
    K=1001, IH=224, IW=224,                  # classes, input image
    KO=512, KI=512, KH=3, KW=3,              # a conv weight for the SGD kernel
)

SMALL = dict(
    # BERT: tokens 51 = 3 x 17, hidden 39 = 3 heads x 13, FFN 37, vocab 131, 7 MLM rows. The
    # innermost sizes straddle the SIMD widths (17 = 16 + 1, 37 = 2*16 + 5, 39 = 2*16 + 7), so
    # both the vector body and the remainder of a loop are exercised.
    B=3, S=17, T=51, H=39, NH=3, HD=13, F=37, V=131, M=7,
    WR=13, WC=37,
    N=3,
    C1=5, H1=7, W1=19,
    C2=7, H2=5, W2=3,
    C3=17, H3=5, W3=3,
    C4=13, H4=5, W4=7,
    K=37, IH=7, IW=19,
    KO=7, KI=5, KH=3, KW=1,
)

SIZE_DOC = dict(
    B='BERT batch', S='BERT sequence length', T='BERT tokens B*S', H='BERT hidden = NH*HD',
    NH='attention heads', HD='head size', F='FFN intermediate size', V='vocabulary',
    M='MLM rows (masked positions)', WR='optimizer weight rows', WC='optimizer weight columns',
    N='ResNet batch', C1='stage-1 channels', H1='stage-1 height', W1='stage-1 width',
    C2='stage-2 channels', H2='stage-2 height', W2='stage-2 width',
    C3='stage-3 channels', H3='stage-3 height', W3='stage-3 width',
    C4='stage-4 channels', H4='stage-4 height', W4='stage-4 width',
    K='classes', IH='input height', IW='input width',
    KO='conv weight out-channels', KI='conv weight in-channels', KH='kernel height',
    KW='kernel width',
)
assert set(SIZE_DOC) == set(FULL) == set(SMALL)

# Constants of the networks (as MindSpore's BERT / ResNet-50 scripts set them).
LN_EPS = 1e-7           # nn.LayerNorm default epsilon in MindSpore's BERT
BN_EPS = 1e-5           # nn.BatchNorm2d eps
BN_MOMENTUM = 0.9       # running = momentum * running + (1 - momentum) * batch
KEEP_PROB = 0.9         # BERT hidden / attention dropout keep probability
ATTN_SCALE = 0.125      # 1 / sqrt(64), BERT-base head size

# --------------------------------------------------------------------------------------------
# Patterns. Each builder takes the size table and returns (graph, meta).
# --------------------------------------------------------------------------------------------

PATTERNS = []


# Pattern-local sizes: keys a pattern's `full=` / `small=` tables may add to FULL / SMALL.
LOCAL_SIZE_DOC = dict(GM='GEMM rows (M)', GK='GEMM depth, the reduced axis (K)',
                      GN='GEMM columns (N)')


def pattern(name, network, dtype, what, source='written for akg', full=None, small=None):
    """Register a builder. `full` / `small` override (or, for the keys of LOCAL_SIZE_DOC, add to)
    the FULL / SMALL size tables for this pattern only; a small override lets a twin cover
    sizes the shared table does not (a dimension of 1, a prime, several cache panels)."""
    full, small = dict(full or {}), dict(small or {})
    for k in set(full) | set(small):
        if k not in FULL and k not in LOCAL_SIZE_DOC:
            raise AssertionError('%s: unknown size %s' % (name, k))
        if k not in FULL and (k not in full or k not in small):
            raise AssertionError('%s: local size %s needs a full and a small value' % (name, k))

    def deco(fn):
        PATTERNS.append(dict(name=name, network=network, dtype=dtype, what=what,
                             source=source, build=fn, full=full, small=small))
        return fn
    return deco


CORPUS = '../shared/akg-corpus/'


def ln_stats_f32(g, x, H):
    """mean and biased variance over the last axis (fp32), as MindSpore's LayerNorm expander."""
    s = g.reduce_sum(x, [1], True)
    mean = g.mul(s, g.const(1.0 / H, 'float32'))
    xm = g.sub(x, mean)
    sq = g.mul(xm, xm)
    vs = g.reduce_sum(sq, [1], True)
    var = g.mul(vs, g.const(1.0 / H, 'float32'))
    return mean, xm, var


def ln_apply_f32(g, xm, var, gamma, beta):
    ve = g.add(var, g.const(LN_EPS, 'float32'))
    rstd = g.unary('Rsqrt', ve)
    xn = g.mul(xm, rstd)
    yg = g.mul(xn, gamma)
    return g.add(yg, beta)


# ------------------------------------------------------------------ BERT: LayerNorm -----------

@pattern('layernorm_fwd_f32', 'BERT', 'float32',
         'LayerNorm forward over the hidden axis: y = (x - mean) * rsqrt(var + 1e-7) * gamma + beta; '
         'also returns mean and variance (saved for the backward)')
def _(s):
    g = Graph(s)
    T_, H = s['T'], s['H']
    x = g.inp([T_, H], 'float32', 'x: tokens x hidden')
    gamma = g.inp([H], 'float32', 'gamma')
    beta = g.inp([H], 'float32', 'beta')
    mean, xm, var = ln_stats_f32(g, x, H)
    y = ln_apply_f32(g, xm, var, gamma, beta)
    g.out(y, 'y'); g.out(mean, 'mean [T,1]'); g.out(var, 'variance [T,1]')
    return g


@pattern('layernorm_fwd_f16', 'BERT', 'float16 storage, float32 statistics',
         'LayerNorm forward on fp16 activations: Cast to fp32, fp32 mean/variance/normalize with '
         'fp32 gamma/beta, Cast the result back to fp16')
def _(s):
    g = Graph(s)
    T_, H = s['T'], s['H']
    x16 = g.inp([T_, H], 'float16', 'x: tokens x hidden (fp16)')
    gamma = g.inp([H], 'float32', 'gamma (fp32 parameter)')
    beta = g.inp([H], 'float32', 'beta (fp32 parameter)')
    x = g.cast(x16, 'float32')
    mean, xm, var = ln_stats_f32(g, x, H)
    y = ln_apply_f32(g, xm, var, gamma, beta)
    y16 = g.cast(y, 'float16')
    g.out(y16, 'y (fp16)'); g.out(mean, 'mean [T,1] fp32'); g.out(var, 'variance [T,1] fp32')
    return g


@pattern('layernorm_bwd_dx_f32', 'BERT', 'float32',
         'LayerNormGrad, input gradient: dx = rstd * (dy*gamma - mean(dy*gamma) - '
         '(x-mean) * rstd^2 * mean(dy*gamma*(x-mean))), row reductions over hidden')
def _(s):
    g = Graph(s)
    T_, H = s['T'], s['H']
    x = g.inp([T_, H], 'float32', 'x (LayerNorm input)')
    dy = g.inp([T_, H], 'float32', 'dy')
    var = g.inp([T_, 1], 'float32', 'variance from the forward', 'positive')
    mean = g.inp([T_, 1], 'float32', 'mean from the forward')
    gamma = g.inp([H], 'float32', 'gamma')
    ve = g.add(var, g.const(LN_EPS, 'float32'))
    rstd = g.unary('Rsqrt', ve)
    xm = g.sub(x, mean)
    dyg = g.mul(dy, gamma)
    t = g.mul(dyg, xm)
    s1 = g.reduce_sum(t, [1], True)
    s2 = g.reduce_sum(dyg, [1], True)
    a = g.mul(s2, g.const(1.0 / H, 'float32'))
    r2 = g.mul(rstd, rstd)
    b = g.mul(s1, r2)
    b2 = g.mul(b, g.const(1.0 / H, 'float32'))
    c = g.mul(xm, b2)
    d = g.sub(dyg, a)
    e = g.sub(d, c)
    dx = g.mul(e, rstd)
    g.out(dx, 'dx')
    return g


@pattern('layernorm_bwd_dgamma_dbeta_f32', 'BERT', 'float32',
         'LayerNormGrad, parameter gradients: dgamma = sum_tokens(dy * (x-mean) * rstd), '
         'dbeta = sum_tokens(dy) (column reductions over the token axis)')
def _(s):
    g = Graph(s)
    T_, H = s['T'], s['H']
    x = g.inp([T_, H], 'float32', 'x (LayerNorm input)')
    dy = g.inp([T_, H], 'float32', 'dy')
    var = g.inp([T_, 1], 'float32', 'variance from the forward', 'positive')
    mean = g.inp([T_, 1], 'float32', 'mean from the forward')
    ve = g.add(var, g.const(LN_EPS, 'float32'))
    rstd = g.unary('Rsqrt', ve)
    xm = g.sub(x, mean)
    xn = g.mul(xm, rstd)
    p = g.mul(dy, xn)
    dgamma = g.reduce_sum(p, [0], False)
    dbeta = g.reduce_sum(dy, [0], False)
    g.out(dgamma, 'dgamma [H]'); g.out(dbeta, 'dbeta [H]')
    return g


@pattern('bias_dropout_residual_layernorm_f16', 'BERT', 'float16 (fp32 params, fp32 reductions)',
         'dense bias + dropout (mask = uniform <= 0.9, scale 1/0.9) + residual add + LayerNorm, '
         'fp16 arithmetic with fp32 row sums, exactly as MindSpore fuses it',
         CORPUS + 'ops/gpu/stitch_cases/layernorm.json (rows 8192 -> 2048)')
def _(s):
    g = Graph(s)
    T_, H = s['T'], s['H']
    x = g.inp([T_, H], 'float16', 'x: dense output before bias')
    bias = g.inp([H], 'float16', 'dense bias')
    u = g.inp([T_, H], 'float32', 'dropout uniform random numbers', 'unit')
    res = g.inp([T_, H], 'float16', 'residual (block input)')
    gamma = g.inp([H], 'float32', 'gamma')
    beta = g.inp([H], 'float32', 'beta')
    h = g.add(x, bias)
    hs = g.mul(g.const(1.0 / KEEP_PROB, 'float16'), h)
    u16 = g.cast(u, 'float16')
    keep = g.cmp('LessEqual', u16, g.const(KEEP_PROB, 'float16'))
    mask = g.cast(keep, 'float16')
    d = g.mul(hs, mask)
    r = g.add(res, d)
    r32 = g.cast(r, 'float32')
    rs = g.reduce_sum(r32, [1], True)
    rs16 = g.cast(rs, 'float16')
    mean = g.mul(rs16, g.const(1.0 / H, 'float16'))
    xm = g.sub(r, mean)
    sq = g.mul(xm, xm)
    sq32 = g.cast(sq, 'float32')
    vs = g.reduce_sum(sq32, [1], True)
    vs16 = g.cast(vs, 'float16')
    var = g.mul(vs16, g.const(1.0 / H, 'float16'))
    ve = g.add(var, g.const(LN_EPS, 'float16'))
    rstd = g.unary('Rsqrt', ve)
    xn = g.mul(xm, rstd)
    gamma16 = g.cast(gamma, 'float16')
    yg = g.mul(xn, gamma16)
    beta16 = g.cast(beta, 'float16')
    y = g.add(yg, beta16)
    g.out(r, 'residual sum (LayerNorm input, kept for the backward)')
    g.out(y, 'y')
    g.out(var, 'variance [T,1]')
    g.out(mean, 'mean [T,1]')
    g.out(mask, 'dropout mask (0/1, fp16)')
    return g


@pattern('bias_dropout_residual_layernorm_f32', 'BERT', 'float32',
         'dense bias + dropout (multiply by a given 0/1 keep mask and 1/0.9) + residual add + '
         'LayerNorm, all fp32')
def _(s):
    g = Graph(s)
    T_, H = s['T'], s['H']
    x = g.inp([T_, H], 'float32', 'x: dense output before bias')
    bias = g.inp([H], 'float32', 'dense bias')
    mask = g.inp([T_, H], 'float32', 'dropout keep mask', 'mask01')
    res = g.inp([T_, H], 'float32', 'residual (block input)')
    gamma = g.inp([H], 'float32', 'gamma')
    beta = g.inp([H], 'float32', 'beta')
    h = g.add(x, bias)
    d = g.mul(h, mask)
    d2 = g.mul(d, g.const(1.0 / KEEP_PROB, 'float32'))
    r = g.add(res, d2)
    mean, xm, var = ln_stats_f32(g, r, H)
    y = ln_apply_f32(g, xm, var, gamma, beta)
    g.out(r, 'residual sum (LayerNorm input)')
    g.out(y, 'y'); g.out(mean, 'mean [T,1]'); g.out(var, 'variance [T,1]')
    return g


@pattern('bias_dropout_residual_f16', 'BERT', 'float16 (fp32 bias)',
         'output dense bias + dropout (mask = uniform <= 0.9, scale 1/0.9) + residual add '
         '(the block output before a separate LayerNorm)',
         CORPUS + 'ops/gpu/mind-trick_cases/operators/'
         'Fused_Cast_BiasAdd_GkDropout_tuple_getitem_TensorAdd_fusion_13282325956852925231.json '
         '(rows 4096 -> 2048; LessEqual result typed bool)')
def _(s):
    g = Graph(s)
    T_, H = s['T'], s['H']
    bias = g.inp([H], 'float32', 'dense bias (fp32 parameter)')
    x = g.inp([T_, H], 'float16', 'x: dense output before bias')
    u = g.inp([T_, H], 'float32', 'dropout uniform random numbers', 'unit')
    res = g.inp([T_, H], 'float16', 'residual')
    u16 = g.cast(u, 'float16')
    keep = g.cmp('LessEqual', u16, g.const(KEEP_PROB, 'float16'))
    mask = g.cast(keep, 'float16')
    b16 = g.cast(bias, 'float16')
    h = g.add(x, b16, 'TensorAdd')
    hs = g.mul(g.const(1.0 / KEEP_PROB, 'float16'), h)
    d = g.mul(hs, mask)
    y = g.add(res, d, 'TensorAdd')
    g.out(mask, 'dropout mask (0/1, fp16)')
    g.out(y, 'residual + dropout(x + bias)')
    return g


@pattern('embedding_sum_f32', 'BERT', 'float32',
         'embedding sum: word + token-type embeddings (gathered, [T,H]) reshaped to [B,S,H] plus '
         'the position embedding [S,H] broadcast over the batch',
         CORPUS + 'networks/gpu/bert_base/level1/'
         'Fused_Reshape_Reshape_Add_Reshape_Add_split_14517613507687056129.info')
def _(s):
    g = Graph(s)
    B, S, T_, H = s['B'], s['S'], s['T'], s['H']
    word = g.inp([T_, H], 'float32', 'word embeddings (gathered)')
    ttype = g.inp([T_, H], 'float32', 'token-type embeddings (gathered)')
    pos = g.inp([S, H], 'float32', 'position embeddings')
    a = g.reshape(word, [B, S, H])
    b = g.reshape(ttype, [B, S, H])
    c = g.add(a, b)
    p = g.reshape(pos, [1, S, H])
    y = g.add(c, p)
    g.out(y, 'embedding sum [B,S,H]')
    return g


# ------------------------------------------------------------------ BERT: attention -----------

@pattern('qkv_bias_split_heads_f16', 'BERT', 'float16 (fp32 bias)',
         'Q/K/V projection bias add, then Reshape [T,768] -> [B,S,12,64] and Transpose perm '
         '[0,2,1,3] to [B,12,S,64] (split heads)',
         CORPUS + 'networks/gpu/bert_base/level0/'
         'Fused_Cast_BiasAdd_Reshape_Transpose_fusion_13697462007059189512.info')
def _(s):
    g = Graph(s)
    T_, H, S, NH, HD = s['T'], s['H'], s['S'], s['NH'], s['HD']
    bias = g.inp([H], 'float32', 'projection bias (fp32 parameter)')
    x = g.inp([T_, H], 'float16', 'projection output (MatMul result)')
    b16 = g.cast(bias, 'float16')
    h = g.add(x, b16)
    r = g.reshape(h, [-1, S, NH, HD])
    y = g.transpose(r, [0, 2, 1, 3])
    g.out(y, 'heads [B,NH,S,HD]')
    return g


@pattern('merge_heads_f16', 'BERT', 'float16',
         'attention context merge: Transpose [B,12,S,64] perm [0,2,1,3] to [B,S,12,64], then '
         'Reshape to [T,768]')
def _(s):
    g = Graph(s)
    B, S, NH, HD, H = s['B'], s['S'], s['NH'], s['HD'], s['H']
    ctx = g.inp([B, NH, S, HD], 'float16', 'attention context per head')
    t = g.transpose(ctx, [0, 2, 1, 3])
    y = g.reshape(t, [-1, H])
    g.out(y, 'merged [T,H]')
    return g


@pattern('attention_softmax_dropout_f16', 'BERT', 'float16 (fp32 row sums)',
         'attention scores * 0.125 + additive mask [B,1,1,S] (broadcast), softmax over keys, '
         'dropout (mask = uniform <= 0.9, scale 1/0.9)',
         CORPUS + 'networks/gpu/bert_base/level1/'
         'Fused_Mul_Add_Softmax_GkDropout_TupleGetItem_TupleGetItem_fusion_16613891787345259176.info')
def _(s):
    g = Graph(s)
    B, NH, S = s['B'], s['NH'], s['S']
    sc = g.inp([B, NH, S, S], 'float16', 'attention scores Q.K^T')
    am = g.inp([B, 1, 1, S], 'float16', 'additive attention mask (0 or -10000)', 'attn_mask')
    u = g.inp([B, NH, S, S], 'float32', 'dropout uniform random numbers', 'unit')
    p, y, mask = softmax_dropout_f16(g, g.add(am, g.mul(g.const(ATTN_SCALE, 'float16'), sc)), u)
    g.out(p, 'softmax probabilities')
    g.out(y, 'dropped probabilities')
    g.out(mask, 'dropout mask (0/1, fp16)')
    return g


def softmax_dropout_f16(g, b, u):
    """fp16 softmax over the last axis (of 4) with fp32 row sums, and its dropout: keep where the
    uniform u (fp32, cast to fp16) <= KEEP_PROB, scaled by 1/KEEP_PROB. Returns p, y, mask."""
    m = g.reduce_max(b, [3], True)
    e = g.unary('Exp', g.sub(b, m))
    s16 = g.cast(g.reduce_sum(g.cast(e, 'float32'), [3], True), 'float16')
    p = g.div(e, s16)
    ps = g.mul(g.const(1.0 / KEEP_PROB, 'float16'), p)
    keep = g.cmp('LessEqual', g.cast(u, 'float16'), g.const(KEEP_PROB, 'float16'))
    mask = g.cast(keep, 'float16')
    return p, g.mul(ps, mask), mask


def softmax_dropout_f32(g, b, keep):
    """softmax over the last axis (of 4), and its dropout by a 0/1 keep mask and 1/KEEP_PROB."""
    m = g.reduce_max(b, [3], True)
    c = g.sub(b, m)
    e = g.unary('Exp', c)
    ssum = g.reduce_sum(e, [3], True)
    p = g.div(e, ssum)
    d = g.mul(p, keep)
    return p, g.mul(d, g.const(1.0 / KEEP_PROB, 'float32'))


@pattern('attention_softmax_dropout_f32', 'BERT', 'float32',
         'attention scores * 0.125 + additive mask [B,1,1,S] (broadcast), softmax over keys, '
         'dropout as multiply by a given 0/1 keep mask and 1/0.9')
def _(s):
    g = Graph(s)
    B, NH, S = s['B'], s['NH'], s['S']
    sc = g.inp([B, NH, S, S], 'float32', 'attention scores Q.K^T')
    am = g.inp([B, 1, 1, S], 'float32', 'additive attention mask (0 or -10000)', 'attn_mask')
    keep = g.inp([B, NH, S, S], 'float32', 'dropout keep mask', 'mask01')
    a = g.mul(sc, g.const(ATTN_SCALE, 'float32'))
    b = g.add(a, am)
    p, y = softmax_dropout_f32(g, b, keep)
    g.out(p, 'softmax probabilities')
    g.out(y, 'dropped probabilities')
    return g


@pattern('softmax_grad_f16', 'BERT', 'float16 (fp32 row sums)',
         'attention backward: dropout grad (dy * 1/0.9 * mask) then softmax grad '
         'p * (g - sum(g * p)) and the 0.125 scale',
         CORPUS + 'networks/gpu/bert_base/level0/'
         'Fused_DropoutGrad_Mul_ReduceSum_Sub_Mul_Mul_fusion_649916125579899506.info')
def _(s):
    g = Graph(s)
    B, NH, S = s['B'], s['NH'], s['S']
    dy = g.inp([B, NH, S, S], 'float16', 'gradient of the dropped probabilities')
    mask = g.inp([B, NH, S, S], 'float16', 'dropout mask from the forward', 'mask01')
    p = g.inp([B, NH, S, S], 'float16', 'softmax probabilities from the forward', 'unit')
    a = g.mul(dy, g.const(1.0 / KEEP_PROB, 'float16'))
    gd = g.mul(a, mask)
    gp = g.mul(p, gd)
    gp32 = g.cast(gp, 'float32')
    rs = g.reduce_sum(gp32, [3], True)
    rs16 = g.cast(rs, 'float16')
    d = g.sub(gd, rs16)
    e = g.mul(p, d)
    y = g.mul(g.const(ATTN_SCALE, 'float16'), e)
    g.out(y, 'gradient of the raw scores')
    return g


# ------------------------------------------------------------------ BERT: FFN -----------------

def gelu_tanh(g, x, dt):
    """0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 x^3))), MindSpore's expanded GeLU."""
    x2 = g.mul(x, x)
    x3 = g.mul(x2, x)
    a = g.mul(x3, g.const(0.044715, dt))
    b = g.add(x, a)
    c = g.mul(b, g.const(math.sqrt(2.0 / math.pi), dt))
    t = g.unary('Tanh', c)
    u = g.add(t, g.const(1.0, dt))
    v = g.mul(x, u)
    return g.mul(g.const(0.5, dt), v)


@pattern('bias_gelu_f16', 'BERT', 'float16 (fp32 bias)',
         'FFN intermediate bias add + GeLU (tanh form, expanded Mul/Add/Tanh chain)',
         CORPUS + 'networks/gpu/bert_base/level0/'
         'Fused_Cast_BiasAdd_GeLU_fusion_12101462469441288645.info')
def _(s):
    g = Graph(s)
    T_, F = s['T'], s['F']
    bias = g.inp([F], 'float32', 'intermediate bias (fp32 parameter)')
    x = g.inp([T_, F], 'float16', 'intermediate dense output')
    b16 = g.cast(bias, 'float16')
    h = g.add(x, b16)
    y = gelu_tanh(g, h, 'float16')
    g.out(h, 'x + bias (kept for the backward)')
    g.out(y, 'gelu(x + bias)')
    return g


@pattern('bias_gelu_f32', 'BERT', 'float32',
         'FFN intermediate bias add + GeLU (tanh form), fp32')
def _(s):
    g = Graph(s)
    T_, F = s['T'], s['F']
    x = g.inp([T_, F], 'float32', 'intermediate dense output')
    bias = g.inp([F], 'float32', 'intermediate bias')
    h = g.add(x, bias)
    y = gelu_tanh(g, h, 'float32')
    g.out(y, 'gelu(x + bias)')
    return g


@pattern('bias_gelu_grad_f16', 'BERT', 'float16 (fp32 bias grad)',
         'GeLU grad (tanh form) times dy, and the bias gradient as a column ReduceSum written '
         'into an accumulator input by InplaceAssign (atomic-add form)',
         CORPUS + 'networks/gpu/bert_base/level0/Fused_Mul_Mul_Mul_Add_Mul_Tanh_Add_Mul_Mul_Mul_'
         'Sub_Mul_Mul_Add_Mul_Mul_Add_Mul_Cas_more_add_11322204900197650750.info')
def _(s):
    g = Graph(s)
    T_, F = s['T'], s['F']
    dy = g.inp([T_, F], 'float16', 'dy (gradient of gelu output)')
    x = g.inp([T_, F], 'float16', 'x + bias from the forward')
    acc = g.inp([F], 'float32', 'bias-gradient accumulator (written in place: sum over tokens)',
                'inplace')
    dt = 'float16'
    x2 = g.mul(x, x)
    x3 = g.mul(x, x2)
    a = g.mul(g.const(0.044715, dt), x3)
    b = g.add(x, a)
    c = g.mul(g.const(math.sqrt(2.0 / math.pi), dt), b)
    t = g.unary('Tanh', c)
    u = g.add(g.const(1.0, dt), t)
    left = g.mul(g.const(0.5, dt), u)                      # 0.5 (1 + tanh)
    hx = g.mul(g.const(0.5, dt), x)
    t2 = g.mul(t, t)
    sech2 = g.sub(g.const(1.0, dt), t2)
    k = g.mul(hx, sech2)
    q = g.mul(g.const(3 * 0.044715, dt), x2)
    q1 = g.add(g.const(1.0, dt), q)
    q2 = g.mul(g.const(math.sqrt(2.0 / math.pi), dt), q1)
    right = g.mul(k, q2)
    dgelu = g.add(left, right)
    dx = g.mul(dy, dgelu)
    dx32 = g.cast(dx, 'float32')
    db = g.reduce_sum(dx32, [0], False, atomic=True)
    y = g.inplace_assign(acc, db, dx, False)
    g.out(y, 'dx = dy * gelu\'(x)')
    return g


@pattern('pooler_bias_tanh_f16', 'BERT', 'float16 (fp32 bias)',
         'pooler dense bias add + Tanh on the [CLS] rows',
         CORPUS + 'networks/gpu/bert_base/level0/'
         'Fused_Cast_BiasAdd_Tanh_fusion_12695887258459050405.info')
def _(s):
    g = Graph(s)
    B, H = s['B'], s['H']
    bias = g.inp([H], 'float32', 'pooler bias (fp32 parameter)')
    x = g.inp([B, H], 'float16', 'pooler dense output')
    b16 = g.cast(bias, 'float16')
    h = g.add(x, b16)
    y = g.unary('Tanh', h)
    g.out(y, 'tanh(x + bias)')
    return g


@pattern('mlm_bias_log_softmax_f32', 'BERT', 'float32',
         'MLM head: output bias add + log-softmax over the vocabulary (row max taken in fp16, as '
         'MindSpore emits it)',
         CORPUS + 'composite/ascend_ci/'
         'Fused_Add_Cast_ReduceMax_Cast_Sub_Exp_ReduceSum_Log_Sub_split_1441484207057638165.info '
         '([1824,30522] -> BERT-base [320,21128])')
def _(s):
    g = Graph(s)
    M, V = s['M'], s['V']
    x = g.inp([M, V], 'float32', 'MLM logits before bias (masked positions x vocab)')
    bias = g.inp([V], 'float32', 'output bias')
    z = g.add(x, bias)
    z16 = g.cast(z, 'float16')
    m16 = g.reduce_max(z16, [1], True)
    m = g.cast(m16, 'float32')
    c = g.sub(z, m)
    e = g.unary('Exp', c)
    ssum = g.reduce_sum(e, [1], True)
    ls = g.unary('Log', ssum)
    y = g.sub(c, ls)
    g.out(y, 'log-probabilities')
    return g


# ------------------------------------------------------------------ BERT: optimizer -----------

@pattern('adam_weight_decay_f32', 'BERT', 'float32 (fp16 gradient)',
         'AdamWeightDecay: loss-scale unscale of the fp16 gradient, m/v moments, '
         'update = m / (sqrt(v) + eps) + 1e-5 * param; InplaceAssign into param, m and v',
         CORPUS + 'ops/gpu/mind-trick_cases/operators/'
         'Fused_Cast_RealDiv_Reshape_FusedAdamWeightDecay_fusion_1039082044534023692.json')
def _(s):
    g = Graph(s)
    R, C = s['WR'], s['WC']
    grad = g.inp([R, C], 'float16', 'gradient (fp16, loss-scaled)')
    ls = g.inp([1, 1, 1], 'float32', 'loss scale', 'loss_scale')
    lr = g.inp([1], 'float32', 'learning rate', 'lr')
    param = g.inp([R, C], 'float32', 'parameter (updated in place)', 'inplace')
    m = g.inp([R, C], 'float32', 'first moment m (updated in place)', 'inplace')
    v = g.inp([R, C], 'float32', 'second moment v (updated in place)', 'inplace_positive')
    wd = g.mul(g.const(1e-5, 'float32'), param)
    g32 = g.cast(grad, 'float32')
    gu = g.div(g32, ls)                                  # [1,R,C]
    gr = g.reshape(gu, [R, C])
    g2 = g.mul(gr, gr)
    b2g = g.mul(g.const(f32(1.0) - f32(0.999), 'float32'), g2)
    b2v = g.mul(g.const(0.999, 'float32'), v)
    v_new = g.add(b2v, b2g, 'TensorAdd')
    sq = g.unary('Sqrt', v_new)
    den = g.add(sq, g.const(1e-6, 'float32'), 'TensorAdd')
    b1g = g.mul(g.const(f32(1.0) - f32(0.9), 'float32'), gr)
    b1m = g.mul(g.const(0.9, 'float32'), m)
    m_new = g.add(b1m, b1g, 'TensorAdd')
    upd = g.div(m_new, den)
    upd2 = g.add(upd, wd, 'TensorAdd')
    step = g.mul(lr, upd2)
    p_new = g.sub(param, step)
    o1 = g.inplace_assign(param, p_new, p_new, True)
    o2 = g.inplace_assign(m, m_new, o1, True)
    o3 = g.inplace_assign(v, v_new, o2, True)
    g.out(o3, 'new parameter (fake output: the in-place updates are the results)')
    return g


@pattern('lamb_next_mv_f32', 'BERT', 'float32',
         'LAMB optimizer, first half (LambNextMV): m and v moments with bias correction, '
         'update = m_hat / (sqrt(v_hat) + eps) + 0.01 * param (rsqrt form also returned); '
         'InplaceAssign into m and v',
         CORPUS + 'composite/ascend_ci/Fused_LambNextMV_11007228773993183427.info '
         '(BERT-large [1024,4096] -> BERT-base [768,3072])')
def _(s):
    g = Graph(s)
    R, C = s['WR'], s['WC']
    g2 = g.inp([R, C], 'float32', 'squared gradient', 'positive')
    v = g.inp([R, C], 'float32', 'second moment v (updated in place)', 'inplace_positive')
    bc2 = g.inp([1], 'float32', 'bias correction 1 - beta2^t', 'bias_correction')
    grad = g.inp([R, C], 'float32', 'gradient')
    m = g.inp([R, C], 'float32', 'first moment m (updated in place)', 'inplace')
    bc1 = g.inp([1], 'float32', 'bias correction 1 - beta1^t', 'bias_correction')
    param = g.inp([R, C], 'float32', 'parameter')
    a = g.mul(g.const(f32(1.0) - f32(0.999), 'float32'), g2)
    b = g.mul(g.const(0.999, 'float32'), v)
    v_new = g.add(b, a, 'TensorAdd')
    v_hat = g.div(v_new, bc2)
    sq = g.unary('Sqrt', v_hat)
    eps = g.const(1e-6, 'float32')            # one constant used twice, as in the corpus file
    den = g.add(sq, eps, 'TensorAdd')
    c = g.mul(g.const(f32(1.0) - f32(0.9), 'float32'), grad)
    d = g.mul(g.const(0.9, 'float32'), m)
    m_new = g.add(d, c, 'TensorAdd')
    m_hat = g.div(m_new, bc1)
    upd = g.div(m_hat, den)
    wd = g.mul(g.const(0.01, 'float32'), param)
    ve = g.add(v_hat, eps, 'TensorAdd')
    rs = g.unary('Rsqrt', ve)
    u2 = g.mul(m_hat, rs)
    u3 = g.add(u2, wd, 'TensorAdd')
    o1 = g.inplace_assign(m, m_new, u3, False)
    o2 = g.inplace_assign(v, v_new, o1, False)
    g.out(o2, 'update m_hat * rsqrt(v_hat + eps) + 0.01 * param')
    g.out(upd, 'update m_hat / (sqrt(v_hat) + eps)')
    return g


@pattern('global_norm_sq_unscale_f16', 'BERT', 'float32 (fp16 gradient)',
         'global-norm clipping, part 1: unscale the fp16 gradient (Cast, * 1/loss_scale) and sum '
         'its squares into a [1,1] accumulator by InplaceAssign (atomic-add form)',
         CORPUS + 'networks/gpu/bert_base/level0/'
         'Fused_Cast_Mul_Mul_ReduceSum_InplaceAssign_atomic_add_18132029375129556574.info')
def _(s):
    g = Graph(s)
    R, C = s['WR'], s['WC']
    inv = g.inp([1], 'float32', 'reciprocal of the loss scale', 'inv_loss_scale')
    grad = g.inp([R, C], 'float16', 'gradient (fp16, loss-scaled)')
    acc = g.inp([1, 1], 'float32', 'sum-of-squares accumulator (written in place)', 'inplace')
    g32 = g.cast(grad, 'float32')
    gu = g.mul(g32, inv)
    sq = g.mul(gu, gu)
    ss = g.reduce_sum(sq, [0, 1], True, atomic=True)
    y = g.inplace_assign(acc, ss, gu, False)
    g.out(y, 'unscaled gradient (fp32)')
    return g


@pattern('clip_by_global_norm_f32', 'BERT', 'float32',
         'global-norm clipping, part 2: norm = sqrt(sum of squares) (guarded by Greater/Select), '
         'grad / max(norm, 1.0); the result has rank 3 ([1,R,C]) as MindSpore emits it',
         CORPUS + 'networks/gpu/bert_base/level1/'
         'Fused_Greater_Select_Sqrt_Select_Maximum_Reshape_RealDiv_split_815529181551343558.info')
def _(s):
    g = Graph(s)
    R, C = s['WR'], s['WC']
    ss = g.inp([1, 1], 'float32', 'global sum of squares', 'positive')
    grad = g.inp([R, C], 'float32', 'gradient')
    pos = g.cmp('Greater', ss, g.const(0.0, 'float32'))
    a = g.select(pos, ss, g.const(1.0, 'float32'))
    r = g.unary('Sqrt', a)
    n = g.select(pos, r, ss)
    d = g.maximum(n, g.const(1.0, 'float32'))
    d3 = g.reshape(d, [1, 1, 1])
    y = g.div(grad, d3)
    g.out(y, 'clipped gradient [1,R,C]')
    return g


@pattern('grad_overflow_check_f16', 'BERT', 'float32 (fp16 gradient)',
         'loss-scale overflow check: 1.0 if any gradient element is +-Inf (abs(g) > FLT_MAX) or '
         'NaN (g != g), else 0.0, as a [1,1] ReduceMax (IsInf/IsNan expressed with comparisons)')
def _(s):
    g = Graph(s)
    R, C = s['WR'], s['WC']
    grad = g.inp([R, C], 'float16', 'gradient (fp16); may contain Inf/NaN', 'may_overflow')
    x = g.cast(grad, 'float32')
    ax = g.unary('Abs', x)
    inf = g.cmp('Greater', ax, g.const(FLT_MAX, 'float32'))
    nan = g.cmp('NotEqual', x, x)
    inf32 = g.cast(inf, 'float32')
    nan32 = g.cast(nan, 'float32')
    bad = g.maximum(inf32, nan32)
    flag = g.reduce_max(bad, [0, 1], True)
    g.out(flag, 'overflow flag [1,1] (1.0 = overflow)')
    return g


# ------------------------------------------------------------------ ResNet-50 -----------------

def chw(g, v, C):
    """[C] -> [C,1,1]: a per-channel vector that broadcasts against NCHW."""
    return g.reshape(v, [C, 1, 1])


def bn_sums(g, x, axes):
    """BNTrainingReduce: the per-channel sum and sum of squares of float16 `x` over `axes`, in fp32."""
    x32 = g.cast(x, 'float32')
    sm = g.reduce_sum(x32, axes, False)
    sq = g.mul(x32, x32)
    ss = g.reduce_sum(sq, axes, False)
    g.out(sm, 'sum [C]'); g.out(ss, 'sum of squares [C]')
    return g


@pattern('bn_train_stats_f16', 'ResNet-50', 'float16 input, float32 sums',
         'BatchNorm training statistics: per-channel sum and sum of squares over N,H,W '
         '(BNTrainingReduce), accumulated in fp32')
def _(s):
    g = Graph(s)
    N, C, H, W = s['N'], s['C1'], s['H1'], s['W1']
    return bn_sums(g, g.inp([N, C, H, W], 'float16', 'conv output (NCHW)'), [0, 2, 3])


@pattern('bn_train_stats_nhwc_f16', 'ResNet-50', 'float16 input, float32 sums',
         'BatchNorm training statistics in NHWC (channels last, as the fp16 ResNet-50 runs in '
         'MindSpore on GPU): per-channel sum and sum of squares over N,H,W, accumulated in fp32')
def _(s):
    g = Graph(s)
    N, C, H, W = s['N'], s['C1'], s['H1'], s['W1']
    return bn_sums(g, g.inp([N, H, W, C], 'float16', 'conv output (NHWC)', fmt='NHWC'), [0, 1, 2])


@pattern('bn_apply_relu_f16', 'ResNet-50', 'float16 activations, float32 statistics',
         'BatchNorm training apply (BNTrainingUpdate) + ReLU: mean = sum/n, var = sumsq/n - mean^2, '
         'y = max((x - mean) * rsqrt(var + 1e-5) * gamma + beta, 0)')
def _(s):
    g = Graph(s)
    N, C, H, W = s['N'], s['C2'], s['H2'], s['W2']
    n = N * H * W
    x = g.inp([N, C, H, W], 'float16', 'conv output (NCHW)')
    sm = g.inp([C], 'float32', 'per-channel sum (bn_train_stats)', 'bn_sum')
    ss = g.inp([C], 'float32', 'per-channel sum of squares (bn_train_stats)', 'bn_sumsq')
    gamma = g.inp([C], 'float32', 'gamma')
    beta = g.inp([C], 'float32', 'beta')
    mean = g.mul(sm, g.const(1.0 / n, 'float32'))
    ex2 = g.mul(ss, g.const(1.0 / n, 'float32'))
    m2 = g.mul(mean, mean)
    var = g.sub(ex2, m2)
    ve = g.add(var, g.const(BN_EPS, 'float32'))
    rstd = g.unary('Rsqrt', ve)
    scale = g.mul(gamma, rstd)
    ms = g.mul(mean, scale)
    shift = g.sub(beta, ms)
    scale4 = chw(g, scale, C)
    shift4 = chw(g, shift, C)
    x32 = g.cast(x, 'float32')
    y = g.mul(x32, scale4)
    y2 = g.add(y, shift4)
    r = g.maximum(y2, g.const(0.0, 'float32'))
    r16 = g.cast(r, 'float16')
    g.out(r16, 'relu(bn(x)) (fp16)')
    g.out(mean, 'batch mean [C]')
    g.out(var, 'batch variance [C] (biased)')
    return g


@pattern('bottleneck_end_f16', 'ResNet-50', 'float16 activations, float32 statistics',
         'bottleneck block end: BatchNorm apply with given mean/variance + residual add + ReLU')
def _(s):
    g = Graph(s)
    N, C, H, W = s['N'], s['C3'], s['H3'], s['W3']
    x = g.inp([N, C, H, W], 'float16', 'conv3 output (NCHW)')
    res = g.inp([N, C, H, W], 'float16', 'shortcut (block input or downsample output)')
    mean = g.inp([C], 'float32', 'mean')
    var = g.inp([C], 'float32', 'variance', 'positive')
    gamma = g.inp([C], 'float32', 'gamma')
    beta = g.inp([C], 'float32', 'beta')
    ve = g.add(var, g.const(BN_EPS, 'float32'))
    rstd = g.unary('Rsqrt', ve)
    scale = g.mul(gamma, rstd)
    ms = g.mul(mean, scale)
    shift = g.sub(beta, ms)
    scale4 = chw(g, scale, C)
    shift4 = chw(g, shift, C)
    x32 = g.cast(x, 'float32')
    y = g.mul(x32, scale4)
    y2 = g.add(y, shift4)
    r32 = g.cast(res, 'float32')
    z = g.add(y2, r32)
    zr = g.maximum(z, g.const(0.0, 'float32'))
    out = g.cast(zr, 'float16')
    g.out(out, 'relu(bn(x) + shortcut) (fp16)')
    return g


@pattern('bn_running_stats_update_f32', 'ResNet-50', 'float32',
         'BatchNorm running statistics update: running = 0.9 * running + 0.1 * batch (variance '
         'made unbiased by n/(n-1)); InplaceAssign into running_mean and running_var')
def _(s):
    g = Graph(s)
    N, C, H, W = s['N'], s['C1'], s['H1'], s['W1']
    n = N * H * W
    rm = g.inp([C], 'float32', 'running mean (updated in place)', 'inplace')
    rv = g.inp([C], 'float32', 'running variance (updated in place)', 'inplace_positive')
    bm = g.inp([C], 'float32', 'batch mean')
    bv = g.inp([C], 'float32', 'batch variance (biased)', 'positive')
    mom = g.const(BN_MOMENTUM, 'float32')
    one_m = g.const(1.0 - BN_MOMENTUM, 'float32')
    a = g.mul(rm, mom)
    b = g.mul(bm, one_m)
    rm_new = g.add(a, b)
    ub = g.mul(bv, g.const(n / (n - 1.0), 'float32'))
    c = g.mul(rv, g.const(BN_MOMENTUM, 'float32'))
    d = g.mul(ub, g.const(1.0 - BN_MOMENTUM, 'float32'))
    rv_new = g.add(c, d)
    o1 = g.inplace_assign(rm, rm_new, rm_new, True)
    o2 = g.inplace_assign(rv, rv_new, o1, True)
    g.out(o2, 'new running mean (fake output: the in-place updates are the results)')
    return g


@pattern('relu_grad_bn_grad_reductions_f16', 'ResNet-50', 'float16 activations, float32 reductions',
         'ReluGrad (Greater + Select on the ReLU output) followed by the BatchNorm-grad '
         'per-channel reductions dbeta = sum(dz), dgamma = sum(dz * (x - mean) * rstd)')
def _(s):
    g = Graph(s)
    N, C, H, W = s['N'], s['C1'], s['H1'], s['W1']
    dy = g.inp([N, C, H, W], 'float16', 'gradient of the ReLU output')
    y = g.inp([N, C, H, W], 'float16', 'ReLU output from the forward')
    x = g.inp([N, C, H, W], 'float16', 'BatchNorm input (conv output) from the forward')
    mean = g.inp([C], 'float32', 'batch mean')
    var = g.inp([C], 'float32', 'batch variance', 'positive')
    pos = g.cmp('Greater', y, g.const(0.0, 'float16'))
    dz = g.select(pos, dy, g.const(0.0, 'float16'))
    dz32 = g.cast(dz, 'float32')
    dbeta = g.reduce_sum(dz32, [0, 2, 3], False)
    ve = g.add(var, g.const(BN_EPS, 'float32'))
    rstd = g.unary('Rsqrt', ve)
    mean4 = chw(g, mean, C)
    rstd4 = chw(g, rstd, C)
    x32 = g.cast(x, 'float32')
    xm = g.sub(x32, mean4)
    xh = g.mul(xm, rstd4)
    p = g.mul(dz32, xh)
    dgamma = g.reduce_sum(p, [0, 2, 3], False)
    g.out(dz, 'relu grad dz (fp16)')
    g.out(dgamma, 'dgamma [C]')
    g.out(dbeta, 'dbeta [C]')
    return g


@pattern('bn_grad_dx_f16', 'ResNet-50', 'float16 activations, float32 statistics',
         'BatchNorm-grad input gradient: dx = gamma * rstd * (dz - dbeta/n - xhat * dgamma/n)')
def _(s):
    g = Graph(s)
    N, C, H, W = s['N'], s['C2'], s['H2'], s['W2']
    n = N * H * W
    dz = g.inp([N, C, H, W], 'float16', 'gradient of the BatchNorm output')
    x = g.inp([N, C, H, W], 'float16', 'BatchNorm input from the forward')
    mean = g.inp([C], 'float32', 'batch mean')
    var = g.inp([C], 'float32', 'batch variance', 'positive')
    gamma = g.inp([C], 'float32', 'gamma')
    dgamma = g.inp([C], 'float32', 'dgamma (relu_grad_bn_grad_reductions)')
    dbeta = g.inp([C], 'float32', 'dbeta (relu_grad_bn_grad_reductions)')
    ve = g.add(var, g.const(BN_EPS, 'float32'))
    rstd = g.unary('Rsqrt', ve)
    gr = g.mul(gamma, rstd)
    c1 = g.mul(dbeta, g.const(1.0 / n, 'float32'))
    c2 = g.mul(dgamma, g.const(1.0 / n, 'float32'))
    mean4 = chw(g, mean, C)
    rstd4 = chw(g, rstd, C)
    c14 = chw(g, c1, C)
    c24 = chw(g, c2, C)
    gr4 = chw(g, gr, C)
    x32 = g.cast(x, 'float32')
    xm = g.sub(x32, mean4)
    xh = g.mul(xm, rstd4)
    dz32 = g.cast(dz, 'float32')
    t1 = g.sub(dz32, c14)
    t2 = g.mul(xh, c24)
    t3 = g.sub(t1, t2)
    dx = g.mul(t3, gr4)
    dx16 = g.cast(dx, 'float16')
    g.out(dx16, 'dx (fp16)')
    return g


@pattern('residual_grad_addn_relugrad_f16', 'ResNet-50', 'float16',
         'residual-branch gradient: AddN of the two incoming gradients, then ReluGrad as '
         'Greater + Cast + Mul on the ReLU output')
def _(s):
    g = Graph(s)
    N, C, H, W = s['N'], s['C3'], s['H3'], s['W3']
    g1 = g.inp([N, C, H, W], 'float16', 'gradient from the main branch')
    g2 = g.inp([N, C, H, W], 'float16', 'gradient from the shortcut')
    y = g.inp([N, C, H, W], 'float16', 'ReLU output from the forward')
    sm = g.addn([g1, g2])
    pos = g.cmp('Greater', y, g.const(0.0, 'float16'))
    m = g.cast(pos, 'float16')
    out = g.mul(sm, m)
    g.out(out, 'relu grad of the summed gradient (fp16)')
    return g


@pattern('global_avgpool_fwd_f16', 'ResNet-50', 'float16 (fp32 sum)',
         'global average pooling: fp32 ReduceSum over H,W (keep_dims), / 49, Reshape to [N,C]',
         CORPUS + 'networks/gpu/resnet101/level0/'
         'Fused_Cast_ReduceSum_Cast_RealDiv_split_458644080588289221.info (+ the Reshape to [N,C])')
def _(s):
    g = Graph(s)
    N, C, H, W = s['N'], s['C4'], s['H4'], s['W4']
    x = g.inp([N, C, H, W], 'float16', 'last stage output (NCHW)')
    x32 = g.cast(x, 'float32', backed=False)
    sm = g.reduce_sum(x32, [2, 3], True)
    s16 = g.cast(sm, 'float16', backed=False)
    avg = g.div(s16, g.const(float(H * W), 'float16'))
    y = g.reshape(avg, [N, C])
    g.out(y, 'pooled features [N,C]')
    return g


@pattern('global_avgpool_bwd_f16', 'ResNet-50', 'float16',
         'global average pooling backward: Reshape [N,C] -> [N,C,1,1], BroadcastTo [N,C,7,7], / 49',
         CORPUS + 'networks/gpu/resnet101/level0/'
         'Fused_Reshape_Tile_RealDiv_Transpose_fusion_8625590203053919849.info (NCHW: without '
         'the final NHWC Transpose)')
def _(s):
    g = Graph(s)
    N, C, H, W = s['N'], s['C4'], s['H4'], s['W4']
    dy = g.inp([N, C], 'float16', 'gradient of the pooled features')
    r = g.reshape(dy, [N, C, 1, 1])
    b = g.broadcast_to(r, [N, C, H, W])
    y = g.div(b, g.const(float(H * W), 'float16'))
    g.out(y, 'gradient of the last stage output (NCHW)')
    return g


@pattern('softmax_cross_entropy_f32', 'ResNet-50', 'float32',
         'FC bias + SoftmaxCrossEntropyWithLogits on one-hot labels: per-sample loss '
         '-sum(label * log(max(softmax, 1e-6))) and the mean-reduced gradient (softmax - label)/N')
def _(s):
    g = Graph(s)
    N, K = s['N'], s['K']
    logits = g.inp([N, K], 'float32', 'FC output (MatMul result)')
    bias = g.inp([K], 'float32', 'FC bias')
    labels = g.inp([N, K], 'float32', 'one-hot labels', 'onehot')
    z = g.add(logits, bias)
    m = g.reduce_max(z, [1], True)
    c = g.sub(z, m)
    e = g.unary('Exp', c)
    ssum = g.reduce_sum(e, [1], True)
    p = g.div(e, ssum)
    pc = g.maximum(p, g.const(1e-6, 'float32'))
    lg = g.unary('Log', pc)
    t = g.mul(labels, lg)
    ts = g.reduce_sum(t, [1], True)
    loss = g.unary('Neg', ts)
    d = g.sub(p, labels)
    grad = g.mul(d, g.const(1.0 / N, 'float32'))
    g.out(loss, 'per-sample loss [N,1]')
    g.out(grad, 'gradient of the logits [N,K]')
    return g


@pattern('momentum_sgd_weight_decay_f32', 'ResNet-50', 'float32',
         'Momentum SGD with weight decay: g = grad + 1e-4 * w, accum = 0.9 * accum + g, '
         'w -= lr * accum; InplaceAssign into weight and accumulation')
def _(s):
    g = Graph(s)
    shape = [s['KO'], s['KI'], s['KH'], s['KW']]
    w = g.inp(shape, 'float32', 'conv weight (updated in place)', 'inplace')
    grad = g.inp(shape, 'float32', 'weight gradient')
    acc = g.inp(shape, 'float32', 'momentum accumulation (updated in place)', 'inplace')
    lr = g.inp([1], 'float32', 'learning rate', 'lr')
    wd = g.mul(w, g.const(1e-4, 'float32'))
    gd = g.add(grad, wd)
    am = g.mul(acc, g.const(0.9, 'float32'))
    a_new = g.add(am, gd)
    step = g.mul(a_new, lr)
    w_new = g.sub(w, step)
    o1 = g.inplace_assign(w, w_new, w_new, True)
    o2 = g.inplace_assign(acc, a_new, o1, True)
    g.out(o2, 'new weight (fake output: the in-place updates are the results)')
    return g


@pattern('add_relu_f32', 'ResNet-50', 'float32',
         'residual add + ReLU, ReLU as Maximum with BroadcastTo of a 0 constant')
def _(s):
    g = Graph(s)
    N, C, H, W = s['N'], s['C2'], s['H2'], s['W2']
    x = g.inp([N, C, H, W], 'float32', 'branch output (NCHW)')
    res = g.inp([N, C, H, W], 'float32', 'shortcut')
    z = g.add(x, res)
    zero = g.broadcast_to(g.const(0.0, 'float32'), [N, C, H, W])
    y = g.maximum(zero, z)
    g.out(y, 'relu(x + shortcut)')
    return g


@pattern('conv_bias_residual_relu_f16', 'ResNet-50', 'float16',
         'inference conv epilogue (after a 1x1 conv): per-channel bias + residual add + ReLU')
def _(s):
    g = Graph(s)
    N, C, H, W = s['N'], s['C3'], s['H3'], s['W3']
    x = g.inp([N, C, H, W], 'float16', 'conv output (NCHW)')
    bias = g.inp([C], 'float16', 'conv bias (BatchNorm folded)')
    res = g.inp([N, C, H, W], 'float16', 'shortcut')
    b4 = chw(g, bias, C)
    h = g.add(x, b4)
    z = g.add(h, res)
    y = g.maximum(z, g.const(0.0, 'float16'))
    g.out(y, 'relu(conv + bias + shortcut)')
    return g


@pattern('input_cast_nchw_to_nhwc', 'ResNet-50', 'float32 -> float16',
         'network input: Cast fp32 -> fp16 and Transpose NCHW -> NHWC (perm [0,2,3,1])',
         CORPUS + 'networks/gpu/resnet101/level0/'
         'Fused_Cast_Transpose_fusion_13002868527683806053.info')
def _(s):
    g = Graph(s)
    N, IH, IW = s['N'], s['IH'], s['IW']
    x = g.inp([N, 3, IH, IW], 'float32', 'images (NCHW)')
    x16 = g.cast(x, 'float16')
    y = g.transpose(x16, [0, 2, 3, 1], fmt='NHWC')
    g.out(y, 'images (NHWC, fp16)')
    return g

# ------------------------------------------------------------------ matrix products -----------
# MatMul / BatchMatMul with their fused epilogues (BERT's dense layers and attention products,
# ResNet's FC and a 1x1 convolution as a GEMM), plus two bare GEMMs, the baselines the epilogue
# overhead is measured against. The small twins override sizes per pattern so that, together,
# they cover M, N and K of 1, prime sizes, several panels of k, several panels of columns and
# several row blocks.


def gemm_dims(m, k, n):
    return dict(GM=m, GK=k, GN=n)


@pattern('gemm_qkv_bias_f32', 'BERT', 'float32',
         'fused Q/K/V projection: x . W + b, the three [768,768] weights side by side',
         small=dict(T=6781))                              # several row blocks
def _(s):
    g = Graph(s)
    x = g.inp([s['T'], s['H']], 'float32', 'hidden states')
    w = g.inp([s['H'], 3 * s['H']], 'float32', 'fused Q/K/V weight')
    b = g.inp([3 * s['H']], 'float32', 'fused Q/K/V bias')
    g.out(g.add(g.matmul(x, w), b), 'x . W + b')
    return g


@pattern('gemm_attn_out_bias_residual_f32', 'BERT', 'float32',
         'attention output dense + bias + residual add (the input of the following LayerNorm)')
def _(s):
    g = Graph(s)
    x = g.inp([s['T'], s['H']], 'float32', 'attention context')
    w = g.inp([s['H'], s['H']], 'float32', 'output dense weight')
    b = g.inp([s['H']], 'float32', 'output dense bias')
    r = g.inp([s['T'], s['H']], 'float32', 'residual')
    g.out(g.add(g.add(g.matmul(x, w), b), r), 'x . W + b + residual')
    return g


def gemm_ffn1(s, dt):
    g = Graph(s)
    x = g.inp([s['T'], s['H']], dt, 'hidden states')
    w = g.inp([s['H'], s['F']], dt, 'intermediate dense weight')
    b = g.inp([s['F']], dt, 'intermediate bias')
    h = g.add(g.matmul(x, w, dst=dt), b)
    g.out(gelu_tanh(g, h, dt), 'gelu(x . W + b)')
    return g


@pattern('gemm_ffn1_bias_gelu_f32', 'BERT', 'float32',
         'FFN intermediate dense + bias + GeLU (tanh form, expanded Mul/Add/Tanh chain)')
def _(s):
    return gemm_ffn1(s, 'float32')


@pattern('gemm_ffn1_bias_gelu_f16', 'BERT', 'float16',
         'FFN intermediate dense + bias + GeLU (tanh form, expanded Mul/Add/Tanh chain), fp16 '
         'operands, product and epilogue')
def _(s):
    return gemm_ffn1(s, 'float16')


@pattern('gemm_ffn2_bias_residual_f32', 'BERT', 'float32',
         'FFN output dense (K = 3072) + bias + residual add',
         small=dict(T=13, F=7001, H=131))                 # K prime, several panels of k
def _(s):
    g = Graph(s)
    x = g.inp([s['T'], s['F']], 'float32', 'intermediate activations')
    w = g.inp([s['F'], s['H']], 'float32', 'output dense weight')
    b = g.inp([s['H']], 'float32', 'output dense bias')
    r = g.inp([s['T'], s['H']], 'float32', 'residual')
    g.out(g.add(g.add(g.matmul(x, w), b), r), 'x . W + b + residual')
    return g


@pattern('gemm_mlm_head_bias_f32', 'BERT', 'float32',
         'MLM head decoder: x . E^T + b with the tied word-embedding table E [vocab, hidden] '
         '(transpose_b), logits of the masked positions',
         small=dict(H=3001, V=1531))                      # several column panels
def _(s):
    g = Graph(s)
    x = g.inp([s['M'], s['H']], 'float32', 'masked-token hidden states')
    e = g.inp([s['V'], s['H']], 'float32', 'word embedding table (tied weight)')
    b = g.inp([s['V']], 'float32', 'output bias')
    g.out(g.add(g.matmul(x, e, tb=True), b), 'x . E^T + b (logits)')
    return g


@pattern('bmm_attn_scores_scale_mask_f32', 'BERT', 'float32',
         'attention scores: BatchMatMul q . k^T per batch and head (transpose_b), * 0.125, + '
         'additive mask [B,1,S,S] broadcast over the heads')
def _(s):
    g = Graph(s)
    B, NH, S, HD = s['B'], s['NH'], s['S'], s['HD']
    q = g.inp([B, NH, S, HD], 'float32', 'queries')
    k = g.inp([B, NH, S, HD], 'float32', 'keys')
    mask = g.inp([B, 1, S, S], 'float32', 'additive attention mask', 'attn_mask')
    scores = g.matmul(q, k, tb=True, batched=True)
    g.out(g.add(g.mul(scores, g.const(ATTN_SCALE, 'float32')), mask), 'q . k^T * 0.125 + mask')
    return g


@pattern('bmm_attn_context_f32', 'BERT', 'float32',
         'attention context: BatchMatMul probabilities . values per batch and head')
def _(s):
    g = Graph(s)
    B, NH, S, HD = s['B'], s['NH'], s['S'], s['HD']
    p = g.inp([B, NH, S, S], 'float32', 'attention probabilities')
    v = g.inp([B, NH, S, HD], 'float32', 'values')
    g.out(g.matmul(p, v, batched=True), 'probabilities . values')
    return g


@pattern('gemm_qkv_bias_split_heads_f32', 'BERT', 'float32',
         'fused Q/K/V projection x . W + b, then split heads: Reshape [T,3H] -> [B,S,3,NH,HD] and '
         'Transpose perm [2,0,3,1,4] to [3,B,NH,S,HD] (q, k and v, each per batch and head)')
def _(s):
    g = Graph(s)
    B, S, NH, HD, H = s['B'], s['S'], s['NH'], s['HD'], s['H']
    x = g.inp([s['T'], H], 'float32', 'hidden states')
    w = g.inp([H, 3 * H], 'float32', 'fused Q/K/V weight')
    b = g.inp([3 * H], 'float32', 'fused Q/K/V bias')
    h = g.add(g.matmul(x, w), b)
    g.out(g.transpose(g.reshape(h, [B, S, 3, NH, HD]), [2, 0, 3, 1, 4]), 'q, k, v [3,B,NH,S,HD]')
    return g


@pattern('bmm_attn_context_merge_heads_f32', 'BERT', 'float32',
         'attention context: BatchMatMul probabilities . values per batch and head, then merge '
         'heads: Transpose perm [0,2,1,3] to [B,S,NH,HD] and Reshape to [T,H]',
         small=dict(HD=37, H=111))                        # a head wider than a micro-tile
def _(s):
    g = Graph(s)
    B, NH, S, HD, H = s['B'], s['NH'], s['S'], s['HD'], s['H']
    p = g.inp([B, NH, S, S], 'float32', 'attention probabilities')
    v = g.inp([B, NH, S, HD], 'float32', 'values')
    ctx = g.matmul(p, v, batched=True)
    g.out(g.reshape(g.transpose(ctx, [0, 2, 1, 3]), [-1, H]), 'merged context [T,H]')
    return g


@pattern('bmm_attn_scores_softmax_dropout_f32', 'BERT', 'float32',
         'attention scores with their softmax: BatchMatMul q . k^T per batch and head '
         '(transpose_b), * 0.125, + additive mask [B,1,1,S], softmax over the keys, dropout as '
         'multiply by a given 0/1 keep mask and 1/0.9; the scores stay in cache, a block of rows '
         'at a time')
def _(s):
    g = Graph(s)
    B, NH, S, HD = s['B'], s['NH'], s['S'], s['HD']
    q = g.inp([B, NH, S, HD], 'float32', 'queries')
    k = g.inp([B, NH, S, HD], 'float32', 'keys')
    am = g.inp([B, 1, 1, S], 'float32', 'additive attention mask (0 or -10000)', 'attn_mask')
    keep = g.inp([B, NH, S, S], 'float32', 'dropout keep mask', 'mask01')
    scores = g.matmul(q, k, tb=True, batched=True)
    b = g.add(g.mul(scores, g.const(ATTN_SCALE, 'float32')), am)
    p, y = softmax_dropout_f32(g, b, keep)
    g.out(p, 'softmax probabilities')
    g.out(y, 'dropped probabilities')
    return g


@pattern('gemm_attn_out_bias_residual_layernorm_f32', 'BERT', 'float32',
         'attention output dense + bias + residual add, then the LayerNorm over the hidden axis '
         '(its rows of 768 are one column panel of the GEMM): y, mean and variance, and the '
         'LayerNorm input saved for the backward')
def _(s):
    return gemm_attn_out_layernorm(s, 'float32')


def gemm_attn_out_layernorm(s, dt):
    """Attention output dense + bias + residual in dt, then the LayerNorm in float32 (the fp16
    product cast to fp32 and y cast back, as layernorm_fwd_f16 does)."""
    f16 = dt == 'float16'
    g = Graph(s)
    T_, H = s['T'], s['H']
    x = g.inp([T_, H], dt, 'attention context')
    w = g.inp([H, H], dt, 'output dense weight')
    b = g.inp([H], dt, 'output dense bias')
    r = g.inp([T_, H], dt, 'residual')
    param = ' (fp32 parameter)' if f16 else ''
    gamma = g.inp([H], 'float32', 'gamma' + param)
    beta = g.inp([H], 'float32', 'beta' + param)
    h = g.add(g.add(g.matmul(x, w, dst=dt), b), r)
    mean, xm, var = ln_stats_f32(g, g.cast(h, 'float32') if f16 else h, H)
    y = ln_apply_f32(g, xm, var, gamma, beta)
    if f16:
        g.out(g.cast(y, 'float16'), 'y (fp16)'); g.out(mean, 'mean [T,1] fp32'); g.out(var, 'variance [T,1] fp32')
        g.out(h, 'x . W + b + residual (the LayerNorm input, fp16)')
    else:
        g.out(y, 'y'); g.out(mean, 'mean [T,1]'); g.out(var, 'variance [T,1]')
        g.out(h, 'x . W + b + residual (the LayerNorm input)')
    return g


@pattern('gemm_attn_out_bias_residual_layernorm_f16', 'BERT', 'float16 (fp32 LayerNorm statistics and parameters)',
         'attention output dense + bias + residual add in fp16 (fp16 operands and product), then '
         'the LayerNorm of layernorm_fwd_f16 over the hidden axis: Cast to fp32, fp32 mean, '
         'variance and normalize with fp32 gamma/beta, Cast y back to fp16; the LayerNorm input '
         'saved for the backward')
def _(s):
    return gemm_attn_out_layernorm(s, 'float16')


@pattern('bmm_attn_scores_softmax_dropout_f16', 'BERT', 'float16 (fp32 row sums)',
         'attention scores with their softmax in fp16: BatchMatMul q . k^T per batch and head '
         '(transpose_b, fp16 product), then the body of attention_softmax_dropout_f16 (* 0.125, + '
         'additive mask [B,1,1,S], softmax over the keys with fp32 row sums, dropout by uniform '
         '<= 0.9); the scores stay in cache, a block of rows at a time')
def _(s):
    g = Graph(s)
    B, NH, S, HD = s['B'], s['NH'], s['S'], s['HD']
    q = g.inp([B, NH, S, HD], 'float16', 'queries')
    k = g.inp([B, NH, S, HD], 'float16', 'keys')
    am = g.inp([B, 1, 1, S], 'float16', 'additive attention mask (0 or -10000)', 'attn_mask')
    u = g.inp([B, NH, S, S], 'float32', 'dropout uniform random numbers', 'unit')
    sc = g.matmul(q, k, tb=True, dst='float16', batched=True)
    p, y, mask = softmax_dropout_f16(g, g.add(am, g.mul(g.const(ATTN_SCALE, 'float16'), sc)), u)
    g.out(p, 'softmax probabilities')
    g.out(y, 'dropped probabilities')
    g.out(mask, 'dropout mask (0/1, fp16)')
    return g


@pattern('gemm_dx_f32', 'BERT', 'float32',
         'dense backward, input gradient of the FFN intermediate dense: dx = dy . W^T '
         '(transpose_b)',
         small=dict(F=1))                                 # K = 1
def _(s):
    g = Graph(s)
    dy = g.inp([s['T'], s['F']], 'float32', 'output gradient')
    w = g.inp([s['H'], s['F']], 'float32', 'weight')
    g.out(g.matmul(dy, w, tb=True), 'dx = dy . W^T')
    return g


@pattern('gemm_dw_bias_grad_f32', 'BERT', 'float32',
         'dense backward, parameter gradients of the FFN intermediate dense: dW = x^T . dy '
         '(transpose_a) and db = column sums of dy')
def _(s):
    g = Graph(s)
    x = g.inp([s['T'], s['H']], 'float32', 'layer input')
    dy = g.inp([s['T'], s['F']], 'float32', 'output gradient')
    g.out(g.matmul(x, dy, ta=True), 'dW = x^T . dy')
    g.out(g.reduce_sum(dy, [0], False), 'db = column sums of dy')
    return g


@pattern('gemm_fc_bias_f32', 'ResNet-50', 'float32',
         'final FC layer over the pooled features: x . W + b (2048 -> 1001 classes)',
         small=dict(K=1))                                 # N = 1
def _(s):
    g = Graph(s)
    x = g.inp([s['N'], s['C4']], 'float32', 'pooled features')
    w = g.inp([s['C4'], s['K']], 'float32', 'fc weight')
    b = g.inp([s['K']], 'float32', 'fc bias')
    g.out(g.add(g.matmul(x, w), b), 'x . W + b (logits)')
    return g


# The corpus kernel's attrs, in its order (with its `Akg` flag).
NT_CORPUS_ATTRS = [('Akg', 'bool', True), ('transpose_a', 'bool', False),
                   ('dst_type', 'str', 'float16'), ('transpose_b', 'bool', True),
                   ('right_format', 'str', 'DefaultFormat'), ('left_format', 'str', 'DefaultFormat')]


@pattern('gemm_nt_f16', 'ResNet-50', 'float16',
         'a 1x1 convolution as a GEMM over NHWC rows (batch 32 x 56 x 56 = 100352 rows, 256 -> 128 '
         'channels, the first conv of stage 2): a . b^T with the weight stored [out, in] '
         '(transpose_b)',
         CORPUS + 'networks/gpu/resnet101/level1_tensorcore/'
         'Fused_MatMul_split_18216185450033920336.info (op for op, its shape; attrs in its order)',
         full=gemm_dims(100352, 256, 128),
         small=gemm_dims(1, 39, 37))                      # M = 1
def _(s):
    g = Graph(s)
    a = g.inp([s['GM'], s['GK']], 'float16', 'activations')
    b = g.inp([s['GN'], s['GK']], 'float16', 'weight (transposed)')
    g.out(g.matmul(a, b, tb=True, dst='float16', attrs=NT_CORPUS_ATTRS), 'a . b^T')
    return g


def bare_gemm(s, x_role, w_role):
    g = Graph(s)
    x = g.inp([s['GM'], s['GK']], 'float32', x_role)
    w = g.inp([s['GK'], s['GN']], 'float32', w_role)
    g.out(g.matmul(x, w), 'x . W')
    return g


@pattern('gemm_bare_ffn1_f32', 'BERT', 'float32',
         'bare GEMM x . W at the FFN intermediate shape (no bias, no GeLU): the baseline of '
         '`gemm_ffn1_bias_gelu_f32`\'s epilogue overhead',
         full=gemm_dims(FULL['T'], FULL['H'], FULL['F']),
         small=gemm_dims(29, 31, 41))
def _(s):
    return bare_gemm(s, 'hidden states', 'intermediate dense weight')


@pattern('gemm_bare_attn_out_f32', 'BERT', 'float32',
         'bare GEMM x . W at the attention output shape (no bias, no residual): the baseline of '
         '`gemm_attn_out_bias_residual_f32`\'s epilogue overhead',
         full=gemm_dims(FULL['T'], FULL['H'], FULL['H']),
         small=gemm_dims(53, 1, 53))                      # K = 1, M and N prime
def _(s):
    return bare_gemm(s, 'attention context', 'output dense weight')


# --------------------------------------------------------------------------------------------
# Domains of the inputs, for test-data generators (documented in README.md).
# --------------------------------------------------------------------------------------------

DOMAINS = {
    'normal': 'any finite value (e.g. N(0,1))',
    'positive': '>= 0 (a variance or sum of squares)',
    'unit': 'uniform in [0, 1)',
    'mask01': 'exactly 0 or 1',
    'onehot': 'one-hot rows (one 1 per row, else 0)',
    'attn_mask': '0 (keep) or -10000 (masked)',
    'loss_scale': '> 0 (e.g. 1024)',
    'inv_loss_scale': '> 0 (e.g. 1/1024)',
    'lr': '> 0, small (e.g. 1e-3)',
    'inplace': 'any finite value; the kernel overwrites this buffer',
    'inplace_positive': '>= 0; the kernel overwrites this buffer',
    'bn_sum': 'per-channel sum of x (consistent with bn_sumsq so that the variance is >= 0)',
    'bn_sumsq': 'per-channel sum of x^2 (>= sum^2 / n)',
    'may_overflow': 'any value, +-Inf and NaN included',
    'bias_correction': 'in (0, 1], e.g. 1 - 0.9^t',
}


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------

def dump(obj):
    return json.dumps(obj, indent=1, sort_keys=True) + '\n'


def build_all():
    names = [p['name'] for p in PATTERNS]
    assert len(names) == len(set(names)), 'duplicate pattern names'
    out = []
    for p in sorted(PATTERNS, key=lambda p: p['name']):
        full = p['build'](dict(FULL, **p['full']))
        small = p['build'](dict(SMALL, **p['small']))
        out.append((p, full, small, full.to_json(p['name']), small.to_json(p['name'])))
    return out


def fmt_shape(shape):
    return '[' + ','.join(str(d) for d in shape) + ']'


def nbytes(t):
    return math.prod(t.shape) * DTYPE_BYTES[t.dtype]


def render_readme(built, extra):
    L = []
    w = L.append
    w('# patterns/: the kernel catalog\n')
    w('One composite JSON per kernel, in the format MindSpore\'s GraphKernel hands to AKG '
      '(`composite: true`, `op`, `input_desc`, `output_desc`, `op_desc`, `platform: "AKG"`, '
      '`process: "cpu"`, `id`, `version: 1`). The file stem is the kernel name and equals the '
      'top-level `op`. Shapes are the real training shapes of **BERT-base** (batch 16 x seq 128 '
      '= 2048 tokens, hidden 768, 12 heads x 64, FFN 3072, vocab 21128, 20 masked positions per '
      'sample = 320 MLM rows) and **ResNet-50** (batch 32, NCHW, stages 256x56, 512x28, 1024x14, '
      '2048x7, 1001 classes). Every kernel has an odd-shape twin with the same file name and the '
      'same graph in `tests/patterns_small/`.\n')
    w('This README, `meson.build` and both JSON trees are written by '
      '`patterns/tools/make_catalog.py`; do not edit them by hand except as described under '
      '"Adding a pattern".\n')
    w('Ops used: Add/TensorAdd, Sub, Mul, RealDiv, Neg, Abs, Exp, Log, Sqrt, Rsqrt, Tanh, Maximum, '
      'Greater, LessEqual, NotEqual, Select, Cast, ReduceSum, ReduceMax, Reshape, Transpose, '
      'BroadcastTo, AddN, InplaceAssign, MatMul, BatchMatMul. MatMul and BatchMatMul appear only '
      'in the `gemm_*` / `bmm_*` kernels (BERT\'s dense layers and attention products, ResNet\'s '
      'FC and a 1x1 convolution as a GEMM, each with its fused epilogue, and two bare GEMMs, the '
      'baselines of the epilogue overhead); there is no Conv2D: the other kernels are the fused '
      'epilogues and element-wise/reduction chains around the matrix products and convolutions. '
      'Source "corpus" means the graph is the '
      'one MindSpore emitted in that file of `../shared/akg-corpus/` (regenerated here op for op '
      'with the same ops, attributes and constants; tensors renumbered in first-use order; shapes '
      'rescaled where noted); "written for akg" means written from the op semantics following '
      'MindSpore\'s expander conventions.\n')
    w('## Kernels\n')
    w('| kernel | network | what it is | shapes (full size) | dtype | source |')
    w('|---|---|---|---|---|---|')
    for p, full, small, _, _ in built:
        ins = ', '.join(fmt_shape(t.shape) for t, _, _ in full.inputs)
        outs = ', '.join(fmt_shape(t.shape) for t, _ in full.outputs)
        src = p['source']
        if src.startswith(CORPUS):
            path, _, note = src[len(CORPUS):].partition(' ')
            src = 'corpus: `%s`%s' % (path, ' ' + note if note else '')
        w('| `%s` | %s | %s | %s -> %s | %s | %s |' % (p['name'], p['network'], p['what'], ins,
                                                     outs, p['dtype'], src))
    for name, d in extra:
        ins = ', '.join(fmt_shape(t['shape']) for l in d.get('input_desc') or [] for t in l)
        outs = ', '.join(fmt_shape(t['shape']) for t in d.get('output_desc') or [])
        w('| `%s` | - | hand-added pattern (%d ops) | %s -> %s | - | hand-added |' % (
            name, len(d.get('op_desc') or []), ins, outs))
    w('')
    w('## Inputs, outputs and value domains\n')
    w('Arguments are in `input_desc` order, then `output_desc` order (the C ABI order). "in place" '
      'inputs are written by an `InplaceAssign`; an output marked *fake* is the pass-through of '
      'such an update (MindSpore\'s `fake_output: true`), still a real buffer in our ABI. The '
      'domain column says what test data must look like for the result to be meaningful. Small '
      'shapes are those of the `tests/patterns_small/` twin.\n')
    for p, full, small, _, _ in built:
        w('### `%s`\n' % p['name'])
        w('| arg | tensor | role | shape | small shape | dtype | domain |')
        w('|---|---|---|---|---|---|---|')
        for (t, role, dom), (ts, _, _) in zip(full.inputs, small.inputs):
            w('| in | `%s` | %s | %s | %s | %s | %s |' % (t.name, role, fmt_shape(t.shape),
                                                         fmt_shape(ts.shape), t.dtype, DOMAINS[dom]))
        for (t, role), (ts, _) in zip(full.outputs, small.outputs):
            w('| out | `%s` | %s | %s | %s | %s | |' % (t.name, role, fmt_shape(t.shape),
                                                       fmt_shape(ts.shape), t.dtype))
        big = max(nbytes(t) for t in [x for x, _, _ in full.inputs] + [x for x, _ in full.outputs])
        w('\n%d ops; largest input/output %.1f MB.\n' % (len(full.ops), big / 1e6))
    w('## Adding a pattern\n')
    w('1. Preferred: add a builder to `patterns/tools/make_catalog.py` (a function of the size '
      'table decorated with `@pattern(name, network, dtype, what, source)`, optionally with '
      '`full=` / `small=` size overrides; see the existing ones) and run `python3 patterns/tools/make_catalog.py`. That writes `patterns/<name>.json`, '
      'the small twin `tests/patterns_small/<name>.json`, `patterns/meson.build` and this README.')
    w('2. Or drop a composite JSON (for instance one MindSpore dumped with '
      '`context.set_context(save_graphs=True)` / the `kernel_meta` folder) into `patterns/` as '
      '`<name>.json`, where `<name>` is a lowercase C identifier, and set its top-level `op` to '
      '`<name>`. Add `\'<name>\'` to the sorted list in `patterns/meson.build` (running the script '
      'does that: it lists every `patterns/*.json`, and adds a row for it to the table above). '
      'Also write its odd-shape twin `tests/patterns_small/<name>.json` (same graph; dims such as '
      '1, 3, 5, 7, 13, 17, 31, 37, not multiples of 16).')
    w('3. Regenerate the kernels (see the top-level README); only the changed pattern\'s kernel is '
      'rebuilt.\n')
    w('## How make_catalog.py works\n')
    w('* `Graph` is a small builder: `inp()` declares a kernel input (in ABI order), `const()` an '
      'inline scalar (`shape [1]`, `value` rounded to the dtype as MindSpore stores it), and each '
      'op helper (`add`, `mul`, `cast`, `reduce_sum`, `reshape`, `transpose`, `select`, `addn`, '
      '`inplace_assign`, ...) appends an `op_desc` entry, inferring the output shape (numpy '
      'broadcasting, reductions with `keep_dims`, reshape with `-1`, transpose `perm`) and '
      'refusing mismatched dtypes. Tensor names follow MindSpore: parameters and constants are '
      '`input_<k>` numbered by first use, op results `output_0_<k>`.')
    w('* Each pattern is a function of a size table: `FULL` (the real network sizes) and `SMALL` '
      '(odd sizes, none a multiple of 16, several just above 16 or 32 so that a vectorized loop '
      'runs both its body and its remainder). Size-dependent constants (1/hidden, 1/(N*H*W), '
      'H*W of the pooling, n/(n-1)) are recomputed for the twin; the other constants are the '
      'networks\'.\n')
    w('| size | meaning | full | small |')
    w('|---|---|---|---|')
    for k in FULL:
        w('| `%s` | %s | %d | %d |' % (k, SIZE_DOC[k], FULL[k], SMALL[k]))
    w('')
    w('* A pattern may override sizes for itself only (`@pattern(..., full={...}, small={...})`), '
      'or add the pattern-local sizes %s. The matrix-product twins use this so that, together, '
      'they cover M, N and K of 1, prime sizes, several panels of k, several panels of columns '
      'and several row blocks:\n' % ', '.join('`%s` = %s' % kv for kv in LOCAL_SIZE_DOC.items()))
    w('| kernel | full | small |')
    w('|---|---|---|')
    for p, _, _, _, _ in built:
        if p['full'] or p['small']:
            def kv(d):
                return ', '.join('%s=%d' % (k, d[k]) for k in d) or '-'
            w('| `%s` | %s | %s |' % (p['name'], kv(p['full']), kv(p['small'])))
    w('')
    w('* Output is deterministic: keys sorted, `indent=1`; `id` is a CRC of the name, so adding '
      'a pattern changes no other file. `--check` reports files that are out of date.')
    w('')
    return '\n'.join(L)


def render_meson(names):
    body = ''.join("  '%s',\n" % n for n in names)
    return ('# The catalog: one composite JSON per kernel in this folder (patterns/<name>.json).\n'
            '# Kept sorted; patterns/tools/make_catalog.py rewrites it from patterns/*.json.\n'
            'catalog_patterns = [\n' + body + ']\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--check', action='store_true', help='only check that files are up to date')
    ap.add_argument('--list', action='store_true', help='print the pattern names and exit')
    args = ap.parse_args()

    built = build_all()
    if args.list:
        for p, *_ in built:
            print(p['name'])
        return 0

    files = {}
    gen_names = set()
    for p, _, _, jfull, jsmall in built:
        gen_names.add(p['name'])
        files[os.path.join(PATTERN_DIR, p['name'] + '.json')] = dump(jfull)
        files[os.path.join(SMALL_DIR, p['name'] + '.json')] = dump(jsmall)
    extra = []
    if os.path.isdir(PATTERN_DIR):
        for fn in sorted(os.listdir(PATTERN_DIR)):
            if fn.endswith('.json') and fn[:-5] not in gen_names:
                with open(os.path.join(PATTERN_DIR, fn)) as f:
                    extra.append((fn[:-5], json.load(f)))
    all_names = sorted(gen_names | {n for n, _ in extra})
    files[os.path.join(PATTERN_DIR, 'meson.build')] = render_meson(all_names)
    files[os.path.join(PATTERN_DIR, 'README.md')] = render_readme(built, extra)

    stale = []
    for path, text in sorted(files.items()):
        old = None
        if os.path.exists(path):
            with open(path) as f:
                old = f.read()
        if old != text:
            stale.append(os.path.relpath(path, ROOT))
            if not args.check:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, 'w') as f:
                    f.write(text)
    if args.check:
        for s in stale:
            print('out of date:', s)
        return 1 if stale else 0
    print('%d patterns; %d files written' % (len(built), len(stale)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
