#!/bin/sh
# tests/gpu/build.sh OUT -- builds the GPU test drivers (tests/gpu/*_gpu.c)
# into the directory OUT against $BUILD/libjitc_int.a, as `make test-gpu`
# runs them.  tests/t_drivers.sh runs it on machines without a GPU, so
# that a driver that no longer builds is found before a GPU is at hand.
# Prints "FAIL NAME: does not build" and exits 1 at the first that fails.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
out=$1
libs="${LDFLAGS:-} -ldl -lpthread -lm $(sed -n 's/^Libs.private: //p' "$BUILD/jitc.pc" 2>/dev/null)"
for d in cuda_gpu devptr_gpu reduce_gpu host_gpu types_gpu multi_gpu nd_gpu axis_gpu; do
  extra=
  # cuda_gpu prints arrays as the command line does (cli/format.c, which
  # reads elements through cli/elem.c).
  [ "$d" = cuda_gpu ] && extra="cli/format.c cli/elem.c"
  # types_gpu reads elements and judges agreement with interp in types_agree.c.
  [ "$d" = types_gpu ] && extra="tests/gpu/types_agree.c"
  # shellcheck disable=SC2086 # $extra and $libs are lists of words
  ${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -o "$out/$d" "tests/gpu/$d.c" $extra "$BUILD/libjitc_int.a" \
    $libs || { echo "FAIL $d: does not build"; exit 1; }
done
