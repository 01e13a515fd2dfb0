"""reduce_lib.py -- runs a program through libjitc (ctypes) on given NumPy
arrays and returns its arrays and reduction results, for the reduction tests:
the library is what returns a reduction's result (one element of its dtype),
whatever the command line prints."""
import ctypes as C
import os
import re

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", "build")
LIB = os.path.join(ROOT, BUILD, "libjitc.so")


def use_build(build):
    """Loads libjitc from build (a folder, relative to the root) instead of
    $BUILD's: the benchmarks' --build.  Before the first lib()."""
    global LIB
    LIB = os.path.join(ROOT, build, "libjitc.so")

try:
    import ml_dtypes
    BFLOAT16 = ml_dtypes.bfloat16
except ImportError:  # bfloat16 arrays need ml_dtypes; the other types do not
    BFLOAT16 = None


def type_rows():
    """The rows of src/types.h, the one table of types, in jitc_dtype order:
    dicts of id, name, short, kind ("b", "i", "u", "f" or "c") and size."""
    text = open(os.path.join(ROOT, "src", "types.h")).read()
    block = text[text.index("#ifdef TYPE"):]
    block = block[:block.index("#endif")]
    kinds = {"T_BOOL": "b", "T_SINT": "i", "T_UINT": "u", "T_FLOAT": "f", "T_COMPLEX": "c"}
    return [{"id": m.group(1), "name": m.group(2), "short": m.group(3),
             "kind": kinds[m.group(4)], "size": int(m.group(5))}
            for m in re.finditer(r'^TYPE\((\w+),\s*"(\w+)",\s*"(\w+)",\s*\w+,\s*(\w+),\s*(\d+)',
                                 block, re.M)]


def numpy_type(name):
    """NumPy's scalar type of a jitc type name (bfloat16: ml_dtypes'; None without it)."""
    return BFLOAT16 if name == "bfloat16" else np.dtype(name).type


# By jitc_dtype number (jitc.h), from the table.
DTYPES = [numpy_type(r["name"]) for r in type_rows()]
TARGETS = {"interp": 0, "cpu": 1, "cuda": 2}
RESULT = 3


class Options(C.Structure):
    _fields_ = [("target", C.c_int), ("threads", C.c_int), ("fast_math", C.c_int),
                ("no_cache", C.c_int), ("cache_dir", C.c_char_p), ("cuda_arch", C.c_char_p),
                ("implicit_inputs", C.c_int), ("implicit_dtype", C.c_int),
                ("cpu", C.c_char_p), ("source_name", C.c_char_p), ("devices", C.c_char_p)]


class ArrayDecl(C.Structure):
    _fields_ = [("name", C.c_char_p), ("dtype", C.c_int)]


class ScalarDecl(C.Structure):
    _fields_ = [("name", C.c_char_p), ("dtype", C.c_int), ("weak", C.c_int)]


class Value(C.Structure):
    """jitc_value: the dtype, then the value (u.f, or u.c's real and
    imaginary parts: ctypes has no union of them, and im is read only for
    complex values)."""
    _fields_ = [("dtype", C.c_int), ("u", C.c_double), ("im", C.c_double)]


def under_sanitizers(group):
    """Under SAN=1 (the library is the ASan+UBSan build) python can load it
    only with the sanitizer runtimes preloaded: runs this script again so,
    python's own allocations not checked for leaks.  Exits with a skip line
    for `group` when the compiler names no runtimes to preload."""
    if os.environ.get("SAN") != "1" or "JITC_SAN_PRELOADED" in os.environ:
        return
    import subprocess
    import sys
    cc = os.environ.get("CC", "cc")
    libs = [subprocess.run([cc, f"-print-file-name={x}"], capture_output=True,
                           text=True).stdout.strip() for x in ("libasan.so", "libubsan.so")]
    if not all(os.path.isabs(x) and os.path.exists(x) for x in libs):
        print(f"skip {group}: ASan build, and {cc} names no libasan.so/libubsan.so to preload")
        sys.exit(0)
    # Leak checking stays off, last in the options so that it wins: the
    # interpreter's own allocations at exit are not jitc's (the C tests
    # check jitc's leaks).
    env = dict(os.environ, LD_PRELOAD=":".join(libs), JITC_SAN_PRELOADED="1",
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


_lib = None


def lib():
    global _lib
    if _lib is None:
        L = C.CDLL(LIB)
        L.jitc_context_new.restype = C.c_void_p
        L.jitc_context_free.argtypes = [C.c_void_p]
        L.jitc_options_init.argtypes = [C.POINTER(Options)]
        L.jitc_errmsg.restype = C.c_char_p
        L.jitc_errmsg.argtypes = [C.c_void_p]
        L.jitc_compile.argtypes = [C.c_void_p, C.c_char_p, C.POINTER(ArrayDecl), C.c_int,
                                   C.POINTER(ScalarDecl), C.c_int, C.POINTER(Options),
                                   C.POINTER(C.c_void_p)]
        L.jitc_kernel_free.argtypes = [C.c_void_p]
        L.jitc_kernel_array_count.argtypes = [C.c_void_p]
        L.jitc_kernel_array.argtypes = [C.c_void_p, C.c_int, C.POINTER(C.c_char_p),
                                        C.POINTER(C.c_int), C.POINTER(C.c_int)]
        L.jitc_kernel_scalar_count.argtypes = [C.c_void_p]
        L.jitc_kernel_scalar.argtypes = [C.c_void_p, C.c_int, C.POINTER(C.c_char_p),
                                         C.POINTER(C.c_int)]
        L.jitc_run.argtypes = [C.c_void_p, C.c_void_p, C.c_int64, C.POINTER(C.c_void_p),
                               C.POINTER(Value), C.c_void_p]
        L.jitc_emit.argtypes = [C.c_void_p, C.c_char_p, C.POINTER(ArrayDecl), C.c_int,
                                C.POINTER(ScalarDecl), C.c_int, C.POINTER(Options), C.c_char_p,
                                C.POINTER(C.c_void_p)]
        L.jitc_free.argtypes = [C.c_void_p]
        L.jitc_run_arrays.argtypes = [C.c_void_p, C.c_void_p, C.POINTER(Array),
                                      C.POINTER(Value), C.c_void_p]
        L.jitc_broadcast_shape.argtypes = [C.c_void_p, C.c_void_p, C.POINTER(Array),
                                           C.POINTER(C.c_int), C.POINTER(C.c_int64)]
        _lib = L
    return _lib


class Array(C.Structure):
    """jitc_array: a data address, the number of axes, the shape, the strides in bytes."""
    _fields_ = [("data", C.c_void_p), ("ndim", C.c_int), ("shape", C.POINTER(C.c_int64)),
                ("strides", C.POINTER(C.c_int64))]


def describe(arr, keep):
    """The jitc_array of NumPy array arr (any view); keep holds its ctypes buffers."""
    shape = (C.c_int64 * max(1, arr.ndim))(*arr.shape)
    strides = (C.c_int64 * max(1, arr.ndim))(*arr.strides)
    keep += [shape, strides]
    return Array(arr.__array_interface__["data"][0], arr.ndim, shape, strides)


class JitcError(Exception):
    def __init__(self, status, msg):
        super().__init__(f"status {status}: {msg}")
        self.status = status


class Runner:
    """One context; compiles and runs programs on NumPy arrays."""

    def __init__(self):
        self.ctx = lib().jitc_context_new()

    def close(self):
        lib().jitc_context_free(self.ctx)

    def options(self, target, threads=0, cpu=None):
        o = Options()
        lib().jitc_options_init(C.byref(o))
        o.target = TARGETS[target]
        o.threads = threads
        o.no_cache = 1
        o.cpu = cpu.encode() if cpu else None
        return o

    def compile(self, prog, inputs, target, threads=0, cpu=None, scalars=None):
        names = list(inputs)
        decls = (ArrayDecl * max(1, len(names)))()
        for k, nm in enumerate(names):
            decls[k].name = nm.encode()
            decls[k].dtype = DTYPES.index(inputs[nm].dtype.type)
        sc = scalars or {}
        sdecl = (ScalarDecl * max(1, len(sc)))()
        for k, nm in enumerate(sc):
            v = sc[nm]
            sdecl[k].name = nm.encode()
            if isinstance(v, tuple):  # (value, jitc_dtype number): a typed scalar
                sdecl[k].dtype, sdecl[k].weak = v[1], 0
            else:
                sdecl[k].dtype = (4 if isinstance(v, float) else
                                  DTYPES.index(np.complex128) if isinstance(v, complex) else 2)
                sdecl[k].weak = 1
        o = self.options(target, threads, cpu)
        k = C.c_void_p()
        st = lib().jitc_compile(self.ctx, prog.encode(), decls, len(names), sdecl, len(sc),
                                C.byref(o), C.byref(k))
        if st:
            raise JitcError(st, lib().jitc_errmsg(self.ctx).decode())
        return k

    def run_kernel(self, k, inputs, n, scalars=None):
        """Runs kernel k; returns {name: array or 0-d result}."""
        L = lib()
        na = L.jitc_kernel_array_count(k)
        ptrs = (C.c_void_p * max(1, na))()
        out = {}
        for j in range(na):
            nm, role, dt = C.c_char_p(), C.c_int(), C.c_int()
            L.jitc_kernel_array(k, j, C.byref(nm), C.byref(role), C.byref(dt))
            name = nm.value.decode()
            if name in inputs:
                arr = inputs[name]
            elif role.value == RESULT:
                arr = np.zeros(1, DTYPES[dt.value])
            else:
                arr = np.zeros(max(n, 1), DTYPES[dt.value])
            out[name] = (arr, role.value)
            ptrs[j] = arr.ctypes.data
        ns = L.jitc_kernel_scalar_count(k)
        vals = (Value * max(1, ns))()
        for j in range(ns):
            nm, dt = C.c_char_p(), C.c_int()
            L.jitc_kernel_scalar(k, j, C.byref(nm), C.byref(dt))
            v = (scalars or {})[nm.value.decode()]
            if isinstance(v, tuple):
                v = v[0]
            if isinstance(v, float):
                vals[j].dtype = 4
                vals[j].u = v
            elif isinstance(v, complex):
                vals[j].dtype = DTYPES.index(np.complex128)
                vals[j].u, vals[j].im = v.real, v.imag
            else:
                vals[j].dtype = 2
                C.cast(C.byref(vals[j], 8), C.POINTER(C.c_int64))[0] = v
        st = L.jitc_run(self.ctx, k, n, ptrs, vals, None)
        if st:
            raise JitcError(st, L.jitc_errmsg(self.ctx).decode())
        return {nm: (a[0] if role == RESULT else a[:n]) for nm, (a, role) in out.items()
                if nm not in inputs}

    def run(self, prog, inputs, target, threads=0, cpu=None, scalars=None):
        n = len(next(iter(inputs.values())))
        inputs = {nm: np.ascontiguousarray(a) for nm, a in inputs.items()}
        k = self.compile(prog, inputs, target, threads, cpu, scalars)
        try:
            return self.run_kernel(k, inputs, n, scalars)
        finally:
            lib().jitc_kernel_free(k)

    def roles(self, k):
        """[(name, role, NumPy type)] of kernel k's arrays, in its order."""
        L, out = lib(), []
        for j in range(L.jitc_kernel_array_count(k)):
            nm, role, dt = C.c_char_p(), C.c_int(), C.c_int()
            L.jitc_kernel_array(k, j, C.byref(nm), C.byref(role), C.byref(dt))
            out.append((nm.value.decode(), role.value, DTYPES[dt.value]))
        return out

    def arrays(self, k, named, keep):
        """The jitc_array list of kernel k from {name: NumPy array} (others zeroed)."""
        roles = self.roles(k)
        arrs = (Array * max(1, len(roles)))()
        for j, (nm, _, _) in enumerate(roles):
            if nm in named:
                arrs[j] = describe(named[nm], keep)
        return arrs

    def broadcast_shape(self, k, inputs):
        keep = []
        arrs = self.arrays(k, inputs, keep)
        nd, shape = C.c_int(), (C.c_int64 * 64)()
        st = lib().jitc_broadcast_shape(self.ctx, k, arrs, C.byref(nd), shape)
        if st:
            raise JitcError(st, lib().jitc_errmsg(self.ctx).decode())
        return tuple(shape[d] for d in range(nd.value))

    def prepare_arrays(self, k, inputs, outs=None):
        """What jitc_run_arrays takes for kernel k over NumPy arrays of any
        shape: (jitc_array list, buffers to keep, {name: output}); outputs
        not in outs are allocated in C order with the broadcast shape."""
        shape = self.broadcast_shape(k, inputs)
        outs = dict(outs or {})
        for nm, role, dt in self.roles(k):
            if nm not in inputs and nm not in outs:
                outs[nm] = np.zeros((), dt) if role == RESULT else np.zeros(shape, dt)
        keep = []
        return self.arrays(k, {**inputs, **outs}, keep), keep, outs

    def run_prepared(self, k, arrs):
        st = lib().jitc_run_arrays(self.ctx, k, arrs, None, None)
        if st:
            raise JitcError(st, lib().jitc_errmsg(self.ctx).decode())

    def run_arrays(self, prog, inputs, target, outs=None, threads=0):
        """Runs prog with jitc_run_arrays; returns {name: output or result}."""
        decl = {nm: np.empty(1, a.dtype) for nm, a in inputs.items()}
        k = self.compile(prog, decl, target, threads)
        try:
            arrs, keep, outs = self.prepare_arrays(k, inputs, outs)
            self.run_prepared(k, arrs)
            return outs
        finally:
            lib().jitc_kernel_free(k)

    def emit(self, prog, inputs, target, stage, cpu=None):
        names = list(inputs)
        decls = (ArrayDecl * max(1, len(names)))()
        for j, nm in enumerate(names):
            decls[j].name = nm.encode()
            decls[j].dtype = inputs[nm]  # a jitc_dtype number
        o = self.options(target, 0, cpu)
        text = C.c_void_p()
        st = lib().jitc_emit(self.ctx, prog.encode(), decls, len(names), None, 0, C.byref(o),
                             stage.encode(), C.byref(text))
        if st:
            raise JitcError(st, lib().jitc_errmsg(self.ctx).decode())
        s = C.cast(text, C.c_char_p).value.decode()
        lib().jitc_free(text)
        return s
