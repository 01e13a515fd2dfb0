#!/bin/sh
# bench/run.sh -- what `make bench` runs on a CPU machine (FULL=1 adds 1e8
# elements; QUICK=1 is a smoke test with small sizes):
#  1. installs the peers that are missing with pip (numpy, numexpr, numba)
#     and matplotlib for the plots; a peer that cannot be installed is
#     reported absent in the results, never skipped silently;
#  2. builds the hand-written C loops with gcc -O3 -march=native -fopenmp
#     (libmvec for exp, sin, cos: checked with nm) and the jitc driver
#     against $BUILD/libjitc_int.a (the library with its internal names)
#     and the command line's .npy reader (cli/): bench/build.sh;
#  3. runs bench/run.py (results in bench/results/cpu.{json,md}, cpu_*.png)
#     and regenerates docs/PERFORMANCE.md.
# Make passes BUILD, LLVM_LIBS and LDLIBS.
set -e
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PY=${PYTHON:-python3}
BENCH_CC=${BENCH_CC:-gcc}

if ! $PY -c "import numpy" 2>/dev/null; then
  echo "bench: installing numpy (the oracle every result is checked against)"
  $PY -m pip install --quiet numpy || { echo "bench: numpy is required"; exit 1; }
fi
for m in numexpr numba matplotlib; do
  if ! $PY -c "import $m" 2>/dev/null; then
    echo "bench: installing $m with pip"
    $PY -m pip install --quiet "$m" || echo "bench: $m could not be installed: reported absent"
  fi
done

sh bench/build.sh

# BUILD_ONLY=1: the peers and the drivers, for bench/reduce_cpu.py.
if [ -n "${BUILD_ONLY:-}" ] && [ "$BUILD_ONLY" != 0 ]; then exit 0; fi

ARGS=""
[ -n "$FULL" ] && [ "$FULL" != 0 ] && ARGS="$ARGS --full"
[ -n "$QUICK" ] && [ "$QUICK" != 0 ] && ARGS="$ARGS --quick"
status=0
JITC_BENCH_MAKE=1 $PY bench/run.py --build "$BUILD" $ARGS || status=$?
$PY bench/docs.py || status=1
exit $status
