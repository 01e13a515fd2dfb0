#!/bin/sh
# The command line tool: the main job, reports, exit codes, outputs written
# all-or-nothing, shapes, --json and -t all.
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
    echo "FAIL cli.$name: exit $rc, expected $code"; head -c 1500 "$tmp/out"; return
  fi
  if [ -n "$pattern" ] && ! grep -q -e "$pattern" "$tmp/out"; then
    echo "FAIL cli.$name: output lacks '$pattern'"; head -c 1500 "$tmp/out"; return
  fi
  echo "ok cli.$name"
}

expect main_job 0 'a = \[2\. 2\. 2\. \.\.\. 2\. 2\. 2\.\]' -- $JITC -t interp 'a[i] += 1'
grep -q 'a .*inout .*float64 .*(10000000,)' "$tmp/out" && grep -q 'ones' "$tmp/out" &&
  echo "ok cli.main_job_report" || { echo "FAIL cli.main_job_report"; cat "$tmp/out"; }
expect exp_f32 0 'out = \[5\.0750957 0\.5423974 0\.58968204 0\.34199178 2\.3759744\]' -- \
  $JITC -t interp -n 5 --dtype f32 --in a=randn:1 'exp(a)'
expect default_input_noted 0 'not given with --in' -- $JITC -t interp -n 3 'b = a * 2'
expect version 0 'jitc [0-9]' -- $JITC --version
expect help 0 'usage: jitc' -- $JITC --help
expect usage_no_program 64 'no program given' -- $JITC
expect usage_unknown_option 64 "unknown option '--frobnicate'" -- $JITC --frobnicate 'a'
expect usage_bad_size 64 'non-negative integer' -- $JITC -n -5 'a'
expect usage_bad_dtype 64 "unknown dtype 'f16'" -- $JITC --dtype f16 'a'
expect usage_bad_target 64 "unknown target 'gpu'" -- $JITC -t gpu 'a'
expect usage_bad_define 64 'is not a number' -- $JITC -D alpha=abc 'a * alpha'
expect program_error 65 "did you mean 'exp'" -- $JITC -n 3 'exq(a)'
expect missing_file 66 'x.npy' -- $JITC --in a=$tmp/x.npy 'a + 1'
expect bad_generator 66 'unknown input' -- $JITC -n 3 --in a=foo 'a + 1'
expect missing_program_file 66 'cannot read program file' -- $JITC -f $tmp/none.jitc
printf 'b = a * 2\n' >"$tmp/prog.jitc"
expect program_file 0 'b = \[2\. 2\. 2\.\]' -- $JITC -t interp -n 3 -f "$tmp/prog.jitc"
expect scalars 0 'y = \[3\.5 3\.5 3\.5\]' -- $JITC -t interp -n 3 -D alpha=2.5 --dtype f32 'y = alpha * x + y'
expect scalar_typed 0 'float32' -- $JITC -t interp -n 3 -D s=2:f32 --emit types 'b = a * s'
expect json 0 '"target": "interp"' -- $JITC -t interp -n 100 --json --repeat 3 'b = a + 1'
for key in device n program arrays compile_ms cache run_ms runs bytes gbps total_ms; do
  grep -q "\"$key\":" "$tmp/out" || echo "FAIL cli.json_$key: missing"
done
echo "ok cli.json_keys"
expect quiet 0 '' -- $JITC -t interp -q -n 3 'b = a + 1'
[ -s "$tmp/out" ] && echo "FAIL cli.quiet_prints: $(cat "$tmp/out")" || echo "ok cli.quiet_prints_nothing"

# Outputs: .npy that NumPy reads, shapes kept, in-place update of the input file.
$PYTHON - "$tmp" <<'PY'
import numpy as np, sys
d = sys.argv[1]
np.save(d + "/a.npy", np.arange(12, dtype=np.int32).reshape(3, 4))
np.save(d + "/f.npy", np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3)))
np.save(d + "/g.npy", np.ones(5, dtype=np.float64))
PY
expect out_written 0 '' -- $JITC -t interp -q --in a=$tmp/a.npy --out b=$tmp/b.npy 'b = a * 3'
$PYTHON -c "
import numpy as np, sys
b = np.load('$tmp/b.npy'); a = np.load('$tmp/a.npy')
assert b.dtype == np.int32 and b.shape == (3, 4), (b.dtype, b.shape)
assert (b == a * 3).all()
" && echo "ok cli.out_content" || echo "FAIL cli.out_content"
expect fortran_kept 0 '' -- $JITC -t interp -q --in f=$tmp/f.npy --out f=$tmp/f.npy 'f += 1'
$PYTHON -c "
import numpy as np
f = np.load('$tmp/f.npy')
assert f.flags.f_contiguous and f.shape == (2, 3), f.flags
assert (f == np.arange(6.).reshape(2, 3) + 1).all(), f
" && echo "ok cli.fortran_in_place" || echo "FAIL cli.fortran_in_place"
expect shape_mismatch 66 'same shape' -- $JITC -t interp --in a=$tmp/a.npy --in g=$tmp/g.npy 'a + g'
expect size_disagrees 66 'disagrees' -- $JITC -t interp -n 7 --in g=$tmp/g.npy 'g + 1'

# A failed run leaves existing files untouched and writes nothing new.
cp "$tmp/g.npy" "$tmp/keep.npy"
expect out_unknown_array 64 "no array 'zz'" -- $JITC -t interp --in g=$tmp/g.npy --out out=$tmp/keep.npy --out zz=$tmp/zz.npy 'g * 5'
cmp -s "$tmp/g.npy" "$tmp/keep.npy" && [ ! -e "$tmp/zz.npy" ] && ! ls "$tmp"/*.tmp >/dev/null 2>&1 &&
  echo "ok cli.no_partial_output" || echo "FAIL cli.no_partial_output"
expect program_error_no_output 65 '' -- $JITC -t interp --in g=$tmp/g.npy --out out=$tmp/keep.npy 'g +* 5'
cmp -s "$tmp/g.npy" "$tmp/keep.npy" && echo "ok cli.untouched_after_error" || echo "FAIL cli.untouched_after_error"
expect unwritable_out 73 'cannot write' -- $JITC -t interp -n 3 --out out=$tmp/nodir/x.npy 'i * 2'

# -t all: every available target, agreement checked.
expect all_targets 0 'largest difference' -- $JITC -t all -n 1000 --dtype f32 --in a=randn:2 'exp(a) + a * 2'
grep -q '^interp ' "$tmp/out" && echo "ok cli.all_table" || { echo "FAIL cli.all_table"; cat "$tmp/out"; }
