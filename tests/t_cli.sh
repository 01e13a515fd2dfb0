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
expect usage_bad_dtype 64 "unknown dtype 'float128'" -- $JITC --dtype float128 'a'
expect usage_bad_target 64 "unknown target 'gpu'" -- $JITC -t gpu 'a'
expect usage_bad_define 64 'is not a number' -- $JITC -D alpha=abc 'a * alpha'
expect program_error 65 "did you mean 'exp'" -- $JITC -n 3 'exq(a)'
# The GPUs of a run: a list the library could not read is a usage error on
# any machine (that the devices exist is the cuda target's to say).
expect usage_bad_devices 64 "^jitc: --devices needs 'all' or device numbers" -- \
  $JITC -t interp --devices 0,x -n 3 'a[i] += 1'
expect usage_bad_devices_empty 64 "got ','" -- $JITC -t interp --devices , -n 3 'a[i] += 1'
expect devices_list_taken 0 'a = \[2\. 2\. 2\.\]' -- $JITC -t interp --devices 1,0,1 -n 3 'a[i] += 1'
expect devices_env_bad 64 "JITC_DEVICES='0,,1'" -- env JITC_DEVICES=0,,1 $JITC -t interp -n 3 'a[i] += 1'
expect devices_env_taken 0 'a = \[2\. 2\. 2\.\]' -- env JITC_DEVICES=all $JITC -t interp -n 3 'a[i] += 1'
expect missing_file 66 'x.npy' -- $JITC --in a=$tmp/x.npy 'a + 1'
expect bad_generator 64 "^jitc: --in a=foo: unknown input 'foo'" -- $JITC -n 3 --in a=foo 'a + 1'
expect bad_generator_kind 64 "unknown input 'nosuchkind:3'" -- $JITC -n 3 --in a=nosuchkind:3 'a + 1'
expect bad_generator_linspace 64 'linspace needs two bounds' -- $JITC -n 3 --in a=linspace:1 'a + 1'
expect bad_generator_full 64 'full value 3000000000 does not fit int32' -- $JITC -n 3 --dtype i32 --in a=full:3000000000 'a + 1'
expect bad_generator_seed 64 "bad seed 'x'" -- $JITC -n 3 --in a=rand:x 'a + 1'
expect missing_file_npy 66 'no such file' -- $JITC -n 3 --in a=$tmp/none.npy 'a + 1'
# Memory: arrays larger than the memory there is, and an allocation that
# fails (under a 1 GiB address-space limit, 2 GiB for 'a'), are exit 71
# with the bytes wanted.
expect size_too_large 71 '^jitc: out of memory: cannot allocate 16000000000000 bytes (14.6 TiB) for the arrays of 1000000000000 elements' -- $JITC -t interp -q -n 1e12 'a[i] += 1'
if sh -c "ulimit -v 1048576 && exec $JITC -t interp -q -n 1 --in a=ones 'c = a'" >/dev/null 2>&1; then
  expect alloc_fails 71 "^jitc: out of memory: cannot allocate 2147483648 bytes (2.0 GiB) for 'a'$" -- \
    sh -c "ulimit -v 1048576 && exec $JITC -t interp -q -n 268435456 --in a=ones 'c = a + 1'"
else
  echo "skip cli.alloc_fails: no run under a 1 GiB address-space limit here (a sanitizer build)"
fi
expect missing_program_file 66 'cannot read program file' -- $JITC -f $tmp/none.jitc
printf 'b = a * 2\n' >"$tmp/prog.jitc"
expect program_file 0 'b = \[2\. 2\. 2\.\]' -- $JITC -t interp -n 3 -f "$tmp/prog.jitc"
expect scalars 0 'y = \[3\.5 3\.5 3\.5\]' -- $JITC -t interp -n 3 -D alpha=2.5 --dtype f32 'y = alpha * x + y'
expect scalar_typed 0 'float32' -- $JITC -t interp -n 3 -D s=2:f32 --emit types 'b = a * s'
expect json 0 '"target": "interp"' -- $JITC -t interp -n 100 --json --repeat 3 'b = a + 1'
for key in device n program arrays compile_ms cache machine run_ms runs bytes gbps total_ms threads; do
  grep -q "\"$key\":" "$tmp/out" || echo "FAIL cli.json_$key: missing"
done
echo "ok cli.json_keys"
expect quiet 0 '' -- $JITC -t interp -q -n 3 --in a=ones 'b = a + 1'
[ -s "$tmp/out" ] && echo "FAIL cli.quiet_prints: $(cat "$tmp/out")" || echo "ok cli.quiet_prints_nothing"

# An input that no --in gives is ones, and standard error says so, -q or not
# (the demo runs; a name the program did not mean to read shows); a name one
# slip from a name defined before it is a typo, not an input; --strict
# refuses every input of ones.
$JITC -t interp -q -n 3 'a[i] += 1' >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
[ $rc -eq 0 ] && [ ! -s "$tmp/stdout" ] &&
  [ "$(cat "$tmp/stderr")" = "jitc: note: input 'a' is ones (no --in a=...)" ] &&
  echo "ok cli.ones_noted_quiet" ||
  { echo "FAIL cli.ones_noted_quiet: exit $rc"; cat "$tmp/stdout" "$tmp/stderr"; }
expect ones_noted_demo 0 "^jitc: note: input 'a' is ones" -- $JITC -t interp -n 3 'a[i] += 1'
grep -q 'a = \[2\. 2\. 2\.\]' "$tmp/out" && echo "ok cli.ones_demo_runs" || { echo "FAIL cli.ones_demo_runs"; cat "$tmp/out"; }
expect ones_noted_json 0 "^jitc: note: inputs 'a', 'b' are ones (no --in for them)$" -- $JITC -t interp -n 3 --json 'c = a + b'
expect ones_given_no_note 0 '' -- $JITC -t interp -n 3 --in a=ones --in b=zeros 'c = a + b'
grep -q 'note' "$tmp/out" && { echo "FAIL cli.ones_given_no_note_printed"; cat "$tmp/out"; } || echo "ok cli.ones_given_no_note_printed"
expect typo_input 65 "^<program>:1:18: error: unknown name 'tpm'; did you mean 'tmp'?" -- $JITC -t interp -q -n 3 'tmp = a * 2; c = tpm + 1'
grep -qx '                   \^' "$tmp/out" && echo "ok cli.typo_input_caret" || { echo "FAIL cli.typo_input_caret"; cat "$tmp/out"; }
expect typo_input_let 65 "did you mean 'scale'" -- $JITC -t interp -q -n 3 'let scale = a + 1; c = sacle * 2'
expect typo_input_define 65 "did you mean 'alpha'" -- $JITC -t interp -q -n 3 -D alpha=2 'c = alpha * a + alpah'
expect typo_define_unused 64 "did you mean 'alpah'" -- $JITC -t interp -q -n 3 -D alpha=2 'c = alpah * a'
expect typo_given_is_input 0 'c = \[1\. 1\. 1\.\]' -- $JITC -t interp -n 3 --in tpm=zeros 'tmp = a * 2; c = tpm + 1'
expect typo_not_later_name 0 '' -- $JITC -t interp -q -n 3 'ypos = xpos + 1'
# Names of two characters slip too; of one never ('c = a; d = b' reads b).
expect typo_two_chars 65 "did you mean 'xy'" -- $JITC -t interp -q -n 3 'xy = a; d = xz + 1'
expect typo_constant 65 "did you mean 'pi'" -- $JITC -t interp -q -n 3 'c = a; d = pii + 1'
expect typo_one_char 0 '' -- $JITC -t interp -q -n 3 'c = a * 2; d = b + 1'
# An output given with --in is the array written into (its dtype kept, as
# NumPy's out=): it must have the run's shape.
$PYTHON -c "import numpy as np; np.save('$tmp/s3.npy', np.arange(3.)); np.save('$tmp/s23.npy', np.ones((2, 3))); np.save('$tmp/i3.npy', np.zeros(3, np.int32))"
expect given_output_shape 66 "could not broadcast (2, 3) into (3,)" -- $JITC -t interp -q --in a=$tmp/s3.npy --in b=$tmp/s23.npy 'a[i] = b'
expect given_output_dtype 0 'x0 = \[0 2 4\]' -- $JITC -t interp --in x0=$tmp/i3.npy --in b=$tmp/s3.npy 'x0 = b * 2'
# --json writes a narrower float as the double it is, as tolist() gives it.
$PYTHON -c "import numpy as np; np.save('$tmp/h.npy', np.array([0.1, 65504], np.float16))"
expect json_float16 0 '"value": \[0.0999755859375, 65504.0\]' -- $JITC -t interp --json --in a=$tmp/h.npy 'c = a'
# axis=-64 names the first axis of a 64-dimensional array, as in NumPy.
$PYTHON -c "import numpy as np; np.save('$tmp/d64.npy', np.arange(2.).reshape((1,) * 63 + (2,)))"
expect axis_minus_64 0 '0\. 1\.\]' -- $JITC -t interp --in a=$tmp/d64.npy 's = sum(a, axis=-64)'
expect axis_minus_65 65 'axis -65 is out of bounds' -- $JITC -t interp --in a=$tmp/d64.npy 's = sum(a, axis=-65)'
expect strict_unbound 65 "^<program>:1:5: error: unknown name 'a'" -- $JITC -t interp -q -n 3 --strict 'c = a * 2'
expect strict_typo 65 "did you mean 'tmp'" -- $JITC -t interp -q -n 3 --strict --in a=ones 'tmp = a * 2; c = tpm + 1'
expect strict_dtype_only 65 "^jitc: --strict: input 'b' is not given with --in" -- $JITC -t interp -q -n 3 --strict --in a=ones --dtype b=f32 'c = a + b'
expect strict_given 0 'c = \[2\. 2\. 2\.\]' -- $JITC -t interp -n 3 --strict --in a=ones 'c = a * 2'
grep -q 'note' "$tmp/out" && { echo "FAIL cli.strict_given_no_note"; cat "$tmp/out"; } || echo "ok cli.strict_given_no_note"
expect strict_help 0 '--strict  *every array the program reads must be given with --in' -- $JITC --help

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
expect shape_mismatch 66 'could not be broadcast together' -- $JITC -t interp --in a=$tmp/a.npy --in g=$tmp/g.npy 'a + g'
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

# Strict names: a name the program does not use is a usage error with a
# suggestion, found before any work (no output file, no temporary file left).
expect strict_in 64 "did you mean 'a'" -- $JITC -t interp -q --in A=$tmp/g.npy 'c = a * 2'
expect strict_define 64 "did you mean 'alpha'" -- $JITC -t interp -q -n 3 -D alpah=2 'c = alpha * a'
expect strict_dtype 64 "uses no array 'q'" -- $JITC -t interp -q -n 3 --dtype q=f32 'c = a * 2'
$PYTHON - "$tmp" <<'PY'
import numpy as np, sys
np.save(sys.argv[1] + "/big.npy", np.arange(3_000_000, dtype=np.float64))
PY
# Both are refused before the run, which would take hours (--repeat 1000000).
expect strict_out 64 "uses no array 'd'" -- timeout 60 $JITC -t interp -q --in a=$tmp/big.npy --repeat 1000000 --out d=$tmp/d.npy 'c = sin(a) * 2'
[ ! -e "$tmp/d.npy" ] && ! ls "$tmp"/*.tmp >/dev/null 2>&1 && echo "ok cli.strict_out_nothing_left" || echo "FAIL cli.strict_out_nothing_left"
expect out_missing_dir 73 "cannot write '$tmp/nodir/c.npy'" -- timeout 60 $JITC -t interp -q --in a=$tmp/big.npy --repeat 1000000 --out c=$tmp/nodir/c.npy 'c = sin(a) * 2'
expect out_is_dir 73 "is a directory" -- $JITC -t interp -q -n 3 --out c=$tmp 'c = a * 2'
# A symbolic link is written through (the link stays, its target gets the
# array); a FIFO or a device in place, never replaced by a file.
$PYTHON -c "import numpy as np; np.save('$tmp/target.npy', np.arange(5))"
ln -s target.npy "$tmp/link.npy"
expect out_symlink 0 '' -- $JITC -t interp -q -n 3 --in a=arange --out c=$tmp/link.npy 'c = a * 2'
[ -L "$tmp/link.npy" ] && $PYTHON -c "
import numpy as np, sys
sys.exit(0 if np.load('$tmp/target.npy').tolist() == [0.0, 2.0, 4.0] else 1)
" && echo "ok cli.out_symlink_target" || echo "FAIL cli.out_symlink_target"
ln -s nowhere.npy "$tmp/dangling.npy"
expect out_npz_no_member 64 "no name after the ':'" -- $JITC -t interp -q -n 3 --out "c=$tmp/o.npz:" 'c = a * 2'
[ ! -e "$tmp/o.npz:" ] && echo "ok cli.out_npz_no_member_no_file" || echo "FAIL cli.out_npz_no_member_no_file"
# A member name beyond ASCII is flagged UTF-8, so that NumPy finds it.
expect out_npz_utf8 0 '' -- $JITC -t interp -q -n 3 --in a=arange --out "c=$tmp/u.npz:é" 'c = a * 2'
$PYTHON -c "
import numpy as np, sys
sys.exit(0 if np.load('$tmp/u.npz')['é'].tolist() == [0.0, 2.0, 4.0] else 1)
" 2>/dev/null && echo "ok cli.out_npz_utf8_numpy" || echo "FAIL cli.out_npz_utf8_numpy"
expect out_dangling_link 73 "a symbolic link to no file" -- $JITC -t interp -q -n 3 --out c=$tmp/dangling.npy 'c = a * 2'
mkfifo "$tmp/fifo"
expect out_fifo_no_reader 73 "cannot open for writing" -- $JITC -t interp -q -n 3 --out c=$tmp/fifo 'c = a * 2'
(cat "$tmp/fifo" >"$tmp/fifo.out" &)
sleep 0.2
expect out_fifo 0 '' -- $JITC -t interp -q -n 3 --in a=arange --out c=$tmp/fifo 'c = a * 2'
sleep 0.2
[ -p "$tmp/fifo" ] && $PYTHON -c "
import numpy as np, sys
sys.exit(0 if np.load('$tmp/fifo.out').tolist() == [0.0, 2.0, 4.0] else 1)
" && echo "ok cli.out_fifo_read" || echo "FAIL cli.out_fifo_read"
# Standard output that cannot take the output: exit 74, not 0.
if [ -c /dev/full ]; then
  expect stdout_full 74 'cannot write the standard output' -- sh -c "$JITC -t interp -n 3 'c = a' >/dev/full"
  expect stdout_full_help 74 'cannot write the standard output' -- sh -c "$JITC --help >/dev/full"
fi
if mknod -m 666 "$tmp/null" c 1 3 2>/dev/null; then
  expect out_device 0 '' -- $JITC -t interp -q -n 3 --out c=$tmp/null 'c = a * 2'
  [ -c "$tmp/null" ] && echo "ok cli.out_device_kept" || echo "FAIL cli.out_device_kept"
else
  echo "skip cli.out_device: mknod is not allowed here"
fi
expect default_ones_help 0 'reads that no --in gives is an input of ones' -- $JITC --help
# A name given is the program's, also one the language gives a meaning (the
# index, a constant, a function's name), wherever it is not called; only the
# keywords cannot be given.
for name in i pi inf nan true exp f32 sum; do
  expect "bound_define_$name" 0 'c = \[7 7 7\]' -- $JITC -t interp -n 3 --dtype i64 -D $name=5 "c = a * 2 + $name"
done
expect bound_in_index 0 'c = \[11\. 11\. 11\.\]' -- $JITC -t interp -n 3 --in i=full:10 'c = a + i'
expect bound_in_reduction 0 's = 3\.' -- $JITC -t interp -n 3 --in sum=arange 's = sum(sum)'
expect bound_define_call 0 'c = \[8\.389' -- $JITC -t interp -n 3 -D exp=2 'c = exp(exp) + a'
expect bound_dtype_constant 0 'pi = \[2\. 2\. 2\.\]' -- $JITC -t interp -n 3 --dtype pi=f32 'pi = a + 1'
# --out names a file, not the array's type: it binds nothing.
expect unbound_out_constant 65 "cannot assign to 'pi': it is a constant" -- $JITC -t interp -q -n 3 --out pi=$tmp/pi.npy 'pi = a + 1'
expect unbound_index 0 'c = \[1\. 2\. 3\.\]' -- $JITC -t interp -n 3 'c = a + i'
for name in True let; do
  expect "keyword_define_$name" 64 "'$name' is a keyword" -- $JITC -t interp -q -n 3 -D $name=1 "c = a * 2 + $name"
done
expect reserved_in_unused 64 "uses no array 'exp'" -- $JITC -t interp -q -n 3 --in exp=ones 'c = a * 2'
expect reserved_dtype_unused 64 "uses no array 'i'" -- $JITC -t interp -q -n 3 --dtype i=f32 'c = a * 2'

# -D values: Python literals, exact in the stated type.
expect define_f32_overflow 64 'beyond the range of float32' -- $JITC -t interp -q -n 3 -D s=1e40:f32 'c = a * s'
expect define_f64_overflow 64 'beyond the range of float64' -- $JITC -t interp -q -n 3 -D s=1e400 'c = a * s'
expect define_big_int 64 'does not fit in int64' -- $JITC -t interp -q -n 3 -D s=9223372036854775808 'c = a * s'
expect define_uint64_weak 0 '18446744073709551615 *0 *1 *2' -- $JITC -t all -n 4 --dtype u=u64 --in u=arange -D s=18446744073709551615 'c = u + s'
expect define_uint64_weak_elsewhere 64 'taken only where every use of the scalar meets uint64' -- $JITC -t interp -q -n 3 --dtype u=u64 -D s=9223372036854775808 'c = u + s; d = f * s'
expect define_meets_uint64 64 "'s' = -1 does not fit in uint64, the type it meets" -- $JITC -t interp -q -n 3 --dtype u64 -D s=-1 'c = a + s'
expect define_meets_uint8 64 "'s' = 300 does not fit in uint8, the type it meets" -- $JITC -t interp -q -n 3 --dtype u1 -D s=300 'c = a + s'
expect define_int_f32_inexact 64 'float32 cannot hold it exactly' -- $JITC -t interp -q -n 3 -D s=16777217:f32 'c = a * s'
expect define_int_f64_inexact 64 'float64 cannot hold it exactly' -- $JITC -t interp -q -n 3 -D s=9007199254740993:f64 'c = a * s'
expect define_i32_range 64 'out of range' -- $JITC -t interp -q -n 3 -D s=2147483648:i32 'c = a * s'
expect define_int_fraction 64 'integral value' -- $JITC -t interp -q -n 3 -D s=2.5:i64 'c = a * s'
expect define_bool 64 'needs 0 or 1' -- $JITC -t interp -q -n 3 -D s=2:bool 'c = a * s'
expect define_hex_float 64 'not a number' -- $JITC -t interp -q -n 3 -D s=0x1p3 'c = a * s'
expect define_leading_zero 64 'not a number' -- $JITC -t interp -q -n 3 -D s=010 'c = a * s'
expect define_hex_int 0 'array c: int64 out' -- $JITC -t interp -n 3 -D s=0x10 --dtype i64 --emit types 'c = a * s'
expect define_hex_value 0 'c = \[16 16 16\]' -- $JITC -t interp -n 3 -D s=0x10 --dtype i64 'c = a * s'
expect define_underscore 0 'c = \[1000000 1000000 1000000\]' -- $JITC -t interp -n 3 -D s=1_000_000 --dtype i64 'c = a * s'
expect define_f32_rounds 0 'c = \[0.1 0.1 0.1\]' -- $JITC -t interp -n 3 -D s=0.1:f32 --dtype f32 'c = a * s'
expect define_inf 0 'c = \[-inf -inf -inf\]' -- $JITC -t interp -n 3 -D s=-inf 'c = a * s'
expect define_int64_min 0 'c = \[-9223372036854775808' -- $JITC -t interp -n 3 -D s=-9223372036854775808 --dtype i64 'c = a * s'

# Command-line conventions (getopt_long).
expect bundled_n3 0 'b = \[2\. 2\. 2\.\]' -- $JITC -tinterp -n3 'b = a * 2'
expect bundled_qn3 0 '' -- $JITC -tinterp -qn3 'b = a * 2'
expect long_prefix 0 'median of 2' -- $JITC -t interp -n 3 --rep 2 'b = a * 2'
expect long_ambiguous 64 'ambiguous' -- $JITC -t interp -n 3 --c x 'b = a * 2'
expect size_1e7_syntax 0 '(7,)' -- $JITC -t interp -n 7e0 'b = a * 2'
expect size_underscore 0 '(1000,)' -- $JITC -t interp -n 1_000 'b = a * 2'
expect size_fraction 64 'non-negative integer' -- $JITC -t interp -n 1.5 'b = a * 2'
expect size_1e7 0 '' -- $JITC -t interp -q -n 1e7 'b = i'
expect stdin_program 0 'b = \[3\. 3\.\]' -- sh -c "printf 'b = a * 3\n' | $JITC -t interp -n 2 -f -"
expect dash_program_hint 64 "goes after '--'" -- $JITC -t interp -n 3 '-a'
expect dash_program_after_dashes 0 'out = \[-1\. -1\. -1\.\]' -- $JITC -t interp -n 3 -- '-a'
expect version_targets 0 'target cpu: ' -- $JITC --version
expect info 0 'host cpu: ' -- $JITC --info
for key in 'cpu features: ' 'nvrtc: ' 'cuda driver: ' 'cache: ' 'interp: available'; do
  grep -q "$key" "$tmp/out" && echo "ok cli.info_$key" | tr -d ' :' || { echo "FAIL cli.info: lacks '$key'"; cat "$tmp/out"; }
done
grep -q -e '^no GPU: ' -e '^gpu 0: ' "$tmp/out" && echo "ok cli.info_gpu" || echo "FAIL cli.info_gpu"
expect info_no_gpu 0 '^no GPU: ' -- env JITC_LIBCUDA=/nonexistent/libcuda.so.1 $JITC --info
expect cpu_option_help 0 '--cpu NAME' -- $JITC --help
expect help_exit_disagree 0 'targets disagree' -- $JITC --help

# One message form: jitc: for the tool, FILE:LINE:COL: error: for the program.
printf 'b = a +\n' >"$tmp/bad.jitc"
expect message_file 65 "^$tmp/bad.jitc:1:8: error: " -- $JITC -t interp -n 3 -f "$tmp/bad.jitc"
expect message_program 65 '^<program>:1:8: error: ' -- $JITC -t interp -n 3 'b = a +'
expect message_stdin 65 '^<stdin>:1:8: error: ' -- sh -c "printf 'b = a +\n' | $JITC -t interp -n 3 -f -"
expect message_usage 64 '^jitc: ' -- $JITC -t interp -n 3 -D s=1:f99 'b = a * s'
expect message_unavailable 69 '^jitc: ' -- env JITC_LIBCUDA=/nonexistent/libcuda.so.1 $JITC -t cuda -n 3 'b = a * 2'
grep -v -e '^jitc: ' -e '^Try ' "$tmp/out" | grep -q . && { echo "FAIL cli.message_unavailable_lines"; cat "$tmp/out"; } || echo "ok cli.message_unavailable_lines"

# --json: every line of standard output is one JSON object in valid UTF-8,
# agreement between targets included in the records.
json_lines() { # NAME: every line of $tmp/stdout strict UTF-8 JSON objects; prints the count
  $PYTHON - "$tmp/stdout" "$1" <<'PY'
import json, sys
data = open(sys.argv[1], "rb").read()
try:
    recs = [json.loads(l) for l in data.decode("utf-8").splitlines()]
    assert recs and all(isinstance(r, dict) for r in recs), "not objects"
    print("ok cli.%s" % sys.argv[2])
except Exception as e:
    print("FAIL cli.%s: %s: %r" % (sys.argv[2], e, data[:400]))
PY
}
$JITC -t all --json -n 1000 --dtype f32 --in a=randn:2 'b = exp(a) + a * 2' >"$tmp/stdout" 2>/dev/null
json_lines json_all_targets
if [ "$(grep -c . "$tmp/stdout")" -gt 1 ]; then
  grep -q '"agreement": {"with": "interp", "arrays": \[{"name": "b", "largest_ulp": [0-9.e+-]*, "ulp_of": "float32", "identical": [a-z]*, "agree": true}\]}' "$tmp/stdout" &&
    echo "ok cli.json_agreement" || { echo "FAIL cli.json_agreement"; cat "$tmp/stdout"; }
else
  echo "skip cli.json_agreement: one target here"
fi
$JITC --json --emit types -t interp 'b = a * 2' >"$tmp/stdout" 2>/dev/null
json_lines json_emit
printf 'b = a * 2 # caf\351 \355\240\200 \360\237\230\200 "q" \\ \001\n' >"$tmp/latin1.jitc"
$JITC -t interp --json -n 3 -f "$tmp/latin1.jitc" >"$tmp/stdout" 2>/dev/null
json_lines json_invalid_utf8
grep -q 'caf\\ufffd' "$tmp/stdout" && grep -q "$(printf '\360\237\230\200')" "$tmp/stdout" &&
  echo "ok cli.json_utf8_kept_and_replaced" || { echo "FAIL cli.json_utf8_kept_and_replaced"; cat "$tmp/stdout"; }

# -t all: a difference within the stated accuracy is agreement (here 1 ulp of
# float32, widened to float64); one beyond it is a disagreement, exit 1.
$PYTHON -c "
import numpy as np
np.save('$tmp/x32.npy', (np.random.RandomState(3).randn(100000) * 10).astype(np.float32))
"
if $JITC -t cpu -q -n 1 'b = a' >/dev/null 2>&1; then
  # The compile says what the code is for (--cpu, else $JITC_CPU, else
  # native); the device line names the host alone.
  expect cpu_code_for 0 '^compile .*; code for x86-64)$' -- env -u JITC_CPU $JITC -t cpu --cpu x86-64 -n 3 'a[i] += 1'
  grep -q '^target .*code for' "$tmp/out" && { echo "FAIL cli.cpu_device_host_only"; cat "$tmp/out"; } ||
    echo "ok cli.cpu_device_host_only"
  # The threads a run used, not the host's CPUs: --threads 1 is one; too few
  # elements to split are one; --threads 3 over 1e6 elements is three.
  expect cpu_threads_one 0 '^target   cpu (.*; 1 thread)$' -- $JITC -t cpu --threads 1 -n 1e6 --in a=ones 'a[i] += 1'
  grep -q '^target .*[0-9] threads' "$tmp/out" && { echo "FAIL cli.cpu_threads_one_only"; cat "$tmp/out"; } || echo "ok cli.cpu_threads_one_only"
  expect cpu_threads_json_one 0 '"threads": 1}$' -- $JITC -t cpu --json --threads 1 -n 1e6 --in a=ones 'a[i] += 1'
  grep -q '"device": "[^"]*threads' "$tmp/out" && { echo "FAIL cli.cpu_device_no_threads"; cat "$tmp/out"; } || echo "ok cli.cpu_device_no_threads"
  expect cpu_threads_three 0 '^target   cpu (.*; 3 threads)$' -- $JITC -t cpu --threads 3 -n 1e6 --in a=ones 'a[i] += 1'
  expect cpu_threads_json_three 0 '"threads": 3}$' -- $JITC -t cpu --json --threads 3 -n 1e6 --in a=ones 'a[i] += 1'
  expect cpu_threads_small_n 0 '^target   cpu (.*; 1 thread)$' -- $JITC -t cpu --threads 3 -n 100 --in a=ones 'a[i] += 1'
  expect cpu_code_for_env 0 '^compile .*; code for x86-64)$' -- env JITC_CPU=x86-64 $JITC -t cpu -n 3 'a[i] += 1'
  expect cpu_code_for_native 0 '"machine": "native"' -- env -u JITC_CPU $JITC -t cpu --json -n 3 'a[i] += 1'
  expect all_widened_f32 0 'ulp of float32' -- $JITC -t all --in x=$tmp/x32.npy 'r = f64(sin(x))'
  # float32 only inside the program, from a cast of float64 data.
  expect all_cast_f32 0 'ulp of float32' -- $JITC -t all -n 100000 --in a=rand 'o = f64(sin(f32(a) * 30))'
  # -D scalars differing per target cannot happen; a real disagreement is
  # made by a cache entry of other code: instead compare int results of a
  # float computation whose rounding differs (1 ulp flips the truncation).
  $PYTHON -c "
import numpy as np
np.save('$tmp/xs.npy', np.linspace(0, 50, 100001).astype(np.float32))
"
  $JITC -t all -q --in x=$tmp/xs.npy --out r=$tmp/r.npy 'r = i64(sin(x) * 1e7)' >"$tmp/out" 2>&1
  rc=$?
  if grep -q 'disagree' "$tmp/out"; then
    [ $rc -eq 1 ] && [ ! -e "$tmp/r.npy" ] && echo "ok cli.all_disagree_exit_1" ||
      { echo "FAIL cli.all_disagree_exit_1: exit $rc"; cat "$tmp/out"; }
  else
    echo "skip cli.all_disagree_exit_1: targets happen to agree exactly here"
  fi
else
  echo "skip cli.all_widened_f32: no cpu target"
fi

# The sign of a NaN constant is part of the compile cache's key: with one
# cache, `a + -nan` and then `a + nan` must not share a kernel.
for t in interp cpu; do
  $JITC -t $t -q -n 1 >/dev/null 2>&1 'b = a + 1' || continue
  mkdir -p "$tmp/nancache"
  expect nan_sign_key_neg_$t 0 'o = \[-1\.\]' -- $JITC -t $t --cache-dir "$tmp/nancache" -n 1 'o = copysign(1.0, a + -nan)'
  expect nan_sign_key_pos_$t 0 'o = \[1\.\]' -- $JITC -t $t --cache-dir "$tmp/nancache" -n 1 'o = copysign(1.0, a + nan)'
done

# The types of the library's table: taken, made and printed as NumPy does.
$PYTHON - "$tmp" <<'PY'
import numpy as np, sys
d = sys.argv[1]
np.save(d + "/u8.npy", np.array([1, 2, 255], np.uint8))
np.save(d + "/f32.npy", np.array([1, 2, 3], np.float32))
try:
    import ml_dtypes
    np.save(d + "/bf.npy", np.array([0.1, 2, -3e38], ml_dtypes.bfloat16))
except ImportError:
    pass
PY
expect types_help 0 'inputs: bool, int8, int16, int32, int64, uint8,$' -- $JITC --help
expect types_unknown_dtype 64 'use bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32, float64, complex64 or complex128' -- $JITC --dtype float128 'a'
expect types_print_uint8 0 'b = \[1 2 255\]' -- $JITC -t interp --in a=$tmp/u8.npy 'b = a'
expect types_print_uint64 0 'b = \[18446744073709551615 18446744073709551615\]' -- $JITC -t interp -n 2 --dtype a=uint64 --in a=full:18446744073709551615 'b = a'
expect types_print_int8 0 'b = \[0 1 2 3 4\]' -- $JITC -t interp -n 5 --dtype a=int8 --in a=arange 'b = a'
expect types_print_int8_wraps 0 ' 126 127 -128 -127\]' -- $JITC -t interp -n 130 --dtype a=int8 --in a=arange 'b = a'
expect types_print_float16 0 'b = \[0.1 0.1\]' -- $JITC -t interp -n 2 --dtype a=float16 --in a=full:0.1 'b = a'
expect types_print_float16_third 0 'b = \[0.3333\]' -- $JITC -t interp -n 1 --dtype a=f16 --in a=full:0.333333333 'b = a'
expect types_print_bfloat16 0 'b = \[0.100098 2 -3.00406e+38\]' -- $JITC -t interp --dtype a=bfloat16 --in a=$tmp/bf.npy 'b = a'
expect types_bfloat16_file_unnamed 66 "raw bytes, which is how ml_dtypes saves bfloat16: name the type to read it as one (--dtype NAME=bfloat16)" -- $JITC -t interp --in a=$tmp/bf.npy 'b = a'
expect types_file_dtype_kept 64 "'a' comes from a file of float32, whose dtype it keeps" -- $JITC -t interp --dtype a=float16 --in a=$tmp/f32.npy 'b = a'
expect types_file_dtype_same 0 'a .*input .*float32' -- $JITC -t interp --dtype a=f4 --in a=$tmp/f32.npy 'b = a'
expect types_full_uint8_300 64 'full value 300 does not fit uint8' -- $JITC -t interp -n 3 --dtype a=uint8 --in a=full:300 'b = a'
expect types_full_uint8_neg 64 'full value -1 does not fit uint8' -- $JITC -t interp -n 3 --dtype a=uint8 --in a=full:-1 'b = a'
expect types_full_int8_range 0 'b = \[-128 -128\]' -- $JITC -t interp -n 2 --dtype a=int8 --in a=full:-128 'b = a'
expect types_define_uint8_range 64 '300 cannot be uint8: it is out of range' -- $JITC --emit types -D s=300:uint8 'c = a * s'
expect types_define_uint64_max 0 'param s: uint64' -- $JITC --emit types -D s=18446744073709551615:uint64 'c = a * s'
expect types_define_f16_range 64 'beyond the range of float16' -- $JITC --emit types -D s=65520.0:float16 'c = a * s'
expect types_define_bf16_exact 64 'bfloat16 cannot hold it exactly' -- $JITC --emit types -D s=257:bf16 'c = a * s'
expect types_define_f16_ok 0 'param s: float16' -- $JITC --emit types -D s=2048:f16 'c = a * s'
# -t all: 16-bit float outputs in their own ulps; a float64 output computed
# through float16 in float16's (where the cpu target runs float16).
if $JITC -t cpu -q -n 1 --dtype a=float16 'b = a' >/dev/null 2>&1; then
  expect types_all_f16_ulps 0 'b: interp vs cpu: largest difference [0-9.e+-]* ulp\( (identical)\)\?$' -- $JITC -t all -n 1000 --dtype a=f16 --in a=randn:3 'b = exp(a) * 3'
  expect types_all_via_f16 0 'o: interp vs cpu: largest difference [0-9.e+-]* ulp of float16' -- $JITC -t all -n 1000 --in a=randn:3 'o = f64(exp(f16(a)))'
else
  echo "skip cli.types_all_f16_ulps: the cpu target does not run float16 here"
fi
# Generated inputs of every type, bit for bit what NumPy gives (as astype
# from float64; float16 rounds from it directly, bfloat16 through float32 as
# ml_dtypes does; a negative value for an unsigned type, which NumPy leaves
# to the machine, gives 0; a complex type's imaginary parts are 0, but rand
# and randn draw them after the real parts).
$PYTHON - "$JITC" "$tmp" <<'PY'
import subprocess, sys
import numpy as np
sys.path.insert(0, "tests")  # run from the top directory, as tests/run.sh does
import t_types
jitc, tmp = sys.argv[1:3]
try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None
n = 2000
for row in t_types.table():
    name = row["name"]
    if name == "bfloat16" and not ml_dtypes:
        continue
    dt = np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else name)
    why = []
    for spec in ("rand:7", "randn:7", "linspace:-1.5:70000", "arange", "ones"):
        out = "%s/gen-%s.npy" % (tmp, name)
        p = subprocess.run([jitc, "-t", "interp", "-q", "-n", str(n), "--dtype", "a=" + name,
                            "--in", "a=" + spec, "--out", "b=" + out, "b = a"],
                           capture_output=True, text=True)
        if p.returncode:
            why.append("%s: exit %d %s" % (spec, p.returncode, p.stderr.strip()[:200]))
            continue
        g, _, arg = spec.partition(":")
        with np.errstate(all="ignore"):
            if g in ("rand", "randn"):
                np.random.seed(int(arg))
                draw = np.random.rand if g == "rand" else np.random.randn
                v = draw(n)
                if dt.kind == "c":  # rand(n) + 1j*rand(n), each part exact
                    v = v.astype(np.complex128)
                    v.imag = draw(n)
            elif g == "linspace":
                v = np.linspace(-1.5, 70000, n)
            else:
                v = np.arange(n) if g == "arange" else np.ones(n)
            if dt.kind == "u":
                v = np.where(v <= -1, 0, v)
            if dt.kind in "iu":  # out of range: jitc saturates, NumPy's answer is the machine's
                info = np.iinfo(dt)
                v = np.clip(v, info.min, info.max) if g == "linspace" else v
            want = v.astype(dt)
        got = np.load(out).view(dt)
        if got.tobytes() != want.tobytes():
            bad = [j for j in range(n) if got[j:j + 1].tobytes() != want[j:j + 1].tobytes()]
            why.append("%s: element %d is %r, NumPy %r" % (spec, bad[0], got[bad[0]], want[bad[0]]))
    print("FAIL cli.types_gen_%s: %s" % (name, "; ".join(why)) if why else
          "ok cli.types_gen_%s" % name)
PY

# The command line's steps (cli/): a misspelled name is a usage error even
# when the target cannot compile; --help lists the stages the library gives;
# the library holds none of the command line's code.
expect unknown_name_before_unavailable 64 "uses no array 'typo'" -- \
  env JITC_LIBCUDA=/nonexistent/libcuda.so.1 $JITC -t cuda --in typo=ones -n 3 'b = a * 2'
expect help_stages 0 'print a stage and stop: tokens, ast, types; cpu: llvm, llvm-opt,$' -- $JITC --help
$JITC --help >"$tmp/help" 2>&1
stages=$(sed -n '/--emit STAGE/,/--repeat/p' "$tmp/help" | sed 's/.*stop://; s/--repeat.*//' |
         tr ',;' '  ' | tr ' ' '\n' | grep -v -e ':$' -e '^$' | tr '\n' ' ')
# The list read from the help must hold the front end's stages, which every
# build has: a help that the lines above no longer read would test nothing.
case " $stages" in
  " tokens ast types "*) echo "ok cli.emit_stages_listed (${stages% })" ;;
  *) echo "FAIL cli.emit_stages_listed: the stages read from --help are '$stages'" ;;
esac
for stage in $stages; do
  expect emit_listed_$stage 0 '' -- $JITC --arch sm_90 --emit "$stage" -n 3 'b = a * 2'
done
# Literals print with the fewest digits, also at a power of two.
expect shortest_literal 0 'float 7\.120236347223045e-307$' -- $JITC --emit tokens 'c = a * 7.120236347223045e-307'
lib=${BUILD:-build}/libjitc.a
if [ -f "$lib" ]; then
  if ! nm "$lib" >"$tmp/nm" 2>&1 || ! grep -q ' T jitc_compile$' "$tmp/nm"; then
    echo "FAIL cli.library_without_cli_code: nm cannot list $lib: $(head -c 300 "$tmp/nm")"
  elif grep -qE ' (npy_read|gen_fill|format_array|host_array_alloc|json_string)$' "$tmp/nm"; then
    echo "FAIL cli.library_without_cli_code: $lib holds the command line's .npy, generator or printing code"
  else
    echo "ok cli.library_without_cli_code"
  fi
fi
