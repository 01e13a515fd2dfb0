#!/usr/bin/env python3
"""bench/gpu_multi.py -- the scaling table of a run split over several GPUs,
from the JSON lines of bench/gpu_multi (bench/gpu_multi.sh runs both).

    python3 bench/gpu_multi.py bench/results/gpu_multi.jsonl

Writes bench/results/gpu_multi.md (read by bench/docs.py into
docs/PERFORMANCE.md) and prints it.  Throughput is bytes read plus bytes
written over the median wall time of a call; the speed-up is k GPUs'
throughput over one GPU's in the same run.  The goal: 2 GPUs at 1.8x one
or better."""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results", "gpu_multi.jsonl")
    rows, errors, device, when = [], [], "?", ""
    with open(src) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                if line.startswith("machine:"):
                    when = line.split(":", 1)[1].strip()
                continue
            r = json.loads(line)
            if "error" in r:
                errors.append(r)
                continue
            rows.append(r)
            device = r.get("device", device)
    gpus = sorted({r["gpus"] for r in rows})
    keys = []
    for r in rows:
        k = (r["program"], r["dtype"], r["n"], r["memory"])
        if k not in keys:
            keys.append(k)
    by = {(r["program"], r["dtype"], r["n"], r["memory"], r["gpus"]): r for r in rows}
    L = ["# Host to host on several GPUs", "",
         f"GPU: {device}; {when}.  Wall clock per call (ms, median), GB/s (bytes read and "
         "written over that time), and the speed-up over one GPU in the same run.  Goal: "
         "two GPUs at 1.8x one GPU or better.", ""]
    head = "| program | n | memory |"
    rule = "|---|---|---|"
    for g in gpus:
        head += f" {g} GPU{'s' if g > 1 else ''} ms | GB/s |" + (" speed-up |" if g > 1 else "")
        rule += "---|---|" + ("---|" if g > 1 else "")
    if 2 in gpus:
        head += " goal |"
        rule += "---|"
    L += [head, rule]
    for k in keys:
        prog, dt, n, mem = k
        line = f"| `{prog}` {dt} | {n:.0e} | {mem} |".replace("e+0", "e")
        one = by.get(k + (1,))
        for g in gpus:
            r = by.get(k + (g,))
            if not r:
                line += " - | - |" + (" - |" if g > 1 else "")
                continue
            line += f" {r['median_ms']:.2f} | {r['gbps']:.1f} |"
            if g > 1:
                line += f" {one['median_ms'] / r['median_ms']:.2f}x |" if one else " - |"
        if 2 in gpus:
            two = by.get(k + (2,))
            ok = one and two and one["median_ms"] / two["median_ms"] >= 1.8
            line += " met |" if ok else " **not met** |"
        L.append(line)
    if errors:
        L += ["", "Failures: " + "; ".join(json.dumps(e) for e in errors)]
    L += ["", "Command: `sh bench/gpu_multi.sh` (bench/gpu_multi.c through the library, "
          "`jitc_options.devices` set to `0`, `0,1`, ...)."]
    text = "\n".join(L) + "\n"
    with open(os.path.join(HERE, "results", "gpu_multi.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
