#!/usr/bin/env python3
"""t_frontend.py -- the lexer and the parser agree with Python's own.

jitc's operators are Python's, with Python's precedence and associativity
(docs/language.md); the lexer and the parser take them from the op table
(src/ops.h).  This group writes random statements of every operator, unary
operator and augmented assignment, with and without spaces between the
tokens (so that the longest match decides: "a**-b", "c>>=d"), and checks
that `--emit tokens` splits them as Python's tokenize module does and that
`--emit ast` nests them as Python's ast module does.
Prints "ok NAME" or "FAIL NAME: why" per case.
"""
import ast
import io
import os
import random
import subprocess
import sys
import tokenize

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JITC = os.environ.get("JITC") or os.path.join(ROOT, os.environ.get("BUILD", "build"), "jitc")

# The language's operators (docs/language.md), as Python spells them.
BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
          ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>",
          ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}
COMPARE = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
           ast.NotEq: "!="}
UNARY = {ast.USub: ("-", "neg"), ast.UAdd: ("+", "pos"), ast.Invert: ("~", "~")}
NAMES = ["a", "b", "x", "y2", "_z"]


def gen_expr(rng, depth):
    """A token list: operand { binop operand } with at most one comparison
    at this level (a chain is an error in jitc)."""
    toks = gen_operand(rng, depth)
    compared = False
    for _ in range(rng.randrange(0, 4)):
        ops = list(BINARY.values())
        if not compared:
            ops += list(COMPARE.values())
        op = rng.choice(ops)
        compared = compared or op in COMPARE.values()
        toks += [op] + gen_operand(rng, depth)
    return toks


def gen_operand(rng, depth):
    toks = [u for u, _ in (rng.choice(list(UNARY.values())) for _ in range(rng.choice([0, 0, 0, 1, 2])))]
    r = rng.random()
    if depth > 0 and r < 0.25:
        toks += ["("] + gen_expr(rng, depth - 1) + [")"]
    elif r < 0.5:
        toks.append(str(rng.randrange(0, 100)))
    else:
        toks.append(rng.choice(NAMES))
    return toks


def join(rng, toks):
    """Tokens with a space or none between them; none where the two would
    read as one token in Python too (two names or numbers)."""
    out = toks[0]
    for prev, t in zip(toks, toks[1:]):
        word = lambda s: s[0].isalnum() or s[0] == "_"
        sep = " " if (word(prev[-1]) and word(t[0])) or rng.random() < 0.5 else ""
        out += sep + t
    return out


def gen_stmt(rng):
    toks = gen_expr(rng, 3)
    e = join(rng, toks)
    r = rng.random()
    if r < 0.2:
        # `x == ...` alone is an error in jitc (an assignment mistyped):
        # parenthesised, it is the comparison Python reads.
        return "(" + e + ")" if toks[1:2] == ["=="] else e
    if r < 0.5:
        return "c = " + e
    op = rng.choice(list(BINARY.values()))
    return rng.choice(["c", "c[i]"]) + rng.choice(["", " "]) + op + "=" + rng.choice(["", " "]) + e


def sexpr(n):
    """Python's AST in --emit ast notation."""
    if isinstance(n, ast.Name):
        return n.id
    if isinstance(n, ast.Constant):
        return str(n.value)
    if isinstance(n, ast.BinOp):
        return f"({BINARY[type(n.op)]} {sexpr(n.left)} {sexpr(n.right)})"
    if isinstance(n, ast.UnaryOp):
        return f"({UNARY[type(n.op)][1]} {sexpr(n.operand)})"
    if isinstance(n, ast.Compare):
        assert len(n.ops) == 1
        return f"({COMPARE[type(n.ops[0])]} {sexpr(n.left)} {sexpr(n.comparators[0])})"
    if isinstance(n, ast.Subscript):
        return f"{n.value.id}[i]"
    raise ValueError(ast.dump(n))


def stmt_sexpr(s):
    if isinstance(s, ast.Assign):
        return f"(= {s.targets[0].id} {sexpr(s.value)})"
    if isinstance(s, ast.AugAssign):
        name = s.target.id if isinstance(s.target, ast.Name) else s.target.value.id
        return f"({BINARY[type(s.op)]}= {name} {sexpr(s.value)})"
    return f"(expr {sexpr(s.value)})"


def python_puncts(src):
    return [t.string for t in tokenize.generate_tokens(io.StringIO(src).readline)
            if t.type == tokenize.OP]


def emit(stage, src):
    r = subprocess.run([JITC, "--emit", stage, "-f", "-"], input=src, capture_output=True,
                       text=True)
    return r.returncode, r.stdout, r.stderr


def main():
    if not os.path.exists(JITC):
        print(f"skip frontend: {JITC} is not built")
        return 0
    fails = 0
    for seed in range(6):
        rng = random.Random(seed)
        stmts = [gen_stmt(rng) for _ in range(150)]
        src = "\n".join(stmts) + "\n"
        rc, out, err = emit("tokens", src)
        got = [ln.split(" ", 2)[2] for ln in out.splitlines() if ln.split(" ")[1] == "punct"]
        want = python_puncts(src)
        name = f"frontend.tokens.seed{seed}"
        if rc != 0 or got != want:
            bad = next((k for k in range(min(len(got), len(want))) if got[k] != want[k]),
                       min(len(got), len(want)))
            print(f"FAIL {name}: rc {rc}, token {bad}: jitc {got[bad:bad + 3]} python "
                  f"{want[bad:bad + 3]} {err[:300]}")
            fails += 1
        else:
            print(f"ok {name} ({len(got)} operators and punctuation)")
        rc, out, err = emit("ast", src)
        want = [stmt_sexpr(s) for s in ast.parse(src).body]
        got = out.splitlines()
        name = f"frontend.ast.seed{seed}"
        if rc != 0 or got != want:
            bad = next((k for k in range(min(len(got), len(want))) if got[k] != want[k]),
                       min(len(got), len(want)))
            line = stmts[bad] if bad < len(stmts) else ""
            print(f"FAIL {name}: rc {rc}, statement {bad + 1} {line!r}: jitc "
                  f"{got[bad] if bad < len(got) else None} python "
                  f"{want[bad] if bad < len(want) else None} {err[:300]}")
            fails += 1
        else:
            print(f"ok {name} ({len(got)} statements)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
