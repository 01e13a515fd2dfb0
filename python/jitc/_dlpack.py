"""DLPack capsules read by jitc itself, for what NumPy's from_dlpack does not
take (a bfloat16 tensor: NumPy has no such type) and for device tensors
when neither CuPy nor PyTorch is here to read them.

A capsule holds a DLManagedTensor (dlpack.h, the ABI every producer
shares): the data pointer, the device, the shape and strides in elements,
and the type as a code and a width: kDLInt (0), kDLUInt (1), kDLFloat (2),
kDLBfloat (4), kDLComplex (5; the width of both parts: 64 for complex64),
kDLBool (6).  The consumer renames the capsule
"used_dltensor" and calls the tensor's deleter when done with it; here that
is when the View that holds it is freed.
"""
import ctypes

_KDL_CODES = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}  # NumPy's kind letter of each code
_KDL_BFLOAT = 4
KDL_CPU, KDL_CUDA, KDL_CUDA_MANAGED = 1, 2, 13


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                ("dtype", _DataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _Managed(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Managed))
_Managed._fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p),
                     ("deleter", _DELETER)]

_api = ctypes.pythonapi
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]


class View:
    """One tensor taken from its capsule: where its elements are and of
    what type, alive until this object is freed."""

    def __init__(self, obj, dtypes, **kwargs):
        """obj: what has __dlpack__ (kwargs go to it: stream=); dtypes:
        ((name, typestr), ...) by number, the types jitc has (its vocabulary)."""
        capsule = obj.__dlpack__(**kwargs)
        if not _api.PyCapsule_IsValid(capsule, b"dltensor"):
            raise BufferError("not a DLPack capsule (or one already used)")
        self._managed = ctypes.cast(_api.PyCapsule_GetPointer(capsule, b"dltensor"),
                                    ctypes.POINTER(_Managed))
        _api.PyCapsule_SetName(capsule, b"used_dltensor")  # the producer frees it no more
        t = self._managed.contents.dl_tensor
        self.device_type, self.device_id = t.device.device_type, t.device.device_id
        self.ptr = (t.data or 0) + t.byte_offset
        self.shape = tuple(t.shape[k] for k in range(t.ndim))
        code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
        self.name = _type_name(code, bits, dtypes) if lanes == 1 else None
        self.described = "DLPack type (code %d, %d bits, %d lanes)" % (code, bits, lanes)
        self.itemsize = bits // 8
        self.strides = (tuple(t.strides[k] * self.itemsize for k in range(t.ndim))
                        if t.strides else None)  # NULL: C order
        self._dtypes = dtypes

    def __del__(self):
        managed = getattr(self, "_managed", None)
        if managed and managed.contents.deleter:
            managed.contents.deleter(managed)
        self._managed = None

    @property
    def __array_interface__(self):
        """The elements as NumPy reads them: for a type NumPy has no code
        for (a bare void typestr: bfloat16) as unsigned integers of its
        width, which host_array views as the type."""
        ts = dict(self._dtypes)[self.name]
        return {"data": (self.ptr, False), "shape": self.shape, "strides": self.strides,
                "typestr": "<u%d" % self.itemsize if ts[1] == "V" else ts, "version": 3}


def _type_name(code, bits, dtypes):
    """The name of jitc's type of a DLPack type, or None."""
    for name, ts in dtypes:
        if int(ts[2:]) * 8 != bits:
            continue
        if code == _KDL_BFLOAT and ts[1] == "V" or _KDL_CODES.get(code) == ts[1]:
            return name
    return None


def host_array(obj, dtypes, numpy_dtype):
    """An ndarray over a CPU tensor's memory (no copy), of NumPy's dtype of
    its type (numpy_dtype(name)); the ndarray keeps the tensor alive."""
    import numpy as np
    v = View(obj, dtypes)
    if v.device_type != KDL_CPU:
        raise BufferError("not a CPU tensor")
    if v.name is None:
        raise TypeError("a tensor of " + v.described)
    if 0 in v.shape:  # no elements: the pointer may be NULL
        return np.empty(v.shape, numpy_dtype(v.name))
    return np.asarray(v).view(numpy_dtype(v.name))
