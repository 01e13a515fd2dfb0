"""Every type of the library's table from Python: NumPy arrays and scalars of
each (ml_dtypes' bfloat16 too, recognised by its name), the spellings a
signature takes, outputs and results of NumPy's dtypes, device arrays'
dtypes, jitc.dask's chunks; the package's lists are the library's."""
import os
import subprocess
import sys

import numpy as np
import pytest

import jitc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import t_types  # noqa: E402  (src/types.h, the table)

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None

ROWS = t_types.table()
NAMES = [r["name"] for r in ROWS]


def np_dtype(name):
    """NumPy's dtype of a type, as a user names it."""
    if name == "bfloat16":
        if ml_dtypes is None:
            pytest.skip("no ml_dtypes")
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def sample(name, n=7):
    """n values of the type, its extremes among them."""
    dt = np_dtype(name)
    if dt.kind == "b":
        return np.arange(n) % 3 == 1
    if dt.kind in "iu":
        info = np.iinfo(dt)
        v = np.arange(n, dtype=np.int64) * 37 % 100
        v = v.astype(dt)
        v[:2] = [info.min, info.max]
        return v
    v = np.array([1 / 3, -2.5, np.inf, -0.0, np.nan, 1e-3, 100.0] * n)[:n]
    if dt.kind == "c":  # both parts: the values, and again in reverse
        z = np.empty(n, dt)
        z.real, z.imag = v, v[::-1]
        return z
    return v.astype(dt)


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


PRE = "import numpy as np, jitc\ntry:\n    import ml_dtypes\nexcept ImportError:\n    pass\n"
_computes = []


def interp_runs(code):
    """Runs `code` (with np, jitc, ml_dtypes imported) in a fresh python (a
    failed run may abort).  Skipped while the interpreter does not compute
    in the new types (a cast to int8 and a float16 sum, tried once), which
    the library's semantics give, not the package."""
    if not _computes:
        probe = subprocess.run([sys.executable, "-c", PRE + """
b = jitc.evaluate("b = i8(a)", "interp", a=np.array([3.0, -2.0]))
s = jitc.evaluate("s = sum(a)", "interp", a=np.ones(3, np.float16))
assert b.tolist() == [3, -2] and s == 3
"""], capture_output=True, text=True, timeout=120)
        _computes.append(probe.returncode == 0)
    if not _computes[0]:
        pytest.skip("the interpreter does not compute in the new types here")
    p = subprocess.run([sys.executable, "-c", PRE + code], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]


def test_dtypes_are_the_table():
    assert [name for name, _ in jitc._TYPES] == NAMES
    assert jitc.dtypes() == tuple(NAMES)
    for name, typestr in jitc._TYPES:
        if name != "bfloat16" or ml_dtypes:
            assert np_dtype(name).str[1:] == typestr[1:], name


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_array_in_and_out(name, order):
    a = np.array(sample(name, 12).reshape(3, 4), order=order)
    b = jitc.evaluate("b = a", "interp", a=a)
    assert same(b, a) and b.flags.f_contiguous == a.flags.f_contiguous
    c = a.copy(order="K")
    jitc.evaluate("c[i] = a", "interp", a=a, c=np.zeros_like(c))  # a given output: in place
    k = jitc.compile("b = a", "interp", a=a)
    assert k.arrays == (("a", "input", name), ("b", "output", name))
    assert same(k(a), a)


@pytest.mark.parametrize("name", NAMES)
def test_signature_spellings(name):
    dt = np_dtype(name)
    specs = [name, dt, dt.type, sample(name)]
    if dt.kind != "V":
        specs.append(dt.str)
    for spec in specs:
        k = jitc.compile("b = a", "interp", a=spec)
        assert k.arrays[0] == ("a", "input", name), spec
    short = next(r["short"] for r in ROWS if r["name"] == name)
    # A string is read as jitc reads --dtype: NumPy's code first ('i8' is int64).
    want = np.dtype(short).name if short in ("i8", "u8") else name
    assert jitc.compile("b = a", "interp", a=short).arrays[0][2] == want


@pytest.mark.parametrize("name", NAMES)
def test_numpy_scalars_are_typed(name):
    dt = np_dtype(name)
    v = sample(name, 3)[2]
    for s in (dt.type(v), np.array(v, dt)):
        k = jitc.compile("b = where(a, s, s)", "interp", a=np.bool_, s=s)
        assert k.scalars == (("s", name),)
        assert k.arrays[1] == ("b", "output", name)


@pytest.mark.parametrize("name", NAMES)
def test_numpy_scalar_values(name):
    if name == "bfloat16" and ml_dtypes is None:
        pytest.skip("no ml_dtypes")
    dt = "ml_dtypes.bfloat16" if name == "bfloat16" else "np.dtype(%r)" % name
    interp_runs("""
dt = np.dtype(%s)
info = np.iinfo(dt) if dt.kind in "iu" else None
for v in ([info.min, info.max, 1] if info else [0.1 - 3e38j, -2.5j, 1] if dt.kind == "c"
          else [0.1, -2.5, 1]):
    s = np.array(v).astype(dt)[()]
    b = jitc.evaluate("b = where(a, s, s)", "interp", a=np.ones(3, bool), s=s)
    assert b.dtype == dt and (b.view(np.uint8) == np.full(3, s, dt).view(np.uint8)).all(), (b, s)
""" % dt)


def test_bfloat16_is_known_by_its_name():
    if ml_dtypes is None:
        pytest.skip("no ml_dtypes")
    with pytest.raises(jitc.InputError, match=r"an array of \|V2; jitc takes bool, int8"):
        jitc.evaluate("b = a", "interp", a=np.zeros(3, "V2"))
    a = np.arange(4).astype(ml_dtypes.bfloat16)
    b = jitc.evaluate("b = a", "interp", a=a)
    assert b.dtype == np.dtype(ml_dtypes.bfloat16) and same(b, a)
    for spec in ("bfloat16", "bf16", ml_dtypes.bfloat16, np.dtype(ml_dtypes.bfloat16)):
        assert jitc.compile("b = a", "interp", a=spec).arrays[0][2] == "bfloat16"


def test_messages_list_the_library_types():
    """The message names every type of the table once, by kind (bool,
    signed, unsigned, float, complex; bfloat16 a float) and then size."""
    with pytest.raises(jitc.InputError, match="jitc takes ") as e:
        jitc.evaluate("b = a", "interp", a=np.zeros(3, np.clongdouble))
    listed = str(e.value).split("jitc takes ", 1)[1].split(" (", 1)[0]
    listed = listed.replace(" and ", ", ").split(", ")
    assert sorted(listed) == sorted(NAMES)
    kinds = ["T_BOOL", "T_SINT", "T_UINT", "T_FLOAT", "T_COMPLEX"]
    rank = [(kinds.index(r["kind"]) if r["kind"] in kinds else len(kinds), r["size"], k)
            for k, r in enumerate(ROWS)]
    assert listed == [ROWS[k]["name"] for _, _, k in sorted(rank)]
    with pytest.raises(jitc.InputError, match="dtypes are " + ", ".join(NAMES)):
        jitc.compile("b = a", "interp", a=np.clongdouble)


def test_outputs_and_results_of_numpy_types():
    interp_runs("""
for name, want in (("int8", "int8"), ("uint16", "uint16"), ("float16", "float16")):
    b = jitc.evaluate("b = %s(a)" % name, "interp", a=np.arange(5.0))
    assert b.dtype == np.dtype(want) and (b == np.arange(5)).all(), b
b = jitc.evaluate("b = bf16(a)", "interp", a=np.arange(5.0))
assert b.dtype == np.dtype(ml_dtypes.bfloat16) and (b == np.arange(5)).all(), b
for a, op, want in ((np.arange(5, dtype=np.int8), "sum", np.int64),
                    (np.arange(5, dtype=np.uint8), "sum", np.uint64),
                    (np.arange(5, dtype=np.uint32), "max", np.uint32),
                    (np.arange(5, dtype=np.float16), "max", np.float16),
                    (np.arange(5).astype(ml_dtypes.bfloat16), "max", ml_dtypes.bfloat16),
                    (np.arange(5, dtype=np.int16), "argmax", np.intp)):
    r = jitc.evaluate("s = %s(a)" % op, "interp", a=a)
    ref = getattr(np, op)(a)
    assert type(r) is want and type(r) is type(ref) and r == ref, (op, a.dtype, r, ref)
""")


# ---- device arrays: the dtype is found by name, not by typestr alone ----

class FakeDeviceArray:
    """__cuda_array_interface__ over host memory, optionally with a dtype."""

    def __init__(self, host, typestr=None, dtype=None):
        self.host = host
        if dtype is not None:
            self.dtype = dtype
        self.__cuda_array_interface__ = {
            "shape": host.shape, "typestr": typestr or host.dtype.str,
            "data": (host.ctypes.data, False), "version": 3, "strides": None, "stream": None}


@pytest.mark.parametrize("name", NAMES)
def test_device_info_names_the_type(name):
    dt = np_dtype(name)
    host = np.zeros(4, dt)
    info = jitc._device_info(FakeDeviceArray(host, dtype=dt))
    assert info[3] == name
    if dt.kind != "V":  # a typestr alone names a type NumPy has a code for
        assert jitc._device_info(FakeDeviceArray(host))[3] == name


def test_device_bare_void_refused():
    host = np.zeros(4, np.uint16)
    with pytest.raises(jitc.InputError, match="device array of <V2; jitc takes bool, int8"):
        jitc.evaluate("c = a", a=FakeDeviceArray(host, typestr="<V2"))
    if not jitc.available("cuda") and ml_dtypes is not None:
        # Named, it binds: then only the target is missing.
        with pytest.raises(jitc.TargetUnavailable):
            jitc.evaluate("c = a", a=FakeDeviceArray(host, typestr="<V2",
                                                     dtype=np.dtype(ml_dtypes.bfloat16)))


def test_torch_tensors_of_every_type():
    torch = pytest.importorskip("torch")
    for name in NAMES:
        tdt = getattr(torch, name, None)
        if tdt is None or (name == "bfloat16" and ml_dtypes is None):
            continue
        t = torch.arange(6).to(tdt)
        b = jitc.evaluate("b = a", "interp", a=t)
        assert b.dtype == np_dtype(name), name
        assert (b.astype(np.float64) == t.to(torch.float64).numpy()).all(), name


# ---- DLPack: the capsule's type code and width name the type ----

class DLPackTensor:
    """A NumPy buffer exported by DLPack as a CPU tensor of the given type
    code and width (jitc._dlpack's structures: dlpack.h's ABI); counts the
    deleter's calls when `count` (a Python deleter cannot run while an
    exception is set: the error cases go without)."""

    deleted = 0

    def __init__(self, host, code, bits, count=True):
        self.host, self.code, self.bits, self.count = host, code, bits, count
        self.keep = []

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU

    def __dlpack__(self, stream=None, **kwargs):
        import ctypes
        from jitc import _dlpack as D
        m = D._Managed()
        t = m.dl_tensor
        t.data = self.host.ctypes.data
        t.device = D._Device(1, 0)
        t.ndim = self.host.ndim
        t.dtype = D._DataType(self.code, self.bits, 1)
        shape = (ctypes.c_int64 * self.host.ndim)(*self.host.shape)
        t.shape = shape
        deleter = D._DELETER(lambda p: setattr(DLPackTensor, "deleted",
                                               DLPackTensor.deleted + 1))
        if self.count:
            m.deleter = deleter
        self.keep += [m, shape, deleter]
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(m), b"dltensor", None)


def test_dlpack_type_codes():
    # kDLBool, kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLComplex
    kdl = {"b": 6, "i": 0, "u": 1, "f": 2, "V": 4, "c": 5}
    for name, typestr in jitc._TYPES:
        if name == "bfloat16" and ml_dtypes is None:
            continue
        host = sample(name, 6)
        before = DLPackTensor.deleted
        b = jitc.evaluate("b = a", "interp",
                          a=DLPackTensor(host.view("u%d" % host.itemsize) if typestr[1] == "V"
                                         else host, kdl[typestr[1]], 8 * host.itemsize))
        assert same(b, host), name
        import gc
        gc.collect()
        assert DLPackTensor.deleted > before, name  # the tensor was given back
    with pytest.raises(jitc.InputError, match=r"code 5, 32 bits.*jitc takes bool"):
        jitc.evaluate("b = a", "interp", a=DLPackTensor(np.zeros(3, np.float32), 5, 32,
                                                        count=False))
    with pytest.raises(jitc.InputError, match=r"code 2, 128 bits.*jitc takes bool"):
        jitc.evaluate("b = a", "interp", a=DLPackTensor(np.zeros(3, np.complex128), 2, 128,
                                                        count=False))


# ---- jitc.dask: chunks and meta of the kernel's dtypes ----

@pytest.mark.parametrize("name", NAMES)
def test_dask_chunks_keep_the_type(name):
    da = pytest.importorskip("dask.array")
    a = sample(name, 10)
    d = da.from_array(a, chunks=4)
    import jitc.dask
    b = jitc.dask.evaluate("b = a", "interp", a=d)
    assert b.dtype == a.dtype and b._meta.dtype == a.dtype
    assert same(b.compute(), a)
