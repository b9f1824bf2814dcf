#!/usr/bin/env python3
"""Write the generation-time stress patterns (issue 38) into tests/stress/*.json.

Graphs of the shapes and op chains that once kept isl's scheduler busy for minutes: LayerNorm
backward with its parameter gradients accumulated into inputs by InplaceAssign (MindSpore's
atomic_add kernels), float16/float32 Cast-Mul-Sub chains and AddN of gradients; ReLU6 and a mean
over H x W accumulated the same way; an L1 loss (Tanh-Sub-Abs-ReduceSum). Each comes at several
shapes and ranks. Standard library only, deterministic output. Usage:
    python3 tests/stress/make_stress.py           # (re)write the patterns
    python3 tests/stress/make_stress.py --check   # exit 1 if a file would change
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'patterns', 'tools'))
from make_catalog import Graph  # noqa: E402

PATTERNS = {}


def stress(name):
    def deco(fn):
        PATTERNS[name] = fn
        return fn
    return deco


def layernorm_grad(g, shape, dt, n_extra_grads, accumulate):
    """LayerNorm backward over the last axis of `shape`; dgamma/dbeta reduce over the leading
    axes and are added into accumulators (InplaceAssign) when `accumulate`."""
    lead = list(range(len(shape) - 1))
    H = shape[-1]
    stat = shape[:-1] + [1]
    dy = g.inp(shape, dt, 'dy')
    x = g.inp(shape, dt, 'x')
    mean = g.inp(stat, 'float32', 'mean')
    var = g.inp(stat, 'float32', 'variance', 'positive')
    gamma = g.inp([H], dt, 'gamma')
    extra = [g.inp(shape, dt, 'gradient %d' % k) for k in range(n_extra_grads)]
    dyf = g.cast(dy, 'float32') if dt != 'float32' else dy
    xf = g.cast(x, 'float32') if dt != 'float32' else x
    gf = g.cast(gamma, 'float32') if dt != 'float32' else gamma
    rstd = g.unary('Rsqrt', g.add(var, g.const(1e-12, 'float32')))
    xn = g.mul(g.sub(xf, mean), rstd)
    dgamma = g.reduce_sum(g.mul(dyf, xn), lead, False, atomic=accumulate)
    dbeta = g.reduce_sum(dyf, lead, False, atomic=accumulate)
    gd = g.mul(dyf, gf)
    s1 = g.mul(g.reduce_sum(gd, [len(shape) - 1], True), g.const(1.0 / H, 'float32'))
    s2 = g.mul(g.reduce_sum(g.mul(gd, xn), [len(shape) - 1], True), g.const(1.0 / H, 'float32'))
    dx = g.mul(g.sub(g.sub(gd, s1), g.mul(xn, s2)), rstd)
    if dt != 'float32':
        dx = g.cast(dx, dt)
    total = g.addn([dx] + extra) if extra else dx
    g.out(total, 'dx plus the other gradients')
    if accumulate:
        acc_g = g.inp([H], 'float32', 'dgamma accumulator')
        acc_b = g.inp([H], 'float32', 'dbeta accumulator')
        g.out(g.inplace_assign(acc_g, g.add(acc_g, dgamma), dgamma, True), 'dgamma (fake)')
        g.out(g.inplace_assign(acc_b, g.add(acc_b, dbeta), dbeta, True), 'dbeta (fake)')
    else:
        g.out(dgamma, 'dgamma')
        g.out(dbeta, 'dbeta')


for dt in ('float16', 'float32'):
    sfx = 'f16' if dt == 'float16' else 'f32'
    for shape, tag in (([32, 128, 1024], '3d'), ([4096, 1024], '2d'), ([8, 512, 768], '3d_bert'),
                       ([2, 16, 128, 1024], '4d')):
        for grads in (0, 2):
            stress('layernorm_grad_atomic_%s_%s_addn%d' % (tag, sfx, grads))(
                lambda g, shape=shape, dt=dt, grads=grads: layernorm_grad(g, shape, dt, grads, True))
    stress('layernorm_grad_%s' % sfx)(lambda g, dt=dt: layernorm_grad(g, [32, 128, 1024], dt, 2, False))


def layernorm_grad_expander(g, shape, dt, n_extra_grads):
    """LayerNorm backward as MindSpore's GraphKernel expander writes it: the rsqrt as
    exp(-0.5 * log(var + eps)), the variance and mean gradients as separate row sums, the
    elementwise chain in the inputs' dtype with float32 casts around the reductions, dgamma and
    dbeta accumulated (InplaceAssign of the reduction itself, as atomic_add kernels do), and the
    gradients of other branches added by AddN."""
    lead = list(range(len(shape) - 1))
    last = [len(shape) - 1]
    H = shape[-1]
    stat = shape[:-1] + [1]
    x = g.inp(shape, dt, 'x')
    dy = g.inp(shape, dt, 'dy')
    var = g.inp(stat, dt, 'variance', 'positive')
    mean = g.inp(stat, dt, 'mean')
    gamma = g.inp([H], dt, 'gamma')
    extra = [g.inp(shape, dt, 'gradient %d' % k) for k in range(n_extra_grads)]
    c = lambda v: g.const(v, dt)

    def rsum(t, axis):
        if dt == 'float32':
            return g.reduce_sum(t, axis, True)
        return g.cast(g.reduce_sum(g.cast(t, 'float32'), axis, True), dt)

    var_eps = g.add(var, c(1e-5 if dt == 'float16' else 1e-12))
    rsqrt = g.unary('Exp', g.mul(g.unary('Log', var_eps), c(-0.5)))
    xm = g.sub(x, mean)
    xn = g.mul(rsqrt, xm)
    dgf = g.reduce_sum(g.cast(g.mul(dy, xn), 'float32') if dt != 'float32' else g.mul(dy, xn), lead, False, atomic=True)
    dbf = g.reduce_sum(g.cast(dy, 'float32') if dt != 'float32' else dy, lead, False, atomic=True)
    r3 = g.mul(g.mul(rsqrt, rsqrt), rsqrt)
    r3h = g.mul(r3, c(-0.5))
    dyg = g.mul(dy, gamma)
    pd_var = rsum(g.mul(g.mul(dyg, xm), r3h), last)
    pd_mean_1 = g.mul(g.mul(rsqrt, c(-1.0)), rsum(dyg, last))
    pd_mean_2 = g.mul(g.mul(rsum(g.mul(xm, c(-2.0)), last), c(1.0 / H)), pd_var)
    pd_mean = g.add(pd_mean_1, pd_mean_2)
    pd_x_1 = g.mul(dyg, rsqrt)
    pd_x_2 = g.mul(g.mul(g.mul(pd_var, xm), c(2.0)), c(1.0 / H))
    pd_x_3 = g.mul(pd_mean, c(1.0 / H))
    dx = g.add(g.add(pd_x_1, pd_x_2), pd_x_3)
    g.out(g.addn([dx] + extra) if extra else dx, 'dx plus the other gradients')
    acc_g = g.inp([H], 'float32', 'dgamma accumulator')
    acc_b = g.inp([H], 'float32', 'dbeta accumulator')
    g.out(g.inplace_assign(acc_g, dgf, dgf, True), 'dgamma (fake)')
    g.out(g.inplace_assign(acc_b, dbf, dbf, True), 'dbeta (fake)')


for dt in ('float16', 'float32'):
    sfx = 'f16' if dt == 'float16' else 'f32'
    for shape, tag in (([32, 128, 1024], '3d'), ([4096, 1024], '2d'), ([8, 512, 768], '3d_bert'),
                       ([2, 16, 128, 1024], '4d')):
        for grads in (0, 3):
            stress('layernorm_grad_expanded_%s_%s_addn%d' % (tag, sfx, grads))(
                lambda g, shape=shape, dt=dt, grads=grads: layernorm_grad_expander(g, shape, dt, grads))


def relu6_mean(g, shape, accumulate):
    x = g.inp(shape, 'float32', 'x')
    y = g.minimum(g.maximum(x, g.const(0.0, 'float32')), g.const(6.0, 'float32'))
    hw = shape[2] * shape[3]
    m = g.mul(g.reduce_sum(y, [2, 3], False, atomic=accumulate), g.const(1.0 / hw, 'float32'))
    g.out(y, 'relu6')
    if accumulate:
        acc = g.inp(shape[:2], 'float32', 'mean accumulator')
        g.out(g.inplace_assign(acc, g.add(acc, m), m, True), 'mean (fake)')
    else:
        g.out(m, 'mean')


for shape, tag in (([128, 32, 112, 112], 'mbv2'), ([32, 96, 56, 56], 'small'), ([64, 1280, 7, 7], 'head')):
    stress('relu6_mean_atomic_%s_f32' % tag)(lambda g, shape=shape: relu6_mean(g, shape, True))
stress('relu6_mean_mbv2_f32')(lambda g: relu6_mean(g, [128, 32, 112, 112], False))


def l1_loss(g, shape, dt):
    x = g.inp(shape, dt, 'prediction')
    t = g.inp(shape, dt, 'target')
    xf = g.cast(x, 'float32') if dt != 'float32' else x
    tf = g.cast(t, 'float32') if dt != 'float32' else t
    d = g.unary('Abs', g.sub(g.unary('Tanh', xf), tf))
    s = g.reduce_sum(d, list(range(len(shape))), False, atomic=True)
    acc = g.inp([1], 'float32', 'loss accumulator')
    g.out(g.inplace_assign(acc, g.add(acc, s), s, True), 'loss (fake)')


for shape, tag in (([256, 1024], '2d'), ([32, 3, 224, 224], '4d'), ([16, 128, 768], '3d')):
    for dt in ('float16', 'float32'):
        stress('l1_loss_atomic_%s_%s' % (tag, 'f16' if dt == 'float16' else 'f32'))(
            lambda g, shape=shape, dt=dt: l1_loss(g, shape, dt))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--check', action='store_true')
    args = ap.parse_args()
    stale = []
    for name, build in sorted(PATTERNS.items()):
        g = Graph({})
        build(g)
        text = json.dumps(g.to_json(name), indent=1, sort_keys=True) + '\n'
        path = os.path.join(HERE, name + '.json')
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            stale.append(path)
            if not args.check:
                with open(path, 'w') as f:
                    f.write(text)
    if args.check and stale:
        print('stale: ' + ' '.join(stale))
        sys.exit(1)


if __name__ == '__main__':
    main()
