"""numexpr's validate() and re_evaluate(), and its sanitize= keyword:
jitc.re_evaluate runs the last call of its thread again on the values the
names have now; jitc.validate compiles without running; sanitize= is taken
and changes nothing, since jitc never hands the text to Python."""
import gc
import threading
import weakref

import numpy as np
import pytest

import jitc


def in_new_thread(fn):
    """fn() in a thread of its own: its result, or the exception it raised."""
    box = []

    def run():
        try:
            box.append(fn())
        except Exception as e:  # noqa: BLE001  handed to the test
            box.append(e)
    t = threading.Thread(target=run)
    t.start()
    t.join()
    return box[0]


def test_re_evaluate_reads_the_callers_values(target):
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([4.0, 5.0, 6.0])
    first = jitc.evaluate("2*a + 3*b", target=target)
    a = a * 10  # noqa: F841  read by re_evaluate through this frame
    again = jitc.re_evaluate()
    np.testing.assert_array_equal(first, [14.0, 19.0, 24.0])
    np.testing.assert_array_equal(again, [32.0, 55.0, 78.0])


def test_re_evaluate_dicts_and_names(target):
    d = {"a": np.arange(3.0), "b": np.ones(3)}
    jitc.evaluate("a - b", d, target=target)
    np.testing.assert_array_equal(jitc.re_evaluate({"a": np.full(3, 5.0), "b": np.ones(3)}),
                                  [4.0, 4.0, 4.0])
    np.testing.assert_array_equal(jitc.re_evaluate(local_dict=d, b=np.full(3, 2.0)),
                                  [-2.0, -1.0, 0.0])
    # names given by keyword to the last call are not kept
    jitc.evaluate("zq_only + 1", target=target, zq_only=np.ones(2))
    with pytest.raises(jitc.UnknownNameError, match="zq_only"):
        jitc.re_evaluate()


def test_re_evaluate_keeps_the_options(target):
    """target, order and casting as the last call had them; out= reused
    while it lives, and not kept alive by the record."""
    m = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    r = jitc.evaluate("m * 2", target=target, order="C")
    assert r.flags.c_contiguous
    r = jitc.re_evaluate(m=np.asfortranarray(np.ones((2, 3))))
    assert r.flags.c_contiguous and not r.flags.f_contiguous
    # local_dict: the caller's frame, once read, holds its variables (Python
    # 3.11's f_locals), out among them
    out = np.zeros(3, np.float32)
    d = {"a": np.arange(3.0)}
    assert jitc.evaluate("a + 1", d, target=target, out=out, casting="same_kind") is out
    d["a"] = np.full(3, 7.0)
    assert jitc.re_evaluate(d) is out
    np.testing.assert_array_equal(out, [8.0, 8.0, 8.0])
    with pytest.raises(jitc.InputError, match="casting rule 'safe'"):
        jitc.re_evaluate(d, casting="safe")
    ref = weakref.ref(out)
    del out
    gc.collect()
    assert ref() is None
    r = jitc.re_evaluate(d)  # out= is gone: a new array, as numexpr's
    assert r.dtype == np.float64 and list(r) == [8.0, 8.0, 8.0]


def test_re_evaluate_per_thread(target):
    """Each thread's last call is its own, as numexpr's (threading.local)."""
    with pytest.raises(jitc.UsageError, match="no evaluate"):
        raise in_new_thread(jitc.re_evaluate)
    a = np.ones(2)
    jitc.evaluate("a + 1", target=target)

    def other():
        jitc.evaluate("a * 5", target=target, a=np.ones(2))
        return jitc.re_evaluate(a=np.full(2, 2.0))
    np.testing.assert_array_equal(in_new_thread(other), [10.0, 10.0])
    np.testing.assert_array_equal(jitc.re_evaluate(), [2.0, 2.0])


def test_validate(target):
    a = np.arange(3.0)
    out = np.full(3, -1.0)
    assert jitc.validate("a * 2", target=target, out=out) is None
    np.testing.assert_array_equal(out, [-1.0, -1.0, -1.0])  # nothing ran
    assert jitc.re_evaluate() is out
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])
    e = jitc.validate("a * zq_missing", target=target)
    assert isinstance(e, jitc.UnknownNameError) and isinstance(e, KeyError)
    e = jitc.validate("a *", target=target)
    assert isinstance(e, jitc.ProgramSyntaxError) and isinstance(e, SyntaxError)
    # a failed validate keeps the last call that found its kernel
    np.testing.assert_array_equal(jitc.re_evaluate(), [0.0, 2.0, 4.0])


def test_sanitize_is_taken_and_changes_nothing(target):
    """numexpr's sanitize= checks the text before Python's eval runs it;
    jitc parses its own language and never runs Python, so any value is
    taken and nothing changes: a program of the language that numexpr's
    check would refuse runs, and what is not one is a ProgramSyntaxError,
    a ValueError (numexpr's check's) and a SyntaxError (Python's)."""
    a = np.arange(3.0)
    for s in (None, True, False):
        np.testing.assert_array_equal(jitc.evaluate("a + 1", target=target, sanitize=s),
                                      [1.0, 2.0, 3.0])
    b = np.arange(3.0)
    assert jitc.evaluate("b[i] += 1", target=target, sanitize=True) is b
    np.testing.assert_array_equal(b, [1.0, 2.0, 3.0])
    for text in ("a < [0, 0, 0]", "lambda x: x", "import os;", "os. cpu_count()",
                 "locals()['evaluate']", "(3+1).\u1d47it_length()"):
        for s in (None, True, False):
            with pytest.raises(jitc.ProgramSyntaxError) as e:
                jitc.evaluate(text, target=target, sanitize=s)
            assert isinstance(e.value, ValueError) and isinstance(e.value, SyntaxError)


def test_numexpr_compiler_keywords_are_taken(target):
    """numexpr's optimization=, truediv= and disable_cache= tune its own
    compiler and cache: taken, changing nothing ('/' is true division
    either way, as numexpr's), and not names of the program; their values
    checked as numexpr's getContext checks them, with its message."""
    a, b = np.arange(5), np.full(5, 2)
    want = np.arange(5) / 2
    for kw in ({"optimization": "none"}, {"optimization": "moderate"},
               {"optimization": "aggressive"}, {"truediv": False}, {"truediv": True},
               {"truediv": "auto"}, {"truediv": 0}, {"disable_cache": True},
               {"optimization": "none", "truediv": True, "disable_cache": False}):
        np.testing.assert_array_equal(jitc.evaluate("a / b", target=target, **kw), want)
        assert jitc.validate("a / b", target=target, **kw) is None
    for kw, msg in (({"optimization": "fast"}, "'optimization' must be one of"),
                    ({"optimization": None}, "'optimization' must be one of"),
                    ({"truediv": "yes"}, r"'truediv' must be one of \(False, True, 'auto'\)")):
        with pytest.raises(ValueError, match=msg):
            jitc.evaluate("a / b", target=target, **kw)
