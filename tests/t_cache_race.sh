#!/bin/sh
# tests/t_cache_race.sh -- eight processes compiling the same programs at the
# same time, through one disk cache directory, leave a consistent cache:
# every run succeeds with the right result, the directory holds exactly one
# valid, private entry per program and no temporary files, and a later
# process loads every program from disk ("cache: disk") with the right result.
# (Single-process cache behaviour, corrupt entries and unsafe directories are
# tested by tests/t_cpu.sh.)
set -u
JITC=${JITC:-build/jitc}
if ! $JITC -t cpu -q -n 1 --no-cache 'a = 1' >/dev/null 2>&1; then
  echo "skip cache_race: the cpu target is not available"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cache=$tmp/cache
mkdir -m 700 "$cache"
P=8 K=6

# Program k: o = exp(a * 0) * (k + 2) + a, with a = ones: every element is k + 3.
prog() { echo "o = exp(a * 0) * $(($1 + 2)) + a"; }

for p in $(seq 1 $P); do
  (
    for j in $(seq 0 $((K - 1))); do
      # All start with program 0 at once, then go on each in its own order.
      k=0; [ "$j" -gt 0 ] && k=$(((j + p) % (K - 1) + 1))
      $JITC -t cpu -n 1001 --cache-dir "$cache" "$(prog $k)" >"$tmp/out.$p.$k" 2>&1
      echo $? >"$tmp/rc.$p.$k"
    done
  ) &
done
wait

bad=0
for p in $(seq 1 $P); do
  for k in $(seq 0 $((K - 1))); do
    want="o = \[$((k + 3))\. $((k + 3))\. $((k + 3))\. \.\.\."
    if [ "$(cat "$tmp/rc.$p.$k")" != 0 ] || ! grep -q "$want" "$tmp/out.$p.$k"; then
      [ $bad -eq 0 ] && { echo "FAIL cache_race.concurrent_runs: process $p program $k:"; head -c 600 "$tmp/out.$p.$k"; }
      bad=$((bad + 1))
    fi
  done
done
[ $bad -eq 0 ] && echo "ok cache_race.concurrent_runs ($P processes x $K programs, $(grep -l 'cache: miss' "$tmp"/out.* | wc -l) compiled, $(grep -l 'cache: disk' "$tmp"/out.* | wc -l) loaded)"

entries=$(find "$cache" -type f -name '*.bin' | wc -l)
others=$(find "$cache" -type f ! -name '*.bin' | head -n 5)
public=$(find "$cache" -type f -perm /077 | head -n 5)
if [ "$entries" -eq $K ] && [ -z "$others" ] && [ -z "$public" ]; then
  echo "ok cache_race.one_entry_per_program"
else
  echo "FAIL cache_race.one_entry_per_program: $entries entries for $K programs; other files: $others; readable by others: $public"
  find "$cache" -ls | head -n 20
fi

bad=0
for k in $(seq 0 $((K - 1))); do
  $JITC -t cpu -n 1001 --cache-dir "$cache" "$(prog $k)" >"$tmp/after" 2>&1
  if ! grep -q 'cache: disk' "$tmp/after" || ! grep -q "o = \[$((k + 3))\. " "$tmp/after"; then
    echo "FAIL cache_race.entries_valid: program $k:"; head -c 600 "$tmp/after"; bad=1
  fi
done
[ $bad -eq 0 ] && echo "ok cache_race.entries_valid (every program loaded from disk)"
exit 0
