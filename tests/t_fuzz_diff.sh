#!/bin/sh
# tests/t_fuzz_diff.sh -- a short differential fuzzing run (tests/fuzz_diff.py):
# the regression cases, then 48 random programs of a fixed seed over every
# type of `jitc --list` on interp, cpu and (with a GPU) cuda, each target
# compared with a NumPy oracle (and with interp) bit for bit or within the
# stated ulp.  48 programs of every type cost what 60 of five types did
# (their conversions cost more in jitc, and two regression cases were added).
# A part of the programs runs over random broadcast shapes and strided
# views through the Python package (tests/fuzz_shapes.py), built here with
# pip from $BUILD's library as tests/t_python.sh builds it (not under
# SAN=1: python cannot load an ASan library without preloading libasan).
# Longer runs: make fuzz-diff SEED=... N=... JOBS=... (this script, with
# JITC_FUZZ_DIFF_SEED, _N and _JOBS).
set -u
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
JITC=${JITC:-${BUILD:-build}/jitc}
if [ ! -x "$JITC" ]; then
  echo "skip fuzz_diff: $JITC is not built"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shapes=0.3
if [ "${SAN:-}" = 1 ]; then
  echo "skip fuzz_diff.shapes: ASan build (python cannot load it without preloading libasan)"
  shapes=0
elif ! $PYTHON -c "import setuptools, wheel" 2>/dev/null; then
  echo "skip fuzz_diff.shapes: no setuptools or wheel for $PYTHON (make deps installs them)"
  shapes=0
elif ! JITC_BUILD=$(dirname "$JITC") $PYTHON -m pip install -q --no-build-isolation --no-deps \
       --target "$tmp/site" . >"$tmp/pip.log" 2>&1; then
  cat "$tmp/pip.log"
  echo "FAIL fuzz_diff.shapes: pip install . failed"
  shapes=0
fi
JITC=$JITC PYTHONPATH="$tmp/site${PYTHONPATH:+:$PYTHONPATH}" $PYTHON tests/fuzz_diff.py \
  --seed "${JITC_FUZZ_DIFF_SEED:-20250101}" -n "${JITC_FUZZ_DIFF_N:-48}" \
  ${JITC_FUZZ_DIFF_JOBS:+-j "$JITC_FUZZ_DIFF_JOBS"} --shapes $shapes --self-test
