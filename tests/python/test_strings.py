"""Byte strings in jitc.evaluate, as numexpr takes them (jitc/_strings.py):
comparisons and contains() of NumPy 'S' arrays, bytes scalars and
constants, lowered to their bytes and compiled on each target, against
NumPy and Python on the same strings."""
import numpy as np
import pytest

import jitc

OPS = ["==", "!=", "<", "<=", ">", ">="]
WORDS = [b"", b"a", b"ab", b"abc", b"abd", b"b", b"a\0", b"a\0b", b"\0", b"\xff", b"\x80a",
         b"zzzzzzzzz", b"zzzzzzzzy", b"0123456789abcdef0", b"0123456789abcdef", b"  "]


def strings(rng, n, width):
    """n random strings of at most `width` bytes, NULs and high bytes among them."""
    pool = np.frombuffer(b"ab\0\xff ", np.uint8)
    out = []
    for _ in range(n):
        k = int(rng.integers(0, width + 1))
        out.append(bytes(rng.choice(pool, k)))
    return np.array(out, dtype=f"S{width}")


@pytest.mark.parametrize("op", OPS)
def test_compare_arrays(target, rng, op):
    """Arrays of other widths (the shorter padded with NULs), words across the
    eight-byte words, NULs inside and at the end, bytes above 0x7f."""
    a = np.array(WORDS * 3)
    b = np.array(WORDS[::-1] * 3, dtype="S9")
    got = jitc.evaluate(f"a {op} b", target=target)
    assert got.dtype == np.bool_
    assert np.array_equal(got, eval(f"a {op} b")), (a, b)
    x, y = strings(rng, 500, 11), strings(rng, 500, 3)
    assert np.array_equal(jitc.evaluate(f"x {op} y", target=target), eval(f"x {op} y"))


@pytest.mark.parametrize("op", OPS)
def test_compare_constants_and_scalars(target, op):
    a = np.array(WORDS)
    for const in ["b'abc'", "'abc'", "b''", "b'a\\x00'", "b'zzzzzzzzz'", "b'\\xff'"]:
        want = eval(f"a {op} {const if const[0] == 'b' else 'b' + const}")
        assert np.array_equal(jitc.evaluate(f"a {op} {const}", target=target), want), const
    for s in (b"ab", np.bytes_(b"abd")):
        assert np.array_equal(jitc.evaluate(f"a {op} s", target=target), eval(f"a {op} s"))
        assert np.array_equal(jitc.evaluate(f"s {op} a", target=target), eval(f"s {op} a"))
    s1, s2 = b"foo", b"foo\0bar"  # scalars alone: a 0-d result
    got = jitc.evaluate(f"s1 {op} s2", target=target)
    assert got.shape == () and bool(got) == eval(f"np.bytes_(s1) {op} np.bytes_(s2)")


def test_views_shapes_and_numbers(target, rng):
    """Strided and 2-D string arrays broadcast with a row, a chained
    comparison, and strings beside numbers in one program."""
    m = strings(rng, 60, 5).reshape(6, 10)
    row = strings(rng, 10, 7)
    v = m[::2, ::-1]
    assert np.array_equal(jitc.evaluate("v >= row", target=target), v >= row)
    x = np.arange(v.size, dtype=np.float64).reshape(v.shape)
    got = jitc.evaluate("(v == row) | (x > 20) & (v < b'b')", target=target)
    assert np.array_equal(got, (v == row) | (x > 20) & (v < b"b"))
    lo, hi = np.array([b"a"] * 10), np.array([b"b"] * 10)
    assert np.array_equal(jitc.evaluate("lo < row <= hi", target=target), (lo < row) & (row <= hi))
    out = np.zeros(v.shape, bool)
    assert jitc.evaluate("v != row", target=target, out=out) is out
    assert np.array_equal(out, v != row)
    e = np.array([], dtype="S4")
    assert jitc.evaluate("e == b'x'", target=target).shape == (0,)


def test_contains(target, rng):
    """contains(haystack, needle): a known needle, a needle per element (its
    trailing NULs not counted), a known haystack, as Python's `in`."""
    hay = np.array([b"abckkk", b"adef", b"xyz", b"x11abcp", b"za", b"abc", b"", b"a\0b"])
    for needle in [b"abc", b"b", b"", b"kkk", b"zz", b"abcdefgh"]:
        got = jitc.evaluate(f"contains(hay, {needle!r})", target=target)
        assert got.tolist() == [needle in h for h in hay.tolist()], needle
    needles = np.array([b"abc", b"def", b"aterr", b"oot", b"zu", b"ab", b"", b"\0b"])
    got = jitc.evaluate("contains(hay, needles)", target=target)
    assert got.tolist() == [n in h for h, n in zip(hay.tolist(), needles.tolist())]
    got = jitc.evaluate("contains(b'abcd', needles)", target=target)
    assert got.tolist() == [n in b"abcd" for n in needles.tolist()]
    h, n = strings(rng, 300, 6), strings(rng, 300, 3)
    got = jitc.evaluate("contains(h, n)", target=target)
    assert got.tolist() == [y in x for x, y in zip(h.tolist(), n.tolist())]


def test_copy_and_refusals(target):
    """The string alone is a copy; arithmetic on strings and comparisons with
    numbers are numexpr's NotImplementedError naming its opcode; other uses
    keep jitc's own error."""
    s = np.array([b"foo\0", b"b\0ar"])
    r = jitc.evaluate("s", target=target)
    assert r.tobytes() == s.tobytes() and r is not s
    with pytest.raises(NotImplementedError, match="'add_sss'"):
        jitc.evaluate("s + s", target=target)
    n = np.arange(2, dtype=np.int32)
    with pytest.raises(NotImplementedError, match="'ge_bsi'"):
        jitc.evaluate("s >= n", target=target)
    with pytest.raises(jitc.ProgramSyntaxError):
        jitc.evaluate("s[0] == b'f'", target=target)
    u = np.array(["text"])  # unicode arrays are not byte strings, in numexpr either
    with pytest.raises(jitc.InputError):
        jitc.evaluate("u == u", target=target)


def test_on_the_gpu(rng):
    """The same lowering on the cuda target, from host arrays."""
    if not jitc.available("cuda"):
        pytest.skip("no GPU")
    x, y = strings(rng, 1000, 9), strings(rng, 1000, 4)
    assert np.array_equal(jitc.evaluate("x < y", target="cuda"), x < y)
    got = jitc.evaluate("contains(x, y)", target="cuda")
    assert got.tolist() == [b in a for a, b in zip(x.tolist(), y.tolist())]
