"""fuzz_shapes.py -- the differential fuzzer's programs over arrays of any
shape (tests/fuzz_diff.py): some programs run through the Python package
(jitc.evaluate) on random broadcast shapes and strided views instead of the
command line's flat arrays.

- A program of no input array gets its outputs given, strided views of
  shape S (the library takes the run's shape from them, as NumPy's out=).
- The shape of the run, S: 1 to 4 axes of extents 0 to 5, extents 0 and 1
  among them.  Each input's shape broadcasts to S (leading axes dropped,
  extents made 1; one axis at least, since jitc.evaluate takes a 0-d array
  as a typed scalar), one of them has S itself, and an array updated in place
  (`x op= ...`) has S (a written array is never broadcast).
- Each array is a strided view holding its values: its axes in a random
  memory order (a transpose), each stepped by 1, 2, -1 or -2 (NumPy
  slicing), in a larger buffer; an input, now and then, a view made by
  np.broadcast_to of a smaller one (zero strides where it has one element).
- The oracle (tests/fuzz_oracle.py) runs on the arrays broadcast to S and
  laid out flat in C order, the element index `i` their position, which is
  jitc's `i` over a shape (docs/api.md); each output of jitc must have the
  shape S and its elements in C order are compared as the flat ones are.

Everything is drawn from the seed and the program's number, so a program
runs the same shapes every time (tests/fuzz_diff.py --seed S --only K).
"""
import math
import os
import pickle
import random
import re
import signal

import numpy as np

# Exit statuses of the command line, by the package's exception (the
# library's status): a refusal reads the same from either.
_STATUS = {"UsageError": 64, "ProgramError": 65, "InputError": 66, "TargetUnavailable": 69,
           "InternalError": 70, "OutOfMemory": 71, "OutputError": 73}


def package():
    """The jitc package, or the reason there is none."""
    try:
        import jitc
    except ImportError as ex:
        return None, "no jitc package (%s): build it with pip install . (tests/t_fuzz_diff.sh)" % ex
    return jitc, None


def chosen(seed, k, fraction):
    """Whether program k of the seed runs over shapes (a `fraction` of the
    programs): a random of its own, so that the other draws, and so the
    programs, stay as they are."""
    return random.Random("shapes %d %d" % (seed, k)).random() < fraction


def outputs(key, full, dtypes):
    """For a program of no input array, whose run takes its shape from the
    outputs given (NumPy's out=; without them jitc.evaluate's result is
    0-d, as NumPy's of scalars): a strided view of shape S for each output,
    of the oracle's dtype (so the outputs' dtypes are not compared there)."""
    rng = random.Random(key)
    return {n: strided(rng, np.zeros(full, dt)) for n, dt in sorted(dtypes.items())}


def shapes(rng, names, written):
    """(S, {name: shape}): the run's shape and one that broadcasts to it for
    each input of `names` (those in `written` have S, and so does one of
    the others when none is written)."""
    nd = rng.choice([1, 1, 2, 2, 3, 3, 4])
    full = tuple(0 if rng.random() < 0.06 else rng.choice([1, 2, 3, 3, 4, 5])
                 for _ in range(nd))
    out = {}
    for name in names:
        if name in written:
            out[name] = full
            continue
        # At least one axis: a 0-d array is a typed scalar to jitc.evaluate.
        drop = rng.randint(0, nd - 1) if rng.random() < 0.3 else 0
        out[name] = tuple(1 if rng.random() < 0.3 else m for m in full[drop:])
    if names and not any(s == full for s in out.values()):
        out[rng.choice(sorted(names))] = full
    return full, out


def strided(rng, values):
    """A view holding `values` (an ndarray) in a larger buffer: axes in a
    random memory order, each stepped by 1, 2, -1 or -2."""
    shape, nd = values.shape, values.ndim
    if nd == 0:  # no axis to step: a copy (indexing a 0-d view would give a scalar)
        return values.copy()
    perm = list(range(nd))
    rng.shuffle(perm)
    steps = [rng.choice([1, 1, 2, -1, -2]) for _ in range(nd)]
    base = np.zeros([shape[d] * abs(steps[d]) + rng.randint(0, 1) for d in perm], values.dtype)
    v = base.transpose(np.argsort(perm)) if nd else base
    v = v[tuple(slice(None, None, s) for s in steps)]
    v = v[tuple(slice(0, m) for m in shape)]
    v[...] = values
    return v


def used(prog, names):
    """The names of `names` the program reads or writes as arrays: bare,
    not called (a name of the language given as an input is called as the
    function), `[i]` being syntax."""
    return sorted(n for n in names if re.search(r"\b%s\b(?!\s*\()" % n,
                                                  prog.replace("[i]", "") if n == "i" else prog))


def make(seed, k, inputs, written, data):
    """Program k's arrays over shapes: (S, views, flat).  inputs: name ->
    type of the arrays the program uses; data(t, n, name): n values of
    type t for input `name`; views: the arrays jitc gets; flat: each
    broadcast to S, C order, for the oracle."""
    rng = random.Random("shape of %d %d" % (seed, k))
    full, shape_of = shapes(rng, sorted(inputs), written)
    views, flat = {}, {}
    for name in sorted(inputs):
        s = shape_of[name]
        small = s
        if name not in written and s and rng.random() < 0.25:  # zero strides
            small = tuple(1 if rng.random() < 0.5 else m for m in s)
        values = data(inputs[name], math.prod(small), name).reshape(small)
        v = strided(rng, values)
        if small != s:
            v = np.broadcast_to(v, s)
        views[name] = v
        flat[name] = np.broadcast_to(v, full).reshape(-1).copy()
    return full, views, flat


def describe(full, views):
    return "shape %s; inputs %s" % (full, ", ".join(
        "%s %s strides %s" % (n, v.shape, v.strides) for n, v in sorted(views.items())))


def run(target, prog, full, views, written, scalars, casts, np_of, words):
    """Runs the program with jitc.evaluate on the views, in a child process
    as the command line runs in one (a crash is a failure of its own, and
    the arrays written in place are the child's copies); (exit status as
    the command line's, or minus a signal's number, message, {output: its
    elements in C order})."""
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: jitc is imported here, never in the forking process
        os.close(rd)
        signal.alarm(300)  # a hang ends as the command line's timeout would
        try:
            out = _run(target, prog, full, views, written, scalars, casts, np_of, words)
        except BaseException as ex:  # noqa: BLE001 - reported, never raised
            out = (70, "fuzzer error in the child: %r" % ex, {})
        with os.fdopen(wr, "wb") as f:
            pickle.dump(out, f)
        os._exit(0)
    os.close(wr)
    with os.fdopen(rd, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status), "jitc.evaluate killed by signal %d" % os.WTERMSIG(status), {}
    return pickle.loads(data)


def _run(target, prog, full, views, written, scalars, casts, np_of, words):
    import jitc
    names = {n: v for n, v in views.items() if n in words}
    for name, text in scalars.items():
        if name not in words:
            continue
        v, _, t = text.partition(":")
        py = True if v in ("True", "true") else False if v in ("False", "false") else \
            complex(v) if "j" in v else float(v) if any(c in v for c in ".en") else int(v)
        try:
            names[name] = np_of[casts[t]].type(py) if t else py
        except (OverflowError, ValueError) as ex:
            return 64, "scalar %s: %s" % (name, ex), {}
    try:
        # By keyword, as -D and --in bind them: an output given is written
        # in its own dtype (looked up in local_dict only a name read is).
        r = jitc.evaluate(prog, {}, {}, target=target, **names)
    except jitc.Error as ex:
        status = next((s for c, s in _STATUS.items() if isinstance(ex, getattr(jitc, c))), 70)
        return status, "%s: %s" % (type(ex).__name__, ex), {}
    if not isinstance(r, dict):
        r = {written[0]: r} if len(written) == 1 else {}
    r.update({n: names[n] for n in written if n in names})  # in place
    res = {}
    for name in written:
        a = r.get(name)
        if a is None or np.shape(a) != full:
            return 70, "output %s has shape %s; the run's is %s" % (
                name, None if a is None else np.shape(a), full), {}
        res[name] = np.ascontiguousarray(a).reshape(-1)
    return 0, "", res


def self_test():
    """The draws cover what they are for: over 300 programs, shapes of 1 to
    4 axes with extents 0 and 1, broadcast inputs, negative and zero
    strides, and each flat array the view broadcast to S in C order; the
    same seed, the same shapes."""
    seen = set()
    for k in range(300):
        inputs = {"a": np.float64, "b": np.int32, "c": np.float32}
        data = (lambda dt, m, name: np.arange(m).astype(dt))
        full, views, flat = make(5, k, inputs, {"c"} if k % 3 == 0 else set(), data)
        again = make(5, k, inputs, {"c"} if k % 3 == 0 else set(), data)
        assert again[0] == full and all(again[1][n].strides == v.strides
                                        for n, v in views.items())
        seen.add("%d-D" % len(full))
        seen |= {"extent %d" % m for m in full if m < 2}
        for n, v in views.items():
            assert np.array_equal(flat[n], np.broadcast_to(v, full).reshape(-1))
            if n == "c" and k % 3 == 0:  # written: S itself, never broadcast
                assert v.shape == full and (v.size == 0 or all(s or m <= 1 for s, m in
                                                               zip(v.strides, full)))
            seen |= {"broadcast"} if v.shape != full else set()
            seen |= {"stride %s" % ("< 0" if s < 0 else "0") for s in v.strides if s <= 0}
    want = {"1-D", "2-D", "3-D", "4-D", "extent 0", "extent 1", "broadcast", "stride < 0",
            "stride 0"}
    assert want <= seen, want - seen
