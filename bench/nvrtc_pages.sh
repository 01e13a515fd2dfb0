#!/bin/sh
# bench/nvrtc_pages.sh -- what a cold compile costs when NVRTC's library is
# not in the page cache: jitc -t cuda --emit ptx (NVRTC, no GPU needed) in a
# new process with the disk cache off, right after the kernel's page cache
# is dropped, and again with it filled; wall and CPU seconds, major page
# faults and the blocks read from the file system (512 bytes each).
# Dropping the page cache needs root; each round prints one line per case.
#
#   sh bench/nvrtc_pages.sh [ROUNDS]
set -u
cd "$(dirname "$0")/.."
JITC=${JITC:-build/jitc}
rounds=${1:-3}
if [ ! -w /proc/sys/vm/drop_caches ]; then
  echo "nvrtc_pages: dropping the page cache needs root" >&2
  exit 77
fi
prog='a[i] = a * 3 + 1'
k=0
while [ $k -lt "$rounds" ]; do
  sync
  echo 3 >/proc/sys/vm/drop_caches
  for case in dropped filled; do
    /usr/bin/time -f "$case: %e s wall, %U s user, %S s system, %F major faults, %I blocks read" \
      "$JITC" -t cuda --no-cache --arch sm_90 --emit ptx "$prog" >/dev/null
  done
  k=$((k + 1))
done
