"""jitc.dask's reductions over axes (``s = sum(x, axis=0)``, ``m = max(x,
axis=(0, 2), keepdims=True)``, ``k = argmin(x, axis=1)``): each block runs
the program with keepdims=True over the reduced axes, giving an array of
partials, and ``dask.array.reduction`` combines the blocks along those axes
in its fixed tree, element by element, the blocks in their order at each
node.  What a block gives per reduction:

  sum, prod, min, max, any, all   its own reduction over the axes (float32,
                                  float16 and bfloat16 sums in float64,
                                  complex64 in complex128, rounded once)
  mean                            its float64 (complex128) sum and count
  argmin, argmax                  the extremes and their indices along the
                                  axis, the block's offset on it added

A block with no element along the reduced axes gives the reduction's
identity (nothing for min, max, argmin and argmax, which are then an error
when every block is such a block: the axis has extent 0).
"""
import functools

import numpy as _np
import dask.array as _da

import jitc as _jitc

_ARG = ("argmin", "argmax")


def normalize(name, op, axes, ndim):
    """The reduced axes in the broadcast shape of ndim axes, each in [0,
    ndim), in order, as NumPy reads them (a 0-d shape takes 0 and -1 as
    every axis); InputError as the library's for an axis
    out of bounds or two that name one."""
    if ndim == 0:
        return ()
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise _jitc.InputError("%s() giving '%s': axis %d is out of bounds for array of "
                                   "dimension %d" % (op, name, a, ndim))
        a %= ndim
        if a in out:
            raise _jitc.InputError("%s() giving '%s': duplicate value in 'axis'" % (op, name))
        out.append(a)
    return tuple(sorted(out))


def first_arg(args):
    """The text of a call's first argument (the operand) in the text of its
    arguments: up to the first comma outside parentheses."""
    depth = 0
    for j, ch in enumerate(args):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            return args[:j]
    return args


def call(op, operand, axes):
    """A block's reduction: op over the axes, kept (a single axis for
    argmin and argmax, which reduce over one)."""
    axis = axes[0] if op in _ARG else "(%s)" % "".join("%d," % a for a in axes)
    return "%s(%s, axis=%s, keepdims=True)" % (op, operand, axis)


def _host(v):
    """A block's array on the host (a CuPy block's is copied)."""
    return v.get() if hasattr(v, "get") and not isinstance(v, _np.ndarray) else _np.asarray(v)


def partials(block, results, axes, pdtypes, block_info=None):
    """A block's partial of each reduction (results: (name, op) pairs) over
    the reduced axes, or None where there is none (min of a block with no
    element along the axes)."""
    loc = block_info[0]["array-location"]  # NaN along axes of unknown chunk sizes
    raw = block[-1]
    empty, shape = raw[0] is None, raw[1]
    kept = tuple(1 if d in axes else m for d, m in enumerate(shape))
    count = int(_np.prod([shape[d] for d in axes], dtype=_np.int64))
    parts = []
    for k, (name, op) in enumerate(results):
        dt = pdtypes[name]
        if empty and count == 0:  # nothing along the axes: the identity
            if op in ("min", "max") + _ARG:
                parts.append(None)
            elif op == "mean":
                parts.append((_np.zeros(kept, dt), 0))
            else:
                fill = {"sum": 0, "prod": 1, "any": False, "all": True}[op]
                parts.append(_np.full(kept, fill, dt))
            continue
        if empty:  # the block has elements along the axes but no others: empty
            v = _np.empty(kept, dt)
            parts.append((v, count) if op == "mean" else
                         (v, _np.empty(kept, _np.intp)) if op in _ARG else v)
            continue
        v = _host(raw[2 + k])
        if op == "mean":
            parts.append((v, count))
        elif op in _ARG:
            helper = 2 + len(results) + sum(1 for _, o in results[:k] if o in _ARG)
            parts.append((_host(raw[helper]), v.astype(_np.intp) + int(loc[axes[0]][0])))
        else:
            parts.append(v)
    return tuple(parts)


def _first_of(less, a, b):
    """argmin (less) or argmax of two partials (values, indices), element by
    element: a NaN first of all, then the extreme; of equal values, or two
    NaNs, the lower index."""
    (va, ia), (vb, ib) = a, b
    nan_a, nan_b = _np.isnan(va), _np.isnan(vb)
    with _np.errstate(invalid="ignore"):
        better = (vb < va) if less else (vb > va)
    first = ib < ia
    take = (nan_b & (~nan_a | first)) | (~nan_a & ~nan_b & (better | ((vb == va) & first)))
    return _np.where(take, vb, va), _np.where(take, ib, ia)


def _combine2(op, a, b):
    with _np.errstate(over="ignore", invalid="ignore"):  # integers wrap, as NumPy's
        if op == "mean":
            return a[0] + b[0], a[1] + b[1]
        if op in _ARG:
            return _first_of(op == "argmin", a, b)
        return {"sum": _np.add, "prod": _np.multiply, "min": _np.minimum, "max": _np.maximum,
                "any": _np.logical_or, "all": _np.logical_and}[op](a, b)


def _flat(nested):
    if isinstance(nested, list):
        return [p for x in nested for p in _flat(x)]
    return [nested]


def combine(op, nested, axis=None, keepdims=None):
    """The partials of some blocks along the reduced axes, in the blocks'
    order, combined left to right; blocks without one (None) left out."""
    acc = None
    for p in _flat(nested):
        if p is not None:
            acc = p if acc is None else _combine2(op, acc, p)
    return acc


def aggregate(op, rtype, axes, keep, device, empty_error, nested, axis=None, keepdims=None):
    """A block of the result: the partials combined, finished into the
    result's type, the reduced axes dropped unless kept (a NumPy scalar
    where no axis is left, as np.sum gives; CuPy arrays for CuPy chunks)."""
    acc = combine(op, nested)
    if acc is None:  # every block had nothing along the axes
        raise empty_error()
    rt = _np.dtype(rtype)
    with _np.errstate(all="ignore"):
        if op == "mean":
            v = (acc[0] / _np.float64(acc[1]) if acc[1] else
                 _np.full(acc[0].shape, complex(_np.nan, _np.nan) if rt.kind == "c" else _np.nan))
            v = _np.asarray(v).astype(rt)
        elif op in _ARG:
            v = _np.asarray(acc[1]).astype(_np.intp)
        else:
            v = _np.asarray(acc).astype(rt)
    if not keep:
        v = _np.squeeze(v, axis=axes)
    if device:
        import cupy
        return cupy.asarray(v)
    return v[()] if v.ndim == 0 else v


def reduce(both, results, dtypes, pdtypes, axes, keeps, meta, token, empty_errors, meta_of):
    """The Dask arrays of the reductions over `axes`, by name: per-block
    partials from the blocks of `both` (the element-wise outputs, then the
    raw reductions), combined by dask.array.reduction along the axes."""
    if any(op in _ARG for _, op in results):
        if any(_np.isnan(c) for d in axes for c in both.chunks[d]):
            raise _jitc.InputError("jitc.dask.evaluate: argmin/argmax need the chunk sizes "
                                   "along the axis to find the index along it; compute them "
                                   "first (x.compute_chunk_sizes())")
    parts = _da.map_blocks(partials, both, tuple(results), axes, pdtypes, dtype=object,
                           meta=_np.empty((0,) * both.ndim, dtype=object),
                           name="jitc-axis-partials-" + token)
    device = type(meta).__module__.split(".")[0] == "cupy"
    out = {}
    for k, (name, op) in enumerate(results):
        dt = dtypes[name]
        keep = keeps[name]
        ndim = both.ndim if keep else both.ndim - len(axes)
        out[name] = _da.reduction(
            parts, functools.partial(_pick, k),
            functools.partial(aggregate, op, dt, axes, keep, device, empty_errors[name]),
            combine=functools.partial(combine, op), axis=axes, keepdims=keep, dtype=dt,
            concatenate=False, meta=meta_of(meta, ndim, dt), name="jitc-%s-%s" % (name, token))
    return out


def _pick(k, block, axis=None, keepdims=None):
    return block[k]

