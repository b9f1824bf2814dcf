#!/usr/bin/python3
"""Writes benchmarks/REPORT.md and benchmarks/report.png from the suite's results.

Inputs: the Google Benchmark JSON of build-bench/benchmarks/bench_catalog (aggregates of
interleaved repetitions) and, optionally, the JSON of benchmarks/torch_catalog.py, plus
a small JSON of run metadata written by tools/run-benchmarks.sh. Uses Debian's
python3-matplotlib for the chart (the table is written without it).
"""
import argparse
import datetime
import json
import math
import os
import sys
from collections import defaultdict

# Implementation families, in the order of the table and chart. A family's value for a
# kernel is its best variant (e.g. oneDNN plain or blocked layout, Halide Adams or Mullapudi).
OURS = "akg"  # the variant the dispatcher picks on the machine that ran the suite
UNFUSED = "akg_unfused"
AVX2 = "akg_x86-64-v3"  # the x86-64-v3 variant of the same kernel, timed beside it (bench_catalog.cpp)
FAMILIES = [
    ("akg", [OURS]),
    ("akg AVX2 (x86-64-v3)", [AVX2]),
    ("akg unfused", [UNFUSED]),
    ("oneDNN", ["onednn", "onednn_nChw16c", "onednn_packed"]),
    ("OpenBLAS + epilogue", ["openblas_epilogue"]),
    ("Halide", ["halide_Adams2019", "halide_Mullapudi2016"]),
    ("PyTorch", ["pytorch_ops", "pytorch_native"]),
]
# openblas_bare (a GEMM without its epilogue) is not a peer: the GEMM section shows it apart.
PEERS = ["onednn", "onednn_nChw16c", "onednn_packed", "openblas_epilogue", "halide_Adams2019", "halide_Mullapudi2016", "pytorch_ops", "pytorch_native"]
COLUMNS = [OURS, AVX2, UNFUSED, "onednn", "onednn_nChw16c", "onednn_packed", "openblas_epilogue", "halide_Adams2019", "halide_Mullapudi2016",
           "pytorch_ops", "pytorch_native"]
HEAD = {OURS: "akg", AVX2: "akg AVX2 (x86-64-v3)", UNFUSED: "akg unfused", "onednn": "oneDNN", "onednn_nChw16c": "oneDNN nChw16c",
        "halide_Adams2019": "Halide Adams2019", "halide_Mullapudi2016": "Halide Mullapudi2016",
        "pytorch_ops": "PyTorch op-by-op", "pytorch_native": "PyTorch native ops",
        "onednn_packed": "oneDNN packed W", "openblas_epilogue": "OpenBLAS + epilogue", "openblas_bare": "OpenBLAS bare sgemm",
        "akg_packed": "akg packed W"}


def to_ms(v, unit):
    return v * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[unit]


labels = {}  # (kernel, impl) -> label (oneDNN: the primitives and their implementations)
flops = {}  # kernel -> flop per call (the GEMM benchmarks' "flop" counter; fma_peak: per call at its threads)


def load_gbench(path):
    """-> times[(kernel, impl, threads)] = ms, skips[(kernel, impl)] = reason, mb[kernel], the
    statistic: the minimum over the repetitions where the results have it (register_timed in
    bench_catalog.cpp), else their median."""
    data = json.load(open(path))
    times, skips, mb = {}, {}, {}
    labels.clear()
    benchmarks = data.get("benchmarks", [])
    stat = "min" if any(b.get("aggregate_name") == "min" for b in benchmarks) else "median"
    for b in benchmarks:
        parts = b.get("run_name", b["name"]).split("/")
        kernel, impl = parts[0], parts[1]
        if b.get("error_occurred"):
            skips[(kernel, impl)] = b.get("error_message", "skipped")
            continue
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != stat:
            continue
        if len(parts) < 3:
            continue
        threads = int(parts[2])
        if b.get("label"):
            labels[(kernel, impl)] = b["label"]
        times[(kernel, impl, threads)] = to_ms(b["real_time"], b.get("time_unit", "ns"))
        if "flop" in b:
            flops[(kernel, impl, threads)] = b["flop"]
        if "compulsory_MB" in b:
            mb[kernel] = b["compulsory_MB"]
    return data.get("context", {}), times, skips, mb, stat


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def same_code_kernels(kernels, fused_dir, unfused_dir, target=""):
    """The kernels whose fused and unfused sources are the same code: equal after the banner line,
    with the unfused symbols' suffix removed (the fused sources of the unfused kernels' `target`: a
    folder generated/kernels/<target> given directly, or generated/kernels and the target) (elementwise chains that the front end inlines into one
    loop nest either way). Their time ratio is the measurement's own noise."""
    same = set()
    if not fused_dir or not unfused_dir:
        return same
    if target and os.path.isdir(os.path.join(fused_dir, target)):
        fused_dir = os.path.join(fused_dir, target)  # generated/kernels/<target>/
    for k in kernels:
        fused, unfused = os.path.join(fused_dir, k + ".cpp"), os.path.join(unfused_dir, k + "_unfused.cpp")
        if not (os.path.exists(fused) and os.path.exists(unfused)):
            continue
        a = open(fused).read().split("\n", 1)[-1]
        b = open(unfused).read().replace("_unfused", "").split("\n", 1)[-1]
        if a == b:
            same.add(k)
    return same


# What each bench_machine probe measures, in the report's words.
MACHINE_PROBES = [
    ("l1/load_add_f32", "load 16 floats and add them into one of 4 accumulators (a lane reduction's pass)"),
    ("l1/store_f32", "store 16 floats from a register"),
    ("l1/copy_f32", "load 16 floats and store them (a pass that reads a row and writes one)"),
    ("l1/f16_to_f32", "convert 16 halves to floats (vcvtph2ps) and store them"),
    ("l1/f32_to_f16", "convert 16 floats to halves (one 512-bit vcvtps2ph) and store them"),
    ("l1/f32_to_f16_ymm", "the same with two 256-bit vcvtps2ph"),
]


def load_machine(path):
    """-> {probe: ns per 16-element vector}, the median over bench_machine's repetitions
    (run-benchmarks.sh asks for aggregates only); {} without the file."""
    if not path or not os.path.exists(path):
        return {}
    return {b.get("run_name", b["name"]): b["ns_per_vector"] for b in json.load(open(path)).get("benchmarks", [])
            if b.get("aggregate_name") == "median" and "ns_per_vector" in b}


def fmt_ms(ms):
    if ms is None:
        return "–"
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}" if ms < 100 else f"{ms:.0f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gbench", required=True)
    ap.add_argument("--torch", default="")
    ap.add_argument("--meta", default="")
    ap.add_argument("--out-dir", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--fused-src", default="", help="the fused kernels' sources of the unfused kernels' target "
                    "(generated/kernels/x86-64-v4, or generated/kernels: the target is read from the results)")
    ap.add_argument("--unfused-src", default="", help="the unfused kernels' sources (build-bench/benchmarks)")
    ap.add_argument("--machine", default="", help="bench_machine's JSON results (per-vector costs of one core)")
    args = ap.parse_args()

    context, times, skips, mb, stat = load_gbench(args.gbench)
    stat_words = "minimum" if stat == "min" else "median"
    torch_info = None
    if args.torch and os.path.exists(args.torch):
        torch_info = json.load(open(args.torch))
        for r in torch_info["results"]:
            times[(r["kernel"], r["impl"], r["threads"])] = r.get("min_ms", r["median_ms"]) if stat == "min" else r["median_ms"]
        for s in torch_info.get("skipped", []):
            skips[(s["kernel"], s["impl"])] = s["error"]
    meta = json.load(open(args.meta)) if args.meta and os.path.exists(args.meta) else {}

    kernels = sorted({k for (k, _, _) in times if (k, OURS, 1) in times or (k, OURS, 2) in times})
    threads_list = sorted({t for (_, _, t) in times})
    same_code = same_code_kernels(kernels, args.fused_src, args.unfused_src, context.get("akg_unfused_target", ""))
    # Which compiled variant the akg column is (bench_catalog's context; absent in older results).
    variant = context.get("akg_variant", "")
    isa = context.get("akg_cpu_isa", "")
    compiled = context.get("akg_variants", "")
    has_avx2 = any((k, AVX2, t) in times for k in kernels for t in threads_list)

    # GEMM kernels (bench_gemm.cpp's table, in the results' context): their roofline is the larger
    # of the memory time and the FMA peak's time for 2·M·N·K·batch flops at the same threads.
    gemm_specs = json.loads(context["akg_gemm_specs"]) if context.get("akg_gemm_specs") else {}

    def fma_peak(t, isa="avx512"):
        """GFLOP/s of the FMA probe at t threads (avx512, else avx2 where the build has no AVX-512)."""
        for i in ([isa] if isa != "avx512" else ["avx512", "avx2"]):
            ms, fl = times.get(("fma_peak", i, t)), flops.get(("fma_peak", i, t))
            if ms and fl:
                return fl / (ms * 1e6)
        return None

    def compute_ms(k, t):
        peak = fma_peak(t)
        return gemm_specs[k]["flop"] / (peak * 1e6) if k in gemm_specs and peak else None

    def roofline(k, t):
        s = [times.get((k, "stream", t)), times.get((k, "stream_nt", t))]
        s = [x for x in s if x]
        mem = min(s) if s else None
        c = compute_ms(k, t)
        return max(x for x in (mem, c) if x) if (mem or c) else None

    def best_peer(k, t, impls=PEERS):
        c = [(times[(k, i, t)], i) for i in impls if (k, i, t) in times]
        return min(c) if c else (None, None)

    lines = []
    now = meta.get("date") or datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC")
    cpu = meta.get("cpu") or "unknown CPU"
    lines.append("# Benchmark report: akg vs oneDNN, Halide 14, PyTorch eager, and the roofline")
    lines.append("")
    lines.append(f"Measured **{now}** on **{cpu}** ({meta.get('cores', '?')} cores, load average "
                 f"{meta.get('loadavg_before', '?')} before the run, {meta.get('loadavg_after', '?')} after), "
                 f"by `bash tools/run-benchmarks.sh` (Google Benchmark, {meta.get('repetitions', '?')} "
                 f"interleaved repetitions, the {stat_words} of each (interference on a shared machine only adds time); the benchmarks took {meta.get('seconds', '?')} s, {meta.get('seconds_with_build', '?')} s with the build). "
                 "fp32 / fp16 as each catalog kernel declares; times in ms.")
    if variant:
        lines.append("")
        lines.append(f"**akg** = the kernel variant the library's dispatcher runs on this machine: **{variant}** "
                     f"(`akg_kernel_variant()`; `akg_cpu_isa()` = `{isa or '?'}`; variants compiled, best first: "
                     f"{', '.join(compiled.split(',')) if compiled else '?'}). "
                     + ("**akg AVX2 (x86-64-v3)** = the same kernel's x86-64-v3 variant (AVX2 + FMA + F16C, what a "
                        "CPU without AVX-512 runs), called directly in the same process, interleaved with the rest."
                        if has_avx2 else "The x86-64-v3 (AVX2) variant was not timed: "
                        + (next((w for (k, i), w in skips.items() if i == AVX2), "not in these results") + ".")))
    if meta.get("note"):
        lines.append("")
        lines.append(f"> {meta['note']}")
    lines.append("")
    lines.append("![% of roofline per kernel](report.png)")
    lines.append("")
    lines.append("**Roofline** = compulsory bytes (every input read once, every output and in-place input "
                 "written once) / the bandwidth of a STREAM-style probe that reads and writes exactly those "
                 "byte counts (same array sizes, same read:write mix, statically split across the same "
                 "number of threads), measured in the same process, interleaved with the kernels; the faster "
                 "of normal and non-temporal stores; for the GEMM kernels the larger of that and the time of "
                 "2·M·N·K·batch flops at the FMA peak measured in the same run (see the GEMM section). **% RL** = roofline time / time. **vs best peer** = best "
                 "peer time / akg time (>1: akg faster).")
    lines.append("")

    # ---- summary ----
    lines.append("## Summary (geometric means over the kernels that have the comparison)")
    lines.append("")
    avx2_cols = " | AVX2 variant % of roofline (median) | AVX2 variant time / akg time (geometric mean; >1: AVX2 slower)" if has_avx2 else ""
    lines.append("| threads | akg % of roofline (median over kernels) | fused vs unfused | akg vs best peer | akg vs PyTorch | akg vs oneDNN | akg vs Halide | kernels faster than every peer"
                 + avx2_cols + " |")
    lines.append("|---|---|---|---|---|---|---|---|" + ("---|---|" if has_avx2 else ""))
    summary = {}
    for t in threads_list:
        pct = sorted(100 * roofline(k, t) / times[(k, OURS, t)] for k in kernels
                     if (k, OURS, t) in times and roofline(k, t))
        med_pct = pct[len(pct) // 2] if pct else None

        def ratio(impls):
            r = []
            for k in kernels:
                if (k, OURS, t) not in times:
                    continue
                p, _ = best_peer(k, t, impls)
                if p:
                    r.append(p / times[(k, OURS, t)])
            return geomean(r), len(r)

        unf = ratio([UNFUSED])
        peer = ratio(PEERS)
        pt = ratio(["pytorch_ops", "pytorch_native"])
        dn = ratio(["onednn", "onednn_nChw16c"])
        hl = ratio(["halide_Adams2019", "halide_Mullapudi2016"])
        wins = sum(1 for k in kernels if (k, OURS, t) in times and best_peer(k, t)[0]
                   and best_peer(k, t)[0] > times[(k, OURS, t)])
        with_peer = sum(1 for k in kernels if (k, OURS, t) in times and best_peer(k, t)[0])
        f = lambda x: f"{x[0]:.2f}× ({x[1]} kernels)" if x[0] else "–"
        # The AVX2 variant: its median % of the roofline, and its time over akg's (geometric mean;
        # > 1: the AVX2 variant is slower).
        a_pct = sorted(100 * roofline(k, t) / times[(k, AVX2, t)] for k in kernels
                       if (k, AVX2, t) in times and roofline(k, t))
        a_med = a_pct[len(a_pct) // 2] if a_pct else None
        a_ratio = [times[(k, AVX2, t)] / times[(k, OURS, t)] for k in kernels if (k, AVX2, t) in times and (k, OURS, t) in times]
        a_gm = geomean(a_ratio)
        avx2_cells = ""
        if has_avx2:
            avx2_cells = (f" | {a_med:.0f}%" if a_med is not None else " | –") + \
                         (f" | {a_gm:.2f}× ({len(a_ratio)} kernels)" if a_gm else " | –")
        lines.append((f"| {t} | {med_pct:.0f}% | {f(unf)} | {f(peer)} | {f(pt)} | {f(dn)} | {f(hl)} | {wins} of {with_peer}"
                      if med_pct is not None else f"| {t} | – | {f(unf)} | {f(peer)} | {f(pt)} | {f(dn)} | {f(hl)} | {wins} of {with_peer}")
                     + avx2_cells + " |")
        summary[t] = {"median_pct_roofline": med_pct, "fused_vs_unfused": unf[0], "vs_best_peer": peer[0],
                      "vs_pytorch": pt[0], "vs_onednn": dn[0], "vs_halide": hl[0], "wins": wins,
                      "with_peer": with_peer}
        if has_avx2:
            summary[t].update({"avx2_median_pct_roofline": a_med, "avx2_time_over_akg": a_gm,
                               "avx2_kernels": len(a_ratio),
                               "avx2_over_10pct_slower": sorted(
                                   k for k in kernels if (k, AVX2, t) in times and (k, OURS, t) in times
                                   and times[(k, AVX2, t)] > 1.10 * times[(k, OURS, t)])})
    lines.append("")
    for t in threads_list:
        pct = {k: 100 * roofline(k, t) / times[(k, OURS, t)] for k in kernels if (k, OURS, t) in times and roofline(k, t)}
        n85 = sum(1 for v in pct.values() if v >= 85)
        n70 = sum(1 for v in pct.values() if v >= 70)
        lines.append(f"- {t} thread{'s' if t > 1 else ''}: {n85} of {len(pct)} kernels at ≥ 85% of the roofline, "
                     f"{n70} at ≥ 70%.")
    if has_avx2:
        for t in threads_list:
            r = {k: times[(k, AVX2, t)] / times[(k, OURS, t)] for k in kernels
                 if (k, AVX2, t) in times and (k, OURS, t) in times}
            slow = sorted(((v, k) for k, v in r.items() if v > 1.10), reverse=True)
            thr = f"{t} thread{'s' if t > 1 else ''}"
            if not r:
                continue
            lines.append(f"- AVX2 (x86-64-v3) variant, {thr}: more than 10% slower than akg ({variant or 'its best variant'}) on "
                         f"{len(slow)} of {len(r)} kernels" +
                         (": " + ", ".join(f"`{k}` {v:.2f}×" for v, k in slow) + " (AVX2 time / akg time)." if slow else "."))
    if same_code:
        differs = [k for k in kernels if k not in same_code]
        fusion, noise = [], []
        for t in threads_list:
            pairs = lambda ks: [times[(k, UNFUSED, t)] / times[(k, OURS, t)] for k in ks
                                if (k, OURS, t) in times and (k, UNFUSED, t) in times]
            gain, same = pairs(differs), pairs(sorted(same_code))
            thr = f"{t} thread{'s' if t > 1 else ''}"
            if gain:
                fusion.append(f"{geomean(gain):.2f}× at {thr}")
            if same:
                noise.append(f"at {thr} geometric mean {geomean(same):.2f}×, from {min(same):.2f}× to {max(same):.2f}×")
            summary.setdefault(t, {}).update({
                "fused_vs_unfused_where_code_differs": geomean(gain),
                "same_code_ratio": {"geomean": geomean(same), "min": min(same) if same else None,
                                    "max": max(same) if same else None}})
        lines.append(f"- Fusion changes the generated code of {len(differs)} of the {len(kernels)} kernels; over "
                     f"those, fused vs unfused: {', '.join(fusion)}. The other {len(same_code)} (marked ≡) compile to "
                     "the same code fused and unfused (elementwise chains the front end inlines into one loop nest "
                     f"either way): their unfused / fused time ratio, {'; '.join(noise)}, is this run's measurement "
                     "noise, the margin to read any single cell with.")
        for t in summary:
            summary[t]["same_code_kernels"] = sorted(same_code)
    lines.append("")

    # ---- the table ----
    present = [c for c in COLUMNS if any((k, c, t) in times for k in kernels for t in threads_list)]
    lines.append(f"## Per kernel: {stat_words} ms (% of roofline)")
    lines.append("")
    lines.append("| kernel | thr | MB | roofline ms | " + " | ".join(HEAD[c] for c in present) + " | best peer | vs best peer |")
    lines.append("|---|---|---|---|" + "---|" * len(present) + "---|---|")
    for k in kernels:
        for t in threads_list:
            rl = roofline(k, t)
            cells = []
            for c in present:
                v = times.get((k, c, t))
                if v is None:
                    cells.append("–")
                else:
                    cell = fmt_ms(v) + (f" ({100 * rl / v:.0f}%)" if rl else "")
                    if c == UNFUSED and k in same_code:
                        cell += " ≡"
                    cells.append(f"**{cell}**" if c == OURS else cell)
            bp, bi = best_peer(k, t)
            ours = times.get((k, OURS, t))
            sp = f"{bp / ours:.2f}×" if bp and ours else "–"
            lines.append(f"| `{k}` | {t} | {mb.get(k, 0):.1f} | {fmt_ms(rl)} | " + " | ".join(cells) +
                         f" | {HEAD.get(bi, '–') if bi else '–'} | {sp} |")
    lines.append("")

    # ---- peers: what ran, what was skipped ----
    beam1 = sorted(k for (k, i), l in labels.items() if i == "halide_Adams2019" and l.startswith("beam"))
    for (k, i), why in list(skips.items()):
        if i.startswith("onednn") and k.endswith("_f16") and "primitive descriptor" in why and "float16" not in why:
            skips[(k, i)] = why + " (float16 kernel: oneDNN 2.6 has no implementation of it for this CPU)"
    machine = load_machine(args.machine)
    if machine:
        base = machine.get("l1/store_f32")
        lines.append("## What one core costs per vector here")
        lines.append("")
        lines.append("Measured in the same run by `bench_machine` (one thread, operands in L1, the median of its "
                     "repetitions): what a kernel that misses the roofline spends per 16 elements, memory aside. "
                     "A float16 output costs a vcvtps2ph per 16 elements; a pass over a row that writes it costs a "
                     "load and a store per vector. Where these add up to more than the roofline's time per vector, "
                     "the kernel is bound by this core, not by memory.")
        lines.append("")
        lines.append("| probe | ns per 16 elements | vs a store |")
        lines.append("|---|---|---|")
        for name, words in MACHINE_PROBES:
            if name in machine:
                rel = f"{machine[name] / base:.2f}×" if base else ""
                lines.append(f"| `{name}`: {words} | {machine[name]:.3f} | {rel} |")
        lines.append("")
    # ---- GEMM kernels ----
    gemm_summary = {}
    gemm_kernels = [k for k in gemm_specs if any((k, i, t) in times for i in [OURS] + PEERS + ["openblas_bare"]
                                                 for t in threads_list)]
    if gemm_kernels or any(("fma_peak", i, t) in times for i in ("avx512", "avx2") for t in threads_list):
        peaks = {i: {t: fma_peak(t, i) for t in threads_list} for i in ("avx512", "avx2")}
        gemm_summary["fma_peak_gflops"] = peaks
        lines.append("## GEMM kernels: MatMul / BatchMatMul with fused epilogues")
        lines.append("")
        lines.append("FMA peak measured in this run (`fma_peak`: independent FMA chains, 16 zmm / 12 ymm "
                     "accumulators, pinned threads): " + "; ".join(
                         f"{t} thread{'s' if t > 1 else ''}: AVX-512 {peaks['avx512'][t]:.0f} GFLOP/s, AVX2 "
                         f"{peaks['avx2'][t]:.0f} GFLOP/s" if peaks["avx512"].get(t) and peaks["avx2"].get(t) else
                         f"{t}: –" for t in threads_list) + ". Flops = 2·M·N·K·batch (epilogues not counted); "
                     "% peak = GFLOP/s / the AVX-512 peak at the same threads.")
        lines.append("")
        lines.append("Peers: **oneDNN** matmul with the epilogue as its bias argument and post-ops (output scale, "
                     "binary add of residual / mask, eltwise gelu_tanh), the better of plain and prepacked "
                     "weights (`format_tag::any`, reordered once outside the timing; only where B is a weight); "
                     "**OpenBLAS + epilogue**: `cblas_sgemm` then one separate row-parallel pass (float16 kernels: "
                     "the conversions to and from float timed in); **OpenBLAS bare**: `cblas_sgemm` alone, no "
                     "epilogue (not a peer: the stretch goal); **PyTorch**: `torch.addmm` / `torch.matmul` and the "
                     "epilogue ops, eager. **epilogue overhead** = akg fused / akg bare twin (a catalog kernel "
                     "`gemm_bare_*` / `bmm_bare_*` of the same A and B shapes; – where there is none). Ratios are "
                     "peer time / akg time (>1: akg faster). **akg packed W**: `akg_run_packed`, the weights packed "
                     "once by `akg_pack_input` outside the timing; **packed vs oneDNN packed** compares the two "
                     "with prepacked weights.")
        lines.append("")

        def cell(k, t, impls):
            c = [(times[(k, i, t)], i) for i in impls if (k, i, t) in times]
            if not c:
                return None, None, "–"
            ms, i = min(c)
            gf = gemm_specs[k]["flop"] / (ms * 1e6)
            pk = peaks["avx512"].get(t) or peaks["avx2"].get(t)
            txt = f"{fmt_ms(ms)} ms, {gf:.0f} GF/s" + (f", {100 * gf / pk:.0f}%" if pk else "")
            if len(impls) > 1 and i in ("onednn", "onednn_packed"):
                txt += " (packed)" if i == "onednn_packed" else " (plain)"
            return ms, i, txt

        def twin(k):
            a = gemm_specs[k]
            for o, b in gemm_specs.items():
                if o != k and b.get("bare") and b["a_shape"] == a["a_shape"] and b["b_shape"] == a["b_shape"] \
                        and b["dtype"] == a["dtype"] and any((o, OURS, t) in times for t in threads_list):
                    return o
            return None

        groups = [("akg", [OURS]), ("akg packed W", ["akg_packed"]), ("oneDNN", ["onednn", "onednn_packed"]),
                  ("OpenBLAS + epilogue", ["openblas_epilogue"]), ("OpenBLAS bare", ["openblas_bare"]),
                  ("PyTorch", ["pytorch_native", "pytorch_ops"])]
        lines.append("| kernel | thr | GFLOP | " + " | ".join(g for g, _ in groups) +
                     " | vs oneDNN | packed vs oneDNN packed | vs OpenBLAS+epi | vs OpenBLAS bare | vs PyTorch | epilogue overhead |")
        lines.append("|---|---|---|" + "---|" * len(groups) + "---|---|---|---|---|---|")
        kern_sum = {}
        for k in gemm_kernels:
            spec = gemm_specs[k]
            tw = twin(k)
            per_t = {}
            for t in threads_list:
                res = {g: cell(k, t, impls) for g, impls in groups}
                ours = res["akg"][0]
                ratio = lambda g: (res[g][0] / ours) if ours and res[g][0] else None
                rf = lambda x: f"{x:.2f}×" if x else "–"
                over = times[(k, OURS, t)] / times[(tw, OURS, t)] if tw and (k, OURS, t) in times and (tw, OURS, t) in times else None
                packed = times[(k, "onednn_packed", t)] / times[(k, "akg_packed", t)] \
                    if (k, "onednn_packed", t) in times and (k, "akg_packed", t) in times else None
                lines.append(f"| `{k}` | {t} | {spec['flop'] / 1e9:.2f} | " + " | ".join(res[g][2] for g, _ in groups) +
                             f" | {rf(ratio('oneDNN'))} | {rf(packed)} | {rf(ratio('OpenBLAS + epilogue'))} | {rf(ratio('OpenBLAS bare'))}"
                             f" | {rf(ratio('PyTorch'))} | {rf(over)}{f' (`{tw}`)' if over else ''} |")
                pk = peaks["avx512"].get(t) or peaks["avx2"].get(t)
                entry = {}
                for impl in [OURS, "akg_packed", "onednn", "onednn_packed", "openblas_epilogue", "openblas_bare", "pytorch_native", "pytorch_ops"]:
                    if (k, impl, t) in times:
                        ms = times[(k, impl, t)]
                        gf = spec["flop"] / (ms * 1e6)
                        entry[impl] = {"ms": ms, "gflops": gf, "pct_fma_peak": 100 * gf / pk if pk else None}
                per_t[t] = {"impls": entry, "onednn_best": res["oneDNN"][1],
                            "vs_onednn": ratio("oneDNN"), "vs_openblas_epilogue": ratio("OpenBLAS + epilogue"),
                            "vs_openblas_bare": ratio("OpenBLAS bare"), "vs_pytorch": ratio("PyTorch"),
                            "packed_vs_onednn_packed": packed,
                            "bare_twin": tw, "epilogue_overhead": over}
            kern_sum[k] = {"spec": spec, "threads": per_t}
        lines.append("")
        gemm_summary["kernels"] = kern_sum
        for t in threads_list:
            g = {}
            for key in ("vs_onednn", "packed_vs_onednn_packed", "vs_openblas_epilogue", "vs_openblas_bare", "vs_pytorch"):
                g[key] = geomean([v["threads"][t][key] for v in kern_sum.values() if v["threads"].get(t, {}).get(key)])
            pct = sorted(v["threads"][t]["impls"][OURS]["pct_fma_peak"] for v in kern_sum.values()
                         if OURS in v["threads"].get(t, {}).get("impls", {}) and v["threads"][t]["impls"][OURS]["pct_fma_peak"])
            g["akg_median_pct_fma_peak"] = pct[len(pct) // 2] if pct else None
            gemm_summary.setdefault("geomeans", {})[t] = g
        if not any((k, OURS, t) in times for k in gemm_kernels for t in threads_list):
            lines.append("- No akg GEMM kernel in these results yet (the catalog's MatMul kernels are not generated): "
                         "the peers and the FMA peak only.")
            lines.append("")

    lines.append("## Peers")
    lines.append("")
    if context.get("openblas"):
        lines.append(f"- **OpenBLAS** (GEMM kernels): {context['openblas']}" +
                     (f"; OPENBLAS_CORETYPE={meta['openblas_coretype']} (Debian's 0.3.21 does not know Zen 5 and "
                      "would run its Haswell AVX2 kernels)" if meta.get("openblas_coretype") else "") + ".")
    lines.append("- **akg unfused**: the same pattern generated with fusion off (`akg-gen kernel --unfused`: one "
                 "loop nest per op, intermediates in memory); the ablation of what fusion buys." +
                 (" ≡: the same code as the fused kernel (see the summary)." if same_code else ""))
    lines.append("- **oneDNN** (libdnnl-dev, " + meta.get("onednn", "?") + "): the primitive or primitive chain "
                 "with post-ops each kernel maps to (layer normalization, softmax / logsoftmax, binary + eltwise / "
                 "binary post-ops, batch normalization + fused ReLU), on the kernel's own buffers in plain layout; "
                 "`oneDNN nChw16c` runs the 4-D NCHW kernels in oneDNN's preferred blocked layout (tensors "
                 "reordered once outside the timing). Kernels without an equivalent are not run.")
    lines.append("- **Halide 14**: the Halide IR our front end produces for the kernel, after its normalization (elementwise "
                 "producers inlined unless expensive and reused, index maps simplified), one Halide Func per remaining "
                 "stage and an RDom update per reduction, scheduled by the Adams2019 and Mullapudi2016 autoscheduler plugins (MachineParams(2, 32 MiB, "
                 "40)) and JIT-compiled for the host (float16 without AVX512-FP16 where the CPU lacks it); parallel loops run on "
                 "OpenMP to set the thread count; tanh is written as 1 - 2/(exp(2x)+1) because Halide's tanh() is a "
                 "scalar libm call; an exp or tanh op declared float16, which akg computes to float16 precision, uses "
                 "Halide's fast_exp (accurate to about the last 5 bits of a float). Autoscheduling + JIT time per kernel is in the `schedule_s` counter of the raw "
                 "results, not in the timings." + (" Adams2019's default beam search (beam 32, 5 passes) exploded on the "
                 "4-D attention softmax (>500k states per pass, >8 GB, minutes), so every pipeline with a reduction "
                 "spanning 4 or more loop dimensions ran with its greedy mode (HL_BEAM_SIZE=1): " + ", ".join(f"`{k}`" for k in beam1) + "." if beam1 else ""))
    if torch_info:
        env = torch_info.get("malloc_env", {})
        pfs = sorted(r["page_faults_per_call"] for r in torch_info["results"]) or [0.0]
        pf_med, pf_max = pfs[len(pfs) // 2], pfs[-1]
        lines.append(f"- **PyTorch {torch_info.get('torch_version')}** eager (Debian's python3-torch, "
                     f"`{torch_info.get('python')}`): `PyTorch op-by-op` runs the composite JSON one torch op per "
                     "JSON op (float16 ops PyTorch does not implement on CPU run in float32 between casts); "
                     "`PyTorch native ops` is idiomatic torch code for the patterns torch has library ops for "
                     "(native_layer_norm, gelu, softmax/log_softmax, batch_norm; fp16 batch/layer norm in float32 between casts). "
                     f"malloc: MALLOC_MMAP_MAX_={env.get('MALLOC_MMAP_MAX_')}, "
                     f"MALLOC_TRIM_THRESHOLD_={env.get('MALLOC_TRIM_THRESHOLD_')} (freed intermediates stay in the "
                     "heap, so calls after the first do not page-fault); minor page faults per call measured "
                     f"with getrusage: median {pf_med:.1f}, max {pf_max:.0f} over its {len(pfs)} results.")
    else:
        lines.append("- **PyTorch**: not run (python3-torch missing or `--no-torch`).")
    lines.append("")
    dn = sorted((k, i, l) for (k, i), l in labels.items() if i.startswith("onednn"))
    if dn:
        lines.append("### oneDNN: what each kernel runs (primitives [implementations chosen by oneDNN])")
        lines.append("")
        lines.append("| kernel | variant | primitives |")
        lines.append("|---|---|---|")
        for k, i, l in dn:
            lines.append(f"| `{k}` | {HEAD.get(i, i)} | {l} |")
        lines.append("")
    # The AVX2 variant's skips share one reason, stated once in the header.
    listed = {key: why for key, why in skips.items() if key[1] != AVX2}
    if listed:
        lines.append("### Skipped")
        lines.append("")
        lines.append("| kernel | implementation | why |")
        lines.append("|---|---|---|")
        for (k, i), why in sorted(listed.items()):
            lines.append(f"| `{k}` | {HEAD.get(i, i)} | {why.strip().splitlines()[0][:320] if why.strip() else 'skipped'} |")
        lines.append("")
    for m in meta.get("messages", []):
        lines.append(f"- {m}")
    if meta.get("messages"):
        lines.append("")

    out_md = os.path.join(args.out_dir, "REPORT.md")
    with open(out_md, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(args.out_dir, "summary.json"), "w") as f:
        json.dump({"date": now, "cpu": cpu, "akg_variant": variant or None, "akg_cpu_isa": isa or None,
                   "akg_variants": compiled.split(",") if compiled else None, "summary": summary,
                   "ns_per_vector_in_l1": machine, "gemm": gemm_summary}, f, indent=1)
    print(f"make_report: wrote {out_md}", file=sys.stderr)

    # ---- chart ----
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("make_report: python3-matplotlib missing: no chart", file=sys.stderr)
        return
    fams = [(name, impls) for name, impls in FAMILIES if any((k, i, t) in times for k in kernels for i in impls for t in threads_list)]
    colors = {"akg": "#d62728", "akg AVX2 (x86-64-v3)": "#8c564b", "akg unfused": "#ff9896", "oneDNN": "#1f77b4", "Halide": "#2ca02c", "PyTorch": "#9467bd",
              "OpenBLAS + epilogue": "#17becf"}
    cap = 120
    fig_h = 0.42 * len(kernels) + 2.2
    fig, axes = plt.subplots(1, len(threads_list), figsize=(7.5 * len(threads_list), 0.42 * len(kernels) + 2.2),
                             sharey=True, squeeze=False)
    nb = len(fams)
    if nb == 0 or not kernels:  # e.g. a run of the GEMM peers alone (no akg row)
        print("make_report: no akg kernel in the results: no chart", file=sys.stderr)
        return
    h = 0.8 / nb
    for ax, t in zip(axes[0], threads_list):
        for fi, (name, impls) in enumerate(fams):
            ys, xs = [], []
            for ki, k in enumerate(kernels):
                rl = roofline(k, t)
                c = [times[(k, i, t)] for i in impls if (k, i, t) in times]
                if rl and c:
                    ys.append(ki + (fi - (nb - 1) / 2) * h)
                    xs.append(min(cap, 100 * rl / min(c)))
            ax.barh(ys, xs, height=h, color=colors.get(name, None),
                    label=f"akg ({variant})" if name == "akg" and variant else name)
            for ki, k in enumerate(kernels):  # the value of capped bars, at their end
                rl = roofline(k, t)
                c = [times[(k, i, t)] for i in impls if (k, i, t) in times]
                if rl and c and 100 * rl / min(c) > cap:
                    ax.text(cap - 1, ki + (fi - (nb - 1) / 2) * h, f"{100 * rl / min(c):.0f}%", ha="right",
                            va="center", fontsize=6, color="white")
        ax.axvline(100, color="black", lw=0.8)
        ax.axvline(85, color="gray", lw=0.6, ls="--")
        ax.set_xlim(0, cap)
        ax.set_title(f"{t} thread{'s' if t > 1 else ''}: % of roofline (higher is better)")
        ax.set_xlabel(f"% of roofline (capped at {cap}; dashed line: 85%)")
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(range(len(kernels)))
    axes[0][0].set_yticklabels(kernels, fontsize=8)
    axes[0][0].set_ylim(len(kernels) - 0.5, -0.5)
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="upper center", ncol=len(names), fontsize=9,
               bbox_to_anchor=(0.5, 1 - 0.32 / fig_h))
    fig.suptitle(f"akg vs peers per catalog kernel (best variant per family) — {now}, {cpu}", fontsize=10,
                 y=1 - 0.08 / fig_h)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.75 / fig_h))
    out_png = os.path.join(args.out_dir, "report.png")
    fig.savefig(out_png, dpi=90)
    print(f"make_report: wrote {out_png}", file=sys.stderr)


if __name__ == "__main__":
    main()
