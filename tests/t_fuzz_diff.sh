#!/bin/sh
# tests/t_fuzz_diff.sh -- a short differential fuzzing run (tests/fuzz_diff.py):
# the regression cases, then 48 random programs of a fixed seed over every
# type of `jitc --list` on interp, cpu and (with a GPU) cuda, each target
# compared with a NumPy oracle (and with interp) bit for bit or within the
# stated ulp.  48 programs of every type cost what 60 of five types did
# (their conversions cost more in jitc, and two regression cases were added).
# Longer runs: make fuzz-diff SEED=... N=...
set -u
PYTHON=${PYTHON:-python3}
JITC=${JITC:-${BUILD:-build}/jitc}
if [ ! -x "$JITC" ]; then
  echo "skip fuzz_diff: $JITC is not built"
  exit 0
fi
JITC=$JITC exec $PYTHON tests/fuzz_diff.py --seed "${JITC_FUZZ_DIFF_SEED:-20250101}" -n 48 --self-test
