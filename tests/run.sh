#!/bin/sh
# tests/run.sh -- runs every test group and prints the total.
#
# A test group is an executable tests/t_*.sh or tests/t_*.py.  It prints one
# line per test case: "ok NAME", "FAIL NAME: why" or "skip NAME: why"; other
# lines are shown as they come (details of failures).  A group that exits
# non-zero without printing FAIL counts as one failure.
# Environment: BUILD (build directory, default build), JITC (the binary).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
export JITC=${JITC:-$PWD/$BUILD/jitc}
export PYTHON=${PYTHON:-python3}
# The differential tests run on every target this machine has.  A target
# is missing when a one-line program exits 69; any other failure is the
# target's, and counts as one (the groups would skip the target otherwise).
broken=""
if [ -z "${JITC_TARGETS:-}" ]; then
  JITC_TARGETS=interp
  for t in cpu cuda; do
    "$JITC" -t $t -q -n 1 'b = a + 1' >/dev/null 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
      JITC_TARGETS="$JITC_TARGETS $t"
    elif [ $rc -ne 69 ]; then
      broken="$broken $t:$rc"
    fi
  done
fi
export JITC_TARGETS
echo "targets: $JITC_TARGETS"
pass=0; fail=0; skip=0
for b in $broken; do
  echo "FAIL targets.${b%:*}: 'b = a + 1' exits with status ${b#*:} (69 would be: not on this machine)"
  fail=$((fail + 1))
done
# The groups run as jobs, JITC_TEST_JOBS at once (default: the cores; the
# groups are mostly one process at a time, waiting on the next), the
# longest first so that they finish together; their results are shown in
# the order of the list below as each one ends.  A job is a line "ID
# COMMAND" of $dir/jobs; it leaves $dir/ID.out, its output, and $dir/ID.rc,
# its exit status, with $dir/ID.s, the seconds it took.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
jobs=${JITC_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
order=""
add() { # $1: id, $2: command
  order="$order $1"
  printf '%s %s\n' "$1" "$2" >>"$dir/list"
}
for t in tests/t_*.sh tests/t_*.py; do
  [ -f "$t" ] || continue
  case "$t" in
    *.py) add "$(basename "$t")" "$PYTHON $t" ;;
    *)    add "$(basename "$t")" "sh $t" ;;
  esac
done
# The differential group again for the cpu target compiled for each x86-64
# level the host runs (as the library finds them: JITC_CPU=LEVEL compiles
# for it, and refuses to run what the host cannot execute); each level has
# its own vector math.  tests/t_cpu.sh does the same for its groups.  The
# array model's group too, for the cpu target alone: its kernels' variants
# load in ways (masked loads of every other element) each level builds apart.
# Under the sanitizers (SAN=1) the library's C is their subject, the same at
# every level: the levels run in the plain suite alone.
case " $JITC_TARGETS " in *" cpu "*)
  [ "${SAN:-}" = 1 ] || for lv in x86-64 x86-64-v2 x86-64-v3 x86-64-v4; do
    JITC_CPU=$lv "$JITC" -t cpu -q -n 1 'b = a + 1' >/dev/null 2>&1 || continue
    add "level.$lv" "{ JITC_CPU=$lv JITC_TARGETS='interp cpu' $PYTHON tests/t_diff.py 2>&1; JITC_CPU=$lv JITC_TARGETS=cpu $PYTHON tests/t_nd.py 2>&1; } | sed 's/^\\(ok\\|FAIL\\|skip\\) /\\1 [$lv] /'"
  done ;;
esac
# The slowest groups start first (as measured on a 2-core machine, slowest first).
slow="t_runtime.py t_cuda_complex.py t_tsan.sh t_tutorial.py t_types_cpu.py t_complex_cpu.py
      t_cuda_types.py t_cpu.sh t_python.sh t_split.py t_axis.py t_cuda_convert.py t_cuda_host.py"
for g in $slow; do
  grep "^$g " "$dir/list"
done >"$dir/jobs"
set --
for g in $slow; do
  set -- "$@" -e "^$g "
done
grep -v "$@" "$dir/list" >>"$dir/jobs"
export dir
tr '\n' '\0' <"$dir/jobs" | xargs -0 -P "$jobs" -n 1 sh -c '
  id=${1%% *}; start=$(date +%s)
  eval "${1#* }" >"$dir/$id.out" 2>&1
  rc=$?
  echo $(( $(date +%s) - start )) >"$dir/$id.s"
  echo $rc >"$dir/$id.rc"' sh &
runner=$!
# Shows a job's output and adds its counts, once it has ended; $1: its id.
tally() {
  while [ ! -f "$dir/$1.rc" ]; do
    kill -0 $runner 2>/dev/null || break
    sleep 1
  done
  [ -f "$dir/$1.rc" ] || { echo "FAIL $1: did not run"; fail=$((fail + 1)); return; }
  case "$1" in
    level.*) name="tests/t_diff.py and t_nd.py (cpu at ${1#level.})"
             # The exit status is sed's: a crash shows as no result lines at
             # all, or, in t_nd.py, no count of them at its end.
             if grep -q '^ok ' "$dir/$1.out" && grep -q ' passed, 0 failed$' "$dir/$1.out"
             then rc=0; else rc=1; fi ;;
    *)       name="tests/$1"; rc=$(cat "$dir/$1.rc") ;;
  esac
  echo "== $name"
  cat "$dir/$1.out"
  p=$(grep -c '^ok ' "$dir/$1.out"); f=$(grep -c '^FAIL ' "$dir/$1.out")
  s=$(grep -c '^skip ' "$dir/$1.out")
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "FAIL $name: exited with status $rc"
    f=1
  fi
  echo "== $name took $(cat "$dir/$1.s") s"
  pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
}
for id in $order; do
  tally "$id"
done
wait $runner
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
