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
  chunks the Dask arrays have along their axes).  Their shapes broadcast
  by NumPy's rules, as ``jitc.evaluate``'s do (a (1000, 3) array by a (3,)
  row, a (1000, 1) column): each is given to ``dask.array.blockwise`` with
  its axes aligned on the last, and its chunks are unified with the others'
  (rechunked to common blocks; an axis of extent 1 is one chunk that every
  block shares).  A block's chunks go to ``jitc.evaluate`` as they come,
  views and unaligned ones included: nothing is copied.
- Scalars pass through to every block, typed as ``jitc.evaluate`` types
  them: Python numbers are weak, NumPy scalars and 0-d arrays (Dask ones
  included) typed.
- Names not given are taken from the caller's variables, as in
  ``jitc.evaluate``, and the caller's names win there too: the caller's
  ``i`` (an array or a scalar) is not the element index, nor its ``pi`` the
  constant (docs/language.md, "Names the caller binds").
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
- Reductions (``s = sum(a*b)``, prod, min, max, mean, any, all, argmin,
  argmax) give 0-d Dask arrays (of CuPy chunks for CuPy chunks), made with
  ``dask.array.reduction``: each block, in the same task as the
  element-wise outputs, gives a partial (its own sum or extreme; for mean a
  float64 sum, complex128 for complex, and a count; for argmin and argmax
  the extreme and its index in the whole array), and Dask's tree combines
  the partials, the blocks in their order at each node, fixed by the
  number of blocks and ``split_every``: the same chunks give the same bits
  on every compute.  Float32, float16 and bfloat16 sums and means add the
  blocks' float64 sums, rounded once; complex64 ones their complex128
  sums.  min, max, argmin and argmax of complex values follow NumPy's
  order (by real part, then imaginary part; a NaN in either part first).
  Results are the NumPy scalars ``jitc.evaluate`` gives.  min, max, argmin
  and argmax of no elements raise ``jitc.EmptyReductionError`` when the
  graph is built (when the size is known; at compute time otherwise);
  argmin and argmax need known chunk sizes.
- Reductions over axes (``s = sum(x, axis=0)``, ``m = max(x * y, axis=(0,
  2), keepdims=True)``, ``k = argmin(x, axis=1)``) give Dask arrays of
  NumPy's shape and dtype, also made with ``dask.array.reduction``
  (python/jitc/_dask_axes.py): each block reduces over the axes with
  keepdims (mean as a float64 sum and a count, argmin and argmax as the
  extremes and their indices along the axis, the block's offset on it
  added), and the tree combines the blocks along the axes element by
  element, in the same fixed order.  A block with no element along the
  axes gives the identity; min, max, argmin and argmax over an axis of
  extent 0 raise as above.  argmin and argmax need known chunk sizes along
  their axis.
- Blocks: Dask's scheduling costs about 20 ms a graph and 1 to 2 ms a task
  more (measured on two H100s with one worker per GPU: docs/PERFORMANCE.md,
  "Dask arrays"), whatever a block holds.  For that to be under a tenth of
  the time, each GPU's blocks must carry at least ten times as much work:
  NumPy blocks of gigabytes (the host path moves tens of GB/s), one block
  per worker; CuPy blocks already on the GPU, whose kernels stream at TB/s,
  rarely get there, and fewer, larger blocks are the most that helps.  With
  one worker per GPU (dask-cuda), start the workers with JITC_DEVICES=0, so
  that a NumPy block's run stays on the worker's own GPU.
- A program that reads the element index ``i`` is refused over more than
  one block (and with reductions): each block would count ``i`` from 0.
- Dtypes and errors come before any computing: the program is checked
  once on the client (on ``interp``, whose typing every target shares), so
  a program error raises ``jitc.ProgramError`` when the graph is built,
  with the dtypes of the outputs taken from that check.
"""
import collections
import functools
import operator
import re
import sys

import numpy as _np
import dask.array as _da
from dask.array.utils import meta_from_array as _meta_from_array
from dask.base import tokenize as _tokenize

import jitc as _jitc
from jitc import _dask_axes

__all__ = ["evaluate"]

# The checker's words for a name the caller may have (jitc.evaluate reads the
# same ones, in names.c): unknown, read before it is assigned, or the
# language's (the index, a constant, a function) where the program needs a
# value or an array.
_NAMED = re.compile(r"error: (?:unknown name '(\w+)'|'(\w+)' is read before it is assigned"
                    r"|'(\w+)' is (?:a function; call it as|the element index, not an array"
                    r"|a constant, not an array))")

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


def _lookup(scopes, name):
    """(True, the caller's variable `name`) or (False, None): its locals,
    then its globals, as numexpr looks names up."""
    for scope in scopes:
        if name in scope:
            return True, scope[name]
    return False, None


def _check(program, names, frame):
    """Checks the program with the names given, adding from the caller's
    variables (locals, then globals) each name the check could not resolve
    and each it read as the language's (``i``, ``pi``, ...: the caller's
    variable of that name wins), until it checks with none to add; returns
    the kernel (of interp: its types are every target's) and the names."""
    names = dict(names)
    scopes = () if frame is None else (frame.f_locals, frame.f_globals)
    while True:
        try:
            sig = {nm: _example(v) for nm, v in names.items()}
            kernel = _jitc.compile(program, "interp", **sig)
        except _jitc.ProgramError as e:
            added, missing = False, []
            for unknown, late, language in _NAMED.findall(str(e)):
                nm = unknown or late or language
                if nm in names or nm in missing:
                    continue
                found, v = _lookup(scopes, nm)
                # A function where the program needs a value is the
                # program's mistake, whatever the caller calls that name.
                if found and not (language and callable(v)):
                    names[nm], added = v, True
                elif unknown:
                    missing.append(nm)
            if added:  # again, so that an error names only what is still missing
                continue
            if missing and scopes:
                raise _jitc.UnknownNameError(
                    _jitc._missing_note(str(e), missing, scopes[0], scopes[1],
                                        "jitc.dask.evaluate"), e.line, e.col) from None
            raise
        added = False
        for nm in kernel.language_names:
            found, v = _lookup(scopes, nm)
            if found:
                names[nm], added = v, True
        if not added:
            return kernel, names


def _run_block(spec, *chunks):
    """One block: jitc.evaluate on the chunks, its outputs as a tuple (or
    the one output).  Runs in the workers: module-level, to be pickled."""
    program, target, names, modes, outs, red = spec
    bound = {}
    arrays = []
    for nm, mode, c in zip(names, modes, chunks):
        if mode == _COPY:
            c = c.copy()
        if _is_array(c):
            arrays.append(nm)
        bound[nm] = c
    # The block's shape: its inputs' broadcast shape.  An output given by
    # name (its values are not read) is made anew with it.
    read = [bound[nm].shape for nm, mode in zip(names, modes)
            if mode != _EMPTY and _is_array(bound[nm])]
    shape = _np.broadcast_shapes(*(read or [bound[nm].shape for nm in arrays]))
    for nm, mode in zip(names, modes):
        if mode == _EMPTY:
            bound[nm] = _empty(bound[nm], shape, bound[nm].dtype)
    # Every name the program reads is bound: jitc.evaluate looks in this
    # frame only for the language's names (i, pi, ...), which it has none of.
    if red is None:
        r = _jitc.evaluate(program, target=target, **bound)
        return r if len(outs) == 1 else tuple(r[nm] for nm in outs)
    # With reductions: the element-wise outputs, then (the block's element
    # count, its shape, the block's reductions), or (None, its shape) for a
    # block of no elements, where min() has no value and the outputs are
    # empty.  An argmin counts the block's elements in C order (_partials
    # makes that an index of the whole array).
    n = int(_np.prod(shape, dtype=_np.int64))
    if n == 0:
        like = bound[arrays[0]]
        return tuple(bound[nm] if nm in bound else _empty(like, shape, red.dtypes[nm])
                     for nm in outs) + ((None, shape),)
    r = _jitc.evaluate(program, target=target, **bound)
    if not isinstance(r, dict):
        r = {red.names[0]: r}
    return tuple(r[nm] for nm in outs) + ((n, shape) + tuple(r[nm] for nm in red.names),)


def _empty_like(c, dtype=None):
    mod = sys.modules.get(type(c).__module__.split(".")[0])
    empty = getattr(mod, "empty_like", None) or _np.empty_like
    return empty(c, dtype=dtype)


def _empty(like, shape, dtype):
    """An empty array of `shape` and `dtype`, of the kind of `like` (NumPy or
    CuPy)."""
    mod = sys.modules.get(type(like).__module__.split(".")[0])
    return (getattr(mod, "empty", None) or _np.empty)(shape, dtype=dtype)


def _broadcast(shapes):
    """The broadcast shape of the arrays' shapes (a dict by name), or
    InputError naming two arrays, their shapes and the axis, as jitc's
    message does."""
    nd = max((len(s) for s in shapes.values()), default=0)
    out, by = [1] * nd, [None] * nd
    for nm, s in shapes.items():
        for e, m in enumerate(s):
            d = nd - len(s) + e
            if m == 1 or m == out[d]:
                continue
            if out[d] == 1:
                out[d], by[d] = m, nm
                continue
            raise _jitc.InputError(
                "operands could not be broadcast together: '%s' has shape %s and '%s' has "
                "shape %s (axis %d of the result: %d against %d)"
                % (by[d], _shape_text(shapes[by[d]]), nm, _shape_text(s), d, out[d], m))
    return tuple(out)


def _shape_text(s):
    """NumPy's spelling of a shape: (2,3), (4,)."""
    return "(" + ",".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"


def _chunks_of(v, shape, dask_arrays):
    """Chunks for a NumPy or CuPy array `v` that broadcasts to `shape`: on
    each of its axes, those of the first Dask array with the same extent on
    that axis of the result, else one chunk."""
    nd = len(shape)
    chunks = []
    for e, m in enumerate(v.shape):
        d = nd - v.ndim + e
        got = (m,)
        for a in dask_arrays:
            k = d - (nd - a.ndim)
            if k >= 0 and a.shape[k] == m:
                got = a.chunks[k]
                break
        chunks.append(got)
    return tuple(chunks)


def _meta_of(meta, ndim, dtype):
    """The meta of a result: an empty array of `dtype` and of meta's kind
    (NumPy or CuPy), made new rather than cast from meta (a complex meta
    cast to a real type would raise NumPy's ComplexWarning)."""
    return _meta_from_array(_empty_like(meta, dtype), ndim, dtype)


# ---- reductions: per-block partials, combined by Dask's tree ----
#
# Each block runs the program and gives, per reduction, a partial result;
# dask.array.reduction combines the partials in a tree fixed by the number
# of blocks and split_every (the blocks in their order at each node), so
# the same chunks give the same bits on every compute.  What a block gives:
#   sum, prod, min, max, any, all   its own reduction (float32, float16
#                                   and bfloat16 sums in float64, rounded
#                                   once at the end)
#   mean                            its sum in float64 and its count
#   argmin, argmax                  the extreme and its index in the whole
#                                   array (the block's offset added)

# A reduction in the program: the checker allows one only as the whole
# value of a statement, so every match is one (the language has no
# strings; comments are removed first, which moves no line or column).
_REDUCTION = re.compile(r"\b(sum|prod|amin|min|amax|max|mean|any|all|argmin|argmax)\s*\(")
# What precedes it in its statement: the name assigned, or none (a bare
# statement assigns `out`).
_ASSIGNED = re.compile(r"(?:\b(\w+)\s*(?:\[\s*i\s*\]\s*)?=\s*)?[(\s]*$")
_NOID = ("min", "max", "argmin", "argmax")

# What a block's task needs to know of the reductions: the element-wise
# outputs' dtypes (for empty blocks) and the names the block program
# assigns its reductions to (each result, then a helper per argmin/argmax
# holding its extreme value).
_Red = collections.namedtuple("_Red", "dtypes names")


def _closing(src, at):
    """The index after the parenthesis that closes the one at `at`."""
    depth = 0
    for j in range(at, len(src)):
        depth += {"(": 1, ")": -1}.get(src[j], 0)
        if depth == 0:
            return j + 1
    raise _jitc.InternalError("jitc.dask: unbalanced parentheses in a checked program")


def _helper(name):
    return "_jitc_dask_" + name


def _wide(dt):
    """The type a block sums values of dt in, which dt's own sums and means
    round to once: float64 for the real types (NumPy's floats, ml_dtypes'
    bfloat16, whose NumPy kind is 'V'), complex128 for the complex ones."""
    return _np.promote_types(dt, _np.float64)


def _partial_dtype(op, dt):
    """The dtype of a block's partial of op giving dt: wider for a mean and
    a narrow float's sum (as _block_program makes them)."""
    if op == "mean" or (op == "sum" and dt.kind in "fcV"):
        return _wide(dt)
    return _np.dtype(_np.float64) if op in ("argmin", "argmax") else dt


def _block_program(program, reductions, dtypes, axes=None):
    """The program a block runs for the partials: mean(X) becomes
    sum(float64(X)) (mean's own sum; sum(complex128(X)) for a complex
    mean), a narrower float or complex type's sum(X) (float32, float16,
    bfloat16, complex64) sum(float64(X)) (complex128), and
    an argmin(X) gets `_jitc_dask_NAME = min(X)` just before it.  Over
    `axes` (the reduced ones, each in [0, ndim)), each reduction is over
    them with keepdims=True, its other arguments dropped.  Returns it and
    the position (line, column) of each reduction."""
    src = re.sub(r"#[^\n]*", "", program)
    parts, done, where = [], 0, {}
    for m in _REDUCTION.finditer(src):
        if m.start() < done:
            continue
        a = _ASSIGNED.search(src, 0, m.start())
        name = a.group(1) or "out"
        op = reductions.get(name)
        if op is None:
            raise _jitc.UsageError("jitc.dask.evaluate: cannot tell which result the %s() at "
                                   "offset %d gives" % (m.group(1), m.start()))
        at = a.start(1) if a.group(1) else m.start()  # where jitc puts its caret
        where[name] = (src.count("\n", 0, at) + 1, at - src.rfind("\n", 0, at))
        end = _closing(src, m.end() - 1)
        arg = src[m.end():end - 1]
        # The call over every element (a keepdims dropped: evaluate makes
        # the shape), or over the axes, kept.
        red = (lambda f, x: "%s(%s)" % (f, x)) if axes is None else (
            lambda f, x: _dask_axes.call(f, x, axes))
        arg = _dask_axes.first_arg(arg)
        wide = _wide(dtypes[name])
        if op == "mean" or (op == "sum" and dtypes[name].kind in "fcV" and wide != dtypes[name]):
            parts += [src[done:m.start()], red("sum", "%s(%s)" % (wide.name, arg))]
        elif op in ("argmin", "argmax"):
            parts += [src[done:a.start()], "\n%s = %s\n" % (_helper(name), red(op[3:], arg)),
                      src[a.start():m.start()], red(op, arg)]
        else:
            parts += [src[done:m.start()], red(op, arg)]
        done = end
    parts.append(src[done:])
    missing = [nm for nm in reductions if nm not in where]
    if missing:
        raise _jitc.UsageError("jitc.dask.evaluate: cannot find the reduction of %s in the "
                               "program's text" % ", ".join(repr(nm) for nm in missing))
    return "".join(parts), where


def _host(v):
    """A block's result as a NumPy scalar (a CuPy block's is a 0-d array)."""
    return v.get()[()] if hasattr(v, "get") and not isinstance(v, _np.generic) else v


def _partials(block, results, block_info=None):
    """A block's partial of each reduction (results: (name, op) pairs), or
    None for a block of no elements."""
    raw = block[-1]
    if raw[0] is None:
        return (None,) * len(results)
    n, vals = raw[0], raw[2:]
    parts = []
    for k, (name, op) in enumerate(results):
        v = _host(vals[k])
        if op == "mean":
            parts.append((v, n))
        elif op in ("argmin", "argmax"):
            info = block_info[0]
            loc = info["array-location"]
            local = _np.unravel_index(int(v), tuple(b - a for a, b in loc))
            index = _np.ravel_multi_index(tuple(a + j for (a, _), j in zip(loc, local)),
                                          info["shape"])
            helper = len(results) + sum(1 for _, o in results[:k] if o in ("argmin", "argmax"))
            parts.append((_host(vals[helper]), int(index)))
        else:
            parts.append(v)
    return tuple(parts)


def _pick(k, block, axis=None, keepdims=None):
    return block[k]


def _flat(nested):
    if isinstance(nested, list):
        return [p for x in nested for p in _flat(x)]
    return [nested]


def _first_of(less, a, b):
    """argmin (less) or argmax of two (value, index) partials: the extreme,
    a NaN first of all; of equal values the lower index (the first)."""
    (va, ia), (vb, ib) = a, b
    nan_a, nan_b = va != va, vb != vb
    if nan_a or nan_b:
        return a if nan_a and (not nan_b or ia < ib) else b
    if va == vb:
        return a if ia < ib else b
    return a if (va < vb) == less else b


def _combine2(op, a, b):
    with _np.errstate(over="ignore", invalid="ignore"):  # integers wrap, as NumPy's
        if op in ("sum", "mean"):
            return (a[0] + b[0], a[1] + b[1]) if op == "mean" else a + b
        if op == "prod":
            return a * b
        if op == "min":
            return _np.minimum(a, b)
        if op == "max":
            return _np.maximum(a, b)
        if op == "any":
            return _np.logical_or(a, b)
        if op == "all":
            return _np.logical_and(a, b)
        return _first_of(op == "argmin", a, b)


def _combine(op, nested, axis=None, keepdims=None):
    """The partials of some blocks in the blocks' order, combined left to
    right; blocks of no elements (None) left out."""
    acc = None
    for p in _flat(nested):
        if p is not None:
            acc = p if acc is None else _combine2(op, acc, p)
    return acc


def _aggregate(op, name, rtype, where, device, nested, axis=None, keepdims=None):
    """The result: the partials combined, finished into the result's type, a
    NumPy scalar (a 0-d CuPy array for CuPy chunks)."""
    acc = _combine(op, nested)
    t = _np.dtype(rtype).type
    if acc is None:
        if op in _NOID:
            raise _empty_error(op, name, where)
        # mean of nothing is 0/0: NaN in each part of a complex type
        nan = complex(_np.nan, _np.nan) if _np.dtype(rtype).kind == "c" else _np.nan
        v = t({"sum": 0, "prod": 1, "any": False, "all": True, "mean": nan}[op])
    elif op == "mean":
        v = t(acc[0] / _np.float64(acc[1]))
    elif op in ("argmin", "argmax"):
        v = _np.intp(acc[1])
    else:
        v = t(acc)
    if device:
        import cupy
        return cupy.asarray(v)
    return v


def _empty_error(op, name, where):
    line, col = where
    return _jitc.EmptyReductionError(
        "<program>:%d:%d: error: %s() of zero elements: it has no identity, so there is no "
        "value to give '%s' (NumPy raises ValueError)" % (line, col, op, name), line, col)


def _reduce(both, results, dtypes, where, meta, token):
    """The 0-d Dask arrays of the reductions, by name: per-block partials
    from the blocks of `both` (the element-wise outputs, then the raw
    reductions), combined by dask.array.reduction."""
    if any(op in ("argmin", "argmax") for _, op in results):
        if any(_np.isnan(c) for cs in both.chunks for c in cs):
            raise _jitc.InputError("jitc.dask.evaluate: argmin/argmax need the chunk sizes to "
                                   "find the index in the whole array; compute them first "
                                   "(x.compute_chunk_sizes())")
    parts = _da.map_blocks(_partials, both, tuple(results), dtype=object,
                           meta=_np.empty((0,) * both.ndim, dtype=object),
                           name="jitc-partials-" + token)
    device = type(meta).__module__.split(".")[0] == "cupy"
    out = {}
    for k, (name, op) in enumerate(results):
        dt = dtypes[name]
        out[name] = _da.reduction(
            parts, functools.partial(_pick, k),
            functools.partial(_aggregate, op, name, dt, where[name], device),
            combine=functools.partial(_combine, op), axis=None, keepdims=False, dtype=dt,
            concatenate=False, meta=_meta_of(meta, 0, dt),
            name="jitc-%s-%s" % (name, token))
    return out


def evaluate(program, target=None, **names):
    """Runs ``program`` over Dask arrays, block by block; returns Dask arrays.

    ``names`` bind arrays (Dask, NumPy or CuPy), whose shapes broadcast as
    NumPy's, and scalars; names not given are taken from the caller's local
    and global variables.  ``target``:
    'interp', 'cpu', 'cuda' or None (each block chooses as ``jitc.evaluate``
    does: ``cuda`` for CuPy chunks, else ``jitc.default_target()``).

    Returns the output as a Dask array, or a dict of Dask arrays by name when
    the program assigns several (in-place ones such as ``a[i] += 1``
    included: the array passed is not changed), or None when it assigns
    none.  A reduction's result is a 0-d Dask array, combined from the
    blocks' partials in a fixed tree (``dask.array.reduction``); compute it
    with the other outputs (``dask.compute(*d.values())``) for one pass.

    Nothing is computed here: the program is checked, and the outputs'
    dtypes found, on the client, so a program error, a bad value or arrays
    whose shapes do not broadcast raise now (``jitc.ProgramError``,
    ``jitc.InputError``, ``jitc.UsageError``, ``jitc.EmptyReductionError``),
    not at compute time.
    """
    if target is not None:
        _jitc.available(target)  # an unknown target: UsageError now
    frame = sys._getframe(1)
    try:
        kernel, names = _check(program, names, frame)
    finally:
        del frame
    roles = {nm: role for nm, role, dt in kernel.arrays}
    dtypes = {nm: _jitc._numpy_dtype(dt) for nm, role, dt in kernel.arrays}
    assigned = [nm for nm, role, dt in kernel.arrays if role != "input"]
    outs = tuple(nm for nm, role, dt in kernel.arrays if role in ("output", "inout"))
    reductions = kernel.reductions
    if not assigned:
        return None
    for nm in reductions:
        if nm in names:
            raise _jitc.UsageError("'%s' is the result of %s(): the call returns it, it is not "
                                   "given" % (nm, reductions[nm]))
    params = [nm for nm, _, _ in kernel.arrays] + [nm for nm, _ in kernel.scalars]
    for nm in names:
        if nm not in params:  # as jitc.evaluate, which would say so in every block
            raise _jitc.UsageError("'%s' is not a name the program uses" % nm)
    params = [nm for nm in kernel.params if nm in params]
    arrays = [nm for nm in params if _is_array(names[nm])]
    if not arrays:
        raise _jitc.InputError("jitc.dask.evaluate: no array among the names (%s): give at "
                               "least one Dask array" % ", ".join(params))
    # The inputs' broadcast shape (outputs given by name have it: their
    # values are not read, jitc.evaluate checks their shape per block).
    shapes = {nm: tuple(names[nm].shape) for nm in arrays}
    read = {nm: s for nm, s in shapes.items() if roles.get(nm, "input") != "output"}
    known = all(not _np.isnan(s) for sh in shapes.values() for s in sh)
    shape = _broadcast(read or shapes) if known else max(shapes.values(), key=len)
    dask_arrays = [names[nm] for nm in arrays if isinstance(names[nm], _da.Array)]
    ref = dask_arrays[0] if dask_arrays else None
    ind = tuple(range(len(shape)))
    args, modes = [], []
    for nm in params:
        v = names[nm]
        if _is_array(v) and not isinstance(v, _da.Array):
            v = _da.from_array(v, chunks=_chunks_of(v, shape, dask_arrays) if dask_arrays
                               else "auto")
            ref = ref if ref is not None else v
        if isinstance(v, _da.Array):
            # Aligned on the last axis, as NumPy broadcasts.
            args += [v, ind[len(ind) - v.ndim:]]
        else:
            args += [v, None]
        role = roles.get(nm, "input")
        modes.append(_COPY if role == "inout" else _EMPTY if role == "output" else _PASS)
    red, block_program = None, program
    # The element index, not the caller's `i` (then an array or a scalar).
    reads_i = "i" in kernel.language_names
    if reads_i:  # the blocks of the result: its axes' chunks, unified
        chunkss = _da.core.unify_chunks(*args)[0]
        nblocks = functools.reduce(operator.mul, (len(c) for c in chunkss.values()), 1)
    if reads_i and (reductions or nblocks != 1):
        raise _jitc.UsageError("jitc.dask.evaluate: the program reads the element index i, "
                               "which each block would count from 0; use jitc.evaluate, or "
                               "pass the index as an array")
    axes = None
    if reductions:
        # Over axes (axis= given): those of one, normalized (the reductions
        # of a program share one set, as the library checks).  Every axis
        # kept (`prod(m, keepdims=True)`) is the reduction of every element,
        # reshaped.
        over = {nm: ak[0] for nm, ak in kernel.reduction_axes.items() if ak[0] is not None}
        if over:
            nm = next(iter(over))
            axes = _dask_axes.normalize(nm, reductions[nm], over[nm], len(shape))
            if any(reductions[nm] in ("argmin", "argmax") and nm not in over and len(axes) > 1
                   for nm in reductions):
                raise _jitc.UsageError("jitc.dask.evaluate: argmin and argmax over every axis "
                                       "beside reductions over axes; compute them in a "
                                       "program of their own")
        block_program, where = _block_program(program, reductions, dtypes, axes)
        results = tuple(reductions.items())
        helpers = tuple(_helper(nm) for nm, op in results if op in ("argmin", "argmax"))
        red = _Red({nm: dtypes[nm] for nm in outs}, tuple(reductions) + helpers)
        # No element to reduce (along the axes): an error of min now.
        if known and 0 in (shape if axes is None else [shape[d] for d in axes]):
            for nm, op in results:
                if op in _NOID:
                    raise _empty_error(op, nm, where[nm])
    spec = (block_program, target, tuple(params), tuple(modes), outs, red)
    token = _tokenize(spec, *args)
    meta = ref._meta
    if len(outs) == 1 and not red:
        dt = dtypes[outs[0]]
        return _da.blockwise(_run_block, ind, spec, None, *args, name="jitc-" + token,
                             dtype=dt, meta=_meta_of(meta, len(ind), dt))
    # One task per block computes everything; the outputs are split off it.
    both = _da.blockwise(_run_block, ind, spec, None, *args, name="jitc-" + token,
                         dtype=object, meta=_np.empty((0,) * len(ind), dtype=object))
    if red and axes is not None:
        got = _dask_axes.reduce(
            both, results, dtypes, {nm: _partial_dtype(op, dtypes[nm]) for nm, op in results},
            axes, {nm: kernel.reduction_axes[nm][1] for nm, _ in results}, meta, token,
            {nm: functools.partial(_empty_error, op, nm, where[nm]) for nm, op in results},
            _meta_of)
    else:
        got = _reduce(both, results, dtypes, where, meta, token) if red else {}
        for nm in reductions:
            if kernel.reduction_axes[nm][1]:
                got[nm] = got[nm].reshape((1,) * len(shape))
    got.update({nm: _da.blockwise(operator.getitem, ind, both, ind, k, None,
                                  name="jitc-%s-%s" % (nm, token), dtype=dtypes[nm],
                                  meta=_meta_of(meta, len(ind), dtypes[nm]))
                for k, nm in enumerate(outs)})
    got = {nm: got[nm] for nm in assigned}
    return got if len(got) > 1 else got[assigned[0]]
