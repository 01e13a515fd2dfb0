#!/bin/sh
# Golden tests: the --emit text of every stage, and the messages of errors.
#
#   tests/golden/NAME.jitc   a program; a line "# args: ..." gives CLI options,
#                            a line "# env: VAR=VALUE ..." environment variables
#   tests/golden/NAME.STAGE  the expected --emit STAGE output (tokens, ast, types, ...)
#   tests/errors/NAME.jitc   a wrong program; "# args: ..." as above
#   tests/errors/NAME.err    the expected stderr, then a last line "exit N"
#
# `make golden` (UPDATE=1) rewrites the expected files from the current
# output, and writes the .err of a new error program; review the change
# with `git diff tests/`.  A normal run never writes: a missing expected
# file fails, as does a program of tests/golden/ with no stage to compare
# and an expected file without its program (compared with nothing).
set -u
JITC=${JITC:-build/jitc}
UPDATE=${UPDATE:-0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

args_of() { sed -n 's/^# args: //p' "$1" | head -n 1; }
env_of() { sed -n 's/^# env: //p' "$1" | head -n 1; }

for prog in tests/golden/*.jitc; do
  name=$(basename "$prog" .jitc)
  args=$(args_of "$prog")
  envs=$(env_of "$prog")
  stages=0
  for f in tests/golden/"$name".*; do [ "$f" = "$prog" ] || stages=$((stages + 1)); done
  if [ $stages -eq 0 ]; then
    echo "FAIL golden/$name: no expected output (add tests/golden/$name.STAGE, then make golden)"
    continue
  fi
  for expect in tests/golden/"$name".*; do
    stage=${expect##*.}
    [ "$stage" = jitc ] && continue
    # The cpu target's stages need a build with LLVM.
    case "$stage" in llvm|llvm-opt|asm)
      if ! $JITC -t cpu -q -n 1 'b = a + 1' >/dev/null 2>&1; then
        echo "skip golden/$name.$stage: no cpu target in this build"; continue
      fi ;;
    esac
    # shellcheck disable=SC2086
    env $envs $JITC $args --emit "$stage" -f "$prog" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 0 ]; then
      echo "FAIL golden/$name.$stage: exit $rc: $(head -c 300 "$tmp/err")"
    elif [ "$UPDATE" = 1 ]; then
      cp "$tmp/out" "$expect"; echo "ok golden/$name.$stage (updated)"
    elif diff -u "$expect" "$tmp/out" >"$tmp/diff"; then
      echo "ok golden/$name.$stage"
    else
      echo "FAIL golden/$name.$stage: output differs:"; head -n 40 "$tmp/diff"
    fi
  done
done

for prog in tests/errors/*.jitc; do
  name=$(basename "$prog" .jitc)
  args=$(args_of "$prog")
  # shellcheck disable=SC2086
  $JITC -q -n 3 $args -f "$prog" >"$tmp/out" 2>"$tmp/err"
  echo "exit $?" >>"$tmp/err"
  expect=tests/errors/$name.err
  if [ "$UPDATE" = 1 ]; then
    cp "$tmp/err" "$expect"; echo "ok errors/$name (written)"
  elif [ ! -f "$expect" ]; then
    echo "FAIL errors/$name: no $expect (make golden writes it; review it before committing)"
  elif diff -u "$expect" "$tmp/err" >"$tmp/diff"; then
    echo "ok errors/$name"
  else
    echo "FAIL errors/$name: message or exit code differs:"; head -n 40 "$tmp/diff"
  fi
done

for expect in tests/golden/* tests/errors/*; do
  case "$expect" in *.jitc) continue ;; esac
  [ -f "${expect%.*}.jitc" ] || echo "FAIL ${expect#tests/}: no ${expect%.*}.jitc to compare it with"
done
