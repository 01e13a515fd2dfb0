#!/bin/sh
# The library's own tests (tests/lib_test.c) on every target, linked against
# the static library like a user's program (the samples: tests/t_samples.sh).
set -u
BUILD=${BUILD:-build}
CC=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
libs="$BUILD/libjitc.a $(sed -n 's/^Libs.private: //p' "$BUILD/jitc.pc")"
# shellcheck disable=SC2086
if ! $CC ${CFLAGS:-} -Isrc -o "$tmp/lib_test" tests/lib_test.c $libs ${LDFLAGS:-} 2>"$tmp/err"; then
  echo "FAIL lib.build: $(head -c 2000 "$tmp/err")"; exit 1
fi
for t in interp cpu cuda; do
  "$tmp/lib_test" $t | sed "s/^ok /ok $t./; s/^FAIL /FAIL $t./"
done
