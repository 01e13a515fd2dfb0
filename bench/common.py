"""What the CPU and GPU benchmark scripts share: statistics, the output
check against NumPy, a description of the machine, timing of Python peers,
the Markdown helpers and the plots."""

import datetime
import json
import os
import platform
import shutil
import subprocess
import tempfile
import time

import numpy as np

ULPS = 16  # allowed error, in units of the dtype's epsilon times the term size


def timing_record(w, n, impl, times, check=None, error=None, extra=None, **fields):
    """One result row: the workload, size and implementation; an error, a
    wrong result (the check's reason), or the times with their statistics and
    throughput; then `extra`.  `fields` are added before the statistics."""
    rec = {"workload": w.name, "n": n, "impl": impl, **fields,
           "bytes": w.bytes_per_element() * n}
    if error:
        rec["error"] = error
    elif check is not None and not check["ok"]:
        rec["check"] = check
        rec["error"] = "wrong result: " + check["why"]
    else:
        if check is not None:
            rec["check"] = check
        rec.update(stats(times))
        rec["gbps"] = (rec["bytes"] / (rec["median_ms"] * 1e6)
                       if rec["median_ms"] > 0 else None)
        rec["times_ms"] = [round(t, 6) for t in times]
    if extra:
        rec.update(extra)
    return rec


def stats(times_ms):
    """Median and spread of a list of times (ms)."""
    t = np.sort(np.asarray(times_ms, dtype=np.float64))
    if t.size == 0:
        return None
    q1, med, q3 = np.percentile(t, [25, 50, 75])
    return {"median_ms": float(med), "min_ms": float(t[0]), "q1_ms": float(q1),
            "q3_ms": float(q3), "max_ms": float(t[-1]), "reps": int(t.size),
            "iqr_pct": float(100 * (q3 - q1) / med) if med > 0 else 0.0}


def _check_one(name, got, ref, scale):
    """None if got matches ref, else why not; plus the largest error in units
    of epsilon times the term size."""
    got = np.asarray(got)
    if got.dtype != ref.dtype:
        return f"{name}: dtype {got.dtype}, NumPy gives {ref.dtype}", None
    if got.shape != ref.shape:
        return f"{name}: shape {got.shape}, NumPy gives {ref.shape}", None
    eps = float(np.finfo(ref.dtype).eps)
    worst = 0.0
    step = 1 << 22  # chunks keep the float64 temporaries small at 1e8 elements
    for lo in range(0, ref.size, step):
        g = got[lo:lo + step].astype(np.float64)
        r = ref[lo:lo + step].astype(np.float64)
        gn, rn = np.isnan(g), np.isnan(r)
        if (gn != rn).any():
            i = lo + int(np.argmax(gn != rn))
            return f"{name}[{i}] = {got[i]!r}, NumPy gives {ref[i]!r}", None
        rinf = np.isinf(r)
        if (g[rinf] != r[rinf]).any() or np.isinf(g[~rinf & ~rn]).any():
            i = lo + int(np.argmax((np.isinf(g) | rinf) & (g != r)))
            return f"{name}[{i}] = {got[i]!r}, NumPy gives {ref[i]!r}", None
        ok = ~rn & ~rinf
        s = np.abs(r) if scale is None else np.abs(scale[lo:lo + step]).astype(np.float64)
        s = np.maximum(s, np.finfo(ref.dtype).tiny)
        e = np.where(ok, np.abs(g - r) / (eps * s), 0.0)
        m = float(e.max()) if e.size else 0.0
        if m > ULPS:
            i = lo + int(np.argmax(e))
            return (f"{name}[{i}] = {got[i]!r}, NumPy gives {ref[i]!r} "
                    f"({m:.1f} eps of the terms, {ULPS} allowed)"), m
        worst = max(worst, m)
    return None, worst


def check_outputs(w, got, ref, scale):
    """Checks every array workload w writes; returns {"ok": bool, ...}."""
    worst = 0.0
    for name in w.checked:
        if name not in got:
            return {"ok": False, "why": f"{name}: missing"}
        sc = None if scale is None else scale.get(name)
        why, m = _check_one(name, got[name], ref[name], sc)
        if why:
            return {"ok": False, "why": why}
        worst = max(worst, m)
    return {"ok": True, "max_err_eps": round(worst, 3)}


def selftest(workloads):
    """The check must reject wrong results, or it proves nothing.  Returns a
    list of failures (empty when the checker works)."""
    fails = []
    rng = np.random.default_rng(7)
    for w in workloads:
        v = {k: rng.standard_normal(1000, dtype=w.dtype) for k in w.inputs}
        ref = w.ref({k: a.copy() for k, a in v.items()})
        scale = w.scale(v) if w.scale else None
        name = w.checked[0]
        good = dict(ref)
        if not check_outputs(w, good, ref, scale)["ok"]:
            fails.append(f"{w.name}: the reference itself is rejected")
        one = dict(ref)
        one[name] = np.nextafter(ref[name], np.inf)  # 1 ulp up: must pass
        if not check_outputs(w, one, ref, scale)["ok"]:
            fails.append(f"{w.name}: a 1-ulp difference is rejected")
        for what, bad in [
                ("a wrong element", _poke(ref[name], 500, lambda x: x * 1.001 + 1e-3)),
                ("a NaN", _poke(ref[name], 3, lambda x: np.nan)),
                ("the last element wrong", _poke(ref[name], -1, lambda x: -x - 1)),
                ("float64 instead of float32" if ref[name].dtype == np.float32
                 else "float32 instead of float64",
                 ref[name].astype(np.float64 if ref[name].dtype == np.float32 else np.float32)),
                ("a short array", ref[name][:-1])]:
            got = dict(ref)
            got[name] = bad
            if check_outputs(w, got, ref, scale)["ok"]:
                fails.append(f"{w.name}: {what} is accepted")
    return fails


def _poke(a, i, f):
    b = a.copy()
    b[i] = f(b[i])
    return b


def time_python(fn, v, o, budget_ms, min_reps, max_reps, warmup):
    """Times fn(v, o) the way the C drivers time their calls.  Returns
    (result of the first call, first_ms, times)."""
    t0 = time.perf_counter()
    first = fn(v, o)
    first_ms = (time.perf_counter() - t0) * 1e3
    # Keep what the checked call wrote: later calls update in-place arrays.
    first = {k: np.array(a, copy=True) for k, a in first.items()}
    for _ in range(warmup):
        fn(v, o)
    times, spent = [], 0.0
    while len(times) < min_reps or (len(times) < max_reps and spent < budget_ms):
        t0 = time.perf_counter()
        fn(v, o)
        dt = (time.perf_counter() - t0) * 1e3
        times.append(dt)
        spent += dt
    return first, first_ms, times


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _cmd(args):
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine_info():
    """CPU model, cores, caches, memory, OS and compiler versions, date."""
    cpu = ""
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = ""
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal"):
            mem = f"{int(line.split()[1]) / 1048576:.1f} GiB"
    llc = _read("/sys/devices/system/cpu/cpu0/cache/index3/size").strip()
    return {
        "cpu": cpu or platform.processor(),
        "cores": os.cpu_count(),
        "llc": llc,
        "memory": mem,
        "os": f"{platform.system()} {platform.release()}",
        "gcc": _cmd(["gcc", "--version"]).split("\n")[0],
        "python": platform.python_version(),
        "numpy": np.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "loadavg_start": _read("/proc/loadavg").split()[:3],
        "nice": os.nice(0),
    }


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def write_md(path, lines):
    """Writes a results table's lines as a Markdown file and prints them."""
    text = "\n".join(lines).rstrip("\n") + "\n"
    with open(path, "w") as f:
        f.write(text)
    print(text, end="")


def fmt_ms(ms):
    if ms is None:
        return "-"
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    if ms >= 0.01:
        return f"{ms:.3f}"
    return f"{ms * 1e3:.2f} µs"


def fmt_ratio(r):
    if r is None:
        return "-"
    return f"{r:.2f}x" if r >= 0.1 else f"{r:.2g}x"


def fmt_n(n):
    e = int(round(np.log10(n))) if n > 0 else 0
    return f"1e{e}" if 10 ** e == n else str(n)


def plot(results, workloads, impls, limit, path_fmt, overview, title, styles=None,
         value="gbps", ylabel="GB/s (bytes read + written per second)"):
    """Throughput against size, one PNG per workload plus one overview of all.
    results: list of dicts with workload, impl, n and `value`; impls: the
    lines to draw, in order; limit: the impl drawn as the limit line.
    Falls back to gnuplot without matplotlib; returns the paths written, or
    raises ImportError when neither is there."""
    try:
        import matplotlib
    except ImportError:
        if shutil.which("gnuplot"):
            return plot_gnuplot(results, workloads, impls, limit, path_fmt, title, value, ylabel)
        raise
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def series(wname, impl):
        pts = sorted((r["n"], r[value]) for r in results
                     if r["workload"] == wname and r["impl"] == impl and r.get(value))
        return [p[0] for p in pts], [p[1] for p in pts]

    def draw(ax, w):
        for impl in impls:
            xs, ys = series(w.name, impl)
            if xs:
                st = (styles or {}).get(impl, {})
                ax.plot(xs, ys, marker="o", label=impl, **st)
        xs, ys = series(w.name, limit)
        if xs:
            ax.plot(xs, ys, "k--", linewidth=2, label=f"limit: {limit}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("elements")
        ax.set_title(w.title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)

    written = []
    if not results:
        return written
    for w in workloads:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        draw(ax, w)
        ax.set_ylabel(ylabel)
        if ax.get_legend_handles_labels()[1]:
            ax.legend(fontsize=8)
        fig.suptitle(title, fontsize=9)
        fig.tight_layout()
        p = path_fmt.format(w.name)
        fig.savefig(p, dpi=90)
        plt.close(fig)
        written.append(p)
    cols = 4
    rows = (len(workloads) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    for ax, w in zip(axes.flat, workloads):
        draw(ax, w)
    for ax in list(axes.flat)[len(workloads):]:
        ax.axis("off")
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if labels:
        fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9)
    fig.suptitle(title + " -- " + ylabel, fontsize=11)
    fig.tight_layout(rect=(0, 0.05, 1, 0.96))
    fig.savefig(overview, dpi=80)
    plt.close(fig)
    written.append(overview)
    return written


def plot_gnuplot(results, workloads, impls, limit, path_fmt, title, value, ylabel):
    """The same plots, one per workload, drawn by gnuplot."""
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        for w in workloads:
            lines = []
            for impl in impls + [limit]:
                pts = sorted((r["n"], r[value]) for r in results
                             if r["workload"] == w.name and r["impl"] == impl and r.get(value))
                if not pts:
                    continue
                dat = os.path.join(tmp, f"{w.name}-{impl}.dat")
                with open(dat, "w") as f:
                    f.writelines(f"{n} {v}\n" for n, v in pts)
                style = "lines dashtype 2 lw 2 lc rgb 'black'" if impl == limit \
                    else "linespoints lw 2"
                label = f"limit: {impl}" if impl == limit else impl
                lines.append(f"'{dat}' using 1:2 with {style} title '{label}'")
            if not lines:
                continue
            p = path_fmt.format(w.name)
            script = (f"set terminal pngcairo size 700,450\nset output '{p}'\n"
                      f"set logscale xy\nset grid\nset key left top\n"
                      f"set title \"{title}: {w.title}\" noenhanced\n"
                      f"set xlabel 'elements'\nset ylabel '{ylabel}'\n"
                      f"plot " + ", ".join(lines) + "\n")
            subprocess.run(["gnuplot"], input=script, text=True, check=False)
            written.append(p)
    return written
