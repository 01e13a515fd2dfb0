#!/bin/sh
# The command line with complex64 and complex128: the dtype's spellings,
# generated inputs, .npy files in and out, printing as NumPy prints, -D
# complex values, --json's [real, imag] results, and -t all comparing both
# parts.  Runs on interp; -t all where another target takes complex types.
set -u
JITC=${JITC:-build/jitc}
PYTHON=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect NAME EXIT PATTERN -- COMMAND...: exit status and a pattern in stdout+stderr
expect() {
  name=$1 code=$2 pattern=$3; shift 4
  "$@" >"$tmp/out" 2>&1
  rc=$?
  if [ $rc -ne "$code" ]; then
    echo "FAIL cli_complex.$name: exit $rc, expected $code"; head -c 1500 "$tmp/out"; return
  fi
  if [ -n "$pattern" ] && ! grep -q -e "$pattern" "$tmp/out"; then
    echo "FAIL cli_complex.$name: output lacks '$pattern'"; head -c 1500 "$tmp/out"; return
  fi
  echo "ok cli_complex.$name"
}

# --dtype: the names, NumPy's codes and the short names.
for spec in complex64:complex64 c8:complex64 F:complex64 c64:complex64 csingle:complex64 \
            complex128:complex128 c16:complex128 D:complex128 c128:complex128 complex:complex128; do
  expect "dtype_${spec%%:*}" 0 "a .*input .*${spec#*:} " -- \
    $JITC -t interp -n 2 --dtype a=${spec%%:*} 'b = a'
done
$JITC --help >"$tmp/out" 2>&1
grep -q '^ *complex64, complex128 (default float64)' "$tmp/out" && echo "ok cli_complex.help_lists" ||
  { echo "FAIL cli_complex.help_lists"; grep -A3 'dtype T' "$tmp/out"; }

# Printing: arrays as NumPy's elements, values as NumPy's complex scalars.
expect print_array 0 'b = \[1\.+2\.j 1\.+2\.j 1\.+2\.j\]' -- \
  $JITC -t interp -n 3 --dtype a=c16 --in a=full:1+2j 'b = a'
expect print_ones 0 'b = \[1\.+0\.j 1\.+0\.j\]' -- $JITC -t interp -n 2 --dtype a=c8 'b = a'
expect print_f32_digits 0 'b = \[0\.1+0\.2j\]' -- \
  $JITC -t interp -n 1 --dtype a=c8 --in a=full:0.1+0.2j 'b = a'
expect print_f64_digits 0 'b = \[0\.1+0\.2j\]' -- \
  $JITC -t interp -n 1 --dtype a=c16 --in a=full:0.1+0.2j 'b = a'
expect print_specials 0 'b = \[nan+infj nan+infj\]' -- \
  $JITC -t interp -n 2 --dtype a=c16 --in a=full:nan+infj 'b = a'
expect print_sum 0 's = (3+6j)$' -- $JITC -t interp -n 3 --dtype a=c8 --in a=full:1+2j 's = sum(a)'
expect print_sum_imag 0 's = 6j$' -- $JITC -t interp -n 3 --dtype a=c16 --in a=full:2j 's = sum(a)'
expect print_sum_exp 0 's = (1e+07+0j)$' -- \
  $JITC -t interp -n 10 --dtype a=c8 --in a=full:1e6 's = sum(a)'

# Generators: full:VALUE takes a complex value, refused for a real type.
expect full_real_refused 64 'full value 1+2j is complex and does not fit float64' -- \
  $JITC -t interp -n 3 --in a=full:1+2j 'b = a'
expect full_bad 64 "bad number '1+2' in 'full:1+2'" -- \
  $JITC -t interp -n 3 --dtype a=c8 --in a=full:1+2 'b = a'

# -D: a complex value is weak (complex128 alone, complex64 with float32), or
# typed, and then its type is complex and holds its parts.
expect define_weak_f32 0 'b .*output .*complex64 ' -- \
  $JITC -t interp -n 2 --dtype a=f32 -D z=1+2j 'b = a + z'
grep -q 'b = \[2\.+2\.j 2\.+2\.j\]' "$tmp/out" && echo "ok cli_complex.define_weak_value" ||
  { echo "FAIL cli_complex.define_weak_value"; cat "$tmp/out"; }
expect define_weak_i32 0 'b .*output .*complex128 ' -- \
  $JITC -t interp -n 2 --dtype a=i32 -D z=-2.5j 'b = a + z'
expect define_typed 0 'b .*output .*complex128 ' -- \
  $JITC -t interp -n 2 --dtype a=f32 -D z=1+2j:c16 'b = a + z'
expect define_real_value_complex_type 0 'b = \[3\.+0\.j 3\.+0\.j\]' -- \
  $JITC -t interp -n 2 --dtype a=f32 -D z=2:complex64 'b = a + z'
expect define_complex_real_type 64 '-D z: 1+2j cannot be float64: float64 has no imaginary part' -- \
  $JITC -t interp -n 2 -D z=1+2j:f64 'b = a + z'
expect define_beyond_complex64 64 'cannot be complex64: it is beyond the range of complex64' -- \
  $JITC -t interp -n 2 -D z=1e300j:c8 'b = a + z'
expect define_bad 64 "'1+2i' is not a number" -- $JITC -t interp -n 2 -D z=1+2i 'b = a + z'

# .npy files: read, written as np.save writes them, big-endian refused.
$PYTHON - "$tmp" <<'PY'
import numpy as np, sys
d = sys.argv[1]
rng = np.random.default_rng(5)
for dt in (np.complex64, np.complex128):
    z = np.empty((3, 5), dt)
    z.real, z.imag = rng.standard_normal((3, 5)), rng.standard_normal((3, 5)) * 100
    z[0, :4] = [complex(np.nan, 1), complex(-0.0, np.inf), complex(1, -0.0), 0]
    np.save("%s/%s.npy" % (d, np.dtype(dt).name), np.asfortranarray(z))
    np.save("%s/%s-be.npy" % (d, np.dtype(dt).name), z.astype(np.dtype(dt).newbyteorder(">")))
PY
for t in complex64 complex128; do
  expect "npy_copy_$t" 0 '' -- $JITC -t interp -q --in a=$tmp/$t.npy --out b=$tmp/$t-out.npy 'b = a'
  cmp -s "$tmp/$t.npy" "$tmp/$t-out.npy" && echo "ok cli_complex.npy_bytes_$t" ||
    echo "FAIL cli_complex.npy_bytes_$t: the output is not the input's np.save bytes"
  expect "npy_big_endian_$t" 66 "big-endian dtype '>c" -- $JITC -t interp --in a=$tmp/$t-be.npy 'b = a'
done
expect npy_arith 0 '' -- $JITC -t interp -q --in a=$tmp/complex64.npy --in b=$tmp/complex128.npy \
  --out c=$tmp/c.npy --out d=$tmp/d.npy 'c = a + b; d = -a'
$PYTHON - "$tmp" <<'PY' || echo "FAIL cli_complex.npy_as_numpy: the check raised"
import numpy as np, sys
d = sys.argv[1]
a, b = np.load(d + "/complex64.npy"), np.load(d + "/complex128.npy")
c, m = np.load(d + "/c.npy"), np.load(d + "/d.npy")
ok = (c.dtype == np.complex128 and c.tobytes(order="A") == (a + b).tobytes(order="A")
      and m.dtype == np.complex64 and m.tobytes(order="A") == (-a).tobytes(order="A"))
print("ok cli_complex.npy_as_numpy" if ok else "FAIL cli_complex.npy_as_numpy: %r %r" % (c, m))
PY

# --json: a complex result is [real, imag], NaN and infinities as strings.
$JITC -t interp --json -n 3 --dtype a=c8 --in a=full:1.5-2j 's = sum(a); m = max(a)' \
  >"$tmp/stdout" 2>/dev/null
$JITC -t interp --json -n 2 --dtype a=c16 --in a=full:nan-infj 's = sum(a)' >>"$tmp/stdout" 2>/dev/null
$PYTHON - "$tmp/stdout" <<'PY' || echo "FAIL cli_complex.json_values: the check raised"
import json, sys
text = open(sys.argv[1]).read()
try:
    recs = [json.loads(line) for line in text.splitlines()]
    vals = [{a["name"]: a.get("value") for a in r["arrays"]} for r in recs]
except (ValueError, KeyError, TypeError) as e:
    vals = "not JSON records (%s): %r" % (e, text[:600])
want = [{"a": None, "s": [4.5, -6.0], "m": [1.5, -2.0]}, {"a": None, "s": ["nan", "-inf"]}]
print("ok cli_complex.json_values" if vals == want else
      "FAIL cli_complex.json_values: %r, want %r" % (vals, want))
PY

# -t all: complex outputs compare both parts, in ulps of the part type.
others=""
for t in cpu cuda; do
  $JITC -t $t -q -n 1 --dtype a=c8 'b = a * a' >/dev/null 2>&1 && others="$others $t"
done
if [ -z "$others" ]; then
  echo "skip cli_complex.all_targets: no target here but interp takes complex types"
else
  expect all_agree 0 'b: interp vs [a-z]*: largest difference [0-9.e+-]* ulp\( (identical)\)\?$' -- \
    $JITC -t all -n 1000 --dtype a=c8 --in a=randn:4 'b = a * a + 1j'
  # A complex sum added in another order: within n + 8 epsilons of its parts.
  expect all_sum_order 0 's: interp vs [a-z]*: largest difference [0-9.e+-]* ulp' -- \
    $JITC -t all -n 1000000 --dtype a=c16 --in a=randn:4 's = sum(a * a)'
  $JITC -t all --json -n 1000 --dtype a=c8 --in a=randn:4 'b = a * a + 1j' >"$tmp/stdout" 2>&1
  grep -q '"ulp_of": "float32", "identical": [a-z]*, "agree": true' "$tmp/stdout" &&
    echo "ok cli_complex.all_json_ulp_of" || { echo "FAIL cli_complex.all_json_ulp_of"; cat "$tmp/stdout"; }
  # A difference in the imaginary parts alone is a disagreement: the real
  # program whose integers flip with a 1-ulp difference of sin, then their
  # parity as imaginary parts (0 or 1, far beyond the tolerance of 1).
  $PYTHON -c "
import numpy as np
np.save('$tmp/xs.npy', np.linspace(0, 50, 100001).astype(np.float32))
"
  if ! $JITC -t all -q --in x=$tmp/xs.npy 'r = i64(sin(x) * 1e7)' >/dev/null 2>&1; then
    expect all_disagree_imag 1 "targets disagree on 'r'" -- \
      $JITC -t all -q --in x=$tmp/xs.npy 'r = complex(1.0, f64(i64(sin(x) * 1e7) % 2))'
  else
    echo "skip cli_complex.all_disagree_imag: the targets happen to agree exactly here"
  fi
fi
exit 0
