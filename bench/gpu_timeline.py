#!/usr/bin/env python3
"""The host path's figures, from the GPU machine's measurements:

- gpu_timeline.png: one traced run of jitc's host pipeline (`gpu_host trace`,
  CudaTrace): per chunk, when the copy threads staged its inputs, when the
  copy engines uploaded it, when its kernel ran, when it was downloaded and
  unstaged, on one time axis (GPU times from CUDA events, host times from
  the host clock, both from the run's start);
- gpu_sizes.png: host-to-host time against size for jitc, the one-way limit
  and the peers (bench/gpu.py run on one workload over 1e3 to 1e9 elements);
- gpu_host.md: that run as a table.

    python3 bench/gpu_timeline.py --traces T.jsonl --sizes DIR/gpu.json [--out-dir bench/results]
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402


def timeline(traces, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(traces), 1, figsize=(11, 2.4 + 2.2 * len(traces)), squeeze=False)
    colors = {"stage in (threads)": "tab:olive", "upload (H2D)": "tab:blue",
              "kernel": "tab:red", "download (D2H)": "tab:green",
              "stage out (threads)": "tab:purple"}
    for ax, t in zip(axes[:, 0], traces):
        for k, c in enumerate(t["chunks"]):
            off, m, in0, in1, up0, up1, k1, down1, out0, out1 = c
            spans = [("upload (H2D)", up0, up1), ("kernel", up1, k1),
                     ("download (D2H)", k1, down1)]
            if not t.get("pinned"):
                spans = [("stage in (threads)", in0, in1)] + spans + \
                        [("stage out (threads)", out0, out1)]
            for name, a, b in spans:
                if b > a:
                    ax.barh(k, b - a, left=a, height=0.8, color=colors[name],
                            label=name if k == 0 else None)
        ax.invert_yaxis()
        ax.set_ylabel("chunk")
        ax.set_xlabel("ms from the call's start")
        how = "pinned (DMA in place)" if t.get("pinned") else "pageable (staged by %d threads)" % t["threads"]
        ax.set_title(f"`{t['program']}` float64, {common.fmt_n(t['n'])} elements, {how}: "
                     f"{t['total_ms']:.2f} ms, {len(t['chunks'])} chunks up to {t['chunk']} "
                     f"elements, {t['slots']} slots", fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def sizes(res, out_dir):
    rs = [r for r in res["results"] if r["kind"] == "host" and "error" not in r]
    impls = ["jitc-cuda", "one-way"] + [p for p in ("torch", "cupy", "numba-cuda", "torch.compile",
                                                    "jax.jit", "cupy-ek")
                                        if any(r["impl"] == p for r in rs)]
    w = rs[0]["workload"] if rs else "?"
    ns = sorted({r["n"] for r in rs})
    get = {(r["impl"], r["n"]): r["median_ms"] for r in rs}
    md = [f"`{w}` host to host (pageable NumPy-style arrays), wall clock, median ms; "
          f"{res['device'].get('gpu', '?')}; `one-way` is the larger direction's pinned copy "
          "alone (the limit).", "",
          "| n | " + " | ".join(impls) + " | jitc / one-way |", "|---|" + "---|" * (len(impls) + 1)]
    for n in ns:
        j, o = get.get(("jitc-cuda", n)), get.get(("one-way", n))
        md.append(f"| {common.fmt_n(n)} | " + " | ".join(common.fmt_ms(get.get((i, n)))
                                                       for i in impls)
                  + f" | {common.fmt_ratio(j / o if j and o else None)} |")
    common.write_md(os.path.join(out_dir, "gpu_host.md"), md + [""])
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 5))
    for i in impls:
        pts = [(n, get[(i, n)]) for n in ns if (i, n) in get]
        if pts:
            style = {"jitc-cuda": dict(color="tab:red", linewidth=2.5),
                     "one-way": dict(color="black", linestyle="--")}.get(i, {})
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=i, **style)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("elements")
    ax.set_ylabel("ms, host arrays in and out")
    ax.set_title(f"{w}: host to host against size ({res['device'].get('gpu', '?')})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "gpu_sizes.png"), dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--traces")
    ap.add_argument("--sizes")
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    if a.traces:
        traces = [json.loads(line) for line in open(a.traces) if line.strip()]
        timeline(traces, os.path.join(a.out_dir, "gpu_timeline.png"))
    if a.sizes:
        sizes(json.load(open(a.sizes)), a.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
