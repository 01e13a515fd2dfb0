#!/bin/sh
# tests/t_validate.sh -- the IR validator (src/validate.c) on hand-built
# programs, well-formed and malformed: tests/validate_check.c, linked with
# build/libjitc_int.a (it calls validate_program, an internal name).
set -u
BUILD=${BUILD:-build}
CC=${CC:-cc}
# The library with its internal names (make test builds it).
objs=$BUILD/libjitc_int.a
if [ ! -f "$objs" ] || [ ! -f "$BUILD/jitc.pc" ]; then
  echo "skip validate: $BUILD is not built"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
libs=$(sed -n 's/^Libs.private: //p' "$BUILD/jitc.pc")
# shellcheck disable=SC2086
if ! $CC ${CFLAGS:-} -std=c11 -D_GNU_SOURCE -Isrc -o "$tmp/validate_check" tests/validate_check.c \
     $objs $libs ${LDFLAGS:-} 2>"$tmp/cc.log"; then
  echo "FAIL validate.build: $(head -c 2000 "$tmp/cc.log")"
  exit 1
fi
"$tmp/validate_check"
