#!/usr/bin/env python3
"""Shrinks a composite JSON kernel that `akg-gen check` fails on to a smaller one that still fails.

usage: shrink.py AKG_GEN FAILING.json OUT.json

Greedy steps, each kept when the kernel still FAILs (a crash of akg-gen counts as a failure;
UNSUPPORTED does not): drop an output (and the ops nothing needs any more), make an earlier
tensor the only output, cut an op's operand
loose (it becomes a new kernel input of the same shape and dtype), drop unused kernel inputs.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile


def still_fails(akg_gen, kernel):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.json")
        with open(p, "w") as f:
            json.dump(kernel, f, indent=1)
        r = subprocess.run([akg_gen, "check", p, "--seeds", "1", "2", "--work-dir", os.path.join(d, "w")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = r.stdout
        if "UNSUPPORTED" in out:
            return False
        if " FAIL " in out:
            return True
        return r.returncode not in (0, 1) or ("PASS" not in out and "FAIL" not in out)


def names_in(op):
    return [t["tensor_name"] for g in op["input_desc"] for t in g if "value" not in t]


def prune(kernel):
    """Drops ops no output needs (keeping in-place writes) and inputs no op reads."""
    k = copy.deepcopy(kernel)
    need = {t["tensor_name"] for t in k["output_desc"]}
    keep = []
    for op in reversed(k["op_desc"]):
        out = op["output_desc"][0]["tensor_name"]
        if out in need or op["name"] in ("InplaceAssign", "Assign"):
            keep.append(op)
            need.update(names_in(op))
    k["op_desc"] = list(reversed(keep))
    k["input_desc"] = [g for g in k["input_desc"] if g[0]["tensor_name"] in need]
    return k


def candidates(kernel):
    outs = kernel["output_desc"]
    if len(outs) > 1:
        for i in range(len(outs)):
            k = copy.deepcopy(kernel)
            del k["output_desc"][i]
            yield prune(k)
    # The only output: an earlier tensor (the ops after it go).
    current = {t["tensor_name"] for t in outs}
    for op in kernel["op_desc"]:
        out = op["output_desc"][0]
        if out["tensor_name"] not in current:
            k = copy.deepcopy(kernel)
            k["output_desc"] = [copy.deepcopy(out)]
            yield prune(k)
    for i, op in enumerate(kernel["op_desc"]):
        if op["name"] in ("InplaceAssign", "Assign"):
            k = copy.deepcopy(kernel)
            del k["op_desc"][i]
            yield prune(k)
    inputs = {g[0]["tensor_name"] for g in kernel["input_desc"]}
    n = 0
    for i, op in enumerate(kernel["op_desc"]):
        for gi, g in enumerate(op["input_desc"]):
            for ti, t in enumerate(g):
                if "value" in t or t["tensor_name"] in inputs:
                    continue
                if op["name"] in ("InplaceAssign", "Assign") and gi == 0:
                    continue
                k = copy.deepcopy(kernel)
                while "cut_%d" % n in inputs:
                    n += 1
                name = "cut_%d" % n
                old = t["tensor_name"]
                for op2 in k["op_desc"][i:]:
                    for g2 in op2["input_desc"]:
                        for t2 in g2:
                            if t2.get("tensor_name") == old and "value" not in t2:
                                t2["tensor_name"] = name
                new = {kk: t[kk] for kk in ("data_type", "format", "shape")}
                new["tensor_name"] = name
                k["input_desc"].append([new])
                # An output that was the cut tensor stays produced by its op.
                yield prune(k)


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    akg_gen, src, dst = sys.argv[1:]
    with open(src) as f:
        kernel = json.load(f)
    if not still_fails(akg_gen, kernel):
        print("shrink.py: the kernel does not fail")
        return 1
    progress = True
    while progress:
        progress = False
        for c in candidates(kernel):
            if len(json.dumps(c)) >= len(json.dumps(kernel)):
                continue
            if still_fails(akg_gen, c):
                kernel = c
                progress = True
                print("shrink.py: %d ops, %d outputs" % (len(kernel["op_desc"]), len(kernel["output_desc"])), flush=True)
                break
    with open(dst, "w") as f:
        json.dump(kernel, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
