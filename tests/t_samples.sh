#!/bin/sh
# tests/t_samples.sh -- every C program under samples/ (samples/README.md)
# builds against the static library, as a user's program would, with the
# project's flags and -Wall -Wextra -Werror, and runs.  A sample checks its
# own results and exits 0 when they are right: ok; 69 when this machine
# lacks what it needs (a GPU): skip, with its last line of standard error;
# anything else: FAIL.  The seeds measure every target this machine has and
# print "skipping TARGET: why" for the others: each such line is a skip of
# its own.  A skip is a failure where the target is there (JITC_TARGETS, as
# tests/run.sh finds them).  samples/embed.c must print what samples/README.md
# shows.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
CC=${CC:-cc}
JITC=${JITC:-$BUILD/jitc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export JITC_CACHE_DIR="$tmp/cache"
# (As tests/run.sh finds them: a target that fails otherwise than with
# exit 69, not on this machine, counts as there, and its samples fail.)
if [ -z "${JITC_TARGETS:-}" ]; then
  JITC_TARGETS=interp
  for t in cpu cuda; do
    "$JITC" -t $t -q -n 1 'b = a + 1' >/dev/null 2>&1
    [ $? -eq 69 ] || JITC_TARGETS="$JITC_TARGETS $t"
  done
fi
have() { case " $JITC_TARGETS " in *" $1 "*) return 0 ;; esac; return 1; }
libs="$BUILD/libjitc.a $(sed -n 's/^Libs.private: //p' "$BUILD/jitc.pc")"

# What samples/embed.c prints is shown in samples/README.md: the text block
# under "## What embed prints" must be its output (the first line, the
# target and the cache, aside).
awk '/^## What embed prints/ { h = 1; next } h && /^```/ { if (b) exit; b = 1; next } b' \
  samples/README.md | sed '1s/(.*/(...)/' >"$tmp/embed.expect"

# Each sample is built in its own directory, all at once: linking LLVM
# statically takes most of this group's time.
srcs=$(find samples -name '*.c' | sort)
for src in $srcs; do
  d=$tmp/$(echo "$src" | tr / _)
  mkdir -p "$d"
  # shellcheck disable=SC2086
  $CC ${CFLAGS:-} -Wall -Wextra -Werror -Isrc -o "$d/exe" "$src" $libs ${LDFLAGS:-} \
    2>"$d/build" &
done
wait

for src in $srcs; do
  name=${src#samples/}
  name=sample.${name%.c}
  d=$tmp/$(echo "$src" | tr / _)
  exe=$d/exe
  if [ ! -x "$exe" ]; then
    echo "FAIL $name.build: $(head -c 2000 "$d/build")"
    continue
  fi
  "$exe" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  why=$(tail -n 1 "$tmp/err")
  if [ $rc -eq 0 ]; then
    echo "ok $name"
  elif [ $rc -eq 69 ] && ! have cuda; then
    echo "skip $name: $why"
  else
    echo "FAIL $name: exit status $rc"
    cat "$tmp/out" "$tmp/err"
  fi
  sed -n 's/^skipping \([a-z]*\): \(.*\)/\1 \2/p' "$tmp/out" | while read -r t rest; do
    if have "$t"; then
      echo "FAIL $name.$t: skipped where the target is available: $rest"
    else
      echo "skip $name.$t: $rest"
    fi
  done
  if [ "$name" = sample.embed ] && [ $rc -eq 0 ]; then
    sed '1s/^compiled for [a-z]* (.*/compiled for cpu (...)/' "$tmp/out" >"$tmp/embed.out"
    if [ ! -s "$tmp/embed.expect" ]; then
      echo "FAIL $name.output: samples/README.md has no block under '## What embed prints'"
    elif diff "$tmp/embed.expect" "$tmp/embed.out" >"$tmp/diff"; then
      echo "ok $name.output"
    else
      echo "FAIL $name.output: its output differs from samples/README.md (diff README output):"
      cat "$tmp/diff"
    fi
  fi
done
