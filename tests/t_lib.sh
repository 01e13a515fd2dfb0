#!/bin/sh
# The library's own tests (tests/lib_test.c) on every target, and the sample
# samples/embed.c, both linked against the static library like a user would.
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
# shellcheck disable=SC2086
if ! $CC ${CFLAGS:-} -Isrc -o "$tmp/embed" samples/embed.c $libs ${LDFLAGS:-} 2>"$tmp/err"; then
  echo "FAIL sample.build: $(head -c 2000 "$tmp/err")"; exit 1
fi
"$tmp/embed" >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q 'n=1001 alpha=0.5: y\[0\]=1 y\[1000\]=501' "$tmp/out" &&
   grep -q 'n=2001 alpha=1: y\[0\]=1 y\[2000\]=2001' "$tmp/out" &&
   grep -q "error 2 at 1:5: unknown function 'exq'; did you mean 'exp'?" "$tmp/out"; then
  echo "ok sample.embed"
else
  echo "FAIL sample.embed: exit $rc"; cat "$tmp/out"
fi
