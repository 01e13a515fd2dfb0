"""jitc: a JIT compiler for element-wise array programs, from Python.

    >>> import numpy as np, jitc
    >>> a = np.arange(5.0); b = np.ones(5)
    >>> jitc.evaluate("c = 2*a + b")
    array([1., 3., 5., 7., 9.])

A program is a few statements over arrays, element by element, their shapes
broadcast as NumPy's (docs/language.md): ``c = exp(a) * b``, ``a[i] += 1``, ``m = where(x > 0, x,
0)``, and reductions of all the elements to one value: ``s = sum(a*b)``,
``prod``, ``min``, ``max``, ``mean``, ``any``, ``all``, ``argmin``,
``argmax``, or over axes as NumPy's (``r = sum(m, axis=1)``, ``c = max(m,
axis=(0, 2), keepdims=True)``: an array, on ``interp`` and ``cpu``),
several of them with element-wise outputs in one pass over the data.  It is compiled once for a target and kept:

- ``interp``: the reference interpreter;
- ``cpu``: LLVM, vectorised and threaded (the default when jitc was built
  with LLVM);
- ``cuda``: NVRTC and the CUDA driver, on device arrays (CuPy arrays,
  PyTorch tensors, anything with ``__cuda_array_interface__`` or DLPack on
  a CUDA device), in place and on the array's current stream; on NumPy
  arrays (``target="cuda"``) through the host pipeline, the outputs it
  makes of 1 MB or more in pinned memory the GPU writes in place, kept for
  later outputs once freed (at most an eighth of RAM kept idle).

The functions:

- ``evaluate(ex, local_dict=None, global_dict=None, out=None, order='K',
  casting='same_kind', *, target=None, threads=None, **names)``: compiles (once)
  and runs, a drop-in for ``numexpr.evaluate``; names not given are taken
  from ``local_dict`` and ``global_dict``, or the caller's variables, as
  numexpr does (its locals, then its globals; of an enclosing function only
  the variables the caller's own code uses); ``out=`` receives the result,
  ``order=`` lays out the arrays the call makes, ``casting=`` rules writing
  into an ``out=`` of another dtype, each as NumPy's and numexpr's.
  numexpr's ``sanitize=`` is taken and not used: numexpr checks the text
  before Python's ``eval`` runs it, while jitc parses its own language and
  never hands the text to Python, so no text runs Python code; what
  numexpr's check refuses is a ``ProgramSyntaxError`` (a SyntaxError and a
  ValueError, the exceptions numexpr raises) unless it is a program of the
  language (``a[i] += 1``; two statements, ``c = a; d = b``).  numexpr's
  ``optimization=``, ``truediv=`` and ``disable_cache=`` are taken and not
  used either (they tune numexpr's compiler and cache; ``/`` is true division,
  as numexpr's is), their values checked as numexpr checks them.
- ``re_evaluate(local_dict=None, global_dict=None, **names)``: runs the last
  ``evaluate`` or ``validate`` call of this thread again, as numexpr's does,
  with its target, threads, order, casting and ``out=`` (held weakly: while
  that array lives), on the values its names have now (names given by
  keyword to the last call are not kept: give them again).
  ``validate(ex, ...)``, evaluate's arguments: compiles and keeps the call
  for ``re_evaluate`` without running it; returns None or the exception
  ``evaluate`` would raise, as numexpr's.
- ``compile(program, target=None, **signature)``: a ``Kernel`` to call many
  times.
- ``set_num_threads(n)`` (returns the count it replaces, as numexpr's) and
  ``get_num_threads()``: the cpu target's threads.
- ``available(target)``, ``default_target()``, ``dtypes()``,
  ``cache_info()``, ``clear_cache()``.

Values:

- Arrays: NumPy arrays, objects with the buffer protocol or
  ``__array_interface__`` (used in place, never copied), and device arrays,
  of the library's types (``jitc.dtypes()``), and lists and tuples (converted
  as NumPy's ufuncs convert them, for the program to read; arrays in the
  other byte order likewise, through a copy in this machine's): bool, int8, int16, int32,
  int64, uint8, uint16, uint32, uint64, float16, bfloat16 (an
  ``ml_dtypes.bfloat16`` array, known by its dtype's name: a bare ``'<V2'``
  says no type), float32, float64, complex64 and complex128.  Other dtypes
  are refused with a
  message naming the array (convert with ``.astype``).  Host arrays are of
  any shape and strides, used in place: slices, reversed and transposed
  views, columns, Fortran order, broadcast views (zero strides), record
  fields, unaligned buffers.  Their shapes broadcast by NumPy's rules (a
  ValueError naming both arrays and the axis where they do not); outputs
  get the broadcast shape, laid out as NumPy's ufuncs lay out theirs
  (``order=``); ``i`` is the element's position in C order in that shape.
  A program of scalars alone gives a 0-d array, as numexpr's does.  An
  input that overlaps an array the program writes, other than by being its
  very elements, is copied first, as NumPy's ufuncs copy it.  Device
  arrays are taken with their strides as they come
  (``__cuda_array_interface__``, DLPack) and run as host arrays do, in place
  on their stream: views of any strides, broadcasting, 0-d arrays, outputs
  of the first array's kind laid out as NumPy's, reductions over axes giving
  device arrays.  Nothing is copied behind your back: a written device array
  may share memory with another only by being its very elements (where
  NumPy would copy an overlapping input, jitc refuses).  Host and device
  arrays do not mix in one call.
- Scalars: Python ``bool``, ``int``, ``float`` and ``complex`` are weak (a
  ``float32`` array times ``2.5`` stays ``float32``, as in NumPy 2; plus
  ``1j`` it is ``complex64``, an integer array plus ``1j`` ``complex128``);
  NumPy scalars (``np.float64(2.5)``, ``np.uint8(3)``, ``np.float16(1.5)``,
  ``np.complex64(1j)``, ``ml_dtypes.bfloat16(1)``) and 0-d arrays are typed
  (``float32`` array times ``np.float64(2.5)`` is ``float64``, plus
  ``np.complex128(1j)`` ``complex128``).
- Byte strings, in ``evaluate`` as numexpr takes them: NumPy ``S`` arrays,
  ``bytes`` scalars and constants (``b'abc'``, ``'abc'``) compared with
  ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=`` or ``contains(s, needle)``,
  giving bool; each comparison becomes one of the strings' bytes, read in
  place, which jitc compiles as any program (jitc/_strings.py).  Anything
  else done with a string is numexpr's NotImplementedError or jitc's error.

Names: the caller's win.  A name given by keyword, or a variable of the
caller, is that value wherever the program does not call it, also where
the language has the name (docs/language.md, "Names the caller binds"):
with the caller's ``i``, ``jitc.evaluate("a + i")`` adds the caller's
``i``, not the element index; the caller's ``pi``, ``inf``, ``nan`` or
``sum`` likewise (a leftover loop counter ``i`` too); ``sum(a)`` stays the
function.  A name that is nowhere raises ``UnknownNameError`` (a
``ProgramError`` and a ``KeyError``, as numexpr raises) naming it alone,
saying where it was looked for.

Results: the array the program assigns (a new array of NumPy's dtype of
its type, ``ml_dtypes.bfloat16`` for bfloat16; or, for an array the program
updates in place such as ``a[i] += 1``, the array passed, updated); a dict
by name when it assigns several.  An output given by name is written in
place (its dtype then fixes the output's).

Reductions (docs/language.md, "Reductions"): a reduction's result is what
NumPy's own gives, a NumPy scalar of NumPy's type (``np.sum`` of float32 is
``np.float32``, of int32 ``np.int64``, of uint8 ``np.uint64``; ``max`` of
float16 ``np.float16``; ``mean`` of integers ``np.float64``; ``sum``,
``prod``, ``mean``, ``min`` and ``max`` of complex64 ``np.complex64``, min and
max in NumPy's order of complex numbers (by real part, then imaginary part);
``argmin``, ``argmax`` ``np.intp``; ``any``, ``all`` ``np.bool_``); for
device arrays a 0-d array of their kind on their device, written on the
current stream without waiting (as ``cupy.sum`` gives).  ``jitc.evaluate("s =
sum(a*b); m = max(abs(a - b)); c = a - b")`` returns ``{'s': ..., 'm': ...,
'c': array}``.  Over no elements sum is 0, prod 1, any False, all True, mean
NaN; min, max, argmin and argmax raise ``EmptyReductionError``, a
``ProgramError`` (the status the library gives) and a ``ValueError`` (what
NumPy raises).  argmin and argmax count in C order, as NumPy does: over
arrays only Fortran-contiguous (several dimensions) they are refused.  A
result is not given: the call makes it.  The same inputs give the same bits
on every call of a target.

Errors raise ``jitc.Error`` subclasses named after the library's statuses:
``ProgramError`` (with ``.line``, ``.col`` and the caret in the message),
raised as one of ``ProgramSyntaxError`` (also a SyntaxError and a
ValueError: the program does not parse; numexpr raises the one, or the other
where its sanitizer refuses the text), ``UnknownNameError`` (also a
KeyError: a name that is nowhere), ``ProgramValueError`` (also a ValueError:
a value NumPy refuses, such as an integer to a negative integer power) and
``ProgramTypeError`` (also a TypeError: any other error of the program,
Python's ``and``, ``or`` and ``not`` included), the exceptions numexpr's
users catch; ``EmptyReductionError`` is
one too,
``InputError`` (also a ValueError and a TypeError), ``UsageError`` (also a
ValueError), ``TargetUnavailable``, ``OutOfMemory``, ``InternalError``.

Threads: the GIL is released while a kernel compiles and runs.  The package
holds one library context, used by one thread at a time under a lock, so
calls from several threads are safe and run one after another (the cpu
target spreads one large call over all cores itself, or over as many as
``set_num_threads`` or ``threads=`` says; a Kernel keeps the count set
when it was compiled).
"""
import json as _json
import os as _os

import numpy as _np

from . import _dlpack, _jitc
from ._jitc import Kernel, cache_info, clear_cache, default_target, evaluate, re_evaluate, validate

__all__ = [
    "evaluate", "re_evaluate", "validate", "compile", "Kernel", "available", "default_target", "dtypes", "cache_info",
    "set_num_threads", "get_num_threads",
    "clear_cache", "Error", "ProgramError", "ProgramSyntaxError", "UnknownNameError",
    "ProgramTypeError", "ProgramValueError", "EmptyReductionError", "InputError", "UsageError",
    "TargetUnavailable", "OutOfMemory", "InternalError", "OutputError", "__version__",
]
__version__ = _jitc.version


class Error(Exception):
    """The base of jitc's exceptions."""


class UsageError(Error, ValueError):
    """A bad argument to jitc itself: an unknown target, a name the program
    does not use, a missing argument to a kernel."""


class ProgramError(Error):
    """A syntax, name or type error in the program.

    The message shows each error's position, the source line and a caret
    under the spot; ``line`` and ``col`` (1-based) are the first one's.
    """

    def __init__(self, message="", line=0, col=0):
        super().__init__(message)
        self.line = line
        self.col = col


class ProgramSyntaxError(ProgramError, SyntaxError, ValueError):
    """A program that does not parse: a SyntaxError, as Python's eval and so
    numexpr raise, and a ValueError, as numexpr's sanitizer raises for the
    strings it refuses (``a < [0, 0]``, ``lambda x: x``, ``import os;``),
    and as a malformed string argument is one (jitc never hands the text to
    Python, so ``sanitize=`` is taken and changes nothing)."""


class UnknownNameError(ProgramError, KeyError):
    """A name the program reads that is nowhere: not given, not a variable
    of the caller, not the language's (numexpr raises KeyError there)."""

    def __str__(self):
        # The message as it is; KeyError's own str() is the repr of its key.
        return Exception.__str__(self)


class ProgramValueError(ProgramError, ValueError):
    """A value NumPy or Python refuses with a ValueError: an integer to a
    negative integer power (``a ** -1`` of integers), a negative shift
    count of constants (``1 << -1``)."""


class ProgramTypeError(ProgramError, TypeError):
    """Any other error of the program: the types of an operation, a function
    it does not have or its arguments, an assignment it cannot make, and
    Python's boolean operators ``and``, ``or``, ``not``, which the language
    lacks (``&``, ``|``, ``~`` are its): Python parses them, and they fail on
    arrays, with the TypeError numexpr raises there."""


class InputError(Error, ValueError, TypeError):
    """A value jitc cannot take: a dtype it does not have, arrays whose shapes
    do not broadcast, an out= of another shape or a dtype the casting rule
    refuses, a device array written over another's memory."""


class EmptyReductionError(ProgramError, ValueError):
    """``min``, ``max``, ``argmin`` or ``argmax`` of zero elements, which
    have no value (NumPy raises ValueError there): a ProgramError whose
    ``line`` and ``col`` point at the reduction, and a ValueError."""


class TargetUnavailable(Error, RuntimeError):
    """The target cannot run here (no LLVM for cpu, no GPU for cuda)."""


class InternalError(Error, RuntimeError):
    """A bug in jitc, or a failure of a back end (LLVM, NVRTC, the driver)."""


class OutputError(Error):
    """An output that cannot be written."""


class OutOfMemory(Error, MemoryError):
    """Out of host or device memory."""


# The library's vocabulary (jitc_vocabulary(), what `jitc --list` prints):
# its statuses and types with their numbers, so that this file keeps no
# list of either.
_VOCABULARY = _json.loads(_jitc.vocabulary)

# The exception of each status, by the status's name in the library; the
# numbers are the library's (jitc_status).  A status this file does not
# name raises InternalError (tests/python/test_errors.py checks that each
# one is named).
_CLASS_OF_STATUS = {"ok": Error, "usage error": UsageError, "program error": ProgramError,
                    "input error": InputError, "target unavailable": TargetUnavailable,
                    "internal error": InternalError, "output error": OutputError,
                    "out of memory": OutOfMemory}
_STATUS = tuple(_CLASS_OF_STATUS.get(s["name"], InternalError)
                for s in sorted(_VOCABULARY["statuses"], key=lambda s: s["status"]))

# The library's types, as it numbers them (jitc_dtype): (name, typestr) by
# number.  A type whose typestr is a bare void ('<V2') is one NumPy has no
# code for (bfloat16): its arrays are ml_dtypes' type of that name,
# recognised by the name, since any two bytes are a '<V2'.
_TYPES = tuple((t["name"], t["typestr"]) for t in
               sorted(_VOCABULARY["types"], key=lambda t: t["dtype"]))
_DTYPES = {name: k for k, (name, _) in enumerate(_TYPES)}
_BY_TYPESTR = {ts[1:]: name for name, ts in _TYPES if ts[1] != "V"}


def _numpy_dtype(name):
    """NumPy's dtype of the type `name` (ml_dtypes' for bfloat16)."""
    if _TYPES[_DTYPES[name]][1][1] != "V":
        return _np.dtype(name)
    try:
        import ml_dtypes
    except ImportError:
        raise InputError("%s arrays are ml_dtypes.%s arrays: install ml_dtypes (pip install "
                         "ml_dtypes)" % (name, name)) from None
    return _np.dtype(getattr(ml_dtypes, name))


_KNOWN = {}  # (dtype, typestr) -> _known_name's answer: NumPy's dtype.name is slow


def _known_name(dtype=None, typestr=None):
    """The name of one of the types for an array's dtype (by its name, as
    NumPy, CuPy and PyTorch name them: 'uint8', 'torch.bfloat16') or its
    typestr ('<u1'; not a bare void, which says no type), else None."""
    try:
        return _KNOWN[dtype, typestr]
    except (KeyError, TypeError):
        pass
    name = str(getattr(dtype, "name", dtype) if dtype is not None else "").rpartition(".")[2]
    known = name if name in _DTYPES else \
        _BY_TYPESTR.get(typestr[1:]) if typestr else None
    try:
        if len(_KNOWN) < 256:
            _KNOWN[dtype, typestr] = known
    except TypeError:  # an unhashable dtype
        pass
    return known


def dtypes():
    """The names of the library's types, in its order (jitc.h's numbers)."""
    return tuple(_DTYPES)


def _cores():
    """Every core, as the library counts them for a thread count of 0."""
    try:
        return max(1, _os.sysconf("SC_NPROCESSORS_ONLN"))
    except (AttributeError, ValueError, OSError):
        return _os.cpu_count() or 1


def set_num_threads(nthreads):
    """Sets how many threads the cpu target runs a call on (at most; a small
    call uses fewer), as ``numexpr.set_num_threads`` does, and returns the
    number it replaces (every core, at the start).

    It holds for ``evaluate`` calls from now on that give no ``threads=``,
    and for kernels ``compile`` makes from now on (a Kernel keeps the count
    it was compiled with).  The results are the same bits for any count."""
    if isinstance(nthreads, bool) or not isinstance(nthreads, int) or \
            not 1 <= nthreads <= 65536:
        raise UsageError("set_num_threads: give a number of threads from 1 to 65536, not %r"
                         % (nthreads,))
    return _jitc._set_threads(nthreads) or _cores()


def get_num_threads():
    """How many threads the cpu target runs a call on (set_num_threads)."""
    n = _jitc._set_threads(0)
    _jitc._set_threads(n)
    return n or _cores()


def available(target):
    """Whether ``target`` ('interp', 'cpu' or 'cuda') can run here."""
    return _jitc._available(target) is True


def _module_of(obj):
    return type(obj).__module__.split(".")[0]


def _host_from_dlpack(obj):
    """An ndarray view of a CPU tensor: NumPy's from_dlpack, or for a type
    NumPy's DLPack lacks (bfloat16: kDLBfloat) the capsule read here."""
    try:
        return _np.from_dlpack(obj)
    except (BufferError, TypeError, ValueError, RuntimeError) as e:
        try:
            return _dlpack.host_array(obj, _TYPES, _numpy_dtype)
        except TypeError as e2:
            raise InputError("%s; jitc takes %s" % (e2, ", ".join(_DTYPES))) from e


def _device_from_dlpack(obj):
    """_device_info of a CUDA tensor that has DLPack alone: through CuPy or
    PyTorch, else (or when neither has the type) the capsule read here, on
    the legacy default stream."""
    for lib in ("cupy", "torch"):
        try:
            if lib == "cupy":
                import cupy
                view = cupy.from_dlpack(obj)
            else:
                import torch.utils.dlpack
                view = torch.utils.dlpack.from_dlpack(obj)
        except (ImportError, BufferError, TypeError, ValueError, RuntimeError):
            continue
        return _device_info(view)[:6] + (view,)
    v = _dlpack.View(obj, _TYPES, stream=1)
    return (v.ptr, v.shape, v.strides, v.name or v.described, 0, v.device_id, v)


def _device_info(obj):
    """What _jitc needs of a device array: (pointer, shape, strides in bytes
    or None, the name of its type (or what it is when none of jitc's),
    stream, device, keepalive); an ndarray view for a DLPack array on the
    CPU; None when obj is not an array."""
    kind = _module_of(obj)
    if kind == "torch":
        if not obj.is_cuda:
            return _host_from_dlpack(obj)
        import torch
        item = obj.element_size()
        # The tensor's own dtype names the type: its __cuda_array_interface__
        # says '<f2' for bfloat16 as for float16.
        return (obj.data_ptr(), tuple(obj.shape), tuple(s * item for s in obj.stride()),
                _known_name(obj.dtype) or str(obj.dtype),
                torch.cuda.current_stream(obj.device).cuda_stream, obj.device.index, obj)
    if kind == "cupy" and hasattr(obj, "data") and hasattr(obj.data, "ptr"):
        # A CuPy array's own attributes: its __cuda_array_interface__ says the
        # same, through a dict made on each call.  From now on _jitc reads
        # cupy.ndarray's attributes itself, and makes its outputs.
        import cupy
        if type(obj) is cupy.ndarray:
            _jitc._set_cupy(cupy.ndarray, cupy.empty, cupy.cuda.get_current_stream,
                            cupy.cuda.runtime.getDevice)
        return (obj.data.ptr, obj.shape, obj.strides, _known_name(obj.dtype) or str(obj.dtype),
                cupy.cuda.get_current_stream().ptr, obj.device.id, obj)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None:
        dev = obj.__dlpack_device__()
        if dev[0] == _dlpack.KDL_CPU:
            return _host_from_dlpack(obj)
        if dev[0] not in (_dlpack.KDL_CUDA, _dlpack.KDL_CUDA_MANAGED):
            return None
        return _device_from_dlpack(obj)
    if kind == "cupy":
        import cupy
        stream = cupy.cuda.get_current_stream().ptr
        device = obj.device.id
    else:
        # __cuda_array_interface__ v3: None: no stream to order against;
        # 1: the legacy default stream; 2: the per-thread default stream.
        stream = cai.get("stream")
        stream = 0 if stream in (None, 1) else stream
        device = None
    strides = cai.get("strides")
    # The array's dtype names the type where it has one (CuPy's; a bare
    # '<V2' typestr says no type), else the typestr.
    name = _known_name(getattr(obj, "dtype", None), cai["typestr"]) or cai["typestr"]
    return (cai["data"][0], tuple(cai["shape"]), tuple(strides) if strides else None,
            name, stream, device, obj)


def _device_empty(like, shape, dtype, axes):
    """A new device array of the kind of ``like``, on its device, of
    ``shape``, its axes laid out in memory in the order ``axes`` gives them,
    outermost first (None: C order): the array made in C order with its
    axes so ordered, then its axes put back."""
    laid = shape if axes is None else tuple(shape[a] for a in axes)
    back = None if axes is None else tuple(sorted(range(len(axes)), key=axes.__getitem__))
    if _module_of(like) == "torch":
        import torch
        t = torch.empty(laid, dtype=getattr(torch, dtype), device=like.device)
        return t if back is None else t.permute(back)
    try:
        import cupy
    except ImportError:
        raise InputError("outputs on the device are CuPy arrays or PyTorch tensors: install "
                         "CuPy, or pass the outputs") from None
    dev = getattr(like, "device", None)
    with cupy.cuda.Device(dev.id if hasattr(dev, "id") else None):
        a = cupy.empty(laid, dtype=_numpy_dtype(dtype))
    return a if back is None else a.transpose(back)


def _missing_note(message, missing, local_vars, global_vars, caller, given=(False, False)):
    """The message of a check whose names ``missing`` are nowhere: the
    checker's, then, for each, where it was looked for and what to do (the
    lookup is numexpr's: the caller's locals, then its globals, or the
    local_dict and global_dict given in their place: ``given`` says which)."""
    seen = {}
    for scope in (global_vars, local_vars):
        try:
            seen.update((k, v) for k, v in scope.items() if isinstance(k, str))
        except (AttributeError, TypeError):
            pass
    # Suggestions: the caller's values, not its functions, classes, modules.
    values = [k for k, v in seen.items() if not k.startswith("__") and not callable(v)
              and not isinstance(v, type(_np))]
    lines = [message]
    local_given, global_given = given
    if not local_given and not global_given:
        where = ("in the calling function's locals, then in its module's globals, as numexpr "
                 "does (not in builtins; a variable of an enclosing function is a local only "
                 "where the calling function's own code uses it)")
    else:
        where = "in %s, then in %s, as numexpr does" % (
            "local_dict" if local_given else "the calling function's locals",
            "global_dict" if global_given else "the calling function's module's globals")
    for name in missing:
        said = [ln for ln in message.splitlines() if "unknown name '%s'" % name in ln]
        near = None if any("did you mean" in ln for ln in said) else \
            _jitc._nearest_name(name, values)
        lines.append(
            "'%s' is not given by keyword and is not a variable of the caller: %s looks "
            "%s; pass it by keyword, %s=...%s"
            % (name, caller, where, name, "; did you mean the caller's '%s'?" % near if near
               else ""))
    return "\n".join(lines)


def _dtype_name(spec):
    """The type a signature's dtype names: a string as jitc reads one (a
    type's name, NumPy's code such as 'f4', a short name), else NumPy's
    dtype of it (np.float16, ml_dtypes.bfloat16); None if it names none of
    the types."""
    if isinstance(spec, str):
        k = _jitc._dtype_parse(spec)
        if k is not None:
            return _TYPES[k][0]
    try:
        dt = _np.dtype(spec)
    except TypeError:
        return None
    return _known_name(dt, None if dt.kind == "V" else dt.str)


# Python's scalar types: weak scalars, of the type NumPy gives each.
_PYTHON_SCALARS = (bool, int, float, complex)


def _signature_code(name, spec):
    """The _jitc code (kind | dtype) that one entry of a signature means."""
    if any(spec is kind for kind in _PYTHON_SCALARS):
        return _jitc.WEAK | _DTYPES[_np.dtype(spec).name]
    if isinstance(spec, _np.generic) or (isinstance(spec, _np.ndarray) and spec.ndim == 0):
        dt = _dtype_name(spec.dtype)
        if dt:
            return _jitc.STRONG | _DTYPES[dt]
    elif isinstance(spec, _PYTHON_SCALARS):
        kind = next(k for k in _PYTHON_SCALARS if isinstance(spec, k))
        return _jitc.WEAK | _DTYPES[_np.dtype(kind).name]
    elif isinstance(spec, _np.ndarray):
        dt = _dtype_name(spec.dtype)
        if dt:
            return _jitc.HOST | _DTYPES[dt]
    elif hasattr(spec, "__cuda_array_interface__") or hasattr(spec, "__dlpack_device__"):
        info = _device_info(spec)
        if isinstance(info, _np.ndarray):
            return _signature_code(name, info)
        dt = info and _dtype_name(info[3])
        if dt:
            return _jitc.DEVICE | _DTYPES[dt]
    else:
        dt = _dtype_name(spec)
        if dt:
            return _jitc.HOST | _DTYPES[dt]
    raise InputError(f"signature: '{name}' = {spec!r}: give a dtype (np.float32, 'int64') or "
                     "an example array for an array, int, float, complex or bool (or an "
                     "example value) for a weak scalar, a NumPy scalar for a typed one; jitc's "
                     "dtypes are " + ", ".join(_DTYPES))


def compile(program, target=None, **signature):
    """Compiles ``program`` into a Kernel to call many times.

    ``signature`` gives, by name, what the kernel will be called with:

    - an array: its dtype (``np.float32``, ``'uint8'``, ``np.dtype('f8')``,
      ``ml_dtypes.bfloat16``; a string is read as ``jitc --dtype`` reads it:
      NumPy's codes first, so ``'i8'`` is int64, then the language's short
      names, ``'bf16'``) or an example array (a device array makes a kernel
      for device arrays);
    - a weak scalar: ``int``, ``float``, ``complex`` or ``bool``, or an
      example Python number;
    - a typed scalar: an example NumPy scalar (``np.float32(0)``,
      ``np.uint16(0)``, ``np.complex64(0)``).

    Names the program reads must all be in the signature (there is no
    lookup in the caller's variables); a name of the signature is the
    kernel's even where the language has the name (``i``, ``pi``, ``sum``
    not called: docs/language.md, "Names the caller binds"), and
    ``kernel.language_names`` lists those the program read as the
    language's.  An output in the signature has its
    dtype fixed, and may then be passed to be written in place; a
    reduction's result there only states its dtype (the call returns it:
    ``kernel.reductions`` names each result's reduction,
    ``kernel.reduction_axes`` its axes and keepdims).
    ``kernel.params`` is the signature's order, which positional arguments
    follow::

        k = jitc.compile("c = alpha*a + b", a=np.float64, b=np.float64, alpha=float)
        c = k(x, y, 2.0)            # or k(a=x, b=y, alpha=2.0)

    target: 'interp', 'cpu' or 'cuda'; None: 'cuda' for a device-array
    signature, else ``default_target()``.
    """
    decls = tuple((name, _signature_code(name, spec)) for name, spec in signature.items())
    return _jitc._compile(program, target, decls)


_jitc._init(_STATUS, (ProgramSyntaxError, UnknownNameError, ProgramTypeError, ProgramValueError),
            _device_info,
            _device_empty, EmptyReductionError, _numpy_dtype, _missing_note)
for _f in (evaluate, cache_info, clear_cache, default_target):
    try:
        _f.__module__ = "jitc"
    except (AttributeError, TypeError):
        pass
del _f
