#!/usr/bin/env python3
"""t_cli_nd.py -- the command line over arrays of any shape, against NumPy.

Each case runs `jitc` on every target of JITC_TARGETS and compares with
what NumPy computes, shape, order and values, most often byte for byte
with what np.save writes for NumPy's result:

- inputs: .npy files of 2 and 3 axes in C and Fortran order, kept as they
  are; 0-d files; a 64-axis file; broadcasting a row and a column; a
  mismatch is exit 66 naming both shapes and the axis;
- the outputs' order: NumPy's for order='K' (np.add's, or the iterator's
  over every input), over random shapes, orders and broadcasts;
- arrays updated in place keep their order; scalars alone give a 0-d
  result; -n takes a shape (2x3x4) for the generated inputs, and a program
  with no input runs flat over it;
- .npz in (np.savez and np.savez_compressed; one array by name, or every
  array of the file) and out (several outputs in one archive, atomically:
  an existing file is untouched when the run fails); bad archives
  (truncated, not a zip, a bad CRC, a bad deflate stream, a member that is
  not a .npy, an encrypted or bzip2 member, a ZIP64 archive made by hand)
  are exit 66 with a message, never a crash;
- printing: NumPy's np.array2string layout (rows, blank lines between
  blocks, "..." above 1000 elements, 3 at each end), a Fortran-order array
  in its logical order, a 0-d array as NumPy prints it, with a literal
  golden too; --json gives values as tolist() does; -t all compares
  shaped outputs.

Environment: JITC (the binary), JITC_TARGETS (default "interp").
"""
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JITC = os.environ.get("JITC") or os.path.join(ROOT, os.environ.get("BUILD", "build"), "jitc")
TARGETS = [t for t in os.environ.get("JITC_TARGETS", "interp").split() if t != "cuda"] or [
    "interp"]
TMP = tempfile.mkdtemp(prefix="jitc_cli_nd_")
fails = 0


def path(name):
    return os.path.join(TMP, name)


def result(name, why=None):
    """why: None for a pass, anything else (an empty output too) a failure."""
    global fails
    if why is not None:
        fails += 1
        print("FAIL cli_nd.%s: %s" % (name, why or "(no output)"))
    else:
        print("ok cli_nd.%s" % name)


def jitc(*args, target="interp"):
    p = subprocess.run([JITC, "-t", target] + list(args), capture_output=True, text=True,
                       timeout=300)
    return p.returncode, p.stdout, p.stderr


def save(name, a):
    np.save(path(name), a)
    return path(name)


def saved_bytes(a):
    """What np.save writes for a."""
    ref = path("ref.npy")
    np.save(ref, a)
    with open(ref, "rb") as f:
        return f.read()


def same_file(out, want):
    """None when file out holds what np.save writes for want, else why."""
    got = np.load(out)
    if got.shape != want.shape or got.dtype != want.dtype:
        return "%s %s, NumPy %s %s" % (got.shape, got.dtype, want.shape, want.dtype)
    if not np.array_equal(got, want, equal_nan=True):
        return "values %r, NumPy %r" % (got, want)
    if order_of(got) != order_of(want):  # as np.save records it
        return "order %s, NumPy's %s" % (order_of(got), order_of(want))
    with open(out, "rb") as f:
        if f.read() != saved_bytes(want):
            return "the file's bytes are not np.save's"
    return None


def order_of(a):
    return "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"


def run_case(name, program, ins, want, outs=("c",), extra=()):
    """Runs program on every target with --in NAME=FILE for ins (name ->
    array) and compares each output file with want (name -> array)."""
    for t in TARGETS:
        args = ["-q"] + list(extra)
        for k, v in ins.items():
            args += ["--in", "%s=%s" % (k, save("%s_%s.npy" % (name, k), v))]
        for o in outs:
            args += ["--out", "%s=%s" % (o, path("%s_%s_out.npy" % (name, o)))]
        rc, out, err = jitc(*(args + [program]), target=t)
        if rc:
            result("%s.%s" % (name, t), "exit %d: %s" % (rc, err.strip()[:300]))
            continue
        why = None
        for o in outs:
            why = why or same_file(path("%s_%s_out.npy" % (name, o)), want[o])
        result("%s.%s" % (name, t), why)


def test_inputs():
    rng = np.random.default_rng(5)
    m = rng.standard_normal((2, 3))
    t3 = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    for order in "CF":
        a = np.asarray(m, order=order)
        b = np.asarray(m * 3, order=order)
        run_case("matrix_%s" % order, "c = a + b", {"a": a, "b": b}, {"c": np.add(a, b)})
        x = np.asarray(t3, order=order)
        run_case("cube_%s" % order, "c = x * 2 + 1", {"x": x}, {"c": x * 2 + 1})
    # Mixed orders: NumPy's answer (C where they conflict).
    a, b = np.asfortranarray(m), np.ascontiguousarray(m * 3)
    run_case("matrix_mixed", "c = a + b", {"a": a, "b": b}, {"c": np.add(a, b)})
    # Broadcasting: a row, a column, a 0-d array, from Fortran order too.
    row, col = np.array([10.0, 20.0, 30.0]), np.array([[100.0], [200.0]])
    for order in "CF":
        a = np.asarray(m, order=order)
        run_case("row_%s" % order, "c = a + b", {"a": a, "b": row}, {"c": np.add(a, row)})
        run_case("column_%s" % order, "c = a + b", {"a": a, "b": col}, {"c": np.add(a, col)})
    z = np.array(2.5)
    run_case("zero_d_input", "c = a * z", {"a": m, "z": z}, {"c": m * z})
    run_case("zero_d_only", "c = z * 2 + w", {"z": z, "w": np.array(1.0)},
             {"c": np.array(z * 2 + 1.0)})
    big = np.arange(2.0).reshape((1,) * 63 + (2,))
    run_case("dims_64", "c = a + 1", {"a": big}, {"c": big + 1})
    # In place: the array keeps its own order.
    f = np.asfortranarray(m)
    run_case("in_place_fortran", "a += b", {"a": f, "b": row}, {"a": np.add(f, row)},
             outs=("a",))
    # A mismatch: the library's message, both shapes and the axis, exit 66.
    for t in TARGETS:
        rc, _, err = jitc("-q", "--in", "a=" + save("mm_a.npy", m), "--in",
                          "b=" + save("mm_b.npy", np.arange(4.0)), "c = a + b", target=t)
        want = "'a' has shape (2,3) and 'b' has shape (4,) (axis 1 of the result: 3 against 4)"
        result("mismatch.%s" % t, None if rc == 66 and want in err else
               "exit %d: %s" % (rc, err.strip()[:300]))
        rc, _, err = jitc("-q", "--in", "a=" + save("ip_a.npy", row), "--in",
                          "b=" + save("ip_b.npy", m), "a += b", target=t)
        result("in_place_grows.%s" % t, None if rc == 66 and "broadcast" in err else
               "exit %d: %s" % (rc, err.strip()[:300]))


def test_order_rule():
    """The outputs' order is NumPy's for order='K', over random cases."""
    rnd = random.Random(21)
    cases = []
    for _ in range(30):
        nd = rnd.randint(2, 4)
        shape = [rnd.choice([1, 2, 3]) for _ in range(nd)]
        nops = rnd.randint(2, 3)
        ops = []
        for _ in range(nops):
            d = rnd.randint(1, nd)
            sh = [1 if rnd.random() < 0.25 else x for x in shape[nd - d:]]
            a = np.arange(float(np.prod(sh))).reshape(sh) + len(ops)
            ops.append(np.asfortranarray(a) if rnd.random() < 0.5 else a)
        cases.append(ops)
    for t in TARGETS:
        why = None
        for k, ops in enumerate(cases):
            names = "abd"[:len(ops)]
            it = np.nditer(ops + [None], op_flags=[["readonly"]] * len(ops) +
                           [["writeonly", "allocate"]], order="K")
            want = it.operands[-1]
            want[...] = sum(ops)
            if len(ops) == 2 and order_of(np.add(*ops)) != order_of(want):
                why = "np.add and the iterator disagree on case %d" % k
                break
            args = ["-q", "--out", "c=" + path("order_c.npy")]
            for n, a in zip(names, ops):
                args += ["--in", "%s=%s" % (n, save("order_%s.npy" % n, a))]
            rc, _, err = jitc(*(args + ["c = " + " + ".join(names)]), target=t)
            why = ("case %d: exit %d %s" % (k, rc, err.strip()[:200]) if rc else
                   same_file(path("order_c.npy"), want))
            if why:
                why = "shapes %s orders %s: %s" % ([a.shape for a in ops],
                                                    [order_of(a) for a in ops], why)
                break
        result("order_rule.%s" % t, why)


def test_scalars_and_sizes():
    for t in TARGETS:
        rc, out, err = jitc("-D", "x=1.5", "--out", "y=" + path("y.npy"), "y = 2 * 3 + x",
                            target=t)
        why = "exit %d: %s" % (rc, err.strip()[:300]) if rc else None
        why = why or (None if "y = 7.5\n" in out and "()" in out else "report: " + out)
        result("scalars_alone.%s" % t, why or same_file(path("y.npy"), np.array(7.5)))
        rc, out, err = jitc("-q", "--out", "y=" + path("y2.npy"), "y = arcsin(0.5)", target=t)
        result("scalar_function.%s" % t, "exit %d: %s" % (rc, err.strip()[:300]) if rc else
               same_file(path("y2.npy"), np.array(np.arcsin(0.5))))
        # -n as a shape: generated inputs in C order, as NumPy reshapes them.
        rc, out, err = jitc("-q", "-n", "2x3x4", "--in", "a=arange", "--in", "r=rand:3",
                            "--out", "c=" + path("n_c.npy"), "c = a * 2 + r", target=t)
        np.random.seed(3)
        want = np.arange(24.0).reshape(2, 3, 4) * 2 + np.random.rand(24).reshape(2, 3, 4)
        result("size_shape.%s" % t, "exit %d: %s" % (rc, err.strip()[:300]) if rc else
               same_file(path("n_c.npy"), want))
        # No input: flat over -n's elements, i numbering them in C order.
        rc, out, err = jitc("-q", "-n", "3x4", "--out", "c=" + path("n_i.npy"), "c = i * 2",
                            target=t)
        result("size_flat.%s" % t, "exit %d: %s" % (rc, err.strip()[:300]) if rc else
               same_file(path("n_i.npy"), np.arange(12).reshape(3, 4) * 2))
        # Generated inputs take the files' shape without -n, broadcast with it.
        m = np.arange(6.0).reshape(2, 3)
        rc, out, err = jitc("-q", "--in", "a=" + save("gm.npy", m), "--out",
                            "c=" + path("g_c.npy"), "c = a + b", target=t)
        result("generated_like_files.%s" % t, "exit %d: %s" % (rc, err.strip()[:300]) if rc
               else same_file(path("g_c.npy"), m + 1))
        rc, out, err = jitc("-q", "-n", "4x1x3", "--in", "a=" + save("gm.npy", m), "--in",
                            "b=arange", "--out", "c=" + path("g_b.npy"), "c = a + b", target=t)
        result("generated_broadcast.%s" % t, "exit %d: %s" % (rc, err.strip()[:300]) if rc
               else same_file(path("g_b.npy"), m + np.arange(12.0).reshape(4, 1, 3)))
    for bad in ("2x", "x3", "2xx3", "2x-1", "1.5x2", "x".join(["1"] * 65),
                "4294967296x4294967296x4"):
        rc, _, err = jitc("-q", "-n", bad, "c = a")
        result("size_bad_%s" % bad[:12], None if rc == 64 and "or a shape" in err else
               "exit %d: %s" % (rc, err.strip()[:200]))
    rc, _, err = jitc("-q", "-n", "7", "--in", "g=" + save("g5.npy", np.ones(5)), "c = g + 1")
    result("size_disagrees", None if rc == 66 and "disagrees" in err else
           "exit %d: %s" % (rc, err.strip()[:200]))
    rc, out, _ = jitc("-n", "0x3", "c = a + 1")
    result("size_empty", None if rc == 0 and "c = []" in out and "(0, 3)" in out else out)


def printed(out, name):
    """The text printed for output name, the report's last."""
    mark = "\n         %s = " % name
    return out[out.index(mark) + len(mark):].rstrip("\n") if mark in out else None


def numpy_text(a, name):
    """np.array2string with jitc's element spelling (no padding, no wrap)."""
    def spell(x):
        if a.dtype.kind in "iub":
            return str(x)
        return np.format_float_positional(x, trim=".")
    return np.array2string(a, separator=" ", threshold=1000, edgeitems=3,
                           max_line_width=10 ** 9, prefix=" " * (12 + len(name)),
                           formatter={"all": spell})


def test_printing():
    cases = {
        "p2": np.arange(6).reshape(2, 3),
        "p3": np.arange(24).reshape(2, 3, 4),
        "p4": np.arange(16.0).reshape(2, 2, 2, 2) / 2,
        "pbig": np.arange(40 * 40).reshape(40, 40),
        "prows": np.arange(2000).reshape(1000, 2),
        "pcube": np.arange(2 * 3 * 400).reshape(2, 3, 400),
        "pdeep": np.arange(8 * 2 * 2 * 200).reshape(8, 2, 2, 200),
        "pf": np.asfortranarray(np.arange(12).reshape(3, 4)),
        "pfbig": np.asfortranarray(np.arange(50 * 30).reshape(50, 30)),
        "p1": np.arange(2000),
    }
    for t in TARGETS:
        why = None
        for name, a in cases.items():
            rc, out, err = jitc("--in", "x=" + save(name + ".npy", a), "%s = x" % name,
                                target=t)
            got = printed(out, name)
            want = numpy_text(a, name)
            if rc or got != want:
                why = "%s: exit %d\n%s\n--- NumPy:\n%s" % (name, rc, got or out + err, want)
                break
        result("print_numpy.%s" % t, why)
    # A literal golden: what the report shows, continuation lines under the
    # first row, a blank line between blocks.
    rc, out, _ = jitc("-n", "2x2x3", "--dtype", "i64", "--in", "a=arange", "c = a * 2")
    golden = ("         c = [[[0 2 4]\n"
              "               [6 8 10]]\n"
              "\n"
              "              [[12 14 16]\n"
              "               [18 20 22]]]\n")
    result("print_golden", None if golden in out else out)
    f = np.asfortranarray(np.arange(6).reshape(2, 3))
    rc, out, _ = jitc("--in", "x=" + save("pf6.npy", f), "c = x")
    result("print_fortran_logical", None if "c = [[0 1 2]\n              [3 4 5]]" in out
           else out)
    # 0-d as NumPy prints one (str): a scalar's spelling.
    for prog, want in (("c = z * 2", "c = 5.0\n"), ("c = z < 3", "c = True\n")):
        rc, out, _ = jitc("--in", "z=" + save("pz.npy", np.array(2.5)), prog)
        result("print_zero_d_%s" % want.split()[-1].strip("."), None if want in out else out)
    rc, out, _ = jitc("-D", "x=2", "c = x * 1.5 + 1j")
    result("print_zero_d_complex", None if "c = (3+1j)\n" in out else out)
    # 1-D printing is as it was.
    rc, out, _ = jitc("-n", "5", "--dtype", "i32", "--in", "a=arange", "c = a")
    result("print_1d_unchanged", None if "         c = [0 1 2 3 4]\n" in out else out)


def test_json():
    m = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    rc, out, err = jitc("--json", "--in", "a=" + save("j.npy", m), "-D", "k=2",
                        "c = a * k; s = sum(a)")
    rc, out2, err2 = jitc("--json", "-D", "k=2", "y = k + 1")
    out, err = out.strip() + "\n", err + err2
    try:
        rec = json.loads(out)
        arrays = {x["name"]: x for x in rec["arrays"] + json.loads(out2)["arrays"]}
        why = None
        if arrays["c"]["value"] != (m * 2).tolist() or arrays["c"]["shape"] != [2, 3]:
            why = "c: %r" % arrays["c"]
        elif arrays["s"]["value"] != 15.0 or arrays["y"]["value"] != 3 or \
                arrays["y"]["shape"] != []:
            why = "s, y: %r %r" % (arrays["s"], arrays["y"])
        elif "value" in arrays["a"]:
            why = "an input has a value"
    except (ValueError, KeyError) as e:
        why = "%s: %s %s" % (e, out[:300], err[:300])
    result("json_values", why)
    rc, out, err = jitc("--json", "-n", "40x30", "c = a + 1")
    rec = json.loads(out) if rc == 0 else {}
    result("json_large_no_value",
           None if rc == 0 and "value" not in rec["arrays"][1] and
           rec["arrays"][1]["shape"] == [40, 30] else out + err)


def test_targets_all():
    m = np.asfortranarray(np.random.default_rng(2).standard_normal((30, 40)))
    rc, out, err = jitc("-t", "all", "--in", "a=" + save("all_a.npy", m), "--in",
                        "b=" + save("all_b.npy", np.arange(40.0)), "c = exp(a) + b",
                        target="all")
    result("targets_all", None if rc == 0 and "c = [[" in out else
           "exit %d: %s %s" % (rc, out[-500:], err[:300]))


# ---- .npz ----

def zip_bytes(members, method=zipfile.ZIP_STORED):
    p = path("tmp.npz")
    with zipfile.ZipFile(p, "w", method) as z:
        for name, data in members:
            z.writestr(name, data)
    with open(p, "rb") as f:
        return f.read()


def npy_bytes(a):
    return saved_bytes(a)


def zip64_by_hand(name, data):
    """A stored archive of one member with ZIP64 records everywhere (its
    sizes and offset in the ZIP64 extra field, a ZIP64 end record)."""
    crc = zlib.crc32(data)
    n = name.encode()
    local = struct.pack("<IHHHHHIIIHH", 0x04034b50, 45, 0, 0, 0, 0x21, crc, 0xffffffff,
                        0xffffffff, len(n), 20) + n + struct.pack("<HHQQ", 1, 16, len(data),
                                                                   len(data))
    extra = struct.pack("<HHQQQ", 1, 24, len(data), len(data), 0)
    cd = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 45, 45, 0, 0, 0, 0x21, crc,
                     0xffffffff, 0xffffffff, len(n), len(extra), 0, 0, 0, 0,
                     0xffffffff) + n + extra
    cd_off = len(local) + len(data)
    end64 = struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, 1, 1, len(cd), cd_off)
    loc = struct.pack("<IIQI", 0x07064b50, 0, cd_off + len(cd), 1)
    end = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xffff, 0xffff, 0xffffffff, 0xffffffff, 0)
    return local + data + cd + end64 + loc + end


def test_npz_in():
    a = np.arange(6.0).reshape(2, 3)
    b = np.asfortranarray(np.arange(12, dtype=np.int32).reshape(3, 4))
    r = np.array([1.0, 2.0, 3.0])
    np.savez(path("s.npz"), a=a, b=b, r=r, **{"not-a-name": np.zeros(2)})
    np.savez_compressed(path("c.npz"), a=a, b=b, r=r)
    for t in TARGETS:
        for kind in ("s", "c"):
            f = path(kind + ".npz")
            checks = (
                ("by_name", ["--in", "x=%s:a" % f, "--in", "y=%s:r" % f], "c = x + y", a + r),
                ("default_name", ["--in", "a=" + f, "--in", "r=" + f], "c = a * r", a * r),
                ("whole", ["--in", f], "c = a - r", a - r),
                ("fortran", ["--in", f], "c = b * 2", b * 2),
            )
            for what, args, prog, want in checks:
                out = path("npz_out.npy")
                rc, _, err = jitc(*(["-q"] + args + ["--out", "c=" + out, prog]), target=t)
                result("npz_in_%s_%s.%s" % ({"s": "stored", "c": "compressed"}[kind], what, t),
                       "exit %d: %s" % (rc, err.strip()[:300]) if rc else same_file(out, want))
    # An array of the archive that the program writes first is not bound:
    # the output keeps its own type (int32 here, not the archive's float64).
    np.savez(path("w.npz"), a=np.arange(4, dtype=np.int32), c=np.zeros(4))
    rc, _, err = jitc("-q", "--in", path("w.npz"), "--out", "c=" + path("w_c.npy"), "c = a * 2")
    result("npz_whole_output_unbound", "exit %d: %s" % (rc, err.strip()[:300]) if rc else
           same_file(path("w_c.npy"), np.arange(4, dtype=np.int32) * 2))
    # A name the archive lacks: exit 66, the names it holds.
    rc, _, err = jitc("-q", "--in", "x=%s:zz" % path("s.npz"), "c = x")
    result("npz_missing_name", None if rc == 66 and "holds no array 'zz'" in err and
           "'a', 'b', 'r'" in err else "exit %d: %s" % (rc, err.strip()))
    rc, _, err = jitc("-q", "--in", "q=" + path("s.npz"), "c = q")
    result("npz_missing_default_name", None if rc == 66 and "holds no array 'q'" in err else
           "exit %d: %s" % (rc, err.strip()))
    # Bad archives: exit 66 and a message, never a crash.
    good = open(path("s.npz"), "rb").read()
    comp = open(path("c.npz"), "rb").read()
    at = comp.index(b"a.npy") + 5 + 20  # inside a's deflate stream (after its ZIP64 extra)
    bad_crc = bytearray(good)
    k = bytes(good).index(b"\x93NUMPY") + 130  # in a's data
    bad_crc[k] ^= 1
    cases = {
        "truncated": (good[:len(good) // 2], "no zip directory"),
        "empty": (b"", "not a .npz file (too short"),
        "not_zip": (b"hello world, not a zip archive" * 10, "no zip directory"),
        "bad_crc": (bytes(bad_crc), "CRC-32"),
        "bad_deflate": (comp[:at] + b"\xff" * 40 + comp[at + 40:], "corrupt"),
        "not_npy": (zip_bytes([("a.npy", b"just text, not an array")]),
                    "bad_not_npy.npz:a: not a .npy file"),
        "bzip2": (zip_bytes([("a.npy", npy_bytes(a))], zipfile.ZIP_BZIP2), "method 12"),
        "dir_outside": (good[:-6] + struct.pack("<IH", 0x7fffffff, 0), "not in the file"),
    }
    for name, (data, words) in cases.items():
        f = path("bad_%s.npz" % name)
        with open(f, "wb") as fh:
            fh.write(data)
        rc, _, err = jitc("-q", "--in", "a=" + f, "c = a")
        result("npz_bad_%s" % name, None if rc == 66 and words in err and "jitc: " in err else
               "exit %d: %s" % (rc, err.strip()[:300]))
    with open(path("z64.npz"), "wb") as fh:
        fh.write(zip64_by_hand("a.npy", npy_bytes(a)))
    with zipfile.ZipFile(path("z64.npz")) as z:  # the hand-made archive is a good one
        ok = z.testzip() is None and np.array_equal(np.load(path("z64.npz"))["a"], a)
    rc, _, err = jitc("-q", "--in", "a=" + path("z64.npz"), "--out", "c=" + path("z64.npy"),
                      "c = a")
    result("npz_zip64", "the archive made by hand is bad" if not ok else
           "exit %d: %s" % (rc, err.strip()[:300]) if rc else same_file(path("z64.npy"), a))


def test_npz_out():
    a = np.arange(6.0).reshape(2, 3)
    src = save("o_a.npy", np.asfortranarray(a))
    for t in TARGETS:
        out = path("all.npz")
        rc, _, err = jitc("-q", "--in", "a=" + src, "--out", out,
                          "c = a + 1; d = a * 2; s = sum(a)", target=t)
        why = "exit %d: %s" % (rc, err.strip()[:300]) if rc else None
        if not why:
            with zipfile.ZipFile(out) as z:
                names = sorted(z.namelist())
                why = None if z.testzip() is None else "bad CRC"
            z = np.load(out)
            want = {"c": a + 1, "d": a * 2, "s": np.array(15.0)}
            why = why or (None if names == ["c.npy", "d.npy", "s.npy"] else names)
            for k, v in want.items():
                why = why or (None if np.array_equal(z[k], v) and z[k].shape == v.shape
                              else "%s: %r" % (k, z[k]))
            why = why or (None if z["c"].flags.f_contiguous else "c lost Fortran order")
        result("npz_out_whole.%s" % t, why)
        out = path("some.npz")
        rc, _, err = jitc("-q", "--in", "a=" + src, "--out", "c=" + out, "--out",
                          "d=%s:twice" % out, "c = a + 1; d = a * 2", target=t)
        why = "exit %d: %s" % (rc, err.strip()[:300]) if rc else None
        if not why:
            z = np.load(out)
            why = None if sorted(z.files) == ["c", "twice"] and \
                np.array_equal(z["twice"], a * 2) else repr(z.files)
        result("npz_out_named.%s" % t, why)
    # Atomic: a run that fails leaves an existing archive as it was.
    out = path("keep.npz")
    np.savez(out, old=np.ones(3))
    before = open(out, "rb").read()
    rc, _, err = jitc("-q", "--in", "a=" + src, "--out", out, "--out",
                      "d=" + path("nodir/d.npy"), "c = a + 1; d = a")
    left = [f for f in os.listdir(TMP) if ".tmp" in f or f.startswith(".keep")]
    result("npz_out_atomic", None if rc == 73 and open(out, "rb").read() == before and
           not left else "exit %d, left %s: %s" % (rc, left, err.strip()[:200]))
    rc, _, err = jitc("-q", "--in", "a=" + src, "--out", "c=" + path("x.npz"), "--out",
                      "d=%s:c" % path("x.npz"), "c = a + 1; d = a")
    result("npz_out_same_member", None if rc == 64 and "two arrays named 'c'" in err else
           "exit %d: %s" % (rc, err.strip()))
    rc, _, err = jitc("-q", "--in", "a=" + src, "--out", "c=" + path("y.npy"), "--out",
                      "d=" + path("y.npy"), "c = a + 1; d = a")
    result("npy_out_twice", None if rc == 64 and "written twice" in err else
           "exit %d: %s" % (rc, err.strip()))


def test_axis_results():
    """Reductions over an axis from the command line: the results' shapes
    and values NumPy's, in the .npy written and as printed; axis=None is
    every axis, as in NumPy."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 3, 5)).astype(np.float32)
    f = np.asfortranarray(rng.integers(-9, 9, (3, 4)).astype(np.int16))
    run_case("axis1", "s = sum(x, axis=1); m = argmax(x, axis=1)", {"x": x},
             {"s": x.sum(axis=1, dtype=np.float64).astype(np.float32), "m": x.argmax(axis=1)},
             outs=("s", "m"))
    run_case("axis_keep", "s = max(x, axis=(0, 2), keepdims=True)", {"x": x},
             {"s": x.max(axis=(0, 2), keepdims=True)}, outs=("s",))
    run_case("axis_none_keep", "s = min(x, axis=None, keepdims=True)", {"x": x},
             {"s": x.min(keepdims=True)}, outs=("s",))
    run_case("axis_fortran", "s = sum(f, axis=0); p = prod(f, axis=0)", {"f": f},
             {"s": f.sum(axis=0), "p": f.prod(axis=0)}, outs=("s", "p"))
    rc, out, err = jitc("--in", "a=arange", "-n", "2x3", "m = max(a, axis=1)")
    want = numpy_text(np.arange(6.0).reshape(2, 3).max(axis=1), "m")
    result("axis_printed", None if rc == 0 and want in out else
           "exit %d, printed %r, NumPy's %r" % (rc, printed(out, "m"), want))


def main():
    if not os.path.exists(JITC):
        print("skip cli_nd: no %s" % JITC)
        return 0
    try:
        test_inputs()
        test_order_rule()
        test_scalars_and_sizes()
        test_printing()
        test_json()
        test_targets_all()
        test_npz_in()
        test_npz_out()
        test_axis_results()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
