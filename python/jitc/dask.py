"""jitc.dask: a jitc program over Dask arrays, chunk by chunk.

    >>> import dask.array as da, jitc.dask
    >>> a = da.random.random(10_000_000, chunks=1_000_000)
    >>> b = da.ones_like(a)
    >>> c = jitc.dask.evaluate("c = 2*a + b")      # a Dask array; nothing ran yet
    >>> c.sum().compute()

``evaluate`` does to Dask arrays of any size what ``jitc.evaluate`` does to
one array, on any Dask scheduler (threads, processes, ``dask.distributed``
on one machine or many): the program runs once per block, through
``jitc.evaluate`` in the worker, with ``dask.array.blockwise`` underneath.
What it needs of a worker is that it imports jitc (the package installed,
or on its PYTHONPATH).

- Arrays: Dask arrays, and NumPy or CuPy arrays (made Dask arrays with the
  chunks of the first Dask array).  They must have one shape (jitc does
  not broadcast); their chunks are unified (rechunked to common blocks) as
  ``blockwise`` does.  A block that is not contiguous, or not in the order
  of the others, is copied to C order before jitc sees it, and one whose
  elements are not aligned (as a worker may receive it) is copied too.
- Scalars pass through to every block, typed as ``jitc.evaluate`` types
  them: Python numbers are weak, NumPy scalars and 0-d arrays (Dask ones
  included) typed.
- Names not given are taken from the caller's variables, as in
  ``jitc.evaluate``.
- Dask arrays of CuPy chunks run on ``cuda`` (``target=None`` lets each
  block choose, as ``jitc.evaluate`` does), and the results are Dask
  arrays of CuPy chunks: their ``meta`` is a CuPy array.
- Results: one output, a Dask array; several, a dict of Dask arrays by
  name, computed together in one task per block (one pass over the
  inputs), then split: compute them together, with
  ``dask.compute(*d.values())``, to make that pass once.  Dask arrays are
  immutable, so an in-place statement (``a[i] += 1``) does not change the
  array passed: the new ``a`` is returned like an output (each block
  updates a copy of its chunk, never a chunk another task may read).  An
  output given by name fixes its dtype, as in ``jitc.evaluate``; its
  values are not read.
- Dtypes and errors come before any computing: the program is checked
  once on the client (on ``interp``, whose typing every target shares), so
  a program error raises ``jitc.ProgramError`` when the graph is built,
  with the dtypes of the outputs taken from that check.
"""
import operator
import re
import sys

import numpy as _np
import dask.array as _da
from dask.array.utils import meta_from_array as _meta_from_array
from dask.base import tokenize as _tokenize

import jitc as _jitc

__all__ = ["evaluate"]

# The checker's words for a name it does not know (jitc.evaluate reads the
# same ones to look names up in the caller's variables).
_UNKNOWN = re.compile(r"error: unknown name '(\w+)'|error: '(\w+)' is read before it is assigned")

# What a block does with the chunk of an argument before jitc sees it.
_PASS, _COPY, _EMPTY = 0, 1, 2


def _is_array(v):
    return (hasattr(v, "shape") and hasattr(v, "dtype")
            and not isinstance(v, _np.generic) and len(v.shape) > 0)


def _example(v):
    """What jitc.compile's signature takes for a value: an array's dtype (the
    check runs on the client, where the array's kind does not matter), a
    0-d Dask array's scalar type (typed), anything else as it is."""
    if isinstance(v, _da.Array):
        return _np.dtype(v.dtype).type(0) if v.ndim == 0 else _np.dtype(v.dtype)
    if _is_array(v):
        try:
            return _np.dtype(v.dtype)
        except TypeError:
            return v
    return v


def _check(program, names, frame):
    """Checks the program with the names given, adding the names it does
    not know from the caller's variables (locals, then globals) until it
    checks; returns the kernel (of interp: its types are every target's)."""
    names = dict(names)
    while True:
        try:
            sig = {nm: _example(v) for nm, v in names.items()}
            return _jitc.compile(program, "interp", **sig), names
        except _jitc.ProgramError as e:
            unknown = [a or b for a, b in _UNKNOWN.findall(str(e))]
            unknown = [nm for nm in dict.fromkeys(unknown) if nm not in names]
            if not unknown or frame is None:
                raise
            for nm in unknown:
                if nm in frame.f_locals:
                    names[nm] = frame.f_locals[nm]
                elif nm in frame.f_globals:
                    names[nm] = frame.f_globals[nm]
                else:
                    raise


def _run_block(spec, *chunks):
    """One block: jitc.evaluate on the chunks, its outputs as a tuple (or
    the one output).  Runs in the workers: module-level, to be pickled."""
    program, target, names, modes, outs = spec
    bound = {}
    arrays = []
    for nm, mode, c in zip(names, modes, chunks):
        if mode == _COPY:
            c = c.copy()
        elif mode == _EMPTY:
            c = _empty_like(c)
        if _is_array(c):
            arrays.append(nm)
            # A chunk a worker received may lie at any offset of the
            # message it came in; jitc takes aligned elements.
            if not getattr(c.flags, "aligned", True):
                c = c.copy(order="K")
        bound[nm] = c
    # jitc takes contiguous arrays of one order; Dask's chunks may be
    # views (transposes, steps, broadcasts).
    flags = [bound[nm].flags for nm in arrays]
    if not (all(f.c_contiguous for f in flags) or all(f.f_contiguous for f in flags)):
        for nm in arrays:
            if not bound[nm].flags.c_contiguous:
                bound[nm] = bound[nm].copy(order="C")
    r = _jitc.evaluate(program, target, **bound)
    if len(outs) == 1:
        return r
    return tuple(r[nm] for nm in outs)


def _empty_like(c):
    mod = sys.modules.get(type(c).__module__.split(".")[0])
    empty = getattr(mod, "empty_like", None) or _np.empty_like
    return empty(c)


def evaluate(program, target=None, **names):
    """Runs ``program`` over Dask arrays, block by block; returns Dask arrays.

    ``names`` bind arrays (Dask, NumPy or CuPy) and scalars; names not given
    are taken from the caller's local and global variables.  ``target``:
    'interp', 'cpu', 'cuda' or None (each block chooses as ``jitc.evaluate``
    does: ``cuda`` for CuPy chunks, else ``jitc.default_target()``).

    Returns the output as a Dask array, or a dict of Dask arrays by name when
    the program assigns several (in-place ones such as ``a[i] += 1``
    included: the array passed is not changed), or None when it assigns
    none.  Nothing is computed here: the program is checked, and the
    outputs' dtypes found, on the client, so a program error, a bad value or
    arrays of different shapes raise now (``jitc.ProgramError``,
    ``jitc.InputError``, ``jitc.UsageError``), not at compute time.
    """
    if target is not None:
        _jitc.available(target)  # an unknown target: UsageError now
    frame = sys._getframe(1)
    try:
        kernel, names = _check(program, names, frame)
    finally:
        del frame
    roles = {nm: role for nm, role, dt in kernel.arrays}
    dtypes = {nm: _np.dtype(dt) for nm, role, dt in kernel.arrays}
    outs = tuple(nm for nm, role, dt in kernel.arrays if role != "input")
    if not outs:
        return None
    params = [nm for nm, _, _ in kernel.arrays] + [nm for nm, _ in kernel.scalars]
    for nm in names:
        if nm not in params:  # as jitc.evaluate, which would say so in every block
            raise _jitc.UsageError("'%s' is not a name the program uses" % nm)
    params = [nm for nm in kernel.params if nm in params]
    arrays = [nm for nm in params if _is_array(names[nm])]
    if not arrays:
        raise _jitc.InputError("jitc.dask.evaluate: no array among the names (%s): give at "
                               "least one Dask array" % ", ".join(params))
    shapes = {nm: tuple(names[nm].shape) for nm in arrays}
    shape = shapes[arrays[0]]
    known = all(not _np.isnan(s) for sh in shapes.values() for s in sh)
    if known and any(sh != shape for sh in shapes.values()):
        raise _jitc.InputError("arrays of different shapes (jitc does not broadcast): " +
                               ", ".join("%s %s" % (nm, sh) for nm, sh in shapes.items()))
    ref = next((names[nm] for nm in arrays if isinstance(names[nm], _da.Array)), None)
    chunks = ref.chunks if ref is not None else "auto"
    ind = tuple(range(len(shape)))
    args, modes = [], []
    for nm in params:
        v = names[nm]
        if _is_array(v) and not isinstance(v, _da.Array):
            v = _da.from_array(v, chunks=chunks)
            ref = ref if ref is not None else v
        if isinstance(v, _da.Array):
            args += [v, ind if v.ndim else ()]
        else:
            args += [v, None]
        role = roles.get(nm, "input")
        modes.append(_COPY if role == "inout" else _EMPTY if role == "output" else _PASS)
    spec = (program, target, tuple(params), tuple(modes), outs)
    token = _tokenize(spec, *args)
    meta = ref._meta
    if len(outs) == 1:
        dt = dtypes[outs[0]]
        return _da.blockwise(_run_block, ind, spec, None, *args, name="jitc-" + token,
                             dtype=dt, meta=_meta_from_array(meta, len(ind), dt))
    both = _da.blockwise(_run_block, ind, spec, None, *args, name="jitc-" + token,
                         dtype=object, meta=_np.empty((0,) * len(ind), dtype=object))
    return {nm: _da.blockwise(operator.getitem, ind, both, ind, k, None,
                              name="jitc-%s-%s" % (nm, token), dtype=dtypes[nm],
                              meta=_meta_from_array(meta, len(ind), dtypes[nm]))
            for k, nm in enumerate(outs)}
