#!/usr/bin/env python3
"""jitc.dask on Dask arrays of CuPy chunks: one GPU against two, one worker
per GPU, in one run.

    python3 bench/python_dask_gpu.py [--gpus 1,2] [--sizes 2e9] [--chunks 0,16]
                                     [--out-dir bench/results]

--chunks: blocks per array, each count in turn; 0 is one block per GPU, the
fewest tasks (the default).  --memory host: NumPy chunks in the workers'
memory instead of CuPy chunks, run on the worker's GPU (target "cuda": the
host pipeline, PCIe-bound), where a block's work is long enough for
Dask's scheduling to be a small part of it.  Beside each program, the same graph of no-op
tasks (one per block, on blocks of one element, persisted the same way):
what Dask's scheduling costs at that block count, whatever the program.

The workers: dask-cuda's LocalCUDACluster when it imports, else a scheduler
and one `dask worker` process per GPU started with CUDA_VISIBLE_DEVICES.
The inputs are made on the workers (CuPy's random numbers, chunk by chunk)
and persisted, so that no time goes to moving them; then, per size, the
median wall time of `jitc.dask.evaluate(...).persist()` until every block
is done (the scheduler's overheads included; a block's task ends when its
kernels are queued, so a device synchronize on every worker follows), and the same for the
expression written with Dask's own operations on the CuPy chunks.  The
speed-up is the one-GPU median over the two-GPU one.  Each result is
checked against NumPy on a sample of blocks.  Writes python_dask_gpu.json
and python_dask_gpu.md into --out-dir (python_dask_gpu_host.* with --memory
host).
"""
import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402

import dask  # noqa: E402
import dask.array as da  # noqa: E402
from distributed import Client, LocalCluster, futures_of, wait  # noqa: E402

import jitc.dask  # noqa: E402

PROGRAMS = [
    # (name, program, dtype, the same with Dask's operations)
    ("exp_axpb_f32", "c = exp(a) * b + 1", np.float32, lambda a, b: da.exp(a) * b + 1),
    ("sincos_f64", "c = sin(a)**2 + cos(a)**2", np.float64,
     lambda a, b: da.sin(a) ** 2 + da.cos(a) ** 2),
]


def make_host_block(dtype, seed, block_info=None):
    """Values in [-2, 2) without a temporary of float64s (blocks of GBs)."""
    m = block_info[None]["chunk-shape"][0]
    x = np.arange(m, dtype=dtype)
    x *= dtype(4 / max(m, 1))
    x -= dtype(2 - 0.1 * seed)
    return x


def make_block(dtype, seed, block_info=None):
    import cupy
    info = block_info[None]
    rs = cupy.random.RandomState(seed * 100003 + info["chunk-location"][0])
    return rs.standard_normal(info["chunk-shape"], dtype=dtype)


def start(ngpu):
    """(client, closer, how): ngpu workers, one per GPU."""
    visible = ",".join(str(i) for i in range(ngpu))
    try:
        from dask_cuda import LocalCUDACluster
        cluster = LocalCUDACluster(CUDA_VISIBLE_DEVICES=visible, threads_per_worker=1,
                                   dashboard_address=None, memory_limit=0)
        client = Client(cluster)
        return client, lambda: (client.close(), cluster.close()), "dask-cuda LocalCUDACluster"
    except Exception as e:  # noqa: BLE001 - no dask-cuda, or it cannot start: by hand
        why = f"{type(e).__name__}: {e}"[:200]
    cluster = LocalCluster(n_workers=0, dashboard_address=None)
    procs = []
    for g in range(ngpu):
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(g))
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", cluster.scheduler_address,
             "--nthreads", "1", "--memory-limit", "0", "--no-dashboard"], env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    client = Client(cluster)
    client.wait_for_workers(ngpu, timeout=120)

    def close():
        client.close()
        for p in procs:
            p.terminate()
            p.wait()
        cluster.close()
    return client, close, f"dask worker per GPU by CUDA_VISIBLE_DEVICES ({why})"


def _sync():
    import cupy
    cupy.cuda.runtime.deviceSynchronize()


_REP = itertools.count()


def _same(x):
    return x


def fresh(x):
    """x under new keys (one identity task per block, fused into the next
    layer): a repeat computes anew instead of finding the last repeat's
    blocks, which the scheduler may not have released yet."""
    return x.map_blocks(_same, dtype=x.dtype, meta=x._meta, name=f"{x.name}-{next(_REP)}")


def timed(client, build, reps):
    times = []
    for _ in range(reps + 1):
        r = build()
        t0 = time.perf_counter()
        r = r.persist()
        wait(r)
        # A block's task ends when its kernels are queued: wait for the GPUs.
        client.run(_sync)
        for f in futures_of(r):
            if f.status == "error":
                f.result()  # raises the block's error
        times.append(time.perf_counter() - t0)
        client.cancel(futures_of(r))  # frees the blocks now
        del r
    return [t * 1e3 for t in times[1:]]  # the first: the workers' compiles


def run(ngpu, sizes, chunk_counts, reps, memory="device"):
    import cupy
    host = memory == "host"
    make = make_host_block if host else make_block
    client, close, how = start(ngpu)
    rows = []
    try:
        for (name, program, dtype, dask_expr), n, nc in itertools.product(PROGRAMS, sizes,
                                                                          chunk_counts):
            nchunks = nc or ngpu
            chunk = -(-n // nchunks)
            chunks = ((chunk,) * (n // chunk) + ((n % chunk,) if n % chunk else ()),)
            meta = np.empty((0,), dtype=dtype) if host else cupy.empty((0,), dtype=dtype)
            a = da.map_blocks(make, dtype, 1, chunks=chunks, dtype=dtype, meta=meta)
            b = a
            if "b" in program:
                b = da.map_blocks(make, dtype, 2, chunks=chunks, dtype=dtype, meta=meta)
            a, b = client.persist([a, b])
            wait([a, b])
            # The scheduling alone: as many no-op tasks, on blocks of one element.
            tiny = client.persist(da.map_blocks(make, dtype, 3, chunks=((1,) * nchunks,),
                                                dtype=dtype, meta=meta))
            wait(tiny)
            st = timed(client, lambda: fresh(tiny), reps)
            del tiny
            args = {"a": a, "b": b} if "b" in program else {"a": a}
            per_worker = {k: len(v) for k, v in client.has_what().items()}
            target = "cuda" if host else None
            jt = timed(client, lambda: jitc.dask.evaluate(
                program, target=target, **{k: fresh(v) for k, v in args.items()}), reps)
            try:  # Dask+CuPy's temporaries may not fit where jitc's one pass does
                if host:
                    raise RuntimeError("host memory: NumPy on the workers' CPUs, not compared")
                dt = timed(client, lambda: dask_expr(fresh(a), fresh(b)), reps)
            except Exception as e:  # noqa: BLE001
                print(f"Dask+CuPy: {type(e).__name__}: {str(e)[:200]}", flush=True)
                dt = [float("nan")]
            # The first and last blocks against NumPy.
            c = jitc.dask.evaluate(program, target=target, **args)
            for k in (0, len(chunks[0]) - 1):
                lo = sum(chunks[0][:k])
                # The first 100,000 elements of the block: NumPy on the
                # CPU is slow for more.
                got, x, y = (np.asarray(cupy.asnumpy(v.blocks[k][:100_000].compute()))
                             for v in (c, a, b))
                want, scale = _numpy(name, x, y)
                if not (np.abs(got - want) <= 8 * np.finfo(dtype).eps * scale).all():
                    raise SystemExit(f"{name} n={n} block {k} (from {lo}): wrong result")
            del a, b, c
            moved = np.dtype(dtype).itemsize * n * (len(args) + 1)
            rows.append({"program": program, "bytes": moved, "name": name, "dtype": np.dtype(dtype).name,
                         "n": n, "chunks": len(chunks[0]), "chunks_asked": nc, "gpus": ngpu,
                         "memory": memory,
                         "workers": how, "sched_ms": statistics.median(st),
                         "blocks_per_worker_inputs": sorted(per_worker.values()),
                         "jitc_ms": statistics.median(jt), "jitc_all_ms": jt,
                         "dask_cupy_ms": statistics.median(dt), "dask_cupy_all_ms": dt})
            r = rows[-1]
            print("row " + json.dumps(r), flush=True)  # a run cut short keeps its rows
            print(f"{ngpu} GPU(s) {name} n={common.fmt_n(n)} {r['chunks']} blocks: jitc.dask "
                  f"{r['jitc_ms']:.2f} ms, Dask+CuPy {r['dask_cupy_ms']:.2f} ms, no-op graph "
                  f"{r['sched_ms']:.2f} ms ({how})", flush=True)
    finally:
        close()
    return rows


def _numpy(name, x, y):
    """NumPy's result, and the size of the terms it sums (for the error bound)."""
    if name == "exp_axpb_f32":
        t = np.exp(x) * y
        return t + np.float32(1), np.abs(t) + 1
    return np.sin(x) ** 2 + np.cos(x) ** 2, 1.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpus", default="1,2")
    ap.add_argument("--sizes", default="2e9")
    ap.add_argument("--chunks", default="0,16",
                    help="blocks per array, comma separated; 0: one block per GPU")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--memory", default="device", choices=["device", "host"],
                    help="CuPy chunks on the GPUs, or NumPy chunks in the workers' memory")
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    ap.add_argument("--from-log", metavar="LOG",
                    help="write the report from the `row` lines of LOG (a run cut short), "
                         "with --device, --cupy and the run's other arguments")
    ap.add_argument("--device", default="?", help="with --from-log: the GPU's name")
    ap.add_argument("--cupy", default="?", help="with --from-log: CuPy's version")
    a = ap.parse_args()
    sizes = [int(float(s)) for s in a.sizes.split(",")]
    counts = [int(x) for x in a.chunks.split(",")]
    command = (f"python3 bench/python_dask_gpu.py --gpus {a.gpus} --sizes {a.sizes} "
               f"--chunks {a.chunks} --memory {a.memory}")
    if a.from_log:
        with open(a.from_log) as f:
            rows = [json.loads(line[4:]) for line in f if line.startswith("row ")]
        report({"device": a.device, "dask": dask.__version__, "cupy": a.cupy,
                "command": command + " (cut short by a time limit: the rows it finished)",
                "results": rows}, sizes, counts, a.memory, a.out_dir)
        return
    rows = []
    for g in [int(x) for x in a.gpus.split(",")]:
        rows += run(g, sizes, counts, a.reps, a.memory)
    import cupy
    dev = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    out = {"device": dev, "gpus_seen": cupy.cuda.runtime.getDeviceCount(),
           "dask": dask.__version__, "cupy": cupy.__version__,
           "command": command, "results": rows}
    report(out, sizes, counts, a.memory, a.out_dir)


def report(out, sizes, counts, memory, out_dir):
    """python_dask_gpu[_host].json and .md from the rows of a run."""
    rows, dev = out["results"], out["device"]
    os.makedirs(out_dir, exist_ok=True)
    host = memory == "host"
    base = "python_dask_gpu_host" if host else "python_dask_gpu"
    common.write_json(os.path.join(out_dir, base + ".json"), out)
    what = "NumPy chunks, each run on its worker's GPU" if host else "CuPy chunks"
    md = [f"# jitc.dask on Dask arrays of {what}: one GPU against two", "",
          f"GPU: {dev}; Dask {out['dask']}, CuPy {out['cupy']}.  Workers: "
          f"{rows[0]['workers'] if rows else '-'}.  Command: `{out['command']}`", "",
          "Wall time (ms, median of persist, wait, and a device synchronize on every worker; "
          "the scheduler included) of one program over arrays already on the workers, in "
          "`blocks` blocks (one per GPU, or 16); GB/s: bytes read and written over that time; "
          "no-op graph: the same number of tasks doing nothing, persisted the same way, "
          "which is what scheduling costs, and its share of jitc's time; Dask+CuPy: the same "
          "expression with Dask's operations on the CuPy chunks"
          + (" (not run on NumPy chunks, which Dask's operations compute on the CPUs)."
             if host else "."), "",
          "| program | n | blocks, 1 / 2 GPUs | 1 GPU jitc | 2 GPUs jitc | speed-up "
          "| jitc GB/s, 1 / 2 GPUs | no-op graph ms, 1 / 2 GPUs | scheduling's share, 1 / 2 GPUs "
          "| 1 GPU Dask+CuPy | 2 GPUs Dask+CuPy |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    by = {(r["name"], r["n"], r["chunks_asked"], r["gpus"]): r for r in rows}

    def both(one, two, fn):
        return " / ".join(fn(r) if r else "-" for r in (one, two))

    def gbs(r):
        return f"{r['bytes'] / r['jitc_ms'] / 1e6:.0f}"

    def sched(r):
        return f"{r['sched_ms']:.1f}"

    def share(r):
        return f"{100 * min(1.0, r['sched_ms'] / r['jitc_ms']):.0f}%"

    for (name, program, dtype, _), n, nc in itertools.product(PROGRAMS, sizes, counts):
        one, two = by.get((name, n, nc, 1)), by.get((name, n, nc, 2))
        f = lambda r, k: f"{r[k]:.1f}" if r and r[k] == r[k] else "-"  # noqa: E731
        sp = f"{one['jitc_ms'] / two['jitc_ms']:.2f}x" if one and two else "-"
        md.append(f"| `{program}` {np.dtype(dtype).name} | {common.fmt_n(n)} | "
                  f"{both(one, two, lambda r: str(r['chunks']))} | "
                  f"{f(one, 'jitc_ms')} | {f(two, 'jitc_ms')} | {sp} | "
                  f"{both(one, two, gbs)} | "
                  f"{both(one, two, sched)} | "
                  f"{both(one, two, share)} | "
                  f"{f(one, 'dask_cupy_ms')} | {f(two, 'dask_cupy_ms')} |")
    common.write_md(os.path.join(out_dir, base + ".md"), md)


if __name__ == "__main__":
    main()
