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
tmp=$(mktemp)
# Shows a group's output ($tmp) and adds its counts; $1: its exit status,
# $2: its name.
tally() {
  cat "$tmp"
  p=$(grep -c '^ok ' "$tmp"); f=$(grep -c '^FAIL ' "$tmp"); s=$(grep -c '^skip ' "$tmp")
  if [ "$1" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "FAIL $2: exited with status $1"
    f=1
  fi
  pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
}
for t in tests/t_*.sh tests/t_*.py; do
  [ -f "$t" ] || continue
  case "$t" in
    *.py) cmd="$PYTHON $t" ;;
    *)    cmd="sh $t" ;;
  esac
  echo "== $t"
  start=$(date +%s)
  $cmd >"$tmp" 2>&1
  tally $? "$t"
  echo "== $t took $(( $(date +%s) - start )) s"
done
# The differential group again for the cpu target compiled for each x86-64
# level the host runs (as the library finds them: JITC_CPU=LEVEL compiles
# for it, and refuses to run what the host cannot execute); each level has
# its own vector math.  tests/t_cpu.sh does the same for its groups.
case " $JITC_TARGETS " in *" cpu "*)
  for lv in x86-64 x86-64-v2 x86-64-v3 x86-64-v4; do
    JITC_CPU=$lv "$JITC" -t cpu -q -n 1 'b = a + 1' >/dev/null 2>&1 || continue
    echo "== tests/t_diff.py (cpu at $lv)"
    JITC_CPU=$lv JITC_TARGETS="interp cpu" $PYTHON tests/t_diff.py 2>&1 |
      sed "s/^\(ok\|FAIL\|skip\) /\1 [$lv] /" >"$tmp"
    # The exit status is sed's: a crash shows as no result lines at all.
    grep -q '^ok ' "$tmp"
    tally $? "tests/t_diff.py at $lv"
  done ;;
esac
rm -f "$tmp"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
