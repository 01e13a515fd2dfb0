#!/bin/sh
# The programs that only `make test-gpu` and the benchmarks run, on any
# machine: that the GPU suite's drivers (tests/gpu/build.sh) and the
# benchmarks' (bench/build.sh: jitc_bench, c_loops) build as those build
# them, so that one that no longer builds is found here rather than on the
# GPU machine or in a benchmark run; and that
# - types_gpu's rules hold (types_gpu selftest): -0.0 is not 0.0 where a
#   result is exact, any NaN is taken where arithmetic makes one, the ulps
#   of the C library's functions, and its poisoned outputs show a run that
#   writes nothing; and its whole comparison with interp runs against the
#   cpu target where this machine has it (TYPES_GPU_TARGET=cpu, quick mode,
#   five of the types, complex64 and complex128 among them, host arrays);
# - jitc_bench reads a uint8 file, and a bfloat16 one ('<V2') when told its
#   type with --dtype, and times a program on the interp target;
# - c_loops times a copy.
set -u
BUILD=${BUILD:-build}
JITC=${JITC:-$BUILD/jitc}
CC=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if BUILD=$BUILD sh tests/gpu/build.sh "$tmp" >"$tmp/err" 2>&1; then
  echo "ok drivers.gpu_tests"
else
  echo "FAIL drivers.gpu_tests: $(head -c 2000 "$tmp/err")"
  exit 1
fi
"$tmp/types_gpu" selftest | sed 's/^\(ok\|FAIL\) types\./\1 drivers.types_gpu./'
case " ${JITC_TARGETS:-interp cpu} " in
*" cpu "*)
  TYPES_GPU_TARGET=cpu TYPES_GPU_TEST=uint8,float16,bfloat16,complex64,complex128 "$tmp/types_gpu" quick |
    sed 's/^\(ok\|FAIL\) types\./\1 drivers.types_cpu./' ;;
*) echo "skip drivers.types_cpu: no cpu target here" ;;
esac

if ! BUILD=$BUILD sh bench/build.sh "$tmp/bench" >"$tmp/err" 2>&1; then
  echo "FAIL drivers.bench: the benchmark drivers do not build (bench/build.sh): $(head -c 2000 "$tmp/err")"
  exit 1
fi
echo "ok drivers.bench"
if ! "$JITC" -t interp -q -n 1000 --dtype x=uint8 --in x=rand:1 --out y="$tmp/y.npy" 'y = x' ||
  ! "$JITC" -t interp -q -n 1000 --dtype a=float32 --in a=randn:2 --out b="$tmp/b.npy" \
    'b = bfloat16(a)'; then
  echo "FAIL drivers.jitc_bench: cannot write its inputs"
  exit 1
fi
# bench_ok NAME PROGRAM OPTION...: jitc_bench times PROGRAM on interp.
bench_ok() {
  name=$1 prog=$2
  shift 2
  r=$("$tmp/bench/jitc_bench" -t interp "$@" --min-reps 2 --max-reps 2 "$prog" 2>&1)
  case "$r" in
  *'"times_ms"'*) echo "ok drivers.jitc_bench.$name" ;;
  *) echo "FAIL drivers.jitc_bench.$name: $r" ;;
  esac
}
bench_ok uint8 'y = (f32(x) - 127.5) / 127.5' --in x="$tmp/y.npy"
bench_ok bfloat16 'c = b * b + 1' --dtype b=bfloat16 --in b="$tmp/b.npy"
r=$("$tmp/bench/c_loops" copy --bytes 1000000 2>&1)
case "$r" in
*'"times_ms"'*) echo "ok drivers.c_loops" ;;
*) echo "FAIL drivers.c_loops: $r" ;;
esac
