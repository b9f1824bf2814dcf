#!/usr/bin/env python3
"""Writes tests/ops/*.json: for each op of docs/OPS.md, small fused graphs in MindSpore's
composite format (odd shapes, broadcasts, edge attributes, integer dtypes), which the `ops`
test checks against the reference evaluator. Rerun after changing a case:
    python3 tools/make-op-tests.py
"""
import json
import os
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "ops")


class Graph:
    def __init__(self, name):
        self.name, self.inputs, self.ops, self.outputs, self.n = name, [], [], [], 0

    def desc(self, name, shape, dtype, value=None):
        d = {"data_type": dtype, "format": "DefaultFormat", "shape": list(shape), "tensor_name": name}
        if value is not None:
            d["value"] = value
        return d

    def input(self, shape, dtype="float32"):
        name = "input_%d" % len(self.inputs)
        self.inputs.append(self.desc(name, shape, dtype))
        return (name, tuple(shape), dtype)

    def const(self, value, dtype="float32"):
        return ("const", (1,), dtype, value)

    def op(self, opname, inputs, out_shape, dtype, **attrs):
        self.n += 1
        out = ("output_0_%d" % self.n, tuple(out_shape), dtype)
        groups = []
        for i in inputs:
            group = i if isinstance(i, list) else [i]
            groups.append([self.desc(t[0], t[1], t[2], t[3] if len(t) > 3 else None) for t in group])
        attr = [{"name": k, "value": v, "data_type": type(v).__name__} for k, v in attrs.items()] or None
        self.ops.append({"name": opname, "attr": attr, "input_desc": groups, "output_desc": [self.desc(*out)]})
        return out

    def write(self, *outputs):
        kernel = {"composite": True, "op": self.name, "process": "cpu", "platform": "AKG", "version": 1,
                  "input_desc": [[i] for i in self.inputs] or None,
                  "output_desc": [self.desc(o[0], o[1], o[2]) for o in outputs], "op_desc": self.ops}
        with open(os.path.join(OUT, self.name + ".json"), "w") as f:
            json.dump(kernel, f, indent=1)
            f.write("\n")


def unary_cases():
    ops = ["Round", "Floor", "Sign", "Sin", "Cos", "Asin", "ACos", "Atan", "Asinh", "Acosh", "Expm1", "FastGeLU",
           "ZerosLike", "AddMinValue"]
    for op in ops:
        for dtype, shape, bshape in [("float32", (7, 13), (13,)), ("float16", (3, 1, 17), (1, 17))]:
            g = Graph("%s_%s" % (op.lower(), "f32" if dtype == "float32" else "f16"))
            x, y = g.input(shape, dtype), g.input(bshape, dtype)
            scale = {"Asin": 0.45, "ACos": 0.45, "Acosh": 1.0}.get(op, 2.0)
            t = g.op("Mul", [x, g.const(scale, dtype)], shape, dtype)
            if op == "Acosh":
                t = g.op("Add", [g.op("Abs", [t], shape, dtype), g.const(1.0, dtype)], shape, dtype)
            r = g.op(op, [t], shape, dtype)
            g.write(g.op("Add", [r, y], shape, dtype))
    # Halide folds x * 0 and 0 / x to 0; with NaN or Inf in x (ops_special_values) they are NaN.
    g = Graph("mul_div_zero_f32")
    x = g.input((3, 17))
    z = g.op("ZerosLike", [x], (3, 17), "float32")
    g.write(g.op("Mul", [x, g.const(0.0)], (3, 17), "float32"), g.op("RealDiv", [z, x], (3, 17), "float32"))
    g = Graph("isfinite_f32")
    x = g.input((5, 11))
    inv = g.op("RealDiv", [g.const(1.0), x], (5, 11), "float32")
    fin = g.op("IsFinite", [inv], (5, 11), "bool")
    g.write(g.op("Select", [fin, inv, g.const(0.0)], (5, 11), "float32"))
    g = Graph("round_to_int32")
    x = g.input((2, 31))
    g.write(g.op("Round", [g.op("Mul", [x, g.const(3.0)], (2, 31), "float32")], (2, 31), "int32"))


def binary_cases():
    for op in ["Div", "FloorDiv", "Mod", "FloorMod", "Atan2"]:
        for dtype in ["float32", "int32", "int64", "float16"]:
            if op == "Atan2" and dtype.startswith("int"):
                continue
            g = Graph("%s_%s" % (op.lower(), dtype.replace("float", "f").replace("int", "i")))
            a, b = g.input((5, 11), dtype), g.input((11,), dtype)
            r = g.op(op, [a, b], (5, 11), dtype)
            g.write(g.op("Add", [r, a], (5, 11), dtype))
    for op in ["SelectGE", "SelectGT", "SelectLE", "SelectLT"]:
        g = Graph(op.lower() + "_f32")
        a, b = g.input((4, 1, 6)), g.input((5, 6))
        c = g.input((4, 5, 6))
        r = g.op(op, [a, b, c, g.const(0.0)], (4, 5, 6), "float32")
        g.write(g.op("Mul", [r, c], (4, 5, 6), "float32"))
    g = Graph("selectge_i32")
    a, b, c, d = g.input((3, 7), "int32"), g.input((7,), "int32"), g.input((3, 7), "int32"), g.input((1,), "int32")
    g.write(g.op("SelectGE", [a, b, c, d], (3, 7), "int32"))
    for dtype in ["int8", "uint8", "int64"]:
        g = Graph("int_arith_" + dtype)
        a, b = g.input((6, 5), dtype), g.input((5,), dtype)
        s = g.op("Add", [g.op("Mul", [a, b], (6, 5), dtype), g.op("Sign", [a], (6, 5), dtype)], (6, 5), dtype)
        m = g.op("Maximum", [g.op("Sub", [s, b], (6, 5), dtype), a], (6, 5), dtype)
        g.write(m, g.op("Cast", [g.op("Abs", [m], (6, 5), dtype)], (6, 5), "float32", dst_type="float32"))


def reduction_cases():
    for op, dtype, shape, axis, out_dtype in [("Argmax", "float32", (6, 19), -1, "int32"), ("Argmin", "float16", (23, 3), 0, "int32"),
                                             ("Argmax", "int32", (4, 5, 7), 1, "int64"), ("Argmin", "float32", (1, 29), [1], "int32"),
                                             ("Argmax", "float32", (17,), 0, "int32")]:
        g = Graph("%s_%s_%s" % (op.lower(), dtype, "x".join(map(str, shape))))
        x = g.input(shape, dtype)
        a = axis if isinstance(axis, int) else axis[0]
        out = tuple(d for k, d in enumerate(shape) if k != a % len(shape)) or (1,)
        t = g.op("Mul", [x, g.const(2, dtype)], shape, dtype)
        g.write(g.op(op, [t], out, out_dtype, axis=axis))
    g = Graph("elemall_f32")
    x = g.input((5, 7))
    g.write(g.op("ElemAll", [g.op("Sub", [x, g.const(0.5)], (5, 7), "float32")], (1,), "float32"))
    for op, dtype, shape, axis, excl, rev in [("CumSum", "float32", (4, 9, 3), 1, False, False), ("CumSum", "float16", (37,), 0, False, True),
                                              ("CumProd", "float32", (3, 11), -1, True, True), ("CumProd", "float32", (2, 7), [0], True, False),
                                              ("CumSum", "int32", (5, 6), 1, True, False)]:
        g = Graph("%s_%s_%s%s" % (op.lower(), dtype, "excl_" if excl else "", "rev" if rev else "fwd"))
        x = g.input(shape, dtype)
        t = x if op == "CumSum" else g.op("Add", [g.op("Mul", [x, g.const(0.1, dtype)], shape, dtype), g.const(1.0, dtype)], shape, dtype)
        c = g.op(op, [t], shape, dtype, axis=axis, exclusive=excl, reverse=rev)
        g.write(g.op("Add", [c, x], shape, dtype))
    g = Graph("cumsum_reducesum_inplace_f32")
    x, acc = g.input((8, 5)), g.input((5,))
    c = g.op("CumSum", [x], (8, 5), "float32", axis=0)
    r = g.op("ReduceSum", [c], (5,), "float32", axis=[0], keep_dims=False)
    g.op("InplaceAssign", [acc, r, r], (5,), "float32", fake_output=True)
    g.write(c)


def layout_cases():
    slices = [  # name, input shape, begin, end, strides, masks, output shape
        ("basic", (7, 13), [1, 2], [6, 11], [2, 3], {}, (3, 3)),
        ("negative_stride", (9, 5), [-1, 0], [0, 5], [-2, 1], {}, (4, 5)),
        ("masks", (6, 8, 3), [2, 1, 0], [0, 7, 2], [1, 2, 1], {"begin_mask": 1, "end_mask": 5}, (6, 3, 3)),
        ("shrink_newaxis", (5, 6, 4), [1, 0, 2], [2, 0, 4], [1, 1, 1], {"shrink_axis_mask": 1, "new_axis_mask": 2}, (1, 2, 4)),
        ("ellipsis", (3, 4, 5, 6), [0, 1], [0, 5], [1, 2], {"ellipsis_mask": 1}, (3, 4, 5, 2)),
        ("reverse_all", (11,), [0], [0], [-1], {"begin_mask": 1, "end_mask": 1}, (11,)),
    ]
    for name, shape, b, e, s, masks, out in slices:
        g = Graph("stridedslice_" + name)
        x = g.input(shape)
        y = g.op("StridedSlice", [g.op("Mul", [x, g.const(3.0)], shape, "float32")], out, "float32", begin=b, end=e, strides=s, **masks)
        g.write(g.op("Add", [y, g.const(1.0)], out, "float32"))
    g = Graph("concat_axis1_f32")
    a, b, c = g.input((4, 3, 5)), g.input((4, 1, 5)), g.input((4, 7, 5))
    cat = g.op("Concat", [[g.op("Exp", [a], (4, 3, 5), "float32"), b, c]], (4, 11, 5), "float32", axis=1)
    g.write(g.op("ReduceSum", [cat], (4, 5), "float32", axis=[1], keep_dims=False), cat)
    g = Graph("concat_last_f16")
    a, b = g.input((3, 2), "float16"), g.input((3, 13), "float16")
    g.write(g.op("Concat", [[a, b]], (3, 15), "float16", axis=-1))
    g = Graph("padakg_f32")
    x = g.input((5, 6))
    p = g.op("PadAkg", [g.op("Mul", [x, x], (5, 6), "float32")], (8, 9), "float32", head=[1, 0], tail=[2, 3], pad_val=-2.5)
    g.write(g.op("Add", [p, g.const(1.0)], (8, 9), "float32"))
    g = Graph("unpadakg_f32")
    x = g.input((7, 9))
    g.write(g.op("UnPadAkg", [g.op("Neg", [x], (7, 9), "float32")], (5, 9), "float32", tail=[2, 0]))
    for axis, out in [(-1, (4, 6, 10)), (0, (10, 4, 6)), (1, (4, 10, 6))]:
        g = Graph("onehot_axis%d" % axis if axis >= 0 else "onehot_axis_last")
        i, w = g.input((4, 6), "int32"), g.input((6,))
        oh = g.op("OneHot", [i, g.const(1.0), g.const(0.0)], out, "float32", depth=10, axis=axis)
        g.write(g.op("Mul", [oh, g.const(2.0)], out, "float32"))
    g = Graph("equivformat_transdata_f32")
    x = g.input((4, 6))
    e = g.op("EquivFormat", [x], (24,), "float32", shape=[24])
    t = g.op("TransData", [g.op("Abs", [e], (24,), "float32")], (24,), "float32", src_format="DefaultFormat", dst_format="NCHW")
    g.write(t)


def indexing_cases():
    g = Graph("gather_embedding_f32")
    table, ids, pos = g.input((50, 8)), g.input((3, 5), "int32"), g.input((5, 8))
    e = g.op("Gather", [table, ids], (3, 5, 8), "float32", axis=0)
    g.write(g.op("Add", [e, pos], (3, 5, 8), "float32"))
    g = Graph("gather_axis1_f16")
    x, ids = g.input((4, 9, 3), "float16"), g.input((7,), "int64")
    gt = g.op("Gather", [x, ids], (4, 7, 3), "float16", axis=[1])
    g.write(g.op("ReduceSum", [gt], (4, 3), "float16", axis=[1], keep_dims=False))
    g = Graph("gather_int32_values")
    x, ids = g.input((13,), "int32"), g.input((2, 3), "int32")
    g.write(g.op("Gather", [x, ids], (2, 3), "int32", axis=0))
    g = Graph("gathernd_f32")
    x, ids = g.input((6, 7, 3)), g.input((4, 2), "int32")
    gn = g.op("GatherNd", [x, ids], (4, 3), "float32")
    g.write(g.op("Mul", [gn, g.const(0.5)], (4, 3), "float32"))
    g = Graph("tensorscatteradd_f32")
    x, ids, upd = g.input((9, 4)), g.input((6, 1), "int32"), g.input((6, 4))
    s = g.op("TensorScatterAdd", [x, ids, upd], (9, 4), "float32")
    g.write(g.op("Mul", [s, g.const(2.0)], (9, 4), "float32"))
    g = Graph("tensorscatteradd_2d_f16")
    x, ids, upd = g.input((5, 6, 3), "float16"), g.input((7, 2), "int64"), g.input((7, 3), "float16")
    g.write(g.op("TensorScatterAdd", [x, ids, upd], (5, 6, 3), "float16"))
    g = Graph("unsortedsegmentsum_f32")
    x, ids = g.input((4, 3, 5)), g.input((4, 3), "int32")
    u = g.op("UnsortedSegmentSum", [g.op("Exp", [x], (4, 3, 5), "float32"), ids], (6, 5), "float32", num_segments=6)
    g.write(u)
    # Large enough for several slice chunks and threads (emit_sequential.cpp).
    g = Graph("unsortedsegmentsum_wide_f32")
    x, ids = g.input((600, 520)), g.input((600,), "int32")
    g.write(g.op("UnsortedSegmentSum", [x, ids], (37, 520), "float32", num_segments=37))
    g = Graph("tensorscatteradd_table_f16")
    x, ids, upd = g.input((1000, 300), "float16"), g.input((500, 1), "int64"), g.input((500, 300), "float16")
    g.write(g.op("TensorScatterAdd", [x, ids, upd], (1000, 300), "float16"))
    g = Graph("cumsum_rows_f32")
    x = g.input((64, 300, 40))
    g.write(g.op("CumSum", [x], (64, 300, 40), "float32", axis=1, reverse=True))
    # An inline-constant operand keeps the lowering's reduction form (no sequential part).
    g = Graph("tensorscatteradd_constant_input")
    ids, upd = g.input((5, 1), "int32"), g.input((5,))
    g.write(g.op("TensorScatterAdd", [g.const(1.5), ids, upd], (1,), "float32"))
    g = Graph("unsortedsegmentsum_i32")
    x, ids = g.input((11,), "int32"), g.input((11,), "int32")
    g.write(g.op("UnsortedSegmentSum", [x, ids], (3,), "int32", num_segments=3))


def pool_cases():
    cases = [("pool_max_nchw_pad", (2, 3, 11, 9), "max", "NCHW", [3, 3], [2, 2], [1, 1, 1, 1], 0, (2, 3, 6, 5), "float32"),
             ("pool_avg_nhwc_ceil", (1, 7, 6, 4), "avg", "NHWC", [2, 2], [2, 2], [0, 0, 0, 0], 1, (1, 4, 3, 4), "float32"),
             ("pool_max_f16_k1", (1, 2, 5, 5), "max", "NCHW", [1, 1], [1, 1], [0, 0, 0, 0], 0, (1, 2, 5, 5), "float16"),
             ("pool_avg_pad_f16", (2, 2, 7, 7), "avg", "NCHW", [3, 3], [1, 1], [1, 1, 1, 1], 0, (2, 2, 7, 7), "float16")]
    for name, shape, ptype, layout, k, s, pad, ceil, out, dtype in cases:
        g = Graph(name)
        x = g.input(shape, dtype)
        p = g.op("Pool2D", [x], out, dtype, pool_type=ptype, data_layout=layout, kernel_size=k, strides=s, pad=pad,
                 round_mode=ceil, **{"global": False})
        g.write(g.op("Add", [p, g.const(1.0, dtype)], out, dtype))
    g = Graph("globalpool_avg_nchw")
    x = g.input((2, 5, 7, 3))
    g.write(g.op("GlobalPool2D", [g.op("Exp", [x], (2, 5, 7, 3), "float32")], (2, 5, 1, 1), "float32", pool_type="avg", data_layout="NCHW"))
    g = Graph("pool_global_max_nhwc")
    x = g.input((3, 4, 6, 5))
    g.write(g.op("Pool2D", [x], (3, 1, 1, 5), "float32", pool_type="max", data_layout="NHWC", **{"global": True}))


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".json"):
            os.remove(os.path.join(OUT, f))
    for make in [unary_cases, binary_cases, reduction_cases, layout_cases, indexing_cases, pool_cases]:
        make()
    names = sorted(f[:-5] for f in os.listdir(OUT) if f.endswith(".json"))
    with open(os.path.join(OUT, "kernels.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    print("%d op tests in %s" % (len([f for f in os.listdir(OUT) if f.endswith('.json')]), os.path.normpath(OUT)), file=sys.stderr)
