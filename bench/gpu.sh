#!/bin/sh
# bench/gpu.sh -- the GPU benchmark, in one command, on a machine with an
# NVIDIA H100 or H200 (PyTorch, CuPy and numba-cuda installed; no LLVM needed):
#
#   sh bench/gpu.sh            # or: make bench-gpu
#   sh bench/gpu.sh --quick    # sizes up to 1e5 only: a smoke test
#   sh bench/gpu.sh --reductions   # reductions only (bench/gpu_reduce.py)
#   sh bench/gpu.sh --types        # the narrow and complex types only (bench/gpu_types.py)
#   sh bench/gpu.sh --nd           # broadcasts, strided views, sums over an axis (bench/gpu_nd.py)
#
# Builds jitc without the cpu target (LLVM_CONFIG=) in build-gpu/, builds the
# timing driver and the Python package (into build-gpu/site), runs bench/gpu.py (well inside 10 minutes), which writes
# bench/results/gpu.json, gpu.md and gpu_*.png, then regenerates
# docs/PERFORMANCE.md from the results.  When COPY_RESULTS_TO names a
# directory, the results are copied there too.
set -e
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-gpu}
PY=${PYTHON:-python3}
JOBS=$(nproc 2>/dev/null || echo 4)

for m in numpy matplotlib; do
  if ! $PY -c "import $m" 2>/dev/null; then
    echo "bench: $m is missing; trying pip"
    $PY -m pip install --quiet "$m" || echo "bench: could not install $m"
  fi
done

mkdir -p "$BUILD/bench"
make -j"$JOBS" BUILD="$BUILD" LLVM_CONFIG= "$BUILD/libjitc_int.a" "$BUILD/libjitc.so" "$BUILD/jitc" >"$BUILD/make.log" 2>&1 ||
  { tail -30 "$BUILD/make.log"; echo "bench: building jitc failed"; exit 1; }
JITC_BENCH_ONLY=1 LLVM_LIBS= BUILD="$BUILD" sh bench/build.sh
# The Python package on this build, for the tables' "jitc from Python" columns.
rm -rf "$BUILD/site"
if JITC_BUILD="$BUILD" $PY -m pip install -q --no-build-isolation --no-deps --target "$BUILD/site" . \
     >"$BUILD/pip.log" 2>&1; then
  export PYTHONPATH="$PWD/$BUILD/site${PYTHONPATH:+:$PYTHONPATH}"
else
  echo "bench: the Python package did not build (its columns stay empty); see $BUILD/pip.log"
fi

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
status=0
# --reductions: sum(a * b) against torch.dot, cupy.dot and a copy (bench/gpu_reduce.py) only;
# --types: the narrow and complex types against PyTorch, CuPy and a copy (bench/gpu_types.py) only;
# --nd: broadcasts, strided views and sums over an axis (bench/gpu_nd.py) only.
script=bench/gpu.py results=gpu
if [ "${1:-}" = --reductions ]; then
  shift
  script=bench/gpu_reduce.py results=gpu_reduce
elif [ "${1:-}" = --types ]; then
  shift
  script=bench/gpu_types.py results=gpu_types
elif [ "${1:-}" = --nd ]; then
  shift
  script=bench/gpu_nd.py results=gpu_nd
fi
$PY $script --build "$BUILD" "$@" || status=$?
$PY bench/docs.py || status=1
if [ -n "${COPY_RESULTS_TO:-}" ] && [ -d "$COPY_RESULTS_TO" ]; then
  mkdir -p "$COPY_RESULTS_TO/bench/results" "$COPY_RESULTS_TO/docs"
  cp bench/results/$results* "$COPY_RESULTS_TO/bench/results/" 2>/dev/null || true
  cp docs/PERFORMANCE.md "$COPY_RESULTS_TO/docs/" 2>/dev/null || true
fi
exit $status
