#!/usr/bin/env python3
"""Writes docs/PERFORMANCE.md from the latest results in bench/results/
(cpu.json and cpu.md from `make bench`, gpu.json and gpu.md from
bench/gpu.sh, compile_time.md from `make bench-compile`).  Run by both after they finish; the document is never edited
by hand, so that its figures are always ones a run produced.  The goals come
from the cpu and cuda targets' speed tables; each is read off the results."""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RES = os.path.join(HERE, "results")
DOC = os.path.join(ROOT, "docs", "PERFORMANCE.md")
PEERS_CPU = ["numpy", "numexpr", "numba"]
PEERS_GPU = ["torch", "cupy", "numba-cuda", "torch.compile", "jax.jit", "cupy-ek"]


def load(name):
    try:
        with open(os.path.join(RES, name)) as f:
            return json.load(f) if name.endswith(".json") else f.read()
    except (OSError, ValueError):
        return None


def body(md):
    """A results table file without its title line and the paragraphs this
    page already gives (machine, command)."""
    if not md:
        return ""
    paras = md.split("\n", 1)[1].strip().split("\n\n")
    return "\n\n".join(p for p in paras
                        if not p.startswith(("Machine:", "GPU:", "Command:")))


def head_size(res):
    sizes = res["config"]["sizes"]
    return 10 ** 7 if 10 ** 7 in sizes else max(sizes)


def goal_header(res):
    head = head_size(res)
    if head == 10 ** 7:
        return "| goal (10M elements, median) | measured | verdict |"
    return (f"| goal (stated for 10M elements; this run's largest size is {head}: "
            "indicative only) | measured | verdict |")


def verdict(ok):
    return "met" if ok else "**not met**"


def cpu_goals(res):
    head = head_size(res)

    def med(w, impl, key="median_ms"):
        for r in res["results"]:
            if r["workload"] == w and r["n"] == head and r["impl"] == impl:
                return r.get(key)
        return None

    rows = [goal_header(res), "|---|---|---|"]

    def vs_c(w, limit, label):
        j, c = med(w, "jitc-cpu"), med(w, "c")
        if not j or not c:
            rows.append(f"| {label}: ≤ {limit}x the C loop | no figure (see failures) | - |")
            return
        jb, cb = med(w, "jitc-cpu", "min_ms"), med(w, "c", "min_ms")
        rows.append(f"| {label}: ≤ {limit}x the C loop | {j:.3g} ms vs C {c:.3g} ms = "
                    f"{j / c:.2f}x (fastest calls: {jb:.3g} vs {cb:.3g} ms = {jb / cb:.2f}x) "
                    f"| {verdict(j / c <= limit)} |")

    def vs_peers(w, factor, label):
        j = med(w, "jitc-cpu")
        peers = {p: med(w, p) for p in PEERS_CPU if med(w, p)}
        if not j or not peers:
            rows.append(f"| {label}: ≥ {factor}x faster than the peers | no figure | - |")
            return
        worst = min(peers.values())
        txt = ", ".join(f"{p} {t / j:.2f}x" for p, t in peers.items())
        cp = med(w, "copy")
        if cp and factor > 1 and worst / cp < factor:
            txt += (f" (the copy limit, {cp:.3g} ms, is itself only {worst / cp:.1f}x faster "
                    "than the fastest peer)")
        word = f"≥ {factor}x faster than" if factor > 1 else "faster than"
        rows.append(f"| {label}: {word} NumPy, numexpr, numba | {txt} | "
                    f"{verdict(worst / j >= factor and worst / j > 1)} |")

    vs_c("inc_f64", 1.1, "`a[i] += 1` f64")
    vs_c("exp_f32", 1.25, "`exp(a)` f32")
    vs_peers("exp_f32", 4, "`exp(a)` f32")
    vs_c("exp_f64", 1.25, "`exp(a)` f64")
    for w, lab in (("poly_f64", "`2*a*a + 3*a + 1` f64"), ("sincos_f64", "`sin(a)**2 + cos(a)**2` f64"),
                   ("axpy_f32", "`y = alpha*x + y` f32")):
        vs_c(w, 1.25, lab)
        vs_peers(w, 1, lab)
    warned = [x["workload"] for x in res.get("warnings", []) if x["n"] == head]
    if warned:
        rows.insert(0, f"**Warning:** in this run the copy limit was measured slower than a "
                    f"workload moving the same bytes ({', '.join(warned)}): the machine was "
                    "busy, and the verdicts against the C loop are unreliable there.\n")
    comp = [c for c in res["compile"] if c["impl"] == "jitc-cpu" and "cold_ms" in c]
    if comp:
        cold = max(c["cold_ms"] for c in comp)
        cached = max(c["cached_ms"] for c in comp)
        rows.append(f"| first compile, new process, empty cache: ≤ 20 ms | worst of "
                    f"{len(comp)} programs {cold:.1f} ms | {verdict(cold <= 20)} |")
        rows.append(f"| same program, new process, warm disk cache: ≤ 2 ms | worst "
                    f"{cached:.2f} ms | {verdict(cached <= 2)} |")
    return "\n".join(rows)


def gpu_goals(res):
    head = head_size(res)

    def med(w, impl, kind):
        for r in res["results"]:
            if (r["workload"], r["n"], r["impl"], r["kind"]) == (w, head, impl, kind):
                return r.get("median_ms")
        return None

    rows = [goal_header(res), "|---|---|---|"]
    j, c = med("inc_f64", "jitc-cuda", "kernel"), med("inc_f64", "d2d-copy", "kernel")
    peers = {p: med("inc_f64", p, "kernel") for p in PEERS_GPU if med("inc_f64", p, "kernel")}
    if j and c:
        rows.append(f"| `a[i] += 1` f64 kernel ≤ 1.1x a device-to-device copy | {j * 1e3:.0f} µs "
                    f"vs {c * 1e3:.0f} µs = {j / c:.2f}x | {verdict(j / c <= 1.1)} |")
    if j and peers:
        rows.append("| `a[i] += 1` f64 kernel faster than every peer | "
                    + ", ".join(f"{p} {t * 1e3:.0f} µs" for p, t in peers.items())
                    + f" | {verdict(j < min(peers.values()))} |")
    j, t = med("exp_f32", "jitc-cuda", "kernel"), med("exp_f32", "torch", "kernel")
    if j and t:
        rows.append(f"| `exp(a)` f32 kernel ≤ 1.1x PyTorch | {j * 1e3:.0f} µs vs {t * 1e3:.0f} µs "
                    f"= {j / t:.2f}x | {verdict(j / t <= 1.1)} |")
    for n in sorted(x for x in res["config"]["sizes"] if x >= 10 ** 7):
        worst, who, ahead = None, None, True
        for w in sorted({r["workload"] for r in res["results"]}):
            def m(impl):
                return next((r.get("median_ms") for r in res["results"] if
                             (r["workload"], r["n"], r["impl"], r["kind"]) == (w, n, impl, "host")),
                            None)
            j, o = m("jitc-cuda"), m("one-way")
            if j and o and (worst is None or j / o > worst):
                worst, who = j / o, w
            peers = [m(p) for p in PEERS_GPU if m(p)]
            if j:
                ahead &= bool(peers and j < min(peers))
        missing = sorted({r["workload"] for r in res["results"]} -
                         {r["workload"] for r in res["results"] if r["n"] == n and
                          r["impl"] == "jitc-cuda" and r["kind"] == "host"})
        if missing:
            rows.append(f"| (at {n:.0e}: {', '.join(missing)} not run, skipped for time) | - | - |")
        if worst:
            rows.append(f"| host to host, pageable arrays, every workload at {n:.0e}: ≤ 1.25x the "
                        f"one-way pinned limit | worst {worst:.2f}x ({who}) | {verdict(worst <= 1.25)} |")
            rows.append(f"| same: ahead of every peer doing the same host-to-host job | "
                        f"{'yes' if ahead else 'no'} | {verdict(ahead)} |")
    comp = [c for c in res["compile"] if c["impl"] == "jitc-cuda" and "cold_ms" in c]
    if comp:
        cold = max(c["cold_ms"] for c in comp)
        cached = max(c["cached_ms"] for c in comp)
        rows.append(f"| first compile to a loaded kernel, new process, empty cache: ≤ 15 ms | "
                    f"worst {cold:.1f} ms | {verdict(cold <= 15)} |")
        rows.append(f"| same, new process, warm disk cache: ≤ 2 ms | worst {cached:.2f} ms | "
                    f"{verdict(cached <= 2)} |")
    if len(rows) == 2:
        rows.append("| (no jitc cuda figures in this run) | - | - |")
    return "\n".join(rows)


def plots(prefix, overview):
    files = sorted(f for f in os.listdir(RES) if f.startswith(prefix) and f.endswith(".png")
                   and f != overview) if os.path.isdir(RES) else []
    out = []
    if os.path.exists(os.path.join(RES, overview)):
        out.append(f"![{overview}](../bench/results/{overview})")
        out.append("")
    if files:
        out.append("Per workload: " + ", ".join(f"[{f[len(prefix):-4]}](../bench/results/{f})"
                                                for f in files) + ".")
    return "\n".join(out)


def python_section():
    """From Python: the per-call cost (python_call.json), CuPy arrays against
    C (python_gpu.md) and jitc.dask on one GPU and two (python_dask_gpu.md)."""
    L = ["## From Python", "",
         "The `jitc` package (python/) on NumPy arrays, on CuPy arrays, and over Dask "
         "arrays of CuPy chunks with `jitc.dask`.  Reproducing:", "",
         "    python3 bench/python_call.py --json > bench/results/python_call.json",
         "    python3 bench/python_gpu.py --build build-gpu   # a GPU and CuPy, after "
         "sh bench/gpu.sh (it builds build-gpu/bench/jitc_bench)",
         "    python3 bench/python_dask_gpu.py      # two GPUs, CuPy, Dask (dask-cuda if "
         "installed)",
         "    python3 bench/docs.py                 # this page", ""]
    pc = load("python_call.json")
    L += ["### Per call, on the CPU", ""]
    if pc:
        us = pc["n1000_us"]
        L += [f"`c = 2*a + b` on float64 arrays, target `{pc['target']}`, median time per "
              "call (µs), the call from Python included.  Measured on the 2-core development "
              "machine, shared with other work: the 10M figures vary most.", "",
              "| 1,000 elements | µs |", "|---|---|"]
        L += [f"| {k} | {v:.2f} |" if v is not None else f"| {k} | n/a |"
              for k, v in us.items()]
        L += ["", "| 10,000,000 elements | ms |", "|---|---|",
              f"| jitc kernel from Python, c given | {pc['n10M_python_us'] / 1e3:.2f} |",
              f"| jitc kernel from Python, a new c each call | "
              f"{pc['n10M_python_new_c_us'] / 1e3:.2f} |"]
        if pc.get("n10M_c_us"):
            L += [f"| the same kernel from C (`jitc --repeat`) | {pc['n10M_c_us'] / 1e3:.2f} |"]
        L += [""]
    else:
        L += ["> **Not run yet.**", ""]
    for title, name, none in (
            ("### CuPy arrays against the same kernel from C", "python_gpu.md",
             "> **Not run yet.** `python3 bench/python_gpu.py` on a GPU machine."),
            ("### Dask arrays of CuPy chunks: one GPU against two", "python_dask_gpu.md",
             "> **Not run yet.** `python3 bench/python_dask_gpu.py` on a machine with two "
             "GPUs."),
            ("### Dask arrays of NumPy chunks on the workers' GPUs: one GPU against two",
             "python_dask_gpu_host.md",
             "> **Not run yet.** `python3 bench/python_dask_gpu.py --memory host` on a machine "
             "with two GPUs.")):
        md = load(name)
        L += [title, ""]
        if md:
            first = md.split("\n\n")[1] if "\n\n" in md else ""
            L += [first.strip(), "", body(md).replace("\n## ", "\n#### "), ""]
            if name == "python_gpu.md":
                L += ["Python's kernel time leaves out all host work (the spin kernel keeps "
                      "the stream busy until the call has queued its launch), while C's "
                      "events, inside `jitc_run_buffers` on an idle GPU, also hold the "
                      "host side of the launch (its arguments, `cuLaunchKernel`): hence "
                      "Python a few microseconds below C.  jitc ran "
                      "its kernels on the CuPy arrays' memory through `jitc_run_device`.", "",
                      "In the last table the host's work is all of a call.  An element-wise "
                      "program over 1-D arrays costs less from `jitc.evaluate` than the same "
                      "expression in CuPy (which launches a kernel per operation) and PyTorch: "
                      "the call reads a CuPy array's pointer, shape and strides from its "
                      "attributes, not from its `__cuda_array_interface__` dict (through "
                      "the dict, `c = 2*a + b` took 24 microseconds a call where it took 15 "
                      "without it, measured side by side on another H100).  A reduction "
                      "(a 0-d result made through CuPy, then the reduction's launch) and a "
                      "broadcast (the layout of a run over arrays of several shapes, "
                      "`jitc_run_device_arrays`) cost more than the peers' on arrays this "
                      "small.", ""]
            if name == "python_dask_gpu.md":
                L += ["A block's task returns once its kernel is queued, so the GPU works "
                      "while the scheduler hands out the next blocks.  The no-op graph is "
                      "what Dask's scheduling costs whatever the blocks hold: about 19 ms for "
                      "a graph of one or two tasks (persist, wait, a synchronize on each "
                      "worker), and 1 to 1.5 ms for each task more.  Kernels that stream 2e9 "
                      "elements take a few milliseconds on an H100, so with CuPy blocks "
                      "already on the GPUs the time is Dask's, two thirds of it and more "
                      "even at one block per GPU, and a second GPU saves little: no block "
                      "that fits in a GPU's memory carries ten times 19 ms of such work.  "
                      "Dask+CuPy runs several kernels and temporaries a block, and its time "
                      "grows with n.", ""]
            if name == "python_dask_gpu_host.md":
                L += ["Blocks of NumPy arrays in the workers' memory, each run on its "
                      "worker's GPU through the host pipeline (one worker per GPU, each "
                      "seeing its own GPU alone): at one block per GPU, 8 to 16 GB a block, a "
                      "call takes seconds and the same scheduling is 1 to 2% of it; two GPUs "
                      "ran 1.85x and 2.25x one.  Each call writes a new output array, whose "
                      "first touch (page faults as the copy threads first write it) is part "
                      "of the time, in each worker's process apart: hence the low GB/s and, "
                      "for exp, more "
                      "than twice one GPU.  16 blocks, 8 a GPU, took 1.3x one GPU.  The run "
                      "was cut by its time limit before its last row.", ""]
        else:
            L += [none, ""]
    return L


def host_gpu_section():
    """The host path: limits, what the pipeline does, time against size, the
    timeline, the seeds, the command line's process (gpu_host.md,
    gpu_seeds.md, gpu_host_notes.md, the PNGs)."""
    L = ["## Host to host on the GPU", ""]
    notes = load("gpu_host_notes.md")
    L += [notes.strip(), ""] if notes else []
    for title, name, how in (
            ("### Time against size", "gpu_host.md",
             "`python3 bench/gpu.py --workloads inc_f64 --sizes 1e3,...,1e9 --out-dir "
             "bench/results/sizes --peers-up-to 1e8`, then `python3 bench/gpu_timeline.py "
             "--sizes bench/results/sizes/gpu.json`"),
            ("### The seeds as they ran", "gpu_seeds.md", "`python3 bench/gpu_seeds.py` "
             "(after `pip install .`)")):
        L += [title, ""]
        md = load(name)
        L += ([md.strip(), "", f"Command: {how}.", ""] if md else
              [f"> **Not run yet.** {how} on the GPU machine.", ""])
        if name == "gpu_seeds.md" and md:
            L += ["The output of `exp(a)` is an array the call makes.  The package makes it "
                  "in pinned memory that the GPU writes in place, and keeps the block for the "
                  "next output once NumPy frees the array (python/jitc/pinned.c): 1.82 ms "
                  "against 7.92 when the same call is given a new NumPy array as `out=` each "
                  "time, whose pages are faulted in and zeroed as the download first writes "
                  "them, and go through the host's copies into staging (the table's run).  "
                  "`a[i] += 1` updates the caller's own pageable array, through staging.  "
                  "numba-cuda's kernel writes an output array made once, outside the loop.", ""]
        if name == "gpu_host.md" and os.path.exists(os.path.join(RES, "gpu_sizes.png")):
            L += ["![gpu_sizes.png](../bench/results/gpu_sizes.png)", ""]
    L += ["### Several GPUs", "",
          "A run over host arrays is split over every GPU of the host (`-t cuda`; "
          "`--devices 0,1`, `$JITC_DEVICES` or `jitc_options.devices` chooses): each GPU "
          "takes a contiguous share in proportion to its link's measured rate and runs the "
          "pipeline above on its own link, with its own staging and copy threads "
          "(docs/architecture.md, \"Split over several GPUs\").  Reductions give the same "
          "bits on any number of GPUs.", ""]
    md, notes = load("gpu_multi.md"), load("gpu_multi_notes.md")
    L += ([body(md).strip(), ""] + ([notes.strip(), ""] if notes else []) if md else
          ["> **Not run yet.** `sh bench/gpu_multi.sh` on a machine with two or more GPUs "
           "(`a[i] += 1` float64 and `b = exp(a)` float32, 1e8 and 1e9 elements, pageable "
           "and pinned, on 1, 2, 4 and 8 GPUs where the machine has them; the goal: two GPUs "
           "at 1.8x one).", ""])
    if os.path.exists(os.path.join(RES, "gpu_timeline.png")):
        L += ["### Timeline", "",
              "One traced call each (`bench/gpu_host trace`, CUDA events for the copies and "
              "the kernels, the host clock for the copy threads, both from the call's start); "
              "drawn by `python3 bench/gpu_timeline.py --traces ...`.  An upload's bar starts "
              "when it was queued behind its slot's stream, so bars of several chunks overlap "
              "where the copy engine queues them.", "",
              "![gpu_timeline.png](../bench/results/gpu_timeline.png)", ""]
    return L


def reductions_gpu_section():
    """The cuda target's reductions against torch.dot, cupy.dot and a copy."""
    L = ["## Reductions on the GPU", "",
         "`s = sum(a * b)` in float32 over 10,000,000 elements already on the GPU, against "
         "`torch.dot`, `cupy.dot` and a device-to-device copy of the same bytes, measured in "
         "the same run; and a program with three reductions and one output against that "
         "output alone.  The goals: the dot product at 85% or more of the copy's bandwidth "
         "and faster than both peers; the fused program within 1.2x of `c = a - b`.  jitc "
         "runs through `jitc_run_device` (from Python by ctypes) on CuPy's arrays and stream: "
         "each call is one kernel that reduces while it streams, one partial per block, the "
         "last block to finish (an integer counter) combining the partials in a fixed order "
         "(no float atomics: the same bits on every run).  The GPU time is the figure the "
         "goals are about; `one call` adds the host's side (jitc's checks of the pointers, "
         "the scratch, ctypes), which the GPU time of a queue of calls hides.  The fusing "
         "peers a user would pick for `sum(a*b)` are in the same table: CuPy's "
         "ReductionKernel (as its documentation writes a dot; it took 8 ms in every run, "
         "with float32 and float64 accumulators alike, which was not investigated), "
         "`torch.compile` of `(a*b).sum()` (Inductor's Triton reduction: 2 to 3% less GPU "
         "time than jitc's, as it adds the products in float32 where jitc adds them in "
         "float64, but 2.5x jitc's time for one call) and `jax.jit` (wall clock, as JAX has "
         "no events).  "
         "Reproduce with `sh bench/gpu.sh --reductions` (bench/gpu_reduce.py, which writes "
         "bench/results/gpu_reduce.json and gpu_reduce.md).", ""]
    md, js = load("gpu_reduce.md"), load("gpu_reduce.json")
    if md and js:
        ms = js["median_ms"]
        met = lambda ok: "met" if ok else "**not met**"
        L += ["| goal | measured | status |", "|---|---|---|",
              "| `s = sum(a * b)` at >= 85%% of the copy's bandwidth | %.0f%% | %s |" %
              (100 * js["dot_of_copy"], met(js["dot_of_copy"] >= 0.85)),
              "| faster than torch.dot and cupy.dot | %.1f µs vs %.1f and %.1f µs | %s |" %
              (1e3 * ms["jitc-cuda dot"], 1e3 * ms["torch.dot"], 1e3 * ms["cupy.dot"],
               met(ms["jitc-cuda dot"] < min(ms["torch.dot"], ms["cupy.dot"]))),
              "| three reductions and one output within 1.2x of `c = a - b` | %.2fx | %s |" %
              (js["fused_over_sub"], met(js["fused_over_sub"] <= 1.2)), ""]
        L += [md.strip(), ""]
        L += ["The fused program's kernel reads and writes what `c = a - b` does; the rest is "
              "its arithmetic (the float32 sum accumulates in float64; argmin keeps an index, "
              "min and max start from infinity and keep none) and, per call, the counter's "
              "reset and the last block's combine of the blocks' partials.  The last three "
              "rows, one reduction at a time with the output, show that cost per reduction.", ""]
    elif md:
        L += [md.strip(), ""]
    else:
        L += ["> **Not run yet.** `sh bench/gpu.sh --reductions` on the GPU machine writes "
              "the table here.", ""]
    return L


def reductions_cpu_section():
    """Reductions on the cpu target (bench/reduce_cpu.py, reduce_cpu.md)."""
    L = ["## Reductions on the CPU", "",
         "`s = sum(a*b)` over 10,000,000 float32 elements on the cpu target, against the "
         "memory limit and its peers, and a program of three reductions and an output "
         "(`s = sum(a*b); m = max(abs(a - b)); k = argmin(a); c = a - b`) against the "
         "output alone (`c = a - b`) on the same data.  Reproducing:", "",
         "    nice make bench-reduce   # bench/reduce_cpu.py: numexpr installed as make bench "
         "does (bench/run.sh), drivers built, this page regenerated", "",
         "- jitc: the kernel compiled once through libjitc (ctypes), each call one "
         "`jitc_run` (a few microseconds of the call from Python included); all cores.",
         "- The copy limit is the cpu tables' `copy` for this pattern of arrays "
         "(bench/c_loops.c, `stream dot_f32`): the two arrays read once, one trivial "
         "operation per element, OpenMP on all cores.  The C loop (`dot_f32`) sums the "
         "float32 products in double, as jitc does.  numpy.dot is BLAS's float32 dot; "
         "numexpr is `evaluate('sum(a*b)')` on all cores.",
         "- Each result is checked against NumPy before its time counts; rounds run every "
         "implementation in turn, so that background load falls on all of them alike; "
         "figures are medians of the pooled calls, with the fastest call beside them.",
         "- How the kernel works: src/cpu/reduce.c: W lanes per reduction "
         "over fixed blocks of RB = 4096 elements (src/cpu/cpu.h), one Partial per reduction "
         "per block, combined in reduce.c's fixed tree, so the result does not depend on the "
         "thread count.  RB was measured at 2048, 4096, 16384 and 65536 (one and two "
         "threads, `sum(a*b)` and the three-reduction program, 60 calls each, fastest and "
         "median): the differences stayed within the noise of the shared machine (load "
         "average 3 to 5).  4096 keeps the work at each block's end (combining the "
         "lanes, about a hundred instructions) under 1% of the block's, and the partials "
         "few (2,442 per reduction at 1e7 elements), while two threads still split "
         "arrays from 8,192 elements.",
         "- What sets the pace of `sum(a*b)`: not the reduction.  Its loop is 16 "
         "instructions per 16 elements (the float32 products widened to float64 and added "
         "in four independent chains), far below what memory allows; the cpu target's "
         "element-wise loops stand at the same distance from the copy (the CPU table's "
         "jitc / copy column, 1.29x for `a[i] += 1`), which is its loop and threads on this "
         "2-core virtual machine.  Three runs in a row on the idle machine (load average "
         "below 0.6) gave 85%, 80% and 81% of the copy limit, 1.18x to 1.22x numpy.dot "
         "and 1.08x to 1.13x for three reductions and an output; the table below is the "
         "last.  Single runs of the command line move by 30%: `jitc -t cpu -n 1e7 --dtype "
         "f32 --in a=randn:1 --in b=randn:2 --repeat 40 's = sum(a*b)'` gave 3.6 ms and, "
         "minutes later, 2.4 ms.", ""]
    md = load("reduce_cpu.md")
    if md:
        L += [body(md).strip(), ""]
    else:
        L += ["> **Not run yet.** `make bench-reduce` writes the table here.", ""]
    return L


def axes_cpu_section():
    """Reductions over an axis on the cpu target (bench/axis_cpu.py, axis_cpu.md)."""
    L = ["## Reductions over an axis on the CPU", "",
         "`sum(x, axis=1)` (each row) and `sum(x, axis=0)` (each column) of a (4096, 4096) "
         "float32 matrix in C order on the cpu target, against NumPy, numexpr, jitc's own "
         "`sum(x)` over every element (one pass over the same 64 MB) and the copy of 64 MB.  "
         "Reproducing:", "",
         "    nice make bench-axis   # bench/axis_cpu.py: drivers built, this page regenerated",
         "",
         "- jitc: the kernel compiled once through libjitc (ctypes), each call one "
         "`jitc_run_arrays`; all cores.  NumPy runs on one thread, numexpr on all.  The "
         "in-process implementations take turns call by call; the ratios are to NumPy's "
         "copyto of the 64 MB, which takes turns with them (the C memcpy runs in a process "
         "of its own, on all cores).  A sum reads the 64 MB; a copy reads and writes them.",
         "- How it runs (src/layout.c, src/cpu/run.c, src/cpu/rowrun.c): the reduced axis is "
         "taken innermost, so the matrix is cut into 4096 segments, one per element of the "
         "result.  A row is contiguous and runs in place, reduced exactly as a whole `sum` "
         "of its 4096 elements is (the same blocks, lanes and tree): axis=1 goes at the pace "
         "of the whole reduction.  For axis=0 the columns are the segments, and the row "
         "form of the kernel (src/cpu/rowacc.c) reads the matrix in memory's order, as "
         "NumPy does: one float64 accumulator per column (8 bytes, where the whole "
         "reduction keeps 16 lanes, 128 bytes), a vector across 16 columns; each iteration "
         "of the loop over a row's 4096 columns folds 8 rows into them, held in registers, "
         "and fetches the rows 8 ahead into the second-level cache.  A column's rows are cut "
         "into blocks of 1024 fixed by the shape: the threads share the (columns, block) "
         "units, and a second pass combines each column's blocks in the pairwise tree and "
         "writes the results: for float sums, products, means, minima and maxima the kernel "
         "writes them itself (src/cpu/rowacc.c, ROWS_RESULT), and where a column is one "
         "block (1024 rows or fewer) each tile is folded and finished in one pass, its "
         "accumulators in the thread's own buffer.  The bits do not depend on the thread count; a float sum's are "
         "not those of the column reduced as a contiguous run (16 lanes), but within the "
         "same bound, better than NumPy's axis=0 sum (every row in turn, in float32).",
         "- Where axis=0 stands: on both cores at the pace of the whole `sum(x)` (2.02 "
         "against 2.12 ms in the run below, fastest 1.58 against 1.88), ahead of NumPy "
         "(3.54) on one thread too (2.27, fastest 1.90).  In the run this table replaced "
         "(16 lanes per column, tiles of 128 columns), axis=0 took 4.61 ms on both cores and "
         "6.57 on one (fastest 3.46 and 5.41), NumPy 3.67, the whole sum 2.22.  Measured on "
         "the way (one thread, medians, before the fetch ahead): 1 row per iteration of the "
         "loop over the columns 6.1 ms, 2 rows 4.5, 4 rows 3.5, 8 rows 2.7, 16 rows 4.4; the "
         "fetch of the rows 8 ahead into the second-level cache 2.9 to 2.6 ms (into the "
         "first-level cache, or further along the same rows, slower); tiles of a whole row "
         "(32 KB of accumulators) 5-10% faster than of half a row; blocks of 256 to 4096 "
         "rows alike within the noise once blocks are combined as vectors.  Still open: on "
         "one thread axis=0 is 1.1 to 1.3x the whole sum's pace (from the third-level cache "
         "1.1 to 1.2x: the rest is the reading of 8 rows at once from memory).",
         "- Wide and short matrices (the `sum(w, axis=0)` rows: the same 64 MB as two rows "
         "of 8,388,608 columns) are ahead of NumPy and numexpr.  Before the kernel wrote the "
         "results itself, each column was finished through a Partial in C, and the "
         "accumulators of all the tiles went to memory and back between the two passes: "
         "over (2, 1000000) float32 2.24 ms against NumPy's 0.27, now 0.32; over (8, "
         "250000) 0.42 ms, now 0.12 (NumPy 0.21), on this machine, both cores.",
         "- The machine is a shared 2-core virtual machine with other work running: the "
         "spreads are wide, and the medians of the runs on both cores suffer most (a "
         "thread descheduled holds up the call); the single-thread rows and the fastest "
         "calls say more of the code.  Compare figures of the same run only.", ""]
    md = load("axis_cpu.md")
    if md:
        L += [body(md).strip(), ""]
    else:
        L += ["> **Not run yet.** `make bench-axis` writes the table here.", ""]
    return L


def nd_gpu_section():
    """Broadcasts, views and sums over an axis on the GPU (bench/gpu_nd.py, gpu_nd.md)."""
    L = ["## Broadcasts, views and sums over an axis on the GPU", "",
         "    sh bench/gpu.sh --nd     # bench/gpu_nd.py: builds jitc without LLVM, then runs it",
         "",
         "jitc_run_device_arrays (through ctypes) over CuPy arrays of any strides, in place, "
         "and `jitc.evaluate` on the same CuPy views (the Python package, which gpu.sh "
         "builds), against PyTorch and CuPy on the same views and a device-to-device copy of "
         "the bytes the program moves (the limit; for `x[::2]` all of x's bytes, as the "
         "sectors of every other float are all fetched); one stream, the GPU time of batches "
         "of calls queued behind a spin kernel, as bench/gpu_types.py measures.  Each result "
         "is checked against NumPy first.", "",
         "- The broadcasts and the strided view run at the copy's speed (1.00x, 1.01x and "
         "1.00x), ahead of PyTorch and CuPy, from C and from Python alike.",
         "- From Python, `jitc.evaluate(\"c = a + 1\", a=m.T)` lays its result out as "
         "NumPy's ufuncs do (order 'K'): in the order of the transposed input, so the run is "
         "one contiguous pass, at the copy's speed as PyTorch's (0.0479 ms), where CuPy's "
         "`m.T + 1` takes 0.1395; the C driver's row below writes a C-order result.",
         "- The transpose runs in tiles (src/cuda/access.c: a block takes 32 columns by "
         "32 rows of the result, its 8 warps every 8th row, so that the sectors of the "
         "transposed input a warp touches are used whole by the block's warps together): "
         "1.70x the copy, ahead of CuPy (0.1395 ms); in the flat order it took 0.1448 ms "
         "(3.0x), and tiles of 8 rows 0.0891.  The rest of the gap is the transposed reads "
         "themselves, which only staging through shared memory would make whole lines.  "
         "PyTorch's `a.T + 1` writes its result in the input's (transposed) order, so it "
         "is a contiguous operation and not the same job.",
         "- `sum(a, axis=1)`: each row is one piece of 256 threads (src/cuda/axis.c), at the "
         "copy's speed, ahead of PyTorch, and level with CuPy's CUB reduction in the table's "
         "run (0.0249 against 0.0249 ms).  Each lane takes its 16 elements of the row in "
         "groups of 16 bytes (4 float32, 2 float64: cuda_axis_group), one vector load each "
         "where every array loaded is contiguous and aligned, the loads of all the groups "
         "issued before the first add; elsewhere the same elements one by one, in the same "
         "order, so that the bits do not depend on where the arrays lie.  Measured on one "
         "H100 host (2026-11-27), the build before and after in turn, three rounds "
         "(`python3 bench/gpu_nd.py --only sum_axis1 --side N`): (4096, 4096) one element a "
         "load 0.0249-0.0251 ms, groups of 16 bytes 0.0246-0.0248, CuPy 0.0244-0.0247; "
         "(8192, 8192) 0.0895-0.0898, 0.0877-0.0879, CuPy 0.0880-0.0882.  So rows of 8192 "
         "are ahead of CuPy, and rows of 4096 level with it to 1% behind.  What is left is the "
         "float64 in which jitc adds float32 (as its whole reductions do): "
         "`bench/gpu_rowsum.cu` on another H100 host, loads of 16 bytes written out by hand, "
         "(4096, 4096) adding in double 0.0246-0.0247 ms, in float 0.0245, CUB's "
         "DeviceSegmentedReduce 0.0248; (1024, 16384) 0.0254, 0.0250, 0.0253.  NVRTC's 48 "
         "registers a thread against 32 before made no difference (32 or 40 forced: the "
         "same times).  The alignment is the "
         "launch's test (src/cuda/axisrun.c): a test of the pointers in the kernel kept NVRTC "
         "from loading through the read-only cache (0.0248-0.0252 ms).  Before the groups, "
         "a loop of 16 steps, unrolled, took 0.0248-0.0250 where the loop to the piece's "
         "end, which the compiler unrolled 4 times, took 0.0252-0.0254 (rows of 2000: 0.0073 "
         "before, 0.0061 after, CuPy 0.0055); `bench/gpu_rowsum.cu` runs such loops written "
         "out by hand beside CUB's DeviceSegmentedReduce in one process.",
         "- Longer rows: a row longer than a piece (4096 elements) was cut into pieces, each "
         "writing a partial that a second launch combined.  Where there are 1024 rows or more "
         "and a row has at most 65536 elements, a row is now one piece, a block folding each "
         "4096 of it in turn (jitc_a256w, src/cuda/axisrun.c's cuda_axis_plan): (8192, 8192) "
         "float32, `python3 bench/gpu_nd.py --only sum_axis1 --side 8192`, 0.0923-0.0927 ms "
         "before, 0.0898 after (one element a load), CuPy 0.0880-0.0882 (H100 hosts of "
         "2026-11-27).  "
         "`bench/gpu_rowsum.cu` on one of them, all in one process: (8192, 8192) pieces and "
         "the combine 0.0942, a block a row 0.0886, float4 loads 0.0884, CUB 0.0883, the "
         "copy of the bytes 0.0917; (1024, 16384) 0.0291, 0.0256, 0.0252, 0.0253, 0.0256; "
         "(4096, 4096) a block a row 0.0249, CUB 0.0248.",
         "- `sum(a, axis=0)` of a C-order matrix runs in the column form "
         "(src/cuda/axiscol.c, docs/architecture.md): the lanes of a warp take consecutive "
         "columns, a block's 8 warps consecutive pieces of their rows, combined in order "
         "through shared memory, and the last block of each column of blocks to finish "
         "combines the blocks' partials in order: 1.19x the copy, ahead of PyTorch (0.0344) "
         "and CuPy (0.1023).  The form it replaced (one thread per piece, each writing a "
         "partial that a second kernel combined, NVRTC's default of 32 registers a thread "
         "spilling around the loop) took 0.0522 ms on this H100.", ""]
    md = load("gpu_nd.md")
    L += [md.strip(), ""] if md else [
        "> **Not run yet.** `sh bench/gpu.sh --nd` on a GPU machine writes the table here.", ""]
    return L


def nd_cpu_section():
    """Broadcasts and views on the cpu target (bench/nd_cpu.py, nd_cpu.md)."""
    L = ["## Broadcasts and views on the CPU", "",
         "`c = a + b` with a (4096, 4096) float32 matrix and a (4096,) row or a (4096, 1) "
         "column, and `c = a + 1` over a strided view (`x[::2]`) and the transpose of a "
         "square matrix (into a C-order result, and, `transpose_k`, into a result laid out "
         "as the transpose, as NumPy's `a.T + 1` and `jitc.evaluate('a + 1')` lay it out), "
         "against the C loop a programmer would write (OpenMP over rows; "
         "the transpose read in tiles of 32), NumPy and numexpr on the same arrays, and "
         "the same program over a contiguous array of the same size.  Reproducing:", "",
         "    python3 bench/nd_cpu.py --build build", "",
         "- jitc: compiled once through libjitc (ctypes), each call one `jitc_run_arrays`; "
         "all cores, as the C loops (OpenMP) and numexpr; NumPy one.  Rounds run every "
         "implementation in turn, in a new order each round, and each call is preceded by "
         "a read of 512 MB, so that it finds none of its arrays in the caches (this machine's "
         "third-level cache, 260 MB, holds a program's 128 MB: in a fixed order the C loop "
         "ran right after jitc on the same arrays and found them there, 3.0-4.2 ms against "
         "jitc's 4.5-5.8 on `contiguous`, where each alone took 3.0-3.4 and 2.7-2.8); "
         "medians of the pooled calls; each result checked against NumPy first, bit for "
         "bit.",
         "- How it runs (src/layout.c, src/move.c, docs/architecture.md \"How a run moves "
         "data\"): a row lies inside each block of one row of the result and is read in "
         "place; a column is one element over each such block and a variant of the kernel "
         "reads it once into every lane; `x[::2]` is read in place by a variant of the "
         "kernel, every other element (two vector loads and their even lanes), where other "
         "strided views are gathered block by block.  A transposed input beside a C-order "
         "result is read along its memory, in place, and the result is the array moved: "
         "the kernel writes a band of 64 rows of the run (256K elements, 1 MB) into a block "
         "of the thread's own, and src/tiles.c scatters it: tiles of a line of 16 rows "
         "transposed in the registers of the widest vectors of the level the kernel is "
         "compiled for (4 by 4 floats in SSE2, 8 by 8 in AVX2, 16 by 16 in AVX-512), up to "
         "four lines of the same 16 rows into a block on the stack, then each row of the "
         "result gets its lines in stores one after the other; for a result of 16 MB or "
         "more the stores go past the caches (movntps), so no line of the result is read "
         "before it is written, and the grid of blocks is shifted so that each band starts "
         "on a line of the result (NumPy's large arrays start 16 bytes into one).  Every "
         "run without reductions also starts each thread's chunk and each block on a line "
         "of its first output (src/cpu/run.c, run_aligned), the elements before in a call "
         "of their own: vector stores that straddle two lines cost `c = a + 1` over NumPy's "
         "arrays up to a third of its time.",
         "- The transpose, measured on the way (this machine, `c = a + 1` over (4096, 4096) "
         "float32, both cores): gathering the input in bands of rows of the result, as "
         "before, 15.5 ms (2.62x the contiguous program in the same run); reading the input "
         "along its memory and scattering the result with ordinary stores, 22.6 ms; with "
         "stores past the caches but lines cut by the bands' edges (the result 16 bytes into "
         "a line), 10.8-11.9 ms; with the bands starting on lines, 7.4-8.3 ms; with the "
         "tile on the stack (before, 4 rows of the block, 16 KB apart, were read for each 16 "
         "bytes: one set of the first-level cache), 5.7-6.8 ms in a loop of calls, 1.22x to "
         "1.48x the contiguous program in five runs of this table.  Bands of 16, 32 and 64 "
         "rows were level, 128 slower.  Then the scatter wrote one line of each of the "
         "result's 4096 rows in turn, 16 KB apart, before the next line of each; each row "
         "getting its four lines one after the other, and the transposes in the level's "
         "widest vectors, took the scatter alone (a harness around src/tiles.c, both cores) "
         "from 3.6-4.3 ms to 3.2 (SSE2), 2.6 (AVX2) and 2.45 (AVX-512), float64 7.4, 5.6 and "
         "5.2; compiled at -O2, gcc kept the tiles' vectors on the stack (AVX2 4.1 ms).  "
         "Five runs of this table since: 1.11x, 1.16x, 1.18x, 1.20x and 1.21x the contiguous "
         "program, the goal of 1.3x met in each; the level table below gives x86-64-v3 "
         "(AVX2) 1.15x to 1.23x and x86-64-v2 (SSE2) 1.22x to 1.47x.  Stores past the caches "
         "pay from about 16 MB: a (1024, 1024) float32 result (4 MB) took 0.67 ms with them "
         "and 0.52 without, a (2048, 2048) one (16 MB) 1.39 ms with them and 2.98 without.",
         "- A transpose into a result in its own order (`transpose_k`) is one contiguous run: "
         "where a program reads no `i` and reduces nothing, layout.c orders the axes as "
         "NumPy's iterator does before merging them, so arrays laid out alike in any order "
         "run along their memory (before, jitc gathered the transpose in tiles and scattered "
         "the result in tiles: 29.6 ms, 5.1x the contiguous program, in the run that "
         "measured the change).  `x[::2]` reads every line of `x` for half of its elements: "
         "with the result's lines fetched before they are written, the bytes moved are "
         "4/3 of the contiguous program's, so 1.33x is its floor, and 1.3x is below it.",
         "- The machine is a shared 2-core virtual machine with other work running: "
         "compare figures of the same run only.", ""]
    md = load("nd_cpu.md")
    if md:
        L += [body(md).strip(), ""]
    else:
        L += ["> **Not run yet.** `python3 bench/nd_cpu.py` writes the table here.", ""]
    return L


def types_section():
    """The narrow types on the cpu target (bench/types_cpu.py, types_cpu.md)
    and on the GPU (bench/gpu_types.py, gpu_types.md)."""
    L = ["## The narrow types", "",
         "Three programs of the types NumPy users meet in images and models, 10,000,000 "
         "elements of non-zero data (uint8 across its range, the floats standard normal):", "",
         "- `y = (f32(x) - 127.5) / 127.5`: uint8 to float32, 5 bytes an element;",
         "- `c = a * b + 1` in float16: each operation rounded to float16, as NumPy's loops "
         "do (the product before the sum), 6 bytes an element;",
         "- `c = a * b + 1` in bfloat16, likewise (as ml_dtypes).", "",
         "Every result is checked bit for bit against NumPy and ml_dtypes before its time "
         "counts (a GPU peer within 2 units in the last place, the elements that differ "
         "counted).", "",
         "### On the CPU", "",
         "    python3 bench/types_cpu.py --build build      # after make; numexpr as make bench "
         "installs it", "",
         "This host: an AMD EPYC of 2 cores shared with other work (AVX-512 with "
         "AVX512-BF16 and F16C; gcc 12).  jitc against the C loop a programmer writes "
         "(`gcc -O3 -march=native -fopenmp`, `parallel for simd`; for float16 also the loop "
         "with F16C's conversions by hand, as gcc 12 leaves `_Float16` arithmetic scalar; "
         "for bfloat16 the rounding on the bits by hand, as gcc 12 has no arithmetic on "
         "`__bf16`), NumPy (ml_dtypes' loops for bfloat16) and numexpr where it runs the "
         "program: numexpr has no 16-bit floats (it computes float16 as float32 and returns "
         "float32, the product not rounded), so it runs the uint8 program alone, with `out=` "
         "a float32 array (it reads uint8 as int32, computes in float64 and rounds once: the "
         "same bits for each of the 256 inputs).  Rounds run every implementation in turn; "
         "figures are medians of the pooled calls.", "",
         "The machine was busy: three runs of the same command (load averages about 6.5, "
         "2.5 and 10) gave jitc / C of 1.13x, 1.21x and 0.96x for uint8, jitc / F16C by hand "
         "of 0.93x, 0.80x and 1.09x for float16, and jitc / C of 1.14x, 1.52x and 1.11x for "
         "bfloat16 (all cores); the absolute times moved by up to 4.8x between runs.  The "
         "table is the run at the lowest load.  jitc's bfloat16 loop is the one of the three "
         "that stays behind its C loop in every run.", ""]
    md = load("types_cpu.md")
    L += [body(md).strip(), ""] if md else ["> **Not run yet.** `python3 bench/types_cpu.py` "
                                            "writes the table here.", ""]
    L += ["#### complex64", "",
          "    python3 bench/types_cpu.py --build build --programs c64_expmul --out "
          "bench/results/types_cpu_complex64.md", "",
          "`c = exp(z) * w` over 10,000,000 complex64 elements (each part standard normal), "
          "24 bytes an element, against NumPy (`np.multiply(np.exp(z, out=c), w, out=c)`, one "
          "thread) and numexpr (`exp(z) * w` with `out=` the complex64 array: numexpr has "
          "complex128 alone, so it reads complex64, computes in complex128 and rounds at the "
          "store).  No C loop: C's `cexpf` takes one element at a time.  Each result is "
          "checked before its time counts against the product computed in complex128: within "
          "4 epsilons of float32 of each element's magnitude (jitc's `exp` is vectorised, "
          "src/cpu/complex.c, and NumPy's complex64 `exp` is not correctly rounded either; "
          "on the first 1,000,000 of these inputs jitc's result is within 1.36 epsilons, "
          "NumPy's within 1.67, numexpr's within 0.50).", "",
          "The one run below was made on the same 2-core machine under a load average of "
          "6.5 to 7 (other work on both cores), which inflates every absolute time and "
          "makes all cores and one thread alike; the ratios are the figures to read: jitc "
          "7.1x ahead of numexpr and 12x ahead of NumPy.", ""]
    md = load("types_cpu_complex64.md")
    L += [body(md).strip(), ""] if md else [
        "> **Not run yet.** The command above writes the table here.", ""]
    L += ["### On the GPU", "",
          "    sh bench/gpu.sh --types     # bench/gpu_types.py: builds jitc without LLVM, "
          "then runs it (about a minute)", "",
          "jitc (`jitc_run_device` through ctypes on the arrays' memory) against a "
          "device-to-device copy of the same bytes (the limit: torch's copy of float32s, as "
          "bench/gpu.py takes it), PyTorch and CuPy as their users write the expression (one "
          "kernel per operation) and CuPy's ElementwiseKernel (one kernel, written by hand); "
          "CuPy has no bfloat16, so PyTorch alone there.  All on one stream; the GPU time of "
          "batches of calls queued behind a spin kernel, as bench/gpu_reduce.py measures.  "
          "The goal, jitc within 1.1x of the copy and ahead of PyTorch and CuPy, is met for "
          "all three narrow types at both sizes in the run below (an H200: 0.85x to 1.05x of "
          "the copy; below 1 at 1e7: the L2 keeps part of the 16-bit inputs between calls, "
          "which a copy of different arrays does not get).  PyTorch divides by 127.5 as a "
          "multiplication by its reciprocal: half of its uint8 results are one unit in the "
          "last place from NumPy's.", "",
          "complex64 `c = exp(z) * w` (24 bytes an element) against PyTorch, CuPy and CuPy's "
          "ElementwiseKernel (thrust's complex `exp`), each result within 8 epsilons of "
          "float32 of the larger part from the product computed in complex128: jitc runs at "
          "the copy's speed (0.95x and 0.97x) and 0.86x the time of the best peer, CuPy's "
          "hand-written kernel; PyTorch and CuPy's ufuncs take 1.8x and 1.9x jitc's time.", ""]
    md = load("gpu_types.md")
    L += [md.strip().replace("n = 10,000,000:", "#### 1e7 elements").replace(
        "n = 100,000,000:", "#### 1e8 elements").replace(
        "One call on an idle GPU", "#### One call\n\nOne call on an idle GPU"), ""] if md else [
        "> **Not run yet.** `sh bench/gpu.sh --types` on a GPU machine writes the table "
        "here.", ""]
    return L


def main():
    cpu, cpu_md = load("cpu.json"), load("cpu.md")
    gpu, gpu_md = load("gpu.json"), load("gpu.md")
    L = ["# Performance",
         "",
         "<!-- Generated by bench/docs.py from bench/results/ after each benchmark run; "
         "do not edit by hand. -->",
         "",
         "jitc's speed, measured in one run against what its users would use instead and "
         "against what the hardware allows: on the CPU a hand-written C loop "
         "(`gcc -O3 -march=native -fopenmp`, glibc's libmvec for exp, sin and cos) and a "
         "parallel memcpy of the same bytes, and NumPy, numexpr and numba; on the GPU a "
         "device-to-device copy and pinned host-device copies, and PyTorch, CuPy and "
         "numba-cuda.",
         "",
         "## Reproducing",
         "",
         "    make bench            # CPU: sizes 1e3, 1e5, 1e7 (a few minutes on 2 cores)",
         "    make bench FULL=1     # adds 1e8 elements",
         "    make bench QUICK=1    # a smoke test: small sizes, few repeats",
         "    sh bench/gpu.sh       # GPU (H100/H200): or make bench-gpu; under 10 minutes",
         "    python3 bench/types_cpu.py --build build; sh bench/gpu.sh --types   # the narrow "
         "types",
         "",
         "`make bench` installs the missing peers with pip (a peer that cannot be installed is "
         "reported absent), builds the C loops and the driver, and writes "
         "`bench/results/cpu.json` (every figure, every repeat), `cpu.md` (the tables) and "
         "`cpu_*.png`; `bench/gpu.sh` builds jitc without LLVM and writes `gpu.json`, `gpu.md` "
         "and `gpu_*.png`.  Both then regenerate this page.",
         "",
         "## Method",
         "",
         "- Workloads (bench/workloads.py): `a[i] += 1` float64; `exp(a)` float32 and "
         "float64; `2*a*a + 3*a + 1` float64; `sin(a)**2 + cos(a)**2` float64; "
         "`y = alpha*x + y` float32 with `-D alpha=2.5`; `where(a > 0, a, 0.01*a)` float32; "
         "a three-output program (`let h = sqrt(x*x + y*y); r = h; c = x / h; s = y / h`, "
         "float32).",
         "- Inputs: standard normal data (never zeros).  At 1e7 elements and above every "
         "array is larger than the last-level cache; at the small sizes the data stays in "
         "cache between repeats, as it would for a caller.",
         "- jitc is timed through its library (bench/jitc_bench.c, linked against "
         "libjitc.a): the same `jitc_compile` and `jitc_run` a C program calls, compile "
         "excluded.  Compile times are measured apart, each in a new process: cold (empty "
         "cache directory) and cached (warm disk cache), three processes each, and once "
         "more in the same context (in-memory cache).",
         "- Each implementation's first call is checked against NumPy (same dtype, same "
         "shape, same NaNs and infinities, and within 16 epsilons of the size of the terms "
         "of each element); a wrong result is reported and its times do not count.  Then "
         "warm-up calls, then timed calls: at least 5, until 300 ms of timed work (200 "
         "calls at most).  On the CPU this is split over three rounds that run every "
         "implementation in turn (each round in a new process for the C drivers, each "
         "round's first call checked), so that background load falls on all of them "
         "alike; the times are pooled.  Figures are medians; the spread is the "
         "interquartile range.  GPU kernel times are CUDA events.",
         "- CPU threads: all cores for jitc, the C loop (OpenMP, `parallel for simd`, "
         "static schedule, one thread below 65536 elements), the copy, numexpr and "
         "numba (`parallel=True`, `prange`); NumPy uses one.  NumPy runs the expression as "
         "its users write it (out= where one ufunc does the whole job).",
         "- The CPU limit (`copy`) is a copy of the same bytes through the same arrays: "
         "what the workload only reads is read, what it only writes is written, what it "
         "updates in place is read and written in place, one trivial operation per element "
         "(bench/c_loops.c, `stream`).  The pattern matters: an in-place update can move "
         "its bytes much faster than a copy from one array to another.  A plain parallel "
         "memcpy of the same number of bytes is in the JSON and the table of every size.  "
         "The C loops, the copy and numba's OpenMP threads run with "
         "`OMP_WAIT_POLICY=PASSIVE` unless the environment sets it: libgomp's default "
         "(spin, then sleep) measured slower and far noisier on the 2-core machine.",
         "- Throughput is bytes read plus bytes written per second.",
         ""]
    L += ["## CPU", ""]
    if cpu and cpu_md:
        m = cpu["machine"]
        L += [f"Latest run: {m['date']} on {m['cpu']} "
              f"({cpu['targets'].get('cpu', {}).get('device', '')}), {m['cores']} cores, "
              f"code for x86-64 level {cpu['targets'].get('cpu', {}).get('level', '?')}, "
              f"LLC {m['llc']}, {m['memory']}; command `{cpu['command']}`.  Load average "
              f"before/after: {' '.join(m['loadavg_start'])} / {' '.join(m.get('loadavg_end', []))}"
              + (f", run at nice {m['nice']}" if m.get("nice") else "")
              + " (on a shared machine other work inflates the spreads, most for the "
              "two-thread runs).",
              "", "### The cpu target's goals", "", cpu_goals(cpu), "",
              "### Results", "", body(cpu_md).replace("\n## ", "\n#### "), "",
              "### Plots", "", "Throughput against size (log scales); the dashed line is the "
              "copy of the same bytes.", "", plots("cpu_", "cpu_overview.png"), ""]
    else:
        L += ["> **Not run yet.** `make bench` writes the CPU tables here.", ""]
    L += reductions_cpu_section()
    L += nd_cpu_section() + axes_cpu_section() + nd_gpu_section()
    L += ["## GPU", ""]
    if gpu and gpu_md:
        d = gpu.get("device", {})
        L += [f"Latest run: {gpu['machine']['date']} on {d.get('gpu', '?')} (driver "
              f"{d.get('driver', '?')}), command `{gpu['command']}`.", "",
              "### The cuda target's goals", "", gpu_goals(gpu), "",
              "### Results", "", body(gpu_md).replace("\n## ", "\n#### "), "",
              "### Plots", "", plots("gpu_kernel_", "gpu_kernel_overview.png"), "",
              plots("gpu_host_", "gpu_host_overview.png"), ""]
    else:
        L += ["> **NOT RUN YET: there are no GPU figures on this page.**  They appear here "
              "once `sh bench/gpu.sh` has run on an H100 or H200 (it writes "
              "bench/results/gpu.json and gpu.md and regenerates this page).  What it will "
              "measure: jitc `-t cuda` kernel time (CUDA events, through the library's run "
              "info), host-to-host time, and cold and cached compile time, against PyTorch, "
              "CuPy and numba-cuda, a device-to-device copy of the same bytes and pinned "
              "host-device copies, for every workload above at 1e3 to 1e8 elements (over "
              "1e9 bytes moved at the largest size).", ""]
    L += host_gpu_section()
    L += reductions_gpu_section()
    L += types_section()
    L += ["## Compile time against program size", "",
          "A program above a few hundred operations is cut into groups of statements "
          "(src/split.c), each compiled as its own function (cpu) or kernel (cuda), so that "
          "compile time grows linearly with the program.  Before, one loop body held the "
          "whole program and LLVM's schedulers and NVRTC took time quadratic in it: on this "
          "2-core machine, independent outputs compiled on cpu in 3.0 s (250 statements), "
          "7.9 s (500) and about 14 s (1,000), and 10,000 not within minutes; a chain of "
          "10,000 lets in 12 s; with NVRTC to PTX 1,000 outputs took 4.8 s and 2,000 took "
          "29 s, and 10,000 outputs could not compile at all (80 KB of kernel parameters, "
          "32 KB allowed).  Reductions were never cut until a group could start at one and "
          "each group kept and finished its own: every reduction's state and its combine "
          "sat in one function (cpu) or one kernel and one `jitc_r` (cuda), and 100, 300 "
          "and 1,000 sums (`sums` below) compiled on cpu in 0.33, 1.37 and 13.3 s, and with "
          "NVRTC to PTX 100 and 300 in 2.4 and 23 s, 1,000 not in 8 minutes.  On cuda the "
          "time per reduction still grows slowly with their number, as NVRTC compiles all "
          "the kernels (one per group of about 13 sums, one combine per 16 reductions) as "
          "one program: measured together, 1,000 sums took 18 s to PTX and 2,000 took "
          "40 s (twice 18 would be 36), and in the table 10,000 sums take 26 times as long "
          "as 1,000.", ""]
    ct = load("compile_time.md")
    if ct:
        L += [ct.strip(), ""]
    else:
        L += ["> **Not run yet.** `make bench-compile` (bench/compile_time.py) writes the "
              "table here.", ""]
    gt = load("compile_time_gpu.md")
    if gt:
        L += ["### On the GPU machine", "",
              "The same benchmark on the GPU machine (a run from before the `sums` shape), "
              "where `cuda` is `jitc -t cuda` itself "
              "(NVRTC, module load; wall time of the compile from `--json`).  That machine's "
              "build has no LLVM headers, so it has no cpu column; its load average was high "
              "at the start because the fuzzer had just run there on 16 processes (CPU time "
              "is the figure to read for ptx and cubin).  "
              "Written by `python3 bench/compile_time.py --arch sm_90 --targets ptx,cubin,cuda "
              "--out bench/results/compile_time_gpu.md` there.", "", gt.strip(), ""]
    L += python_section()
    os.makedirs(os.path.dirname(DOC), exist_ok=True)
    with open(DOC + ".tmp", "w") as f:
        f.write("\n".join(L))
    os.replace(DOC + ".tmp", DOC)
    print(f"wrote {os.path.relpath(DOC, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
