#!/bin/sh
# bench/cold_compile.sh -- the cold compile on the GPU machine, process by
# process: `cuda_gpu compile` (tests/gpu/cuda_gpu.c) in ROUNDS fresh
# processes, each with an empty disk cache and an empty CUDA compute cache
# (CUDA_CACHE_PATH: a kernel compiled before on the machine is found there,
# and compiles in a fraction of a cold compile's time), then as many right after the
# kernel's page cache is dropped (root only).  Each line: the compile's wall
# time, NVRTC's share, its CPU time and page faults (from disk, and served
# from memory), and the start before it (the driver and NVRTC's warm-up).
# Run it first thing on a machine to see the first process of its life.
#
#   sh bench/cold_compile.sh [ROUNDS]      (after make BUILD=... libjitc_int.a)
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
rounds=${1:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
BUILD=$BUILD sh tests/gpu/build.sh "$out" >/dev/null || exit 1
once() {
  cache=$(mktemp -d)
  ccache=$(mktemp -d) # an empty CUDA compute cache too: NVRTC keeps each kernel there
  CUDA_CACHE_PATH=$ccache JITC_CACHE_DIR=$cache "$out/cuda_gpu" compile 'a[i] = a * 3 + 1' |
    sed -n "s/^time compile_ms/$1/p"
  rm -rf "$cache" "$ccache"
}
k=1
while [ $k -le "$rounds" ]; do once "fresh$k"; k=$((k + 1)); done
if [ -w /proc/sys/vm/drop_caches ]; then
  sync
  echo 3 >/proc/sys/vm/drop_caches
  k=1
  while [ $k -le "$rounds" ]; do once "dropped$k"; k=$((k + 1)); done
fi
