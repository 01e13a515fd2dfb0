#!/bin/sh
# tests/t_limits.sh -- programs at and past the limits of the front end and
# the code generators: 1 MB of source, 100,000 nested parentheses (and other
# ways of nesting 100,000 deep), 10,000 statements, 1,000 distinct arrays,
# identifiers of 10,000 characters, a 10,000-long chain of lets, 100,000
# errors' worth of bad lines.  Each either works, with the right result, or
# fails with exit 65 and a message saying what limit it met; never a crash or
# a stack overflow.  Run on interp and cpu with small -n.
set -u
JITC=${JITC:-build/jitc}
PYTHON=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

targets=interp
if $JITC -t cpu -q -n 1 --no-cache 'a = 1' >/dev/null 2>&1; then
  targets="interp cpu"
else
  echo "skip limits.cpu: the cpu target is not available"
fi

$PYTHON - "$tmp" <<'PY'
import sys
d = sys.argv[1]
def w(name, text):
    with open("%s/%s.jitc" % (d, name), "w") as f:
        f.write(text)
# 1 MB: 24,000 lets of exactly rounded operations, and the expected value.
lines, size, k = [], 0, 0
while size < (1 << 20):
    l = "let t%d = a * %d + b / %d.5 - sqrt(a)\n" % (k, k, k)
    lines.append(l); size += len(l); k += 1
lines.append("out = t%d + t0\n" % (k - 1))
w("one_mb", "".join(lines))
a = b = 1.0
t = lambda k: a * k + b / (k + 0.5) - a ** 0.5
with open(d + "/one_mb.expect", "w") as f:
    f.write(repr(t(k - 1) + t(0)))
w("parens_100k", "c = " + "(" * 100000 + "a" + ")" * 100000 + "\n")
w("unary_100k", "c = " + "-" * 100000 + "a\n")
w("calls_100k", "c = " + "abs(" * 100000 + "a" + ")" * 100000 + "\n")
w("pow_100k", "c = " + "**".join(["a"] * 100000) + "\n")
w("add_100k", "c = " + "+".join(["a"] * 100000) + "\n")
w("where_50k", "c = " + "where(a, " * 50000 + "a" + ", a)" * 50000 + "\n")
w("brackets_100k", "c = " + "[" * 100000 + "\n")
w("stmts_10k", "b = b + 1\n" * 10000)
w("arrays_1000", "out = " + " + ".join("x%d" % k for k in range(1000)) + "\n")
with open(d + "/arrays_1000.args", "w") as f:
    f.write(" ".join("--in x%d=full:%d" % (k, k) for k in range(1000)))
w("ident_10k", "y" * 10000 + " = " + "x" * 10000 + " * 2\n")
w("lets_10k", "let t0 = a\n" + "".join("let t%d = t%d + 1\n" % (k + 1, k) for k in range(10000))
  + "c = t10000\n")
w("errors_10k", "c = a +\n" * 10000)
w("number_100k", "c = a + " + "9" * 100000 + "\n")
w("comment_1m", "#" + "x" * 1000000 + "\nc = a + 1\n")
PY

# run NAME TARGET EXPECT [ARGS...]: EXPECT is "0" or "65:PATTERN".
run() {
  name=$1 target=$2 expect=$3; shift 3
  # shellcheck disable=SC2086
  $JITC -t "$target" -n 5 --no-cache -q "$@" -f "$tmp/$name.jitc" >"$tmp/out" 2>&1
  rc=$?
  case $expect in
    0) code=0 pattern= ;;
    *) code=${expect%%:*} pattern=${expect#*:} ;;
  esac
  if [ $rc -ne "$code" ]; then
    echo "FAIL limits.$name.$target: exit $rc, expected $code"; head -c 600 "$tmp/out"; echo
    return 1
  fi
  if [ -n "$pattern" ] && ! grep -q -e "$pattern" "$tmp/out"; then
    echo "FAIL limits.$name.$target: message lacks '$pattern':"; head -c 600 "$tmp/out"; echo
    return 1
  fi
  return 0
}

# value NAME TARGET ARRAY PYEXPR [ARGS...]: runs, writes ARRAY, checks all(ARRAY == PYEXPR).
# (Shell functions share variables: run() must not use `want`.)
value() {
  name=$1 target=$2 arr=$3 want=$4; shift 4
  rm -f "$tmp/res.npy"
  run "$name" "$target" 0 --out "$arr=$tmp/res.npy" "$@" || return
  if $PYTHON -c "
import numpy as np, sys
r = np.load('$tmp/res.npy')
want = $want
sys.exit(0 if r.shape == (5,) and (r == want).all() else 'got %r, want %r' % (r, want))
"; then
    echo "ok limits.$name.$target"
  else
    echo "FAIL limits.$name.$target: wrong result"
  fi
}

# fails NAME TARGET PATTERN: exit 65 with the pattern in the message.
fails() {
  run "$1" "$2" "65:$3" && echo "ok limits.$1.$2"
}

for t in $targets; do
  value one_mb "$t" out "float('$(cat "$tmp/one_mb.expect")')" --in a=ones --in b=ones
  fails parens_100k "$t" 'nested too deeply'
  fails unary_100k "$t" 'nested too deeply'
  fails calls_100k "$t" 'nested too deeply'
  fails pow_100k "$t" 'nested too deeply'
  fails add_100k "$t" 'expression too large'
  fails where_50k "$t" 'nested too deeply'
  fails brackets_100k "$t" 'expected an expression'
  value stmts_10k "$t" b 10001 --in b=ones
  # shellcheck disable=SC2046
  value arrays_1000 "$t" out 499500 $(cat "$tmp/arrays_1000.args")
  value ident_10k "$t" "$(printf 'y%.0s' $(seq 10000))" "np.arange(5) * 2" --in "$(printf 'x%.0s' $(seq 10000))=arange"
  value lets_10k "$t" c 10001 --in a=ones
  run errors_10k "$t" '65:errors_10k.jitc:10000:8: error:' && echo "ok limits.errors_10k.$t"
  fails number_100k "$t" 'number too long'
  value comment_1m "$t" c 2 --in a=ones
done
exit 0
