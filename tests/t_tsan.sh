#!/bin/sh
# tests/t_tsan.sh -- the library under ThreadSanitizer: several threads
# compiling and running different kernels on separate contexts (sharing one
# disk cache directory), then several threads running one kernel of a shared
# context in turn (one thread at a time, as jitc.h says), on interp and cpu
# (tests/tsan_check.c); and the cuda target's host pipeline split over two
# (fake) GPUs, a host thread each (tests/host_pipe_check.c).  The library is compiled
# with -fsanitize=thread into build-tsan/ (objects kept between runs); any
# race report fails the test.  Skipped where TSan cannot build or run.
set -u
# Under `make test SAN=1` the group has run already in the plain suite: it
# builds its own ThreadSanitizer library, which the SAN build does not change.
if [ "${SAN:-}" = 1 ]; then
  echo "skip tsan: run in the plain suite (its own ThreadSanitizer build)"
  exit 0
fi
CC=${TSAN_CC:-cc}
dir=build-tsan
mkdir -p "$dir/obj"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '#include <pthread.h>\nstatic void *f(void *a) { return a; }\nint main(void) { pthread_t t; pthread_create(&t, 0, f, 0); return pthread_join(t, 0); }\n' >"$tmp/probe.c"
if ! $CC -fsanitize=thread -o "$tmp/probe" "$tmp/probe.c" -lpthread >"$tmp/probe.log" 2>&1 ||
   ! "$tmp/probe" >>"$tmp/probe.log" 2>&1; then
  echo "skip tsan: ThreadSanitizer cannot run here: $(head -c 300 "$tmp/probe.log")"
  exit 0
fi

LC=
for v in 21 20 19 18 17 16 15 14; do
  LC=$(command -v "llvm-config-$v") && break
done
if [ -n "$LC" ]; then
  LLVM_CFLAGS="-DJITC_HAVE_LLVM=1 -isystem $($LC --includedir)"
  LLVM_LIBS="$($LC --ldflags) $($LC --libs)"
else
  LLVM_CFLAGS= LLVM_LIBS=
fi
FLAGS="-std=c11 -D_GNU_SOURCE -O1 -g -fsanitize=thread $LLVM_CFLAGS"
objs=
for src in src/*.c src/*/*.c runtime/*.c; do
  obj="$dir/obj/$(echo "$src" | tr / _ | sed 's/\.c$/.o/')"
  objs="$objs $obj"
  if [ -f "$obj" ] && [ -z "$(find "$src" src/*.h src/*/*.h runtime/*.h -newer "$obj" | head -n 1)" ]; then
    continue
  fi
  # shellcheck disable=SC2086
  if ! $CC $FLAGS -c -o "$obj" "$src" 2>"$tmp/cc.log"; then
    echo "FAIL tsan.builds: $src: $(head -c 600 "$tmp/cc.log")"
    exit 0
  fi
done
# shellcheck disable=SC2086
if ! $CC $FLAGS -Isrc -o "$dir/tsan_check" tests/tsan_check.c $objs $LLVM_LIBS -ldl -lpthread -lm \
     2>"$tmp/cc.log" ||
   ! $CC $FLAGS -o "$dir/host_pipe_check" tests/host_pipe_check.c $objs $LLVM_LIBS -ldl -lpthread -lm \
     2>"$tmp/cc.log" ||
   ! $CC -O1 -std=c11 -fPIC -shared -o "$dir/libcuda_fake.so" tests/cuda_fake.c -lpthread \
     2>"$tmp/cc.log"; then
  echo "FAIL tsan.builds: $(head -c 600 "$tmp/cc.log")"
  exit 0
fi
echo "ok tsan.builds"

targets=interp
[ -n "$LC" ] && targets="interp cpu"
mkdir -m 700 "$tmp/cache"
TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp ${TSAN_OPTIONS:-}" \
  "$dir/tsan_check" "$tmp/cache" $targets >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out"
if grep -q 'WARNING: ThreadSanitizer' "$tmp/err"; then
  echo "FAIL tsan.no_races: $(grep -c 'WARNING: ThreadSanitizer' "$tmp/err") report(s):"
  grep -A 30 'WARNING: ThreadSanitizer' "$tmp/err" | head -n 120
elif [ $rc -ne 0 ] && ! grep -q '^FAIL' "$tmp/out"; then
  echo "FAIL tsan.exit: status $rc"; tail -n 30 "$tmp/err"
else
  echo "ok tsan.no_races"
fi

# The cuda target's host pipeline split over two GPUs, one host thread each
# (tests/cuda_fake.c stands in for the driver: tests/t_host_pipe.sh).
mkdir -m 700 "$tmp/cache2"
FAKE_CUDA_DEVICES=2 JITC_LIBCUDA=$dir/libcuda_fake.so JITC_LIBNVRTC=$dir/libcuda_fake.so \
  JITC_CACHE_DIR=$tmp/cache2 \
  TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp ${TSAN_OPTIONS:-}" \
  "$dir/host_pipe_check" >"$tmp/out" 2>"$tmp/err"
rc=$?
if grep -q 'WARNING: ThreadSanitizer' "$tmp/err"; then
  echo "FAIL tsan.host_pipe: $(grep -c 'WARNING: ThreadSanitizer' "$tmp/err") report(s):"
  grep -A 30 'WARNING: ThreadSanitizer' "$tmp/err" | head -n 120
elif [ $rc -ne 0 ] || grep -q '^FAIL' "$tmp/out"; then
  echo "FAIL tsan.host_pipe: status $rc"; grep '^FAIL' "$tmp/out" | head; tail -n 30 "$tmp/err"
else
  echo "ok tsan.host_pipe ($(grep -c '^ok' "$tmp/out") cases, $(grep -c '^ok.*multi' "$tmp/out") split over two GPUs)"
fi
exit 0
