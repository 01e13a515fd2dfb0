#!/bin/sh
# The programs that only `make test-gpu` and the benchmarks run, on any
# machine: that the GPU suite's drivers (tests/gpu/build.sh) and the
# benchmarks' (bench/build.sh: jitc_bench, c_loops) build as those build
# them, so that one that no longer builds is found here rather than on the
# GPU machine or in a benchmark run; that the library compiles without
# LLVM, as the GPU machine builds it; and that
# - types_gpu's rules hold (types_gpu selftest): -0.0 is not 0.0 where a
#   result is exact, any NaN is taken where arithmetic makes one, the ulps
#   of the C library's functions, and its poisoned outputs show a run that
#   writes nothing; and its whole comparison with interp runs against the
#   cpu target where this machine has it (TYPES_GPU_TARGET=cpu, quick mode,
#   five of the types, complex64 and complex128 among them, host arrays);
# - jitc_bench reads a uint8 file, and a bfloat16 one ('<V2') when told its
#   type with --dtype, and times a program on the interp target;
# - c_loops times a copy;
# - the complex64 benchmark (c = exp(z) * w) runs in bench/types_cpu.py, and
#   bench/gpu_types.py's check of it takes the cpu target's answer.
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
# The GPU machine builds the library without LLVM (make LLVM_CONFIG=): the
# files that read JITC_HAVE_LLVM must compile without it too.
nollvm=ok
for f in src/jitc.c src/cpu/*.c; do
  $CC -std=c11 -D_GNU_SOURCE -fsyntax-only -Wall -Werror "$f" >"$tmp/err" 2>&1 ||
    { nollvm="$f: $(head -c 1000 "$tmp/err")"; break; }
done
if [ "$nollvm" = ok ]; then echo "ok drivers.no_llvm"; else echo "FAIL drivers.no_llvm: $nollvm"; fi
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

# The complex64 benchmark: bench/types_cpu.py times c = exp(z) * w (its
# check against the complex128 product comes first and ends the run when it
# fails), and bench/gpu_types.py's check of the same workload takes the cpu
# target's answer, computed here through the command line, and refuses one
# element moved by 16 epsilons.
PYTHON=${PYTHON:-python3}
case " ${JITC_TARGETS:-interp cpu} " in
*" cpu "*)
  if ! $PYTHON -c 'import numexpr, ml_dtypes' 2>/dev/null; then
    echo "skip drivers.bench_complex64: numexpr or ml_dtypes is not installed"
  elif r=$($PYTHON bench/types_cpu.py --build "$BUILD" -n 1e4 --rounds 1 --reps 1 \
    --programs c64_expmul --out "$tmp/types_cpu.md" 2>&1) &&
    grep -q '^| `c = exp(z) \* w` complex64 | [0-9]' "$tmp/types_cpu.md"; then
    echo "ok drivers.bench_complex64.types_cpu"
  else
    echo "FAIL drivers.bench_complex64.types_cpu: $(printf '%s' "$r" | tail -c 1500)"
  fi
  bench=$PWD/bench jitc_abs=$(cd "$(dirname "$JITC")" && pwd)/$(basename "$JITC")
  r=$(cd "$tmp" && JITC=$jitc_abs $PYTHON - "$bench" <<'PY' 2>&1
import os, subprocess, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import gpu_types as g
prog = g.WORKLOADS["c64_expmul"][0]
v = g.inputs("c64_expmul", 5000, np.random.default_rng(1))
for k, x in v.items():
    np.save(k + ".npy", x)
subprocess.run([os.environ["JITC"], "-t", "cpu", "-q", "--in", "z=z.npy", "--in", "w=w.npy",
                "--out", "c=c.npy", prog], check=True)
got, want = np.load("c.npy"), g.reference("c64_expmul", v)
worst = g.c64_eps(got, want)[1]
got[7] *= np.float32(1 + 16 * 2.0 ** -23)
moved = g.c64_eps(got, want)[1]
print("ok" if worst <= g.C64_EPS < moved else "cpu within %s, moved %s" % (worst, moved))
PY
  )
  case "$r" in
  ok) echo "ok drivers.bench_complex64.gpu_types_check" ;;
  *) echo "FAIL drivers.bench_complex64.gpu_types_check: $(printf '%s' "$r" | tail -c 1500)" ;;
  esac ;;
*) echo "skip drivers.bench_complex64: no cpu target here" ;;
esac
