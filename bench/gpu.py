#!/usr/bin/env python3
"""The GPU benchmark: jitc's cuda target against PyTorch, CuPy, numba-cuda and
the fusing peers (torch.compile, jax.jit, CuPy's ElementwiseKernel:
bench/gpu_fused_peers.py) and against the GPU's own limits, on every
workload of bench/workloads.py.

    sh bench/gpu.sh          (builds jitc without LLVM, then runs this)
    python3 bench/gpu.py --build build-gpu [--quick] [--sizes 1e3,1e5,1e7,1e8]

Writes gpu.json, gpu.md and gpu_*.png into --out-dir (bench/results), inside
10 minutes on an H100 or H200 (a time guard skips sizes, saying so).

What is timed, per workload and size:
- kernel time: CUDA events around the work on arrays already on the device.
  jitc: its kernel_ms on device buffers (jitc_run_buffers); the peers: events
  around the expression as their users write it.
- host-to-host time: host arrays in, host arrays out, wall clock.  jitc: one
  jitc_run() on host pointers (its host pipeline); the peers: upload,
  compute, download, as their users write it.
- the limits: a device-to-device copy of the same bytes (the kernel limit)
  and pinned copies of the bytes read up and written down, each alone
  (the larger is the host-to-host limit: PCIe moves both ways at once).
- compile: jitc cold (new process, empty cache) and cached (new process, warm
  cache); each peer's first call in a new process.
- the whole `jitc -t cuda 'a[i] += 1'` process, wall clock, next to a
  `python3 -c` running the same job with numba-cuda.
Every result is checked against NumPy before its time counts.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

# numba 0.68 with NumPy 2.5 needs this before it is imported.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import gpu_fused_peers  # noqa: E402
from workloads import WORKLOADS, BY_NAME, ALPHA, make_inputs  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = ["torch", "cupy", "numba-cuda", "torch.compile", "jax.jit", "cupy-ek"]
FUSING = ["torch.compile", "jax.jit", "cupy-ek"]  # one kernel per program, as jitc
# JAX takes most of the GPU's memory on first use unless told not to, and
# computes in float32 unless float64 is enabled.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
T_LIMIT_S = 470  # start no new workload after this: with the build, end inside 10 minutes
COMPILED_PEERS = ("inc_f64", "exp_f32", "poly_f64", "polar_f32")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.environ.get("BUILD", "build-gpu"))
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--sizes", default="1e3,1e5,1e7,1e8")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--workloads", default=",".join(w.name for w in WORKLOADS))
    p.add_argument("--budget-ms", type=float, default=200)
    p.add_argument("--min-reps", type=int, default=5)
    p.add_argument("--max-reps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--allow-no-gpu", action="store_true",
                   help="write results even when no GPU is found (to test this script)")
    p.add_argument("--no-process", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--no-compile", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--peers-up-to", type=float, default=float("inf"),
                   help="run the peers at sizes up to this only (jitc and the limits at all)")
    p.add_argument("--child", nargs=2, metavar=("WHAT", "WORKLOAD"), help=argparse.SUPPRESS)
    a = p.parse_args()
    a.sizes = [int(float(s)) for s in a.sizes.split(",") if s]
    if a.quick:
        a.sizes = [s for s in a.sizes if s <= 10 ** 5] or [1000]
        a.budget_ms, a.min_reps, a.max_reps, a.warmup = 20, 3, 10, 1
    return a


# ---- the peers: {workload: f(dev_inputs, dev_outputs) -> {name: device array}} ----

def torch_ops(torch):
    def where(v, o):
        a = v["a"]
        return {"out": torch.where(a > 0, a, 0.01 * a)}

    def polar(v, o):
        x, y = v["x"], v["y"]
        h = torch.sqrt(x * x + y * y)
        return {"r": h, "c": x / h, "s": y / h}

    return {
        "inc_f64": lambda v, o: {"a": v["a"].add_(1)},
        "exp_f32": lambda v, o: {"out": torch.exp(v["a"], out=o["out"])},
        "exp_f64": lambda v, o: {"out": torch.exp(v["a"], out=o["out"])},
        "poly_f64": lambda v, o: {"out": 2 * v["a"] * v["a"] + 3 * v["a"] + 1},
        "sincos_f64": lambda v, o: {"out": torch.sin(v["a"]) ** 2 + torch.cos(v["a"]) ** 2},
        "axpy_f32": lambda v, o: {"y": v["y"].add_(v["x"], alpha=ALPHA)},
        "leaky_f32": where,
        "polar_f32": polar,
    }


def cupy_ops(cp):
    def inc(v, o):
        v["a"] += 1
        return {"a": v["a"]}

    def axpy(v, o):
        v["y"] += ALPHA * v["x"]
        return {"y": v["y"]}

    def polar(v, o):
        x, y = v["x"], v["y"]
        h = cp.sqrt(x * x + y * y)
        return {"r": h, "c": x / h, "s": y / h}

    return {
        "inc_f64": inc,
        "exp_f32": lambda v, o: {"out": cp.exp(v["a"], out=o["out"])},
        "exp_f64": lambda v, o: {"out": cp.exp(v["a"], out=o["out"])},
        "poly_f64": lambda v, o: {"out": 2 * v["a"] * v["a"] + 3 * v["a"] + 1},
        "sincos_f64": lambda v, o: {"out": cp.sin(v["a"]) ** 2 + cp.cos(v["a"]) ** 2},
        "axpy_f32": axpy,
        "leaky_f32": lambda v, o: {"out": cp.where(v["a"] > 0, v["a"], 0.01 * v["a"])},
        "polar_f32": polar,
    }


class Peer:
    """One GPU framework: moving arrays, events, and its operations."""

    def __init__(self, name):
        self.name = name
        self.present = False
        self.why = ""
        self.version = ""
        self.base = {"torch.compile": "torch", "cupy-ek": "cupy"}.get(name, name)
        try:
            if self.base == "torch":
                import torch
                self.m = torch
                self.version = torch.__version__
                if not torch.cuda.is_available():
                    raise RuntimeError("torch.cuda.is_available() is False")
                self.ops = torch_ops(torch) if name == "torch" else \
                    gpu_fused_peers.torch_compiled(torch)
            elif self.base == "cupy":
                import cupy
                self.m = cupy
                self.version = cupy.__version__
                cupy.cuda.runtime.getDeviceCount()
                self.ops = cupy_ops(cupy) if name == "cupy" else gpu_fused_peers.cupy_kernels(cupy)
            elif name == "jax.jit":
                import jax
                jax.config.update("jax_enable_x64", True)
                self.m = jax
                self.version = jax.__version__
                if not any(d.platform == "gpu" for d in jax.devices()):
                    raise RuntimeError("JAX sees no GPU")
                self.ops = gpu_fused_peers.jax_jitted(jax)
            else:
                import numba
                from numba import cuda
                self.m = cuda
                self.version = numba.__version__
                if not cuda.is_available():
                    raise RuntimeError("numba.cuda.is_available() is False")
                import numba_cuda_kernels
                self.ops = numba_cuda_kernels.ops()
            self.present = True
        except Exception as e:  # ImportError, no driver, no device
            self.why = f"{type(e).__name__}: {e}".strip()[:300]

    def to_dev(self, a):
        if self.base == "torch":
            return self.m.from_numpy(a).to("cuda")
        if self.base == "cupy":
            return self.m.asarray(a)
        if self.base == "jax.jit":
            return self.m.device_put(a)
        return self.m.to_device(a)

    def to_host(self, d):
        if self.base == "torch":
            return d.cpu().numpy()
        if self.base == "cupy":
            return self.m.asnumpy(d)
        if self.base == "jax.jit":
            return np.asarray(d)
        return d.copy_to_host()

    def empty(self, n, dtype):
        if self.base == "torch":
            return self.m.empty(n, dtype=getattr(self.m, np.dtype(dtype).name), device="cuda")
        if self.base == "cupy":
            return self.m.empty(n, dtype=dtype)
        if self.base == "jax.jit":
            return None  # JAX returns new arrays
        return self.m.device_array(n, dtype=dtype)

    def sync(self):
        if self.base == "torch":
            self.m.cuda.synchronize()
        elif self.base == "cupy":
            self.m.cuda.Device().synchronize()
        elif self.base == "jax.jit":
            pass  # its callers wait for their results (block_until_ready, np.asarray)
        else:
            self.m.synchronize()

    def events(self):
        if self.base == "torch":
            return self.m.cuda.Event(enable_timing=True), self.m.cuda.Event(enable_timing=True)
        if self.base == "cupy":
            return self.m.cuda.Event(), self.m.cuda.Event()
        try:
            return self.m.event(timing=True), self.m.event(timing=True)
        except TypeError:  # numba's CUDA simulator takes no arguments
            return self.m.event(), self.m.event()

    def elapsed(self, e0, e1):
        e1.synchronize()
        if self.base == "cupy":
            return self.m.cuda.get_elapsed_time(e0, e1)
        return e0.elapsed_time(e1)

    def free(self):
        if self.base == "torch":
            self.m.cuda.empty_cache()
        elif self.base == "cupy":
            self.m.get_default_memory_pool().free_all_blocks()


def jax_time(peer, fn, budget_ms, min_reps, max_reps, warmup, batch=20):
    """JAX has no events to time with: per call, the wall clock of `batch`
    calls queued back to back (JAX dispatches without waiting), until the
    last result is ready."""
    for _ in range(warmup):
        peer.m.block_until_ready(fn())
    times, spent = [], 0.0
    while len(times) < min_reps or (len(times) < max_reps and spent < budget_ms):
        t0 = time.perf_counter()
        for _ in range(batch):
            r = fn()
        peer.m.block_until_ready(r)
        t = (time.perf_counter() - t0) * 1e3
        times.append(t / batch)
        spent += t
    return times


def gpu_time(peer, fn, budget_ms, min_reps, max_reps, warmup):
    """Event-timed calls of fn(); returns the list of times (ms)."""
    if peer.base == "jax.jit":
        return jax_time(peer, fn, budget_ms, min_reps, max_reps, warmup)
    for _ in range(warmup):
        fn()
    times, spent = [], 0.0
    e0, e1 = peer.events()
    while len(times) < min_reps or (len(times) < max_reps and spent < budget_ms):
        e0.record()
        fn()
        e1.record()
        t = peer.elapsed(e0, e1)
        times.append(t)
        spent += max(t, 0.01)
    return times


def wall_time(peer, fn, budget_ms, min_reps, max_reps, warmup):
    for _ in range(warmup):
        fn()
    times, spent = [], 0.0
    while len(times) < min_reps or (len(times) < max_reps and spent < budget_ms):
        peer.sync()
        t0 = time.perf_counter()
        fn()
        peer.sync()
        t = (time.perf_counter() - t0) * 1e3
        times.append(t)
        spent += t
    return times


# ---- children run in fresh processes, for compile times ----

def child(what, name):
    """Prints the first-call time of a peer in this fresh process, less a
    second call: its compile (CuPy and numba-cuda compile on first use)."""
    w = BY_NAME[name]
    peer = Peer(what)
    if not peer.present:
        print(json.dumps({"error": peer.why}))
        return
    v0 = make_inputs(w, 1000)
    dv = {k: peer.to_dev(a) for k, a in v0.items()}
    o = {k: peer.empty(1000, w.dtype) for k in w.outputs}
    x = peer.empty(16, np.float32)  # start the context first: not part of the compile
    del x
    peer.sync()
    def call():
        r = peer.ops[name](dv, o)
        if peer.base == "jax.jit":
            peer.m.block_until_ready(r)
        peer.sync()

    t0 = time.perf_counter()
    call()
    first = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    call()
    second = (time.perf_counter() - t0) * 1e3
    print(json.dumps({"first_call_ms": first, "second_call_ms": second}))


class GpuBench:
    def __init__(self, a):
        self.a = a
        self.t0 = time.time()
        self.bench = os.path.join(a.build, "bench", "jitc_bench")
        self.results, self.compile, self.process = [], [], []
        self.workloads = [BY_NAME[n] for n in a.workloads.split(",")]
        self.cache_root = tempfile.mkdtemp(prefix="jitc-gpu-cache-")
        self.peers = {p: Peer(p) for p in PEERS}
        self.limit_peer = next((self.peers[p] for p in ("torch", "cupy")
                                if self.peers[p].present), None)
        self.skipped = []

    def driver(self, argv, env=None):
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
        except (OSError, subprocess.SubprocessError) as e:
            return {"error": str(e)}
        out = p.stdout.strip().splitlines()
        try:
            obj = json.loads(out[-1]) if out else {}
        except ValueError:
            obj = {}
        if p.returncode != 0 and "error" not in obj and "unavailable" not in obj:
            obj["error"] = f"exit {p.returncode}: {(p.stderr or p.stdout).strip()[-500:]}"
        return obj

    def jitc_args(self, w):
        argv = [self.bench, "-t", "cuda"]
        for k, val in w.scalars.items():
            argv += ["-D", f"{k}={val!r}"]
        return argv

    def probe(self):
        r = self.driver([self.bench, "-t", "cuda", "--compile-only", "--no-cache",
                         "--decl", "a=float64", "a + 1"])
        if "error" in r or "unavailable" in r:
            self.jitc = {"available": False,
                         "why": (r.get("error") or r.get("unavailable")).strip()}
        else:
            self.jitc = {"available": True, "device": r.get("device", "")}
        print("jitc -t cuda: " + ("available, " + self.jitc["device"] if self.jitc["available"]
                                  else "NOT available: " + self.jitc["why"]), flush=True)
        for p in PEERS:
            peer = self.peers[p]
            print(f"peer {p}: " + (peer.version if peer.present else "ABSENT (" + peer.why + ")"),
                  flush=True)

    def device_info(self):
        info = {}
        q = common._cmd(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                         "--format=csv,noheader"])
        if q:
            parts = [s.strip() for s in q.split("\n")[0].split(",")]
            info = {"gpu": parts[0], "driver": parts[1] if len(parts) > 1 else "",
                    "gpu_memory": parts[2] if len(parts) > 2 else ""}
        info["cuda"] = common._cmd(["nvcc", "--version"]).split("\n")[-1]
        if self.jitc.get("device"):
            info["jitc_device"] = self.jitc["device"]
        return info

    # ---- compile times and whole processes ----

    def measure_compile(self):
        for w in self.workloads:
            decl = [x for name in w.inputs for x in ("--decl", f"{name}={np.dtype(w.dtype).name}")]
            if self.jitc["available"]:
                cold, cached, memory, init, caches, err = [], [], [], [], [], None
                for trial in range(3):
                    d = tempfile.mkdtemp(prefix="cold-", dir=self.cache_root)
                    # An empty CUDA compute cache too: NVRTC keeps an entry
                    # for each kernel there, and finds the last trial's.
                    cc = tempfile.mkdtemp(prefix="cuda-cache-", dir=self.cache_root)
                    r = self.driver(self.jitc_args(w) + ["--compile-only", "--cache-dir", d]
                                    + decl + [w.program],
                                    env=dict(os.environ, CUDA_CACHE_PATH=cc))
                    if "error" in r:
                        err = r["error"]
                        break
                    cold.append(r["compile_ms"])
                    memory.append(r["compile_again_ms"])
                    init.append(r["init_ms"])
                    caches.append(r["compile"]["cache"])
                for trial in range(3 if not err else 0):
                    r = self.driver(self.jitc_args(w) + ["--compile-only", "--cache-dir", d]
                                    + decl + [w.program])
                    if "error" in r:
                        err = r["error"]
                        break
                    cached.append(r["compile_ms"])
                    caches.append(r["compile"]["cache"])
                rec = {"workload": w.name, "impl": "jitc-cuda"}
                if err:
                    rec["error"] = err
                else:
                    rec.update({"cold_ms": float(np.median(cold)), "cold_all_ms": cold,
                                "cached_ms": float(np.median(cached)), "cached_all_ms": cached,
                                "memory_ms": float(np.median(memory)),
                                "target_init_ms": float(np.median(init)), "cache": caches,
                                "breakdown_cold": r.get("compile")})
                self.compile.append(rec)
            for p in ("cupy", "numba-cuda") + tuple(FUSING):
                # The peers' first calls on four programs: torch.compile's take seconds.
                if not self.peers[p].present or w.name not in COMPILED_PEERS:
                    continue
                env = dict(os.environ)
                # Every compiler's cache empty: the first call compiles.
                for var in ("CUPY_CACHE_DIR", "NUMBA_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR",
                            "TRITON_CACHE_DIR"):
                    env[var] = tempfile.mkdtemp(prefix="cache-", dir=self.cache_root)
                r = self.driver([sys.executable, os.path.abspath(__file__), "--child", p, w.name],
                                env=env)
                rec = {"workload": w.name, "impl": p}
                if "error" in r:
                    rec["error"] = r["error"]
                else:
                    rec["cold_ms"] = r["first_call_ms"] - r["second_call_ms"]
                self.compile.append(rec)
            print(f"compile {w.name}: " + "  ".join(
                f"{c['impl']} cold {common.fmt_ms(c.get('cold_ms'))}"
                + (f", cached {common.fmt_ms(c['cached_ms'])}" if "cached_ms" in c else "")
                for c in self.compile if c["workload"] == w.name), flush=True)

    def measure_process(self):
        """The seeds' demo as a whole process, next to numba-cuda doing the same."""
        jitc = os.path.join(self.a.build, "jitc")
        cache = tempfile.mkdtemp(prefix="proc-", dir=self.cache_root)
        if self.jitc["available"] and os.path.exists(jitc):
            self.process.append(self.time_process(
                "jitc -t cuda 'a[i] += 1' (1e7 float64)",
                [jitc, "-t", "cuda", "--cache-dir", cache, "a[i] += 1"], 4))
        if self.peers["numba-cuda"].present:
            src = ("import numpy as np\nnp.row_stack = np.vstack\nfrom numba import cuda\n"
                   "@cuda.jit\ndef inc(a):\n    i = cuda.grid(1)\n    if i < a.shape[0]:\n"
                   "        a[i] += 1\n"
                   "a = np.ones(10_000_000)\nd = cuda.to_device(a)\n"
                   "inc[(a.size + 255) // 256, 256](d)\na = d.copy_to_host()\nprint(a)\n")
            self.process.append(self.time_process("python3 -c (numba-cuda, same job)",
                                                  [sys.executable, "-c", src], 3))
        for r in self.process:
            if "error" in r:
                print(f"process {r['impl']}: {r['error']}", flush=True)
            else:
                print(f"process {r['impl']}: {r['first_ms']:.0f} ms first, "
                      f"{r['warm_cache_ms']:.0f} ms after", flush=True)

    def time_process(self, what, argv, times):
        ts = []
        try:
            for _ in range(times):
                t0 = time.perf_counter()
                p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
                ts.append((time.perf_counter() - t0) * 1e3)
                if p.returncode != 0:
                    return {"impl": what, "error": f"exit {p.returncode}: "
                            + (p.stderr or p.stdout).strip()[-300:]}
        except subprocess.SubprocessError as e:
            return {"impl": what, "error": str(e)[:300]}
        return {"impl": what, "first_ms": ts[0], "warm_cache_ms": float(np.median(ts[1:])),
                "output": p.stdout.strip()[-300:]}

    # ---- run times ----

    def record(self, w, n, impl, kind, times=None, check=None, error=None, extra=None):
        rec = common.timing_record(w, n, impl, times, check, error, extra, kind=kind)
        self.results.append(rec)
        return rec

    def limits(self, w, n):
        peer = self.limit_peer
        if peer is None:
            return
        a = self.a
        size = np.dtype(w.dtype).itemsize
        nin = len(w.inputs) * n * size
        nout = (len(w.outputs) + len(w.inout)) * n * size
        half = w.bytes_per_element() * n // 2
        try:
            src = peer.empty(half // 4 + 1, np.float32)
            dst = peer.empty(half // 4 + 1, np.float32)
            if peer.name == "torch":
                src.fill_(1.5)
                t = gpu_time(peer, lambda: dst.copy_(src), a.budget_ms, a.min_reps,
                             a.max_reps, a.warmup)
            else:
                src.fill(1.5)
                t = gpu_time(peer, lambda: dst.__setitem__(Ellipsis, src), a.budget_ms,
                             a.min_reps, a.max_reps, a.warmup)
            self.record(w, n, "d2d-copy", "kernel", t)
            src = dst = None  # free the device memory before the next step
            # Pinned host memory both ways: the bytes read go up, the bytes written come down.
            if peer.name == "torch":
                torch = peer.m
                hin = torch.empty(nin // 4 + 1, dtype=torch.float32, pin_memory=True).fill_(1.5)
                din = torch.empty(nin // 4 + 1, dtype=torch.float32, device="cuda")
                hout = torch.empty(nout // 4 + 1, dtype=torch.float32, pin_memory=True)
                dout = torch.empty(nout // 4 + 1, dtype=torch.float32, device="cuda").fill_(1.5)
                up = gpu_time(peer, lambda: din.copy_(hin, non_blocking=True),
                              a.budget_ms, a.min_reps, a.max_reps, a.warmup)
                down = gpu_time(peer, lambda: hout.copy_(dout, non_blocking=True),
                                a.budget_ms, a.min_reps, a.max_reps, a.warmup)
                mu, md = float(np.median(up)), float(np.median(down))
                # The one-way limit: each direction alone, the larger of the two.
                self.record(w, n, "one-way", "host", [max(u, d) for u, d in zip(up, down)])
                self.record(w, n, "pinned-h2d+d2h", "host", [u + d for u, d in zip(up, down)],
                            extra={"h2d_ms": mu, "d2h_ms": md,
                                   "h2d_gbps": nin / (mu * 1e6), "d2h_gbps": nout / (md * 1e6)})
                del hin, din, hout, dout
            peer.free()
        except Exception as e:
            self.record(w, n, "d2d-copy", "kernel", error=f"{type(e).__name__}: {e}")

    def run_jitc(self, w, n, files, ref, scale, tmp):
        if not self.jitc["available"]:
            return
        out = {name: os.path.join(tmp, f"jitc_{name}.npy") for name in w.checked}
        argv = (self.jitc_args(w) + ["--cache-dir", os.path.join(self.cache_root, "run")]
                + [x for name in w.inputs for x in ("--in", f"{name}={files[name]}")]
                + [x for name in w.checked for x in ("--out", f"{name}={out[name]}")]
                + ["--warmup", str(self.a.warmup), "--min-reps", str(self.a.min_reps),
                   "--max-reps", str(self.a.max_reps), "--budget-ms", str(self.a.budget_ms),
                   w.program])
        r = self.driver(argv)
        if "error" in r or "unavailable" in r:
            err = r.get("error") or r.get("unavailable")
            self.record(w, n, "jitc-cuda", "kernel", error=err)
            self.record(w, n, "jitc-cuda", "host", error=err)
            return
        got = {k: np.load(p, mmap_mode="r") for k, p in out.items() if os.path.exists(p)}
        chk = common.check_outputs(w, got, ref, scale)
        # Kernel time with the data already on the device (device buffers),
        # as the peers' are taken; the host path's per-chunk kernels are in
        # the host row's breakdown.
        self.record(w, n, "jitc-cuda", "kernel", r.get("device_kernel_ms", r["kernel_ms"]), chk,
                    extra={"host_path_kernel_ms": float(np.median(r["kernel_ms"]))})
        self.record(w, n, "jitc-cuda", "host", r["times_ms"], chk,
                    extra={"h2d_ms": float(np.median(r["h2d_ms"])),
                           "d2h_ms": float(np.median(r["d2h_ms"])), "first_ms": r["first_ms"]})
        del got

    def run_peer(self, peer, w, n, v0, ref, scale):
        a = self.a
        fn = peer.ops[w.name]
        try:
            # The checked call, on fresh device copies.
            dv = {k: peer.to_dev(x) for k, x in v0.items()}
            o = {k: peer.empty(n, w.dtype) for k in w.outputs}
            res = fn(dv, o)
            peer.sync()
            got, note = {}, None
            for k in w.checked:
                h = np.asarray(peer.to_host(res[k]))
                if h.dtype != ref[k].dtype:  # a framework's own type rule: say so, compare values
                    note = f"{k} comes back as {h.dtype}; compared as {ref[k].dtype}"
                    h = h.astype(ref[k].dtype)
                got[k] = h
            chk = common.check_outputs(w, got, ref, scale)
            if note:
                chk["note"] = note
            del got, res
            t = gpu_time(peer, lambda: fn(dv, o), a.budget_ms, a.min_reps, a.max_reps,
                         a.warmup)
            self.record(w, n, peer.name, "kernel", t, chk)
            dv = o = None

            def h2h():
                d = {k: peer.to_dev(x) for k, x in v0.items()}
                oo = {k: peer.empty(n, w.dtype) for k in w.outputs}
                r = fn(d, oo)
                return [peer.to_host(r[k]) for k in w.checked]

            t = wall_time(peer, h2h, a.budget_ms, min(a.min_reps, 3), a.max_reps, 1)
            self.record(w, n, peer.name, "host", t, chk)
        except Exception as e:
            self.record(w, n, peer.name, "kernel", error=f"{type(e).__name__}: {e}"[:400])
        peer.free()

    def run(self):
        for n in sorted(self.a.sizes):
            for w in self.workloads:
                if time.time() - self.t0 > T_LIMIT_S:
                    self.skipped.append(f"{w.name} n={common.fmt_n(n)}")
                    continue
                tmp = tempfile.mkdtemp(prefix="jitc-gpu-")
                try:
                    v0 = make_inputs(w, n)
                    files = {}
                    for name, arr in v0.items():
                        files[name] = os.path.join(tmp, f"in_{name}.npy")
                        np.save(files[name], arr)
                    ref = w.ref({k: x.copy() for k, x in v0.items()})
                    scale = w.scale(v0) if w.scale else None
                    self.limits(w, n)
                    self.run_jitc(w, n, files, ref, scale, tmp)
                    for p in PEERS:
                        if self.peers[p].present and n <= self.a.peers_up_to:
                            self.run_peer(self.peers[p], w, n, v0, ref, scale)
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
                line = ", ".join(f"{r['impl']} {r['kind']} "
                                 + (common.fmt_ms(r.get("median_ms")) if "error" not in r
                                    else "ERROR")
                                 for r in self.results if r["workload"] == w.name and r["n"] == n)
                print(f"{w.name:11s} n={common.fmt_n(n):5s} ms: {line}", flush=True)
                for r in self.results:
                    if r["workload"] == w.name and r["n"] == n and "error" in r:
                        print(f"    {r['impl']} {r['kind']}: {r['error']}", flush=True)
        if self.skipped:
            print("skipped for time: " + ", ".join(self.skipped), flush=True)

    # ---- report ----

    def get(self, w, n, impl, kind):
        for r in self.results:
            if (r["workload"], r["n"], r["impl"], r["kind"]) == (w, n, impl, kind):
                return r
        return None

    def med(self, *k):
        r = self.get(*k)
        return r.get("median_ms") if r else None

    def one_way(self, w, n):
        """The one-way limit: the larger of the pinned upload of the bytes read and
        the pinned download of the bytes written, each alone (PCIe moves both ways
        at once, so a perfect overlap takes this long)."""
        return self.med(w, n, "one-way", "host")

    def host_table(self, n, cell, ratio):
        L = ["", f"## Host to host, {common.fmt_n(n)} elements (ms, median, wall clock)", "",
             "Host arrays in, host arrays out: pageable memory, as NumPy allocates it.  "
             "`one way` is the limit: the larger of a pinned upload of the bytes read and a "
             "pinned download of the bytes written, each timed alone (PCIe moves both ways "
             "at once); `pinned h2d + d2h` is both one after the other.  The peers upload, "
             "compute and download as their users write it.",
             "",
             "| workload | jitc-cuda | one way | pinned h2d + d2h | " + " | ".join(PEERS)
             + " | jitc / one way | jitc / best peer |",
             "|---|---|---|---|" + "---|" * len(PEERS) + "---|---|"]
        for w in self.workloads:
            j = self.med(w.name, n, "jitc-cuda", "host")
            lim = self.one_way(w.name, n)
            peers = [self.med(w.name, n, p, "host") for p in PEERS]
            best = min([p for p in peers if p], default=None)
            L.append(f"| `{w.program}` {np.dtype(w.dtype).name} | {cell(w.name, n, 'jitc-cuda', 'host')} | "
                     f"{common.fmt_ms(lim)} | "
                     + " | ".join(cell(w.name, n, i, "host") for i in ["pinned-h2d+d2h"] + PEERS)
                     + f" | {ratio(j, lim)} | {ratio(j, best)} |")
        return L

    def markdown(self, dev, machine, cmd):
        sizes = sorted(self.a.sizes)
        head = 10 ** 7 if 10 ** 7 in sizes else max(sizes)

        def cell(w, n, impl, kind):
            r = self.get(w, n, impl, kind)
            if r is None:
                return "absent" if impl in PEERS and not self.peers[impl].present else "-"
            if "error" in r:
                return "WRONG" if r["error"].startswith("wrong") else "error"
            return common.fmt_ms(r["median_ms"])

        def ratio(a, b):
            return common.fmt_ratio(a / b if a and b else None)

        L = ["# GPU benchmark: jitc -t cuda against PyTorch, CuPy, numba-cuda, torch.compile, "
             "jax.jit and the GPU's limits",
             "",
             f"GPU: {dev.get('gpu', 'unknown')}, driver {dev.get('driver', '?')}, "
             f"{dev.get('gpu_memory', '')}; {dev.get('cuda', '')}. Host: {machine['cpu']}, "
             f"{machine['cores']} cores. Date: {machine['date']}.",
             "",
             f"Command: `{cmd}`",
             "",
             "Peers: " + "; ".join(f"{p} {self.peers[p].version}" if self.peers[p].present
                                   else f"{p} ABSENT ({self.peers[p].why})" for p in PEERS)
             + ". jitc cuda: " + ("available" if self.jitc["available"]
                                  else "NOT available (" + self.jitc["why"] + ")") + ".",
             "",
             f"## Kernel time, {common.fmt_n(head)} elements (ms, median, CUDA events)",
             "",
             "Data already on the device.  `d2d copy` is a device-to-device copy of the same "
             "bytes (the limit).  torch, cupy and numba-cuda run the expression as their "
             "users write it (one kernel per operation for torch and cupy); torch.compile "
             "(Inductor), jax.jit (XLA) and cupy-ek (one ElementwiseKernel written by hand) "
             "fuse it into one kernel, as jitc does (jax.jit: wall clock of 20 calls queued "
             "back to back, per call, as JAX has no events).  Ratios are times: jitc / copy "
             "(1.00x is the limit), jitc / best peer and jitc / best fusing peer (below 1 "
             "means jitc is faster).",
             "",
             "| workload | jitc-cuda | d2d copy | " + " | ".join(PEERS) + " | jitc / copy "
             "| jitc / best peer | jitc / best fusing |",
             "|---|---|---|" + "---|" * len(PEERS) + "---|---|---|"]
        for w in self.workloads:
            j = self.med(w.name, head, "jitc-cuda", "kernel")
            c = self.med(w.name, head, "d2d-copy", "kernel")
            peers = [self.med(w.name, head, p, "kernel") for p in PEERS]
            best = min([p for p in peers if p], default=None)
            fused = min([self.med(w.name, head, p, "kernel") for p in FUSING
                         if self.med(w.name, head, p, "kernel")], default=None)
            L.append(f"| `{w.program}` {np.dtype(w.dtype).name} | "
                     + " | ".join(cell(w.name, head, i, "kernel")
                                  for i in ["jitc-cuda", "d2d-copy"] + PEERS)
                     + f" | {ratio(j, c)} | {ratio(j, best)} | {ratio(j, fused)} |")
        for n in [x for x in sizes if x >= 10 ** 7] or [head]:
            L += self.host_table(n, cell, ratio)
        L += ["", "## Compile (ms)", "",
              "jitc: new process, empty cache (cold) and warm disk cache (cached), median of 3; "
              "the peers: first call in a new process (every compiler cache empty) less a "
              "second call.", "",
              "| workload | jitc cold | jitc cached | jitc in memory | CUDA start-up | "
              + " | ".join(f"{p} first call" for p in ("cupy", "numba-cuda") + tuple(FUSING))
              + " |", "|---|---|---|---|---|" + "---|" * (2 + len(FUSING))]
        for w in self.workloads:
            def c(impl, key):
                r = next((x for x in self.compile if x["workload"] == w.name
                          and x["impl"] == impl), None)
                if r is None:
                    return "-"
                return "error" if "error" in r else common.fmt_ms(r.get(key))
            L.append(f"| {w.name} | {c('jitc-cuda', 'cold_ms')} | {c('jitc-cuda', 'cached_ms')} "
                     f"| {c('jitc-cuda', 'memory_ms')} | {c('jitc-cuda', 'target_init_ms')} | "
                     + " | ".join(c(p, "cold_ms") for p in ("cupy", "numba-cuda") + tuple(FUSING))
                     + " |")
        if self.process:
            L += ["", "## Whole process, wall clock (ms)", "", "| command | first | after |",
                  "|---|---|---|"]
            for r in self.process:
                if "error" in r:
                    L.append(f"| {r['impl']} | error | {r['error'][:200]} |")
                else:
                    L.append(f"| {r['impl']} | {r['first_ms']:.0f} | "
                             f"{r['warm_cache_ms']:.0f} |")
        L += ["", "## Every size: median ms / GB/s", ""]
        cols = [("jitc-cuda", "kernel"), ("d2d-copy", "kernel")] + \
               [(p, "kernel") for p in PEERS] + [("jitc-cuda", "host"), ("pinned-h2d+d2h", "host")] + \
               [(p, "host") for p in PEERS]
        L.append("| workload | n | " + " | ".join(f"{i} {k}" for i, k in cols) + " |")
        L.append("|---|---|" + "---|" * len(cols))
        for w in self.workloads:
            for n in sizes:
                cells = []
                for i, k in cols:
                    r = self.get(w.name, n, i, k)
                    if r is None:
                        cells.append("-")
                    elif "error" in r:
                        cells.append("WRONG" if r["error"].startswith("wrong") else "error")
                    else:
                        cells.append(f"{common.fmt_ms(r['median_ms'])} / {r['gbps'] or 0:.0f}")
                L.append(f"| {w.name} | {common.fmt_n(n)} | " + " | ".join(cells) + " |")
        errs = [r for r in self.results + self.compile if "error" in r]
        if errs or self.skipped:
            L += ["", "## Failures and omissions (their times do not count)", ""]
            for r in errs:
                L.append(f"- {r['workload']} n={r.get('n', '-')} {r['impl']} {r.get('kind', '')}: "
                         + r["error"].replace("\n", " ")[:400])
            if self.skipped:
                L.append("- skipped to finish in time: " + ", ".join(self.skipped))
        L.append("")
        return "\n".join(L)


def main():
    a = parse_args()
    if a.child:
        child(*a.child)
        return 0
    fails = common.selftest(WORKLOADS)
    if fails:
        print("the output check is broken:\n  " + "\n  ".join(fails), file=sys.stderr)
        return 1
    if not os.path.exists(os.path.join(a.build, "bench", "jitc_bench")):
        print(f"missing {a.build}/bench/jitc_bench: run bench/gpu.sh", file=sys.stderr)
        return 1
    machine = common.machine_info()
    b = GpuBench(a)
    b.probe()
    if not b.jitc["available"] and not any(p.present for p in b.peers.values()) \
            and not a.allow_no_gpu:
        print("no GPU found (jitc's cuda target and every peer are unavailable); nothing written",
              file=sys.stderr)
        return 1
    dev = b.device_info()
    try:
        if not a.no_compile:
            b.measure_compile()
        if not a.no_process:
            b.measure_process()
        b.run()
    finally:
        shutil.rmtree(b.cache_root, ignore_errors=True)
    machine["loadavg_end"] = common._read("/proc/loadavg").split()[:3]
    cmd = " ".join(["sh bench/gpu.sh"] + [x for x in sys.argv[1:] if x not in ("--build", a.build)])
    os.makedirs(a.out_dir, exist_ok=True)
    out = {"machine": machine, "device": dev, "command": cmd,
           "peers": {p: ({"present": True, "version": b.peers[p].version}
                         if b.peers[p].present else {"present": False, "why": b.peers[p].why})
                     for p in PEERS},
           "jitc": b.jitc, "config": {"sizes": a.sizes, "budget_ms": a.budget_ms,
                                      "min_reps": a.min_reps, "max_reps": a.max_reps,
                                      "warmup": a.warmup, "check_eps": common.ULPS},
           "compile": b.compile, "process": b.process, "results": b.results,
           "skipped": b.skipped, "elapsed_s": time.time() - b.t0}
    common.write_json(os.path.join(a.out_dir, "gpu.json"), out)
    md = b.markdown(dev, machine, cmd)
    with open(os.path.join(a.out_dir, "gpu.md"), "w") as f:
        f.write(md)
    print(f"wrote {a.out_dir}/gpu.json, {a.out_dir}/gpu.md", flush=True)
    try:
        for kind, ylabel in (("kernel", "GB/s, kernel time (data on the device)"),
                             ("host", "GB/s, host to host")):
            rs = [dict(r, impl=r["impl"]) for r in b.results
                  if r["kind"] == kind and "error" not in r]
            limit = "d2d-copy" if kind == "kernel" else "one-way"
            common.plot(rs, b.workloads, ["jitc-cuda"] + PEERS, limit,
                        os.path.join(a.out_dir, f"gpu_{kind}_{{}}.png"),
                        os.path.join(a.out_dir, f"gpu_{kind}_overview.png"),
                        f"GPU: {dev.get('gpu', '?')}", ylabel=ylabel,
                        styles={"jitc-cuda": {"linewidth": 2.5, "color": "tab:red"}})
        print("wrote plots", flush=True)
    except ImportError as e:
        print(f"plots: matplotlib is absent ({e}); none written", flush=True)
    except Exception as e:  # a plot must not lose the results written above
        print(f"plots failed: {type(e).__name__}: {e}", flush=True)
    print(md.split("## Every size")[0], flush=True)
    bad = [r for r in b.results if r.get("error", "").startswith("wrong")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
