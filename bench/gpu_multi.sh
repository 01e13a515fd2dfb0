#!/bin/sh
# bench/gpu_multi.sh -- host to host on 1, 2, ... GPUs (a machine with two
# or more; no LLVM needed): `a[i] += 1` float64 and `b = exp(a)` float32 over
# 1e8 and 1e9 elements, pageable and pinned, each split over the first 1,
# 2, 4 and 8 GPUs that the machine has.  Builds jitc without the cpu target
# in build-gpu/, writes bench/results/gpu_multi.jsonl and gpu_multi.md (the
# table), regenerates docs/PERFORMANCE.md.  First bench/pcie_multi.c measures
# what the links move with no jitc (bench/results/pcie_multi.txt).  About a
# minute on two H100s.
#
#   sh bench/gpu_multi.sh            # SIZES="1e8 1e9" by default
#   SIZES=1e7 sh bench/gpu_multi.sh  # a smoke test
set -e
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-gpu}
PY=${PYTHON:-python3}
JOBS=$(nproc 2>/dev/null || echo 4)
SIZES=${SIZES:-1e8 1e9}
mkdir -p "$BUILD/bench" bench/results
make -j"$JOBS" BUILD="$BUILD" LLVM_CONFIG= "$BUILD/libjitc_int.a" >"$BUILD/make.log" 2>&1 ||
  { tail -30 "$BUILD/make.log"; echo "bench: building jitc failed"; exit 1; }
${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -Wall -o "$BUILD/bench/gpu_multi" bench/gpu_multi.c \
  "$BUILD/libjitc_int.a" -ldl -lpthread -lm
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || echo 1)
gpus=1
for g in 2 4 8; do [ "$n" -ge $g ] && gpus="$gpus,$g"; done
out=bench/results/gpu_multi.jsonl
echo "machine: $(date -u '+%Y-%m-%d %H:%M UTC'), $n GPUs ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)), $(nproc) cores, $(free -g | awk '/^Mem/ {print $2}') GB" >"$out"
command -v nvidia-smi >/dev/null && nvidia-smi topo -m >bench/results/gpu_multi_topo.txt 2>&1 || true
# The links' own ceiling, with no jitc: pinned copies on 1, 2, ... GPUs at once.
${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -o "$BUILD/bench/pcie_multi" bench/pcie_multi.c \
  -I"${CUDA_HOME:-/usr/local/cuda}/include" -lcuda -lpthread &&
  "$BUILD/bench/pcie_multi" 1024 5 | tee bench/results/pcie_multi.txt || true
for size in $SIZES; do
  for mem in pageable pinned; do
    "$BUILD/bench/gpu_multi" 'a[i] += 1' float64 "$size" "$gpus" "$mem" | tee -a "$out"
    "$BUILD/bench/gpu_multi" 'b = exp(a)' float32 "$size" "$gpus" "$mem" | tee -a "$out"
  done
done
$PY bench/gpu_multi.py "$out"
$PY bench/docs.py || true
