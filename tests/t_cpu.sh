#!/bin/sh
# tests/t_cpu.sh -- the cpu target through the library: every operator and
# function against interp, tails and thread splits, accuracy of the math
# functions, the compile cache (memory, disk, corrupt entries, unsafe
# directories), --emit llvm | llvm-opt | asm, the CPU compiled for and the
# sign of NaN.  The checks live in tests/cpu_check.c, built here against the
# shared library.
#
# The groups that depend on the vector math (diff, accuracy with the special
# values, nansign) run once for the host (native) and once per x86-64 level
# the host executes (JITC_CPU=x86-64, x86-64-v2, ...), as the library finds
# them: each level has its own choice of vector math.  Their names carry the
# level in brackets.  The accuracy group runs once more with SLEEF alone.
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
# Runs cpu_check with JITC_CPU=$1 (empty: unset), JITC_VECMATH=$2 (empty:
# unset) and the rest as arguments; the two are added to each result's name.
check() {
  cpu=$1 vm=$2
  shift 2
  tag="$cpu${vm:+, $vm}"
  env -u JITC_CPU -u JITC_VECMATH ${cpu:+JITC_CPU=$cpu} ${vm:+JITC_VECMATH=$vm} \
    "$tmp/cpu_check" "$@" >"$tmp/out" 2>&1
  rc=$?
  if [ -n "$tag" ]; then
    sed "s/^\(ok\|FAIL\|skip\) /\1 [$tag] /" "$tmp/out"
  else
    cat "$tmp/out"
  fi
  # 1: failures, already printed; anything else is a crash.
  [ $rc -le 1 ] || echo "FAIL cpu_check $* [$tag]: exited with status $rc"
}
for what in sizes emit machine "cache $tmp/cache"; do
  # shellcheck disable=SC2086
  check "" "" $what
done
# Without the list of levels the groups below would run for native alone.
levels=$(env -u JITC_CPU "$tmp/cpu_check" levels 2>"$tmp/levels.err")
rc=$?
[ $rc -eq 0 ] || echo "FAIL cpu_check levels: exited with status $rc: $(head -c 300 "$tmp/levels.err")"
# Under the sanitizers (make test SAN=1) the library's C is their subject,
# the same at every level: native alone there; the plain suite runs them all.
if [ "${SAN:-}" = 1 ] && [ -n "$levels" ]; then
  echo "skip cpu.levels: $(echo $levels) run in the plain suite, not under the sanitizers"
  levels=
fi
for cpu in native $levels; do
  for what in diff accuracy nansign; do
    check "$cpu" "" $what
  done
done
# Without libmvec (systems without glibc): SLEEF everywhere, with the fixes
# of its range edges.
check native sleef accuracy
exit 0
