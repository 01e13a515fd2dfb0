#!/bin/sh
# bench/build.sh [OUT] -- builds the benchmark drivers into OUT (default
# $BUILD/bench) against $BUILD/libjitc_int.a, with the command line's files
# they share (host arrays, the .npy reader and its elements, JSON strings):
#   jitc_bench  jitc through its library (bench/jitc_bench.c)
#   c_loops     the hand-written C loops and the copy limit: gcc -O3
#               -march=native -fopenmp, libmvec's vector exp, sin and cos
#               (checked with nm); left out with JITC_BENCH_ONLY=1
# Run by bench/run.sh (make bench), bench/gpu.sh (JITC_BENCH_ONLY=1, no LLVM
# there) and tests/t_drivers.sh.  LLVM_LIBS and LDLIBS as make passes them;
# unset, the library's own list ($BUILD/jitc.pc).
# shellcheck disable=SC2086 # $OPT, $CLI_OBJS and $libs are lists of words
set -e
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
out=${1:-$BUILD/bench}
BENCH_CC=${BENCH_CC:-gcc}
mkdir -p "$out"
libs="${LDFLAGS:-} $BUILD/libjitc_int.a ${LLVM_LIBS-$(sed -n 's/^Libs.private: //p' "$BUILD/jitc.pc")} ${LDLIBS:--ldl -lpthread -lm}"
CLI_OBJS=
for f in host fileio npyhdr npy elem json; do
  ${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -Wall -c "cli/$f.c" -o "$out/cli_$f.o"
  CLI_OBJS="$CLI_OBJS $out/cli_$f.o"
done
${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter \
  -o "$out/jitc_bench" bench/jitc_bench.c $CLI_OBJS $libs
[ "${JITC_BENCH_ONLY:-0}" = 1 ] && exit 0

OPT="-O3 -march=native -fopenmp"
$BENCH_CC $OPT -ffast-math -fno-builtin-sin -fno-builtin-cos -c bench/c_mvec.c -o "$out/c_mvec.o"
for f in _expf _exp _sin _cos; do
  if ! nm "$out/c_mvec.o" | grep -q "U _ZGV.*v$f\$"; then
    echo "bench: the C loops do not call libmvec's vector $f (see bench/c_mvec.c)"; exit 1
  fi
done
# -fno-tree-loop-distribute-patterns: the stream kernels stay loops, not memcpy calls.
$BENCH_CC $OPT -fno-math-errno -fno-tree-loop-distribute-patterns -Wall -c bench/c_loops.c \
  -o "$out/c_loops.o"
$BENCH_CC -fopenmp -o "$out/c_loops" "$out/c_loops.o" "$out/c_mvec.o" $CLI_OBJS $libs
