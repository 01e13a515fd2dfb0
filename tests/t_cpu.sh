#!/bin/sh
# tests/t_cpu.sh -- the cpu target through the library: every operator and
# function against interp, tails and thread splits, accuracy of the math
# functions, the compile cache (memory, disk, corrupt entries, unsafe
# directories) and --emit llvm | llvm-opt | asm.  The checks live in
# tests/cpu_check.c, built here against the shared library.
set -u
BUILD=${BUILD:-build}
CC=${CC:-cc}
if [ ! -f "$BUILD/libjitc.so" ]; then
  echo "skip cpu: $BUILD/libjitc.so is not built"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! $CC ${CFLAGS:-} -Isrc -o "$tmp/cpu_check" tests/cpu_check.c -L"$BUILD" -ljitc \
     -Wl,-rpath,"$PWD/$BUILD" ${LDFLAGS:-} -lm 2>"$tmp/cc.log"; then
  echo "FAIL cpu_check builds: $(head -c 600 "$tmp/cc.log")"
  exit 1
fi
mkdir -m 700 "$tmp/cache"
for what in diff sizes accuracy emit "cache $tmp/cache"; do
  # shellcheck disable=SC2086
  "$tmp/cpu_check" $what
  rc=$?
  # 1: failures, already printed; anything else is a crash.
  [ $rc -le 1 ] || echo "FAIL cpu_check $what: exited with status $rc"
done
exit 0
