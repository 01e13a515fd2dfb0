#!/bin/sh
# tests/t_fuzz.sh -- replays the fuzzing regression corpus (tests/fuzz/regress/)
# and the seed programs through the fuzz target tests/fuzz/fuzz_jitc.c, built
# as a plain replay driver against the library under test ($BUILD/libjitc.a,
# with the run's CFLAGS and LDFLAGS: under `make test SAN=1` the replay runs
# with ASan and UBSan).  Every input must go through lex, parse, check, both
# code generators' emit paths, a run on interp where its bytes ask for one
# (tests/fuzz/regress/types_*.bin: every op of the vocabulary on each type of
# the table, over edge values; views_*.bin: the same run through views of
# every layout the target makes; bcast_*.bin: one input broadcast as a row,
# one element or a stride-0 array, against the run over it repeated) and the
# invariants the target checks, without a crash or a sanitizer report.
# Where clang is installed, two files of the library are compiled with it
# (`make fuzz` builds with clang).  When `make fuzz` has built the libFuzzer
# binary, the corpus is replayed through it too.
set -u
BUILD=${BUILD:-build}
CC=${CC:-cc}
if [ ! -f "$BUILD/libjitc.a" ]; then
  echo "skip fuzz.replay: $BUILD/libjitc.a is not built"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! sh tests/fuzz/build.sh replay "$BUILD/libjitc.a" "$tmp/replay" >"$tmp/cc.log" 2>&1; then
  echo "FAIL fuzz.replay_builds: $(head -c 800 "$tmp/cc.log")"
  exit 0
fi
echo "ok fuzz.replay_builds"

# replay NAME FILES...: each file on its own, so that a failure names its input.
replay() {
  name=$1; shift
  n=0 bad=0
  for f in "$@"; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    if ! "$tmp/replay" "$f" >"$tmp/out" 2>&1; then
      bad=$((bad + 1))
      echo "FAIL fuzz.$name: $f:"; tail -n 25 "$tmp/out"
    fi
  done
  if [ "$n" -eq 0 ]; then
    echo "FAIL fuzz.$name: no inputs"
  elif [ "$bad" -eq 0 ]; then
    echo "ok fuzz.$name ($n inputs)"
  fi
}
replay regress tests/fuzz/regress/*
replay seeds tests/golden/*.jitc tests/errors/*.jitc

# A harness that cannot fail proves nothing: an input that breaks an
# invariant must abort the replay.
printf 'a = 1\n' >"$tmp/good.jitc"
printf 'selftest\n' >"$tmp/selftest.jitc"
"$tmp/replay" "$tmp/good.jitc" >/dev/null 2>&1 && echo "ok fuzz.harness_accepts_good" ||
  echo "FAIL fuzz.harness_accepts_good"
FUZZ_JITC_SELFTEST=1 "$tmp/replay" "$tmp/selftest.jitc" >/dev/null 2>&1 &&
  echo "FAIL fuzz.harness_can_fail: an aborting input did not fail the replay" ||
  echo "ok fuzz.harness_can_fail"
# The run on interp (the bytes after a NUL choose the types and data): an
# input changed between the two runs must fail the determinism check.
printf 'b = a + 1\000\001\001\004abcdefgh' >"$tmp/run.bin"
if ! "$tmp/replay" "$tmp/run.bin" >/dev/null 2>&1; then
  echo "FAIL fuzz.harness_runs: a run on interp failed"
elif FUZZ_JITC_SELFTEST=run "$tmp/replay" "$tmp/run.bin" >"$tmp/out" 2>&1; then
  echo "FAIL fuzz.harness_run_can_fail: runs of different inputs passed as the same"
elif grep -q "two runs of the same inputs differ" "$tmp/out"; then
  echo "ok fuzz.harness_run_can_fail"
else
  echo "FAIL fuzz.harness_run_can_fail: $(tail -n 3 "$tmp/out")"
fi

# `make fuzz` compiles the library with clang: the complex semantics must
# build there too (glibc's CMPLX is GCC's alone).
if command -v "${CLANG:-clang}" >/dev/null 2>&1; then
  if "${CLANG:-clang}" -std=c11 -D_GNU_SOURCE -fsyntax-only -Werror=implicit-function-declaration \
    src/fold.c src/interp/exec.c >"$tmp/clang.log" 2>&1; then
    echo "ok fuzz.clang_compiles"
  else
    echo "FAIL fuzz.clang_compiles: $(head -c 800 "$tmp/clang.log")"
  fi
else
  echo "skip fuzz.clang_compiles: no clang here"
fi

if [ -x build-fuzz/fuzz_jitc ]; then
  if build-fuzz/fuzz_jitc -runs=0 tests/fuzz/regress >"$tmp/lf.log" 2>&1; then
    echo "ok fuzz.regress_libfuzzer"
  else
    echo "FAIL fuzz.regress_libfuzzer:"; tail -n 25 "$tmp/lf.log"
  fi
else
  echo "skip fuzz.regress_libfuzzer: build-fuzz/fuzz_jitc not built (make fuzz builds it)"
fi
exit 0
