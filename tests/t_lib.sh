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
# Each run's lines, named by target.  A run that does not reach its last
# line ("lib_test: end") or exits with a status other than 0 (all passed)
# or 1 (its failures printed) stopped partway: a crash, an abort, an exit
# from inside the library.
for t in interp cpu cuda; do
  "$tmp/lib_test" $t >"$tmp/out" 2>"$tmp/err"
  rc=$?
  sed -e '/^lib_test: end$/d' -e "s/^ok /ok $t./; s/^FAIL /FAIL $t./" "$tmp/out"
  cat "$tmp/err"
  if [ "$(tail -n 1 "$tmp/out")" != "lib_test: end" ] || [ $rc -gt 1 ] ||
     { [ $rc -eq 1 ] && ! grep -q '^FAIL ' "$tmp/out"; }; then
    echo "FAIL $t.lib_test: stopped before its end (exit status $rc)"
  fi
done
