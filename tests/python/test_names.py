"""The caller's names (docs/language.md, "Names the caller binds"): a
variable of the caller or a keyword is that value wherever the program does
not call it, also where the language has the name (the index i, pi, inf,
nan, true, false, a function's name); a name that is nowhere is named alone,
with where it was looked for; closures are seen as numexpr sees them.
jitc.evaluate and jitc.dask.evaluate, from the caller's locals, its globals
and keywords, against NumPy; and a seeded random case of programs whose
operands have such names."""
import functools
import math
import random
import sys

import numpy as np
import pytest

import jitc

# Names the language gives a value or a function, and "e" (which it does not).
RESERVED = ["i", "pi", "inf", "nan", "true", "false", "e", "exp", "sum", "where", "abs",
            "min", "f32", "maximum"]


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.array_equal(got, want, equal_nan=True), (got, want)


def from_locals(program, scope, **kw):
    """jitc.evaluate called from a function whose locals are `scope`."""
    names = sorted(scope)
    src = "def f(_scope, _kw):\n"
    src += "".join("    %s = _scope[%r]\n" % (nm, nm) for nm in names)
    # The function's own code reads each name, as a caller's code would.
    src += "    return _evaluate(%r, **_kw)\n" % program
    ns = {"_evaluate": jitc.evaluate}
    exec(src, ns)
    return ns["f"](scope, kw)


def from_globals(program, scope, evaluate=None, **kw):
    """jitc.evaluate (or jitc.dask.evaluate) called from a function of a
    module whose globals are `scope`."""
    ns = dict(scope)
    ns["_evaluate"] = evaluate or jitc.evaluate
    exec("def f(_kw):\n    return _evaluate(%r, **_kw)\n" % program, ns)
    return ns["f"](kw)


def by_keyword(program, scope, **kw):
    return jitc.evaluate(program, **scope, **kw)


WAYS = [from_locals, from_globals, by_keyword]


# Arrays, a weak and a typed scalar: none is what the language means by a name.
VALUES = [np.full(4, 10.0), 5.0, np.float32(0.5), np.array([3, 1, 4, 1], np.int32)]


@pytest.mark.parametrize("way", WAYS, ids=lambda w: w.__name__)
@pytest.mark.parametrize("name", RESERVED)
def test_reserved_name_is_the_callers(target, way, name):
    a = np.arange(4.0)
    for v in VALUES:
        got = way("c = a * 2 + %s" % name, {name: v}, a=a, target=target)
        same(got, a * 2 + v)


@pytest.mark.parametrize("way", WAYS, ids=lambda w: w.__name__)
def test_called_name_stays_the_function(target, way):
    v = np.array([0.0, 1.0, 2.0])
    same(way("c = sqrt(sqrt)", {"sqrt": v}, target=target), np.sqrt(v))  # correctly rounded
    same(way("s = sum(sum)", {"sum": v}, target=target), np.sum(v))
    same(way("c = where(where > 0, where, 7.0)", {"where": v}, target=target),
         np.where(v > 0, v, 7.0))
    same(way("c = abs(a) + abs", {"abs": v}, a=-v, target=target), np.abs(-v) + v)


def test_language_meaning_where_the_caller_has_none(target):
    # The same text, with and without the caller's i, pi: each call its own
    # meaning (the cache keeps one for each).
    a = np.arange(4.0)
    prog = "c = a + i * pi"

    def with_both():
        i, pi = np.full(4, 10.0), 2.0  # noqa: F841 - read by the program
        return jitc.evaluate(prog, target=target, a=a)

    def with_none():
        return jitc.evaluate(prog, target=target, a=a)

    for _ in range(2):
        same(with_both(), a + 20.0)
        same(with_none(), a + np.arange(4) * math.pi)
        same(jitc.evaluate(prog, target=target, a=a, pi=1.0), a + np.arange(4))
        same(jitc.evaluate(prog, target=target, a=a, i=a), a + a * math.pi)


def test_in_place_index_syntax_with_callers_i(target):
    # `[i]` after an array is syntax: the element; a bare i is the caller's.
    a = np.arange(4.0)
    i = 3.0  # noqa: F841 - read by the program
    got = jitc.evaluate("a[i] += i", target=target, a=a)
    same(got, np.arange(4.0) + 3.0)


def test_assign_to_a_name_given(target):
    pi = np.zeros(3, np.float32)
    jitc.evaluate("pi = a + 1", target=target, a=np.ones(3), pi=pi)
    same(pi, np.full(3, 2.0, np.float32))
    with pytest.raises(jitc.ProgramError, match="cannot assign to 'pi': it is a constant"):
        jitc.evaluate("pi = a + 1", target=target, a=np.ones(3))


def test_callers_value_that_is_no_value(target):
    # The caller's pi wins even when it cannot be used: an error, never the
    # constant instead.
    pi = "3.14"  # noqa: F841 - read by the program
    with pytest.raises(jitc.InputError, match="'pi' is a str"):
        jitc.evaluate("c = a * pi", target=target, a=np.ones(3))
    # A function where the program needs a value is the program's mistake.
    exp = np.exp  # noqa: F841 - read by the program
    with pytest.raises(jitc.ProgramError, match="'exp' is a function; call it as exp"):
        jitc.evaluate("c = a + exp", target=target, a=np.ones(3))


def test_refused_callers_array_not_kept(target):
    # A variable found and refused (complex256) leaves no reference behind
    # (the first lookup makes the frame's locals dict, which holds one).
    a = np.ones(3, np.clongdouble)
    counts = []
    for _ in range(20):
        jitc.clear_cache()  # each call finds the names again
        with pytest.raises(jitc.InputError, match="'a' is an array of complex256"):
            jitc.evaluate("c = a + 1", target=target)
        counts.append(sys.getrefcount(a))
    assert counts[-1] == counts[0], counts


def test_keywords_cannot_be_bound(target):
    with pytest.raises(jitc.UsageError, match="'True' is a keyword"):
        jitc.compile("c = a + True", target=target, a=np.float64, **{"True": float})


def test_compile_binds_reserved_names(target):
    k = jitc.compile("c = a * i + pi", target=target, a=np.float64)
    assert k.language_names == ("i", "pi")
    k = jitc.compile("c = a * i + pi", target=target, a=np.float64, i=np.float64)
    assert k.language_names == ("pi",)
    same(k(np.ones(3), np.full(3, 2.0)), np.full(3, 2.0 + math.pi))


# ---- names that are nowhere ----


def test_missing_name_named_alone(target):
    a = np.ones(3)  # noqa: F841 - read by the program
    with pytest.raises(jitc.ProgramError) as e:
        jitc.evaluate("c = a + nosuch", target=target)
    msg = str(e.value)
    assert "unknown name 'nosuch'" in msg
    assert "'a'" not in msg and "did you mean 'i'" not in msg, msg
    assert "locals" in msg and "globals" in msg and "nosuch=..." in msg, msg
    assert (e.value.line, e.value.col) == (1, 9)


def test_missing_name_when_cached(target):
    # The text was resolved with b; a call without b says the same as a
    # first call would: a ProgramError naming b.
    a = np.ones(3)
    jitc.evaluate("c = a + b_cached", target=target, a=a, b_cached=a)
    with pytest.raises(jitc.ProgramError, match="unknown name 'b_cached'"):
        jitc.evaluate("c = a + b_cached", target=target, a=a)


def test_missing_name_suggests_a_callers_variable(target):
    alpha = 2.0  # noqa: F841 - a name the caller has
    with pytest.raises(jitc.ProgramError, match="did you mean the caller's 'alpha'"):
        jitc.evaluate("c = a * alpah", target=target, a=np.ones(3))


def closures(evaluate):
    a = np.ones(3)

    def uses_a():
        a  # noqa: B018 - the function's code reads a: a local of its frame
        return evaluate("c = 2*a")

    return uses_a, lambda: evaluate("c = 2*a")


def test_closure_variables(target):
    # As numexpr: a closure's variable is among the caller's locals only
    # where the function's own code uses it.
    uses_a, lambda_ = closures(functools.partial(jitc.evaluate, target=target))
    same(uses_a(), np.full(3, 2.0))
    with pytest.raises(jitc.ProgramError) as e:
        lambda_()
    msg = str(e.value)
    assert "unknown name 'a'" in msg and "enclosing function" in msg and "a=..." in msg, msg


# ---- jitc.dask ----


def test_dask_reserved_names():
    da = pytest.importorskip("dask.array")
    import jitc.dask
    a = np.arange(10.0)
    A = da.from_array(a, chunks=3)
    for name in RESERVED:
        for v in (da.from_array(np.full(10, 10.0), chunks=4), 5.0):
            scope = {name: v, "a": A}
            got = from_globals("c = a * 2 + %s" % name, scope, jitc.dask.evaluate)
            same(got.compute(scheduler="threads"), a * 2 + np.asarray(v))
            got = jitc.dask.evaluate("c = a * 2 + %s" % name, a=A, **{name: v})
            same(got.compute(scheduler="threads"), a * 2 + np.asarray(v))
    # The caller's i over several blocks is an array, not the index.
    i = da.from_array(np.full(10, 3.0), chunks=4)  # noqa: F841 - read by the program
    same(jitc.dask.evaluate("c = a + i", a=A).compute(scheduler="threads"), a + 3.0)
    # So is a scalar i beside reductions (which the index is refused with).
    got = jitc.dask.evaluate("s = sum(sum * i)", sum=A, i=2.0).compute(scheduler="threads")
    same(got, np.float64(2 * a.sum()))
    with pytest.raises(jitc.UsageError, match="element index"):
        from_globals("c = a + i", {"a": A}, jitc.dask.evaluate)


def test_dask_missing_name_and_closures():
    da = pytest.importorskip("dask.array")
    import jitc.dask
    A = da.ones(5, chunks=2)  # noqa: F841 - read by the program
    with pytest.raises(jitc.ProgramError) as e:
        jitc.dask.evaluate("c = A + nosuch")
    msg = str(e.value)
    assert "unknown name 'nosuch'" in msg and "'A'" not in msg and "nosuch=..." in msg, msg
    uses_a, lambda_ = closures(jitc.dask.evaluate)
    same(uses_a().compute(scheduler="threads"), np.full(3, 2.0))
    with pytest.raises(jitc.ProgramError, match="(?s)unknown name 'a'.*enclosing function"):
        lambda_()


# ---- a random case: operands named as the language's names ----

FUNCS = {"abs": 1, "maximum": 2, "minimum": 2, "where": 3}
LANGUAGE = {"i": None, "pi": math.pi, "inf": math.inf, "nan": math.nan, "true": True,
            "false": False}


def random_value(r, n):
    kind = r.choice(["f64", "f32", "i32", "i64", "weak_f", "weak_i", "typed"])
    if kind == "weak_f":
        return r.choice([2.5, -0.5, 3.0])
    if kind == "weak_i":
        return r.choice([2, -3, 7])
    if kind == "typed":
        return r.choice([np.float32(1.5), np.int64(-2), np.float64(0.25)])
    dt = {"f64": np.float64, "f32": np.float32, "i32": np.int32, "i64": np.int64}[kind]
    return (np.arange(n) % 7 - 3).astype(dt) * (1 if dt in (np.int32, np.int64) else 1.25)


def random_expr(r, leaves, depth, used):
    """(jitc text, NumPy text) of a random expression over `leaves`; adds
    the leaves it reads to `used`."""
    if depth == 0 or r.random() < 0.3:
        nm = r.choice(leaves)
        used.add(nm)
        return nm, "_v[%r]" % nm
    c = r.random()
    if c < 0.55:
        op = r.choice(["+", "-", "*"])
        a, b = random_expr(r, leaves, depth - 1, used), random_expr(r, leaves, depth - 1, used)
        return "(%s %s %s)" % (a[0], op, b[0]), "(%s %s %s)" % (a[1], op, b[1])
    f = r.choice(sorted(FUNCS))
    args = [random_expr(r, leaves, depth - 1, used) for _ in range(FUNCS[f])]
    if f == "where":
        args[0] = ("%s > 0" % args[0][0], "%s > 0" % args[0][1])
    return ("%s(%s)" % (f, ", ".join(a[0] for a in args)),
            "_np.%s(%s)" % (f, ", ".join(a[1] for a in args)))


def random_case(r, n):
    """(program, NumPy text, the caller's names, the language's values)."""
    bound = r.sample(RESERVED + ["x", "y"], r.randint(1, 4))
    scope = {nm: random_value(r, n) for nm in bound}
    first = r.choice(bound)  # one array at least: it sizes the output
    scope[first] = (np.arange(n) - 2.0).astype(r.choice([np.float64, np.float32, np.int64]))
    leaves = bound + [nm for nm in LANGUAGE if nm not in scope] * r.randint(0, 1)
    used = {first}
    text, ref = random_expr(r, leaves, r.randint(1, 3), used)
    scope = {nm: v for nm, v in scope.items() if nm in used}  # keywords must be used
    return "c = %s + %s" % (first, text), "_v[%r] + %s" % (first, ref), scope


def test_random_reserved_names(target):
    r = random.Random(20250611)
    n = 6
    env = dict(LANGUAGE, i=np.arange(n, dtype=np.int64))
    for k in range(40):
        prog, ref, scope = random_case(r, n)
        with np.errstate(all="ignore"):
            want = eval(ref, {"_np": np, "_v": {**env, **scope}})  # noqa: S307 - our own text
        for way in WAYS:
            try:
                got = way(prog, scope, target=target)
            except Exception as ex:  # noqa: BLE001 - reported with the case
                raise AssertionError("case %d, %s: %s\n%s\nscope %r" % (
                    k, way.__name__, prog, ex, scope)) from None
            try:
                same(got, want)
            except AssertionError as ex:
                raise AssertionError("case %d, %s: %s\nscope %r\n%s" % (
                    k, way.__name__, prog, scope, ex)) from None
