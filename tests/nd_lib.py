"""nd_lib.py -- what the tests of NumPy's array model share (t_nd.py,
t_axis.py): jitc_array through ctypes, a runner over jitc_run_arrays that
allocates outputs and results with the shapes the library gives
(jitc_array_shape), views of every kind, random shapes and broadcast
partners, and a comparison that tells NaN and the sign of zero apart."""
import ctypes as C
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reduce_lib as RL  # noqa: E402

MAXDIMS = 64


Array = RL.Array


L = RL.lib()
L.jitc_array_shape.argtypes = [C.c_void_p, C.c_void_p, C.POINTER(Array), C.c_int,
                               C.POINTER(C.c_int), C.POINTER(C.c_int64)]
L.jitc_kernel_reduction_axes.argtypes = [C.c_void_p, C.c_int, C.POINTER(C.c_int),
                                         C.POINTER(C.c_int), C.POINTER(C.c_int)]


describe = RL.describe


class Run:
    """A context; run(prog, {name: array}, target) compiles and runs with
    NumPy outputs; `threads` as jitc_options.threads."""

    def __init__(self, threads=0):
        self.r = RL.Runner()
        self.threads = threads

    def close(self):
        self.r.close()

    def kernel(self, prog, inputs, target):
        decl = {nm: np.empty(1, a.dtype) for nm, a in inputs.items()}
        return self.r.compile(prog, decl, target, self.threads)

    def roles(self, k):
        out = []
        for j in range(L.jitc_kernel_array_count(k)):
            nm, role, dt = C.c_char_p(), C.c_int(), C.c_int()
            L.jitc_kernel_array(k, j, C.byref(nm), C.byref(role), C.byref(dt))
            out.append((nm.value.decode(), role.value, RL.DTYPES[dt.value]))
        return out

    def check(self, st):
        if st:
            raise RL.JitcError(st, L.jitc_errmsg(self.r.ctx).decode())

    def shape(self, k, inputs, index=None, outs=None):
        """The broadcast shape, or with index the shape of that array (in a
        run with the outputs of outs, by name, given)."""
        keep = []
        arrs = self.arrays(k, inputs, outs or {}, keep)
        nd, shape = C.c_int(), (C.c_int64 * MAXDIMS)()
        if index is None:
            self.check(L.jitc_broadcast_shape(self.r.ctx, k, arrs, C.byref(nd), shape))
        else:
            self.check(L.jitc_array_shape(self.r.ctx, k, arrs, index, C.byref(nd), shape))
        return tuple(shape[d] for d in range(nd.value))

    def arrays(self, k, inputs, outs, keep):
        roles = self.roles(k)
        arrs = (Array * max(1, len(roles)))()
        for j, (nm, role, dt) in enumerate(roles):
            a = inputs.get(nm, outs.get(nm))
            if a is not None:
                arrs[j] = describe(a, keep)
        return arrs

    def run(self, prog, inputs, target, outs=None):
        """Runs prog; returns {name: array} of the outputs and results.
        outs: arrays to write into, by name (else allocated, C order)."""
        k = self.kernel(prog, inputs, target)
        try:
            outs_given = dict(outs or {})
            outs = dict(outs_given)
            for j, (nm, role, dt) in enumerate(self.roles(k)):
                if nm not in inputs and nm not in outs:
                    outs[nm] = np.zeros(self.shape(k, inputs, j, outs_given), dt)
            keep = []
            arrs = self.arrays(k, inputs, outs, keep)
            self.check(L.jitc_run_arrays(self.r.ctx, k, arrs, None, None))
            return outs
        finally:
            L.jitc_kernel_free(k)


def runs(R, prog, inputs_list, target):
    """The results of prog over each of inputs_list (dicts of the same
    names and types), compiled once: {name: array} each."""
    k = R.kernel(prog, inputs_list[0], target)
    try:
        out = []
        for inputs in inputs_list:
            outs = {nm: np.zeros(R.shape(k, inputs, j), dt)
                    for j, (nm, role, dt) in enumerate(R.roles(k)) if nm not in inputs}
            keep = []
            R.check(L.jitc_run_arrays(R.r.ctx, k, R.arrays(k, inputs, outs, keep), None, None))
            out.append(outs)
        return out
    finally:
        L.jitc_kernel_free(k)


def same(x, y):
    """Equal values, shapes and types, NaN equal to NaN, -0.0 apart from 0.0."""
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    if x.dtype.kind in "fc":
        parts = [(x.real, y.real), (x.imag, y.imag)] if x.dtype.kind == "c" else [(x, y)]
        return all(bool(np.all((u == v) & (np.signbit(u) == np.signbit(v)) |
                               (np.isnan(u) & np.isnan(v)))) for u, v in parts)
    return bool(np.array_equal(x, y))


def random_shape(rng, nd, size_max=400, extents=(1, 1, 2, 3, 4, 5, 7, 8, 16)):
    shape = []
    for _ in range(nd):
        shape.append(int(rng.choice(extents)))
    while np.prod(shape, dtype=np.int64) > size_max:
        shape[int(rng.integers(nd))] = 1
    return tuple(shape)


def fill(rng, a):
    v = rng.standard_normal(a.shape) * 10
    if a.dtype.kind in "iub":
        v = rng.integers(-50, 50, a.shape)
        if a.dtype.kind == "b":
            v = v > 20
    a[...] = v.astype(a.dtype)
    return a


def memory_order(strides_list):
    """The order of the axes a run takes where its order is free (no `i`, no
    argmin or argmax, no axes: src/layout.c's memory_order, NumPy's
    npyiter_find_best_axis_ordering): from each array's strides over the
    broadcast shape (0 where broadcast), the axes outermost first."""
    nd = len(strides_list[0]) if strides_list else 0
    inner = list(range(nd - 1, -1, -1))
    for i0 in range(1, nd):
        pos, ax0 = i0, inner[i0]
        for i1 in range(i0 - 1, -1, -1):
            ambiguous, swap = True, False
            for st in strides_list:
                s0, s1 = abs(st[ax0]), abs(st[inner[i1]])
                if not s0 or not s1:
                    continue
                if s1 <= s0:
                    swap = False
                elif ambiguous:
                    swap = True
                ambiguous = False
            if ambiguous:
                continue
            if not swap:
                break
            pos = i1
        inner.insert(pos, inner.pop(i0))
    return inner[::-1]


def copies_in_order(arrays, full, keep_c_order=False):
    """Contiguous copies of arrays broadcast to shape `full`, laid out in the
    order a run over them takes (memory_order; C order when keep_c_order):
    a run over them gives the bits of the run over the views."""
    views = [np.broadcast_to(a, full) for a in arrays]
    perm = list(range(len(full))) if keep_c_order else memory_order([v.strides for v in views])
    return [np.ascontiguousarray(v.transpose(perm)) for v in views]


def view_of(rng, shape, dtype):
    """An array of `shape` that is some view: steps, reversal, transpose,
    Fortran order, record field, unaligned, or contiguous."""
    kind = rng.integers(7)
    if kind == 0:
        return fill(rng, np.empty(shape, dtype))
    if kind == 1:  # every other element along each axis, some reversed
        big = np.empty(tuple(2 * s for s in shape), dtype)
        sl = tuple(slice(None, None, 2) if rng.integers(2) else slice(None, None, -2)
                   for _ in shape)
        return fill(rng, big[sl + (Ellipsis,)])
    if kind == 2:  # a transpose of a contiguous array
        perm = rng.permutation(len(shape))
        inv = np.argsort(perm)
        base = np.empty(tuple(shape[p] for p in inv), dtype)
        return fill(rng, base.transpose(perm) if len(shape) else base)
    if kind == 3:
        return fill(rng, np.empty(shape, dtype, order="F"))
    if kind == 4:  # a field of a record array
        rec = np.zeros(shape, [("x", "u1"), ("v", dtype), ("w", "i2")])
        return fill(rng, rec["v"][...])
    if kind == 5:  # unaligned: one byte into a buffer
        size = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        raw = np.zeros(size + 1, np.uint8)
        return fill(rng, raw[1:].view(dtype).reshape(shape))
    base = np.empty(tuple(s + 1 for s in shape), dtype)  # view of a view
    sl = tuple(slice(1, None) for _ in shape)
    return fill(rng, base[sl + (Ellipsis,)][tuple(slice(None, None, -1) for _ in shape) +
                                            (Ellipsis,)])


def broadcast_partner(rng, shape):
    """A shape that broadcasts with `shape`: some axes 1, some leading
    axes dropped."""
    nd = len(shape)
    drop = int(rng.integers(0, nd + 1)) if nd else 0
    s = list(shape[drop:])
    for d in range(len(s)):
        if rng.integers(3) == 0:
            s[d] = 1
    return tuple(s)


def expect_input_errors(R, cases, ok, fail):
    """Runs each (program, inputs, outputs, words) of cases on interp with
    runner R: each must fail with status 3 (an input error) and a message
    holding every one of words; ok and fail report, as the caller's group."""
    for prog, inputs, outs, words in cases:
        try:
            R.run(prog, inputs, "interp", outs)
            fail("errors", f"{prog} {[a.shape for a in inputs.values()]} ran")
            continue
        except RL.JitcError as e:
            msg = str(e)
        if all(w in msg for w in words) and "status 3" in msg:
            ok(f"errors: {msg.split(': ', 1)[1][:70]}")
        else:
            fail("errors", f"{prog}: {msg!r} lacks one of {words} or status 3")
