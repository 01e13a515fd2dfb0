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
# The differential tests run on every target this machine has.
if [ -z "${JITC_TARGETS:-}" ]; then
  JITC_TARGETS=interp
  for t in cpu cuda; do
    "$JITC" -t $t -q -n 1 'b = a + 1' >/dev/null 2>&1 && JITC_TARGETS="$JITC_TARGETS $t"
  done
fi
export JITC_TARGETS
echo "targets: $JITC_TARGETS"
pass=0; fail=0; skip=0
tmp=$(mktemp)
for t in tests/t_*.sh tests/t_*.py; do
  [ -f "$t" ] || continue
  case "$t" in
    *.py) cmd="$PYTHON $t" ;;
    *)    cmd="sh $t" ;;
  esac
  echo "== $t"
  $cmd >"$tmp" 2>&1
  rc=$?
  cat "$tmp"
  p=$(grep -c '^ok ' "$tmp"); f=$(grep -c '^FAIL ' "$tmp"); s=$(grep -c '^skip ' "$tmp")
  if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "FAIL $t: exited with status $rc"
    f=1
  fi
  pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
done
rm -f "$tmp"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
