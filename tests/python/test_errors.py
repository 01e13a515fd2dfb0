"""Errors: exceptions named after the library's statuses, with messages that
say what is wrong; never a crash."""
import numpy as np
import pytest

import jitc


def test_exception_hierarchy():
    assert issubclass(jitc.ProgramError, jitc.Error)
    assert issubclass(jitc.InputError, ValueError) and issubclass(jitc.InputError, TypeError)
    assert issubclass(jitc.UsageError, ValueError)
    assert issubclass(jitc.TargetUnavailable, RuntimeError)
    assert issubclass(jitc.OutOfMemory, MemoryError)


@pytest.mark.parametrize("program, kind, builtins", [
    ("c = a +* 1", "ProgramSyntaxError", (SyntaxError, ValueError)),
    ("c = (a", "ProgramSyntaxError", (SyntaxError, ValueError)),
    ("c = a + $", "ProgramSyntaxError", (SyntaxError, ValueError)),
    ("c = a < [0, 0, 0]", "ProgramSyntaxError", (SyntaxError, ValueError)),
    ("c = (a > 0) and (a < 2) + (", "ProgramSyntaxError", (SyntaxError, ValueError)),
    ("c = zz_nowhere + a", "UnknownNameError", (KeyError,)),
    ("c = zz_nowhere + a & 1.5", "UnknownNameError", (KeyError,)),
    ("c = a & 1.5", "ProgramTypeError", (TypeError,)),
    ("c = foo_nowhere(a)", "ProgramTypeError", (TypeError,)),
    ("c = where(a, a)", "ProgramTypeError", (TypeError,)),
    ("c = (a > 0) and (a < 2)", "ProgramTypeError", (TypeError,)),
    ("c = (a > 0) or (a < 2)", "ProgramTypeError", (TypeError,)),
    ("c = not (a > 0)", "ProgramTypeError", (TypeError,)),
    ("c = (a > 0) ** -1", "ProgramValueError", (ValueError,)),
    ("c = i64(a) ** -2", "ProgramValueError", (ValueError,)),
    ("c = a + (1 << -1)", "ProgramValueError", (ValueError,)),
])
def test_program_error_kinds(target, program, kind, builtins):
    """The exceptions numexpr's and Python's users catch: a syntax error is
    a SyntaxError (Python's and numexpr's) and a ValueError (numexpr's
    sanitizer's, for a list or a lambda), a name that is nowhere a KeyError
    (numexpr's), Python's and, or and not a TypeError (numexpr's), any
    other error of the program a TypeError; each a ProgramError too, from
    evaluate and from compile, with the message whole."""
    kind = getattr(jitc, kind)
    a = np.arange(3.0)
    if builtins == (ValueError,):  # NumPy's own error where it has one
        with pytest.raises(ValueError):
            eval(program.split("=", 1)[1].replace("i64(a)", "a.astype('i8')"), {"a": a})
    for call in (lambda: jitc.evaluate(program, target=target, a=a),
                 lambda: jitc.compile(program, target=target, a=np.float64)):
        with pytest.raises(builtins[0]) as e:
            call()
        assert type(e.value) is kind and isinstance(e.value, jitc.ProgramError)
        assert all(isinstance(e.value, b) for b in builtins)
        assert str(e.value).startswith("<program>:1:") and e.value.line == 1
        others = {SyntaxError, KeyError, TypeError, ValueError} - set(builtins)
        assert not isinstance(e.value, tuple(others))


def test_statuses_are_the_library_s():
    """Each status of the library's vocabulary (jitc --list) has its own
    exception class, found by the status's number as the library numbers
    it; the package keeps no list of the numbers."""
    vocab = jitc._VOCABULARY["statuses"]
    assert [s["status"] for s in vocab] == list(range(len(vocab))) == \
        list(range(len(jitc._STATUS)))
    named = {s["name"]: jitc._STATUS[s["status"]] for s in vocab}
    assert named["program error"] is jitc.ProgramError
    assert named["usage error"] is jitc.UsageError
    assert named["out of memory"] is jitc.OutOfMemory
    failures = [s for s in vocab if s["status"]]
    assert len({named[s["name"]] for s in failures}) == len(failures), named
    for s in failures:  # no status falls back to InternalError but its own
        assert named[s["name"]] is not jitc.InternalError or s["name"] == "internal error"


def test_program_error_position(target):
    with pytest.raises(jitc.ProgramError) as e:
        jitc.evaluate("c = a +* b", target=target, a=np.ones(2), b=np.ones(2))
    assert e.value.line == 1 and e.value.col == 8
    msg = str(e.value)
    assert "1:8" in msg and "c = a +* b" in msg and "^" in msg
    assert msg.splitlines()[-1].strip() == "^"


def test_program_type_error_line(target):
    with pytest.raises(jitc.ProgramError) as e:
        jitc.evaluate("c = a + 1\nd = c & 1", target=target, a=np.ones(3))
    assert e.value.line == 2


def test_unknown_name(target):
    with pytest.raises(jitc.ProgramError, match="unknown name 'zzz_nowhere'"):
        jitc.evaluate("c = zzz_nowhere + 1", target=target)


def test_unused_name_given(target):
    with pytest.raises(jitc.UsageError, match="'b' is not a name the program uses"):
        jitc.evaluate("c = a + 1", target=target, a=np.ones(2), b=np.ones(2))


def test_bad_dtype_named(target):
    with pytest.raises(jitc.InputError, match="'a' is an array of complex256"):
        jitc.evaluate("c = a + 1", target=target, a=np.ones(3, np.clongdouble))
    with pytest.raises(jitc.InputError, match="'a' is an array of float128"):
        jitc.evaluate("c = a + 1", target=target, a=np.ones(3, np.longdouble))
    with pytest.raises(jitc.InputError, match="complex256 scalar|clongdouble|complex"):
        jitc.evaluate("c = a + s", target=target, a=np.ones(3), s=np.clongdouble(1))
    with pytest.raises(jitc.InputError, match="'a' is an array of .*V2"):
        jitc.evaluate("c = a + 1", target=target, a=np.zeros(3, "V2"))


def test_shape_mismatch(target):
    """Shapes that do not broadcast: a ValueError with NumPy's words, naming
    both arrays, their shapes and the axis."""
    with pytest.raises(ValueError, match=r"operands could not be broadcast together: 'a' has "
                       r"shape \(3,\) and 'b' has shape \(4,\) \(axis 0"):
        jitc.evaluate("c = a + b", target=target, a=np.ones(3), b=np.ones(4))
    with pytest.raises(jitc.InputError, match=r"\(2,3\).*\(6,\).*axis 1"):
        jitc.evaluate("c = a + b", target=target, a=np.ones((2, 3)), b=np.ones(6))


def test_read_only_in_place(target):
    a = np.ones(3)
    a.flags.writeable = False
    with pytest.raises(jitc.InputError, match="read-only"):
        jitc.evaluate("a[i] += 1", target=target, a=a)


def test_not_an_array(target):
    with pytest.raises(jitc.InputError, match="'a' is a dict"):
        jitc.evaluate("c = a + 1", target=target, a={"x": 1.0})
    with pytest.raises(jitc.InputError, match="does not fit in int64"):
        jitc.evaluate("c = a + s", target=target, a=np.ones(2), s=2**70)


def test_bad_target():
    with pytest.raises(jitc.UsageError, match="target"):
        jitc.evaluate("c = a + 1", target="gpu", a=np.ones(2))


def test_cuda_unavailable_or_device_only():
    if jitc.available("cuda"):
        pytest.skip("a GPU is here")
    with pytest.raises(jitc.TargetUnavailable):
        jitc.evaluate("c = a + 1", target="cuda", a=np.ones(2))


def test_weak_scalar_overflow_int32(target):
    with pytest.raises(jitc.Error, match="int32"):
        jitc.evaluate("c = a + s", target=target, a=np.ones(2, np.int32), s=2**40)


def test_kernel_call_errors(target):
    k = jitc.compile("c = a + s", target=target, a=np.float64, s=float)
    with pytest.raises(jitc.InputError, match="'a' is float32; the kernel takes float64"):
        k(np.ones(2, np.float32), 1.0)
    with pytest.raises(jitc.UsageError, match="missing scalar 's'"):
        k(np.ones(2))
    with pytest.raises(jitc.UsageError, match="not a name of the kernel"):
        k(np.ones(2), 1.0, zz=1)
    with pytest.raises(jitc.UsageError, match="too many"):
        k(np.ones(2), 1.0, np.ones(2), 4)
    with pytest.raises(jitc.InputError, match="signature"):
        jitc.compile("c = a + 1", target=target, a=np.clongdouble)


def test_evaluate_bad_call():
    with pytest.raises(jitc.UsageError):
        jitc.evaluate(3)


def test_program_not_utf8():
    with pytest.raises(UnicodeEncodeError):
        jitc.evaluate("c = a + 1\ud800", a=np.ones(2))


def test_overlapping_outputs_refused(target):
    """Two arrays the program writes over the same memory: no order of the
    writes is NumPy's, so the library refuses them (an input that overlaps
    is copied first instead: test_shapes.py)."""
    x = np.arange(6.0)
    with pytest.raises(jitc.InputError, match="overlap in memory"):
        jitc.evaluate("c = a + 1; d = a * 2", target=target, a=np.ones(4), c=x[:4], d=x[2:])


@pytest.mark.parametrize("program", ["a\x00 + 1000", "a * 2\x00; b = undefined_name("])
def test_nul_in_program(program):
    """The library reads a C string: a NUL would end the program there, and
    the rest would be dropped unseen; Python refuses such source too."""
    a = np.arange(4.0)
    with pytest.raises(jitc.ProgramSyntaxError, match="null bytes"):
        jitc.evaluate(program)
    with pytest.raises(SyntaxError, match="null bytes"):
        jitc.compile("y = x\x00 * 100", x=np.float64)
    assert isinstance(jitc.validate(program), SyntaxError)
    assert jitc.evaluate("a + 1").tolist() == (a + 1).tolist()
