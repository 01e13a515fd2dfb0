#!/bin/sh
# tests/fuzz/run.sh -- a fuzzing campaign over the front end and both code
# generators (`make fuzz FUZZ_SECONDS=N`).
#
# Seeds: every tests/golden/*.jitc, tests/errors/*.jitc and the regression
# corpus tests/fuzz/regress/ (types_*.bin: a program of every op of the
# vocabulary on one type of the table, with the bytes that choose the type
# and edge values for a run on interp).  New inputs go to build-fuzz/corpus/ (kept
# between campaigns), crashes to build-fuzz/crashes/, the log to
# build-fuzz/fuzz.log.  A crash must be minimised
# (build-fuzz/fuzz_jitc -minimize_crash=1 FILE), fixed, and its input added to
# tests/fuzz/regress/ where `make test` replays it.
#
# Environment: FUZZ_SECONDS (default 60), FUZZ_DIR (default build-fuzz),
# FUZZ_FLAGS (more libFuzzer flags).
set -u
cd "$(dirname "$0")/../.."
dir=${FUZZ_DIR:-build-fuzz}
secs=${FUZZ_SECONDS:-60}
sh tests/fuzz/build.sh fuzzer "$dir" || exit $?
mkdir -p "$dir/seed" "$dir/corpus" "$dir/crashes"
for f in tests/golden/*.jitc tests/errors/*.jitc; do
  cp "$f" "$dir/seed/$(basename "$(dirname "$f")")_$(basename "$f")"
done
# The dictionary: the syntax of tests/fuzz/jitc.dict, and the vocabulary's
# names as the library lists them.
cp tests/fuzz/jitc.dict "$dir/jitc.dict"
FUZZ_JITC_PRINT_DICT=1 "$dir/fuzz_jitc" >>"$dir/jitc.dict" 2>/dev/null || exit $?
echo "fuzz: $secs s, log in $dir/fuzz.log"
# -rss_limit_mb: LLVM's per-input memory is small; a program that needs more is a finding.
# shellcheck disable=SC2086
"$dir/fuzz_jitc" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
  -dict="$dir/jitc.dict" -print_final_stats=1 -artifact_prefix="$dir/crashes/" \
  ${FUZZ_FLAGS:-} "$dir/corpus" "$dir/seed" tests/fuzz/regress >"$dir/fuzz.log" 2>&1
rc=$?
grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::|ERROR|SUMMARY' "$dir/fuzz.log" | tail -n 20
n=$(find "$dir/crashes" -type f | wc -l)
echo "fuzz: exit $rc, $n crash file(s) in $dir/crashes, corpus $(find "$dir/corpus" -type f | wc -l) inputs"
exit $rc
