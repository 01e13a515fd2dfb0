#!/usr/bin/env python3
"""The CPU benchmark: jitc (through the library, per target) against the
hand-written C loop, a copy of the same bytes, NumPy, numexpr and numba, on
every workload of bench/workloads.py and every size, in one run.

    python3 bench/run.py --build build [--full] [--quick] [--sizes 1e3,1e7]
                         [--workloads exp_f32,...] [--out-dir bench/results]

`make bench` builds the drivers and runs this.  Writes OUT/cpu.json (every
figure), OUT/cpu.md (the tables) and OUT/cpu_*.png (the plots).

Method: the inputs are standard normal data written to .npy files once per
workload and size; every implementation reads the same inputs.  Each one's
first call is timed apart and its outputs checked against NumPy; only when
they match do its times count.  Then a few warm-up calls, then timed calls
until at least --min-reps were made and --budget-ms of timed work passed (at
most --max-reps).  The C drivers (jitc_bench, c_loops) time their own calls
so that no Python overhead is counted for them; the Python peers are timed
with perf_counter around the call.  jitc's compile is measured apart: cold
(a new process, an empty cache directory) and cached (a new process, the
cache directory the cold compile filled), three processes each.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# libgomp's default (spin, then sleep) was measured slower and far noisier
# than sleeping at once on a 2-core machine shared with other work: it is the
# setting that gives the C loops, the copy and numba's OpenMP layer their best.
# Set OMP_WAIT_POLICY yourself to measure another.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from workloads import WORKLOADS, BY_NAME, ALPHA, make_inputs, make_outputs  # noqa: E402

TARGETS = ["cpu", "interp"]
PEERS = ["numpy", "numexpr", "numba"]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.environ.get("BUILD", "build"))
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--sizes", default="1e3,1e5,1e7")
    p.add_argument("--full", action="store_true", help="add 1e8 elements")
    p.add_argument("--quick", action="store_true", help="small sizes, few repeats (a smoke test)")
    p.add_argument("--workloads", default=",".join(w.name for w in WORKLOADS))
    p.add_argument("--budget-ms", type=float, default=300)
    p.add_argument("--min-reps", type=int, default=5)
    p.add_argument("--max-reps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3,
                   help="run every implementation this many times in turn, pooling the times")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--numba-compile", metavar="WORKLOAD", help=argparse.SUPPRESS)
    a = p.parse_args()
    a.sizes = [int(float(s)) for s in a.sizes.split(",") if s]
    if a.full and 10 ** 8 not in a.sizes:
        a.sizes.append(10 ** 8)
    if a.quick:
        a.sizes = [s for s in a.sizes if s <= 10 ** 5] or [1000]
        a.budget_ms, a.min_reps, a.max_reps, a.warmup, a.rounds = 20, 3, 20, 1, 1
    return a


def llc_bytes(text):
    """"32768K" -> bytes (32 MiB when unknown)."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    try:
        t = text.strip()
        return int(t[:-1]) * units[t[-1].upper()] if t[-1].upper() in units else int(t)
    except (ValueError, IndexError, KeyError):
        return 32 << 20


def numba_compile_child(name):
    """Run in a fresh process: the first call of a new numba function (its
    compile), as a numba user's program pays it."""
    import time
    t0 = time.perf_counter()
    from workloads import numba_cpu_kernels
    kernels = numba_cpu_kernels()
    import_ms = (time.perf_counter() - t0) * 1e3
    w = BY_NAME[name]
    v, o = make_inputs(w, 1000), make_outputs(w, 1000)
    t0 = time.perf_counter()
    kernels[name](v, o)
    first = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    kernels[name](v, o)
    second = (time.perf_counter() - t0) * 1e3
    print(json.dumps({"import_ms": import_ms, "first_call_ms": first, "second_call_ms": second}))


class Bench:
    def __init__(self, args):
        self.a = args
        self.bin = os.path.join(args.build, "bench")
        self.results = []
        self.compile = []
        self.peers = {}
        self.targets = {}
        self.workloads = [BY_NAME[n] for n in args.workloads.split(",")]
        self.cache_root = tempfile.mkdtemp(prefix="jitc-bench-cache-")

    # ---- running the C drivers ----

    def driver(self, argv):
        """Runs a driver; returns its JSON object (with "error" on failure)."""
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.SubprocessError) as e:
            return {"error": str(e)}
        out = p.stdout.strip().splitlines()
        try:
            obj = json.loads(out[-1]) if out else {}
        except ValueError:
            obj = {}
        if p.returncode != 0 and "error" not in obj and "unavailable" not in obj:
            obj["error"] = f"exit {p.returncode}: {(p.stderr or p.stdout).strip()[-500:]}"
        obj["rc"] = p.returncode
        return obj

    def jitc_args(self, w, target):
        argv = [os.path.join(self.bin, "jitc_bench"), "-t", target]
        for k, val in w.scalars.items():
            argv += ["-D", f"{k}={val!r}"]
        return argv

    # ---- set-up ----

    def probe(self):
        for t in TARGETS:
            r = self.driver(self.jitc_args(BY_NAME["inc_f64"], t) +
                            ["--compile-only", "--no-cache", "--decl", "a=float64", "a + 1"])
            if r.get("unavailable") or r.get("error"):
                self.targets[t] = {"available": False,
                                   "why": (r.get("unavailable") or r.get("error")).strip()}
            else:
                self.targets[t] = {"available": True, "device": r.get("device", "")}
                if t == "cpu":
                    # The x86-64 level the code was compiled for: the machine
                    # the compile names ($JITC_CPU, else "native": the host's
                    # own level, which ends the device line).
                    dev = r.get("device", "")
                    host = re.search(r"(x86-64(?:-v\d)?)\)$", dev)
                    code = r.get("machine") or os.environ.get("JITC_CPU") or "native"
                    self.targets[t]["cpu"] = code
                    self.targets[t]["level"] = (host.group(1) if host and code == "native"
                                                else code)
            print(f"jitc -t {t}: " + ("available, " + self.targets[t]["device"]
                                      if self.targets[t]["available"]
                                      else "NOT available: " + self.targets[t]["why"]), flush=True)
        self.peers["numpy"] = {"present": True, "version": np.__version__}
        try:
            import numexpr
            numexpr.set_num_threads(os.cpu_count())
            self.peers["numexpr"] = {"present": True, "version": numexpr.__version__,
                                     "threads": os.cpu_count()}
        except ImportError as e:
            self.peers["numexpr"] = {"present": False, "why": str(e)}
        try:
            import numba
            from workloads import numba_cpu_kernels
            self.numba = numba_cpu_kernels()
            self.peers["numba"] = {"present": True, "version": numba.__version__,
                                   "threads": numba.config.NUMBA_NUM_THREADS}
        except Exception as e:  # ImportError, or numba refusing this NumPy
            self.peers["numba"] = {"present": False, "why": f"{type(e).__name__}: {e}"}
        for p in PEERS:
            info = self.peers[p]
            print(f"peer {p}: " + (info["version"] if info["present"]
                                   else "ABSENT (" + info["why"] + ")"), flush=True)

    # ---- compile times ----

    def measure_compile(self):
        for w in self.workloads:
            decl = []
            for name in w.inputs:
                decl += ["--decl", f"{name}={np.dtype(w.dtype).name}"]
            for t in TARGETS:
                if not self.targets[t]["available"]:
                    continue
                cold, cached, memory, init, caches = [], [], [], [], []
                for trial in range(3):
                    d = tempfile.mkdtemp(prefix="cold-", dir=self.cache_root)
                    r = self.driver(self.jitc_args(w, t) + ["--compile-only", "--cache-dir", d]
                                    + decl + [w.program])
                    if "error" in r:
                        break
                    cold.append(r["compile_ms"])
                    memory.append(r["compile_again_ms"])
                    init.append(r["init_ms"])
                    caches.append(r["compile"]["cache"])
                for trial in range(3):
                    if "error" in r:
                        break
                    r = self.driver(self.jitc_args(w, t) + ["--compile-only", "--cache-dir", d]
                                    + decl + [w.program])
                    if "error" in r:
                        break
                    cached.append(r["compile_ms"])
                    caches.append(r["compile"]["cache"])
                rec = {"workload": w.name, "impl": f"jitc-{t}"}
                if "error" in r:
                    rec["error"] = r["error"]
                else:
                    rec.update({"cold_ms": float(np.median(cold)), "cold_all_ms": cold,
                                "cached_ms": float(np.median(cached)), "cached_all_ms": cached,
                                "memory_ms": float(np.median(memory)),
                                "target_init_ms": float(np.median(init)), "cache": caches,
                                "breakdown_cold": r.get("compile")})
                self.compile.append(rec)
            if self.peers["numba"]["present"]:
                firsts = []
                for trial in range(2):
                    p = subprocess.run([sys.executable, os.path.abspath(__file__),
                                        "--numba-compile", w.name],
                                       capture_output=True, text=True, timeout=600)
                    try:
                        firsts.append(json.loads(p.stdout.strip().splitlines()[-1]))
                    except (ValueError, IndexError):
                        break
                rec = {"workload": w.name, "impl": "numba"}
                if firsts:
                    rec["cold_ms"] = float(np.median([f["first_call_ms"] - f["second_call_ms"]
                                                      for f in firsts]))
                    rec["import_ms"] = float(np.median([f["import_ms"] for f in firsts]))
                else:
                    rec["error"] = "the numba compile child failed"
                self.compile.append(rec)
            line = "  ".join(f"{c['impl']} cold {common.fmt_ms(c.get('cold_ms'))} ms"
                             + (f", cached {common.fmt_ms(c['cached_ms'])} ms"
                                if "cached_ms" in c else "")
                             for c in self.compile if c["workload"] == w.name)
            print(f"compile {w.name}: {line}", flush=True)

    # ---- run times ----

    def record(self, w, n, impl, check, first_ms, times, extra=None, error=None):
        if not error and check is None:
            error = "no result"
        if not error and check["ok"]:
            extra = {"first_ms": first_ms, **(extra or {})}
        rec = common.timing_record(w, n, impl, times, check, error, extra)
        self.results.append(rec)
        return rec

    def load_outputs(self, w, files):
        got = {}
        for name, path in files.items():
            if os.path.exists(path):
                got[name] = np.load(path, mmap_mode="r")
        return got

    def run_size(self, w, n, tmp):
        """Every implementation on workload w at size n, in --rounds rounds
        that each run them all once (with budget/rounds of timed work): the
        machine's background load then falls on all of them alike.  Each
        round's first call is checked; the times of all rounds are pooled."""
        v0 = make_inputs(w, n)
        files = {}
        for name, arr in v0.items():
            files[name] = os.path.join(tmp, f"in_{name}.npy")
            np.save(files[name], arr)
        ref = w.ref({k: a.copy() for k, a in v0.items()})
        scale = w.scale(v0) if w.scale else None
        ins = [x for name in w.inputs for x in ("--in", f"{name}={files[name]}")]
        rounds = max(1, self.a.rounds)
        budget = self.a.budget_ms / rounds
        min_reps = max(1, -(-self.a.min_reps // rounds))

        def timing(slow=False):
            return ["--warmup", "1" if slow else str(self.a.warmup),
                    "--min-reps", str(1 if slow else min_reps),
                    "--max-reps", str(max(min_reps, self.a.max_reps // rounds)),
                    "--budget-ms", str(budget)]

        def from_driver(argv):
            """Runs a driver with --out files; returns (check, first_ms, times, extra)."""
            f = {name: os.path.join(tmp, f"out_{name}.npy") for name in w.checked}
            argv = argv + [x for name in w.checked for x in ("--out", f"{name}={f[name]}")]
            r = self.driver(argv)
            try:
                if "error" in r or "unavailable" in r:
                    return None, r.get("error") or r.get("unavailable")
                chk = common.check_outputs(w, self.load_outputs(w, f), ref, scale)
                extra = {"threads": r["threads"]} if "threads" in r else {}
                return (chk, r.get("first_ms"), r["times_ms"], extra), None
            finally:
                for path in f.values():
                    if os.path.exists(path):
                        os.unlink(path)

        def memcpy():
            r = self.driver([os.path.join(self.bin, "c_loops"), "copy", "--bytes",
                             str(w.bytes_per_element() * n // 2)] + timing())
            if "error" in r:
                return None, r["error"]
            return ({"ok": True}, r["first_ms"], r["times_ms"], {"threads": r["threads"]}), None

        def copy_limit():
            # The same bytes through the same streams; c_loops checks its result.
            r = self.driver([os.path.join(self.bin, "c_loops"), "stream", w.name] + ins
                            + timing())
            if "error" in r:
                return None, r["error"]
            return ({"ok": True}, r["first_ms"], r["times_ms"], {"threads": r["threads"]}), None

        def c_loop():
            argv = [os.path.join(self.bin, "c_loops"), w.name] + ins + timing()
            for k, val in w.scalars.items():
                argv += ["-D", f"{k}={val!r}"]
            return from_driver(argv)

        def jitc(t):
            slow = t == "interp" and n >= 10 ** 6
            return lambda: from_driver(
                self.jitc_args(w, t) + ["--cache-dir", os.path.join(self.cache_root, "run")]
                + ins + timing(slow) + [w.program])

        def python_peer(fn):
            def run():
                v = {k: a.copy() for k, a in v0.items()}
                o = make_outputs(w, n)
                try:
                    first, first_ms, times = common.time_python(
                        fn, v, o, budget, min_reps, max(min_reps, self.a.max_reps // rounds),
                        self.a.warmup)
                except Exception as e:
                    return None, f"{type(e).__name__}: {e}"
                return (common.check_outputs(w, first, ref, scale), first_ms, times, {}), None
            return run

        impls = [("copy", copy_limit), ("memcpy", memcpy), ("c", c_loop)]
        impls += [(f"jitc-{t}", jitc(t)) for t in TARGETS if self.targets[t]["available"]]
        for p in PEERS:
            if self.peers[p]["present"]:
                fn = {"numpy": w.numpy, "numexpr": w.numexpr,
                      "numba": getattr(self, "numba", {}).get(w.name)}[p]
                impls.append((p, python_peer(fn)))
        got = {name: {"times": [], "first": None, "check": None, "extra": {}, "error": None}
               for name, _ in impls}
        for _ in range(rounds):
            for name, run in impls:
                g = got[name]
                if g["error"]:
                    continue
                res, err = run()
                if err:
                    g["error"] = err
                    continue
                chk, first_ms, times, extra = res
                if not chk["ok"]:
                    g["check"] = chk
                    continue
                if g["first"] is None:
                    g["first"], g["check"], g["extra"] = first_ms, chk, extra
                elif chk.get("max_err_eps", 0) > g["check"].get("max_err_eps", 0):
                    g["check"] = chk
                g["times"] += times
        line = []
        for name, _ in impls:
            g = got[name]
            bad = g["check"] if g["check"] and not g["check"]["ok"] else None
            if g["error"] or bad:
                rec = self.record(w, n, name, bad, None, None, error=g["error"])
            else:
                rec = self.record(w, n, name, g["check"], g["first"], g["times"],
                                  dict(g["extra"], rounds=rounds))
            line.append(f"{name} " + (common.fmt_ms(rec.get("median_ms")) if "error" not in rec
                                      else "ERROR"))
        print(f"{w.name:11s} n={common.fmt_n(n):5s} ms: " + ", ".join(line), flush=True)
        for rec in self.results:
            if rec["workload"] == w.name and rec["n"] == n and "error" in rec:
                print(f"    {rec['impl']}: {rec['error']}", flush=True)

    def run(self):
        for w in self.workloads:
            for n in self.a.sizes:
                tmp = tempfile.mkdtemp(prefix="jitc-bench-")
                try:
                    self.run_size(w, n, tmp)
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)

    # ---- reports ----

    def get(self, w, n, impl):
        for r in self.results:
            if r["workload"] == w and r["n"] == n and r["impl"] == impl:
                return r
        return None

    def med(self, w, n, impl):
        r = self.get(w, n, impl)
        return r.get("median_ms") if r else None

    def warnings(self, llc_bytes):
        """Figures that cannot be right: at a size beyond the last-level cache
        nothing moves the same bytes much faster than the copy.  When
        something does, the copy (and likely the C loop, which uses the same
        OpenMP threads) was slowed by other work on the machine."""
        out = []
        for w in self.workloads:
            for n in self.a.sizes:
                if w.bytes_per_element() * n < 2 * llc_bytes:
                    continue
                cp = self.med(w.name, n, "copy")
                others = {i: self.med(w.name, n, i) for i in ["c", "jitc-cpu"] + PEERS}
                fast = {i: t for i, t in others.items() if t and cp and t < 0.8 * cp}
                if fast:
                    out.append({"workload": w.name, "n": n, "copy_ms": cp, "faster": fast})
        return out

    def markdown(self, machine, cmd):
        a = self.a
        head = 10 ** 7 if 10 ** 7 in a.sizes else max(a.sizes)
        jt = "jitc-cpu" if self.targets.get("cpu", {}).get("available") else "jitc-interp"
        L = ["# CPU benchmark: jitc against C, the memory limit, NumPy, numexpr and numba",
             "",
             f"Machine: {machine['cpu']} ({self.targets.get('cpu', {}).get('device', '')}), "
             f"{machine['cores']} cores, LLC {machine['llc']}, {machine['memory']}; "
             f"{machine['os']}; {machine['gcc']}; Python {machine['python']}. "
             f"Date: {machine['date']}. Load average at start: "
             f"{' '.join(machine['loadavg_start'])}, at end: {' '.join(machine['loadavg_end'])}.",
             "",
             f"Command: `{cmd}`",
             "",
             f"Code compiled for: {self.targets.get('cpu', {}).get('cpu', '?')} "
             f"(x86-64 level {self.targets.get('cpu', {}).get('level', '?')}; JITC_CPU chooses).",
             "",
             "Peers: " + "; ".join(
                 f"{p} {i['version']}" if i["present"] else f"{p} ABSENT ({i['why']})"
                 for p, i in self.peers.items()) + ".  "
             + "jitc targets: " + "; ".join(
                 f"{t} " + ("available" if i["available"] else f"NOT available ({i['why']})")
                 for t, i in self.targets.items()) + ".",
             "",
             f"## {common.fmt_n(head)} elements: median time in ms, ± half the interquartile "
             "range, and the fastest call",
             "",
             f"`{jt}` is jitc through the library (compile excluded).  `C` is the hand-written "
             "loop (gcc -O3 -march=native -fopenmp, libmvec); `copy` is the limit: a copy of "
             "the same bytes through the same arrays (read, written or updated in place as "
             "the workload does), both on all cores (OpenMP, "
             f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '')}).  `memcpy` (in the "
             "table of every size) is a plain parallel memcpy of half the bytes, for "
             "reference.  Ratios are times: "
             "jitc / C and jitc / copy (1.00x is the limit, lower is better); "
             "best peer / jitc is the speed-up over the fastest of NumPy, numexpr and numba "
             "(above 1 means jitc is faster).",
             "",
             f"| workload | {jt} | C | copy | NumPy | numexpr | numba | jitc / C | jitc / copy "
             "| best peer / jitc |",
             "|---|---|---|---|---|---|---|---|---|---|"]

        def cell(w, n, impl):
            r = self.get(w, n, impl)
            if r is None:
                return "absent" if impl in PEERS else "-"
            if "error" in r:
                return "WRONG" if r["error"].startswith("wrong") else "error"
            return (f"{common.fmt_ms(r['median_ms'])} ±{r['iqr_pct'] / 2:.0f}% "
                    f"(min {common.fmt_ms(r['min_ms'])})")

        def ratios(w, n):
            j = self.med(w, n, jt)
            c, cp = self.med(w, n, "c"), self.med(w, n, "copy")
            peers = [self.med(w, n, p) for p in PEERS]
            peers = [p for p in peers if p]
            best = min(peers) if peers else None
            return (common.fmt_ratio(j / c if j and c else None),
                    common.fmt_ratio(j / cp if j and cp else None),
                    common.fmt_ratio(best / j if j and best else None))

        for w in self.workloads:
            L.append(f"| `{w.program}` {np.dtype(w.dtype).name} | " +
                     " | ".join(cell(w.name, head, i) for i in [jt, "c", "copy"] + PEERS) +
                     " | " + " | ".join(ratios(w.name, head)) + " |")
        L += ["", "## Compile times (ms)", "",
              "jitc: `jitc_compile` in a new process, cold (empty cache directory) and cached "
              "(the directory the cold compile filled), median of 3 processes each; again in "
              "the same context (in-memory cache); target start-up (loading LLVM) apart. "
              "numba: the first call of a new function in a new process, less a second call.",
              "",
              "| workload | jitc-cpu cold | jitc-cpu cached | jitc-cpu in memory | "
              "jitc-cpu start-up | numba first call |",
              "|---|---|---|---|---|---|"]
        for w in self.workloads:
            c = next((x for x in self.compile if x["workload"] == w.name
                      and x["impl"] == "jitc-cpu"), {})
            nb = next((x for x in self.compile if x["workload"] == w.name
                       and x["impl"] == "numba"), {})
            if "error" in c:
                cells = ["error"] * 4
            else:
                cells = [common.fmt_ms(c.get(k)) for k in
                         ("cold_ms", "cached_ms", "memory_ms", "target_init_ms")]
            L.append(f"| {w.name} | " + " | ".join(cells) + " | " +
                     (common.fmt_ms(nb.get("cold_ms")) if nb else "absent") + " |")
        L += ["", "## Every size: median time in ms, and throughput in GB/s "
              "(bytes read + written)", ""]
        impls = ["copy", "memcpy", "c", "jitc-cpu", "jitc-interp"] + PEERS
        L.append("| workload | n | " + " | ".join(impls) + " |")
        L.append("|---|---|" + "---|" * len(impls))
        for w in self.workloads:
            for n in a.sizes:
                cells = []
                for i in impls:
                    r = self.get(w.name, n, i)
                    if r is None:
                        cells.append("-")
                    elif "error" in r:
                        cells.append("WRONG" if r["error"].startswith("wrong") else "error")
                    else:
                        cells.append(f"{common.fmt_ms(r['median_ms'])} / {r['gbps'] or 0:.1f}")
                L.append(f"| {w.name} | {common.fmt_n(n)} | " + " | ".join(cells) + " |")
        if self.warned:
            L += ["", "## Warning: limits measured too slow", "",
                  "At these points an implementation moved the same bytes faster than the "
                  "copy, which a loaded machine explains (other processes delaying the "
                  "copy's and the C loop's OpenMP threads); ratios to the copy and to C are "
                  "unreliable there:", ""]
            for x in self.warned:
                L.append(f"- {x['workload']} n={common.fmt_n(x['n'])}: copy "
                         f"{common.fmt_ms(x['copy_ms'])} ms, but "
                         + ", ".join(f"{i} {common.fmt_ms(t)} ms" for i, t in x["faster"].items()))
        errs = [r for r in self.results + self.compile if "error" in r]
        if errs:
            L += ["", "## Failures (their times do not count)", ""]
            for r in errs:
                L.append(f"- {r['workload']} n={r.get('n', '-')} {r['impl']}: "
                         + r["error"].replace("\n", " ")[:400])
        L.append("")
        return "\n".join(L)


def main():
    a = parse_args()
    if a.numba_compile:
        numba_compile_child(a.numba_compile)
        return 0
    fails = common.selftest(WORKLOADS)
    if fails:
        print("the output check is broken:\n  " + "\n  ".join(fails), file=sys.stderr)
        return 1
    print("output check self-test: ok (rejects wrong elements, NaNs, dtypes, sizes)", flush=True)
    for prog in ("jitc_bench", "c_loops"):
        if not os.path.exists(os.path.join(a.build, "bench", prog)):
            print(f"missing {a.build}/bench/{prog}: run `make bench`", file=sys.stderr)
            return 1
    os.makedirs(a.out_dir, exist_ok=True)
    machine = common.machine_info()
    b = Bench(a)
    try:
        b.probe()
        b.measure_compile()
        b.run()
    finally:
        shutil.rmtree(b.cache_root, ignore_errors=True)
    machine["loadavg_end"] = common._read("/proc/loadavg").split()[:3]
    b.warned = b.warnings(llc_bytes(machine["llc"]))
    cmd = "make bench" + (" FULL=1" if a.full else "") if os.environ.get("JITC_BENCH_MAKE") \
        else "python3 " + " ".join(sys.argv)
    out = {"machine": machine, "command": cmd, "peers": b.peers, "targets": b.targets,
           "config": {"sizes": a.sizes, "budget_ms": a.budget_ms, "min_reps": a.min_reps,
                      "max_reps": a.max_reps, "warmup": a.warmup, "rounds": a.rounds,
                      "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
                      "check_eps": common.ULPS,
                      "alpha": ALPHA},
           "workloads": [{"name": w.name, "program": w.program, "dtype": np.dtype(w.dtype).name,
                          "bytes_per_element": w.bytes_per_element()} for w in b.workloads],
           "compile": b.compile, "results": b.results, "warnings": b.warned}
    common.write_json(os.path.join(a.out_dir, "cpu.json"), out)
    md = b.markdown(machine, cmd)
    with open(os.path.join(a.out_dir, "cpu.md"), "w") as f:
        f.write(md)
    print(f"wrote {a.out_dir}/cpu.json, {a.out_dir}/cpu.md", flush=True)
    if not a.no_plots:
        try:
            paths = common.plot(
                [r for r in b.results if "error" not in r], b.workloads,
                ["jitc-cpu", "jitc-interp", "c", "numpy", "numexpr", "numba"], "copy",
                os.path.join(a.out_dir, "cpu_{}.png"), os.path.join(a.out_dir, "cpu_overview.png"),
                f"CPU: {machine['cpu']}, {machine['cores']} cores",
                styles={"jitc-cpu": {"linewidth": 2.5, "color": "tab:red"},
                        "jitc-interp": {"color": "tab:pink", "alpha": 0.6},
                        "c": {"color": "tab:gray"}})
            print(f"wrote {len(paths)} plots", flush=True)
        except ImportError as e:
            print(f"plots: matplotlib is absent ({e}); none written", flush=True)
        except Exception as e:  # a plot must not lose the results written above
            print(f"plots failed: {type(e).__name__}: {e}", flush=True)
    bad = [r for r in b.results if r.get("error", "").startswith("wrong")]
    print(md.split("## Compile")[0].split("\n## ", 1)[-1], flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
