"""Byte strings in ``jitc.evaluate``, as numexpr takes them.

jitc's types are numbers; numexpr also compares byte strings: NumPy arrays
of dtype ``S``, ``bytes`` scalars and constants written in the expression
(``b'abc'`` or ``'abc'``), with ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``
and ``contains(s, needle)``, each giving bool.  A call whose operands
include them fails in jitc's C code (a string is no jitc type, a quote no
token of its language); the C code then calls :func:`evaluate` here, which
rewrites each string comparison of the expression into a comparison of the
strings' bytes and calls ``jitc.evaluate`` again, so that jitc compiles and
runs it as any program, on any target.

- A string array of ``W`` bytes is ``W`` uint8 views of it, one per byte
  position (``x[..., None].view(uint8)[..., j]``: no copy, any strides).  A
  scalar or a constant is its bytes as numbers.
- NumPy compares byte strings as if the shorter were padded with NUL bytes
  (``b'foo' == b'foo\\0'``), in the order of their bytes as unsigned numbers:
  so both sides are padded to the wider one's ``W`` bytes, and the bytes are
  packed eight at a time, big-endian, into uint64 words, whose order is the
  strings' order.  ``a == b`` is every word equal; ``a < b`` is decided by
  the first word that differs, written as nested ``where``, one per word.
- ``contains(s, needle)`` (numexpr's: whether ``needle`` occurs in ``s``):
  some position of ``s`` where each byte of the needle is found, the
  needle's trailing NULs not counted (where the needle is an array, its
  byte k counts only where some byte after it is not NUL).
- Arithmetic on a string, or a comparison of a string with a number, is
  numexpr's NotImplementedError, which names the operation as numexpr does
  (``'add_sss'``, ``'ge_bsi'``); the expression ``s`` alone is a copy of
  ``s``, as numexpr gives it.  A string anywhere else leaves jitc's error.

Where nothing of the call is a string, :func:`evaluate` returns
NotImplemented and the caller raises jitc's own error.
"""
import ast
import sys

import numpy as np

_CMP = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
_BIN = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow",
        ast.Mod: "mod", ast.FloorDiv: "floordiv", ast.LShift: "lshift", ast.RShift: "rshift",
        ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor"}
_OPTIONS = ("target", "threads", "sanitize", "optimization", "truediv", "disable_cache")
_MISSING = object()


def _is_string(v):
    return isinstance(v, (bytes, np.bytes_)) or (isinstance(v, np.ndarray) and v.dtype.kind == "S")


def _code(v):
    """numexpr's letter for a value's type in its opcode names."""
    if _is_string(v):
        return "s"
    kind = np.asarray(v).dtype
    return {"b": "b", "i": "l" if kind.itemsize > 4 else "i", "u": "l",
            "f": "d" if kind.itemsize > 4 else "f", "c": "c"}.get(kind.kind, "?")


class _Lower:
    """The rewriting of one expression: resolves its names, and gives the
    text that replaces each string comparison."""

    def __init__(self, src, lookup):
        self.src = src
        self.lookup = lookup
        self.values = {}   # name -> value, every name of the expression found
        self.lanes = {}    # lane name -> uint8 view
        self.ops = {}      # id(string operand node) -> its bytes: [lane name or int]

    def value(self, node):
        """The string value of an operand node, or None if it is no string."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (bytes, str)):
            return node.value if isinstance(node.value, bytes) else node.value.encode("ascii")
        if isinstance(node, ast.Name):
            v = self.values.get(node.id, _MISSING)
            return v if v is not _MISSING and _is_string(v) else None
        return None

    def bytes_of(self, node):
        """An operand's bytes, each a lane's name or a number."""
        v = self.value(node)
        if isinstance(v, (bytes, np.bytes_)):
            return list(bytes(v))
        name = node.id
        views = v[..., None].view(np.uint8)
        out = []
        for j in range(v.dtype.itemsize):
            lane = f"_jitc_{name}_{j}"
            self.lanes[lane] = views[..., j]
            out.append(lane)
        return out

    @staticmethod
    def words(bs, width):
        """The bytes padded to `width`, as big-endian uint64 words: the
        text of each, or its number where every byte is one."""
        bs = bs + [0] * (width - len(bs))
        out = []
        for k in range(0, width, 8):
            chunk = bs[k:k + 8] + [0] * (8 - len(bs[k:k + 8]))
            if all(isinstance(b, int) for b in chunk):
                out.append(int.from_bytes(bytes(chunk), "big"))
            else:
                out.append("(" + " | ".join(f"(u64({b}) << {8 * (7 - q)})"
                                            for q, b in enumerate(chunk) if b != 0) + ")")
        return out

    @staticmethod
    def word(w):
        if isinstance(w, str):
            return w
        hi, lo = w >> 32, w & 0xFFFFFFFF
        return f"((u64({hi}) << 32) | u64({lo}))" if hi else f"u64({lo})"

    def compare(self, op, left, right):
        a, b = self.bytes_of(left), self.bytes_of(right)
        width = max(len(a), len(b), 1)
        wa, wb = self.words(a, width), self.words(b, width)
        if op in ("gt", "le"):  # a > b is b < a; a <= b is not b < a
            wa, wb = wb, wa
        if op in ("eq", "ne"):
            eq = " & ".join(f"({self.word(x)} == {self.word(y)})" for x, y in zip(wa, wb))
            return f"({eq})" if op == "eq" else f"(~({eq}))"
        lt = "False"
        for x, y in reversed(list(zip(wa, wb))):
            x, y = self.word(x), self.word(y)
            lt = f"where({x} == {y}, {lt}, {x} < {y})"
        return f"({lt})" if op in ("lt", "gt") else f"(~({lt}))"

    def contains(self, hay, needle):
        n, h = self.bytes_of(needle), self.bytes_of(hay)
        if all(isinstance(c, int) for c in n):  # a known needle: its bytes at some position
            n = bytes(n).rstrip(b"\0")
            if not n:  # True, in the haystack's shape
                return f"({h[0]} == {h[0]})" if h else "(True)"
            at = [" & ".join(f"({h[p + k]} == {c})" for k, c in enumerate(n))
                  for p in range(len(h) - len(n) + 1)]
            if not at:  # longer than the haystack: False, in its shape
                return f"({h[0]} != {h[0]})" if h else "(False)"
            return "(" + " | ".join(f"({t})" for t in at) + ")"
        # A needle of each element's own length: its byte k counts where
        # a byte after it is not NUL (tail[k]: every byte from k on is NUL).
        if len(h) * len(n) * len(n) > 100000:
            raise NotImplementedError("couldn't find matching opcode for 'contains_bss': "
                                      "strings too wide for jitc's contains()")
        tail = ["True"] * (len(n) + 1)
        for k in range(len(n) - 1, -1, -1):
            tail[k] = f"({n[k]} == 0)" + ("" if k == len(n) - 1 else f" & {tail[k + 1]}")
        at = []
        for p in range(len(h) + 1):
            terms = [f"(({tail[k]}) | ({h[p + k]} == {n[k]}))" if p + k < len(h) else f"({tail[k]})"
                     for k in range(len(n))]
            at.append(" & ".join(terms))
        return "(" + " | ".join(f"({t})" for t in at) + ")"


def _offsets(src):
    """Byte offset of each line's start in src (ast's columns are UTF-8 bytes)."""
    starts, at = [0], 0
    for line in src.encode("utf-8").split(b"\n"):
        at += len(line) + 1
        starts.append(at)
    return starts


def evaluate(ex, local_dict=None, global_dict=None, out=None, order="K", casting="same_kind",
             **kw):
    """jitc.evaluate of an expression that compares byte strings (see the
    module's text); NotImplemented where nothing of it is a string."""
    if isinstance(local_dict, str):  # evaluate(ex, 'cpu')
        kw["target"], local_dict = local_dict, None
    try:
        src = ex.strip()
        tree = ast.parse(src, mode="eval")
    except (SyntaxError, ValueError, AttributeError):
        return NotImplemented
    frame = sys._getframe(1)
    names = {k: v for k, v in kw.items() if k not in _OPTIONS}
    options = {k: v for k, v in kw.items() if k in _OPTIONS}
    scopes = [names, frame.f_locals if local_dict is None else local_dict,
              frame.f_globals if global_dict is None else global_dict]

    def lookup(nm):
        for s in scopes:
            if nm in s:
                return s[nm]
        return _MISSING

    L = _Lower(src, lookup)
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and id(n) not in called:
            v = lookup(n.id)
            if isinstance(v, (list, tuple)):  # numexpr takes a list of bytes as its array
                a = np.asarray(v)
                v = a if a.dtype.kind == "S" else v
            if v is not _MISSING:
                L.values[n.id] = v
    strings = [n for n in ast.walk(tree) if L.value(n) is not None]
    if not strings:
        return NotImplemented
    body = tree.body
    if L.value(body) is not None:  # the expression is one string: a copy of it
        v = L.value(body)
        return np.array(v, copy=True) if out is None else np.copyto(out, v) or out
    # Each string comparison and contains() is replaced by its text; a
    # string anywhere else is numexpr's missing opcode.
    done, edits = set(), []
    for n in ast.walk(tree):
        if isinstance(n, ast.Compare) and any(L.value(x) is not None for x in [n.left] + n.comparators):
            operands = [n.left] + n.comparators
            parts = []
            for op, a, b in zip(n.ops, operands, operands[1:]):
                name = _CMP[type(op)]
                if L.value(a) is None or L.value(b) is None:
                    other = b if L.value(a) is not None else a
                    ov = L.values.get(other.id, _MISSING) if isinstance(other, ast.Name) else \
                        (other.value if isinstance(other, ast.Constant) else _MISSING)
                    if ov is _MISSING:  # not a number numexpr would name: jitc's error
                        return NotImplemented
                    codes = [_code(L.value(x)) if L.value(x) is not None else _code(ov)
                             for x in (a, b)]
                    raise NotImplementedError(
                        f"couldn't find matching opcode for '{name}_b{''.join(codes)}'")
                parts.append(L.compare(name, a, b))
            edits.append((n, " & ".join(parts) if len(parts) > 1 else parts[0]))
            done.update(id(x) for x in operands)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "contains":
            if len(n.args) == 2 and not n.keywords and L.value(n.args[0]) is not None:
                edits.append((n, L.contains(n.args[0], n.args[1])))
                done.update(id(x) for x in n.args)
    for n in ast.walk(tree):
        if L.value(n) is not None and id(n) not in done:
            parent = next((p for p in ast.walk(tree) for c in ast.iter_child_nodes(p) if c is n),
                          None)
            if not isinstance(parent, ast.BinOp):  # not numexpr's either: jitc's error
                return NotImplemented
            l, r = (L.value(x) if L.value(x) is not None else L.values.get(
                getattr(x, "id", ""), 1.0) for x in (parent.left, parent.right))
            name = _BIN.get(type(parent.op), "op")
            raise NotImplementedError(f"couldn't find matching opcode for "
                                      f"'{name}_s{_code(l)}{_code(r)}'")
    # Outermost edits only (a comparison inside a replaced one is in its text).
    starts = _offsets(src)
    raw = src.encode("utf-8")

    def span(n):
        return starts[n.lineno - 1] + n.col_offset, starts[n.end_lineno - 1] + n.end_col_offset

    spans = sorted(((span(n), text) for n, text in edits), key=lambda e: e[0])
    kept = []
    for (lo, hi), text in spans:
        if kept and lo < kept[-1][0][1]:
            continue
        kept.append(((lo, hi), text))
    for (lo, hi), text in reversed(kept):
        raw = raw[:lo] + text.encode("utf-8") + raw[hi:]
    local = {k: v for k, v in L.values.items() if not _is_string(v)}
    local.update(L.lanes)
    import jitc
    return jitc.evaluate(raw.decode("utf-8"), local, {}, out, order, casting, **options)
