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
# Then where a cold compile's time goes: NVRTC's stages (its
# -fdevice-time-trace, through JITC_NVRTC_EXTRA), medians of ROUNDS more
# fresh processes; and NVRTC alone (bench/nvrtc_alone.c, the same kernel's
# CUDA C) to a CUBIN, against to PTX that the driver's JIT compiles as the
# module loads, each in a fresh process with an empty CUDA cache.
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
stages() {
  cache=$(mktemp -d)
  ccache=$(mktemp -d)
  CUDA_CACHE_PATH=$ccache JITC_CACHE_DIR=$cache JITC_NVRTC_EXTRA=--fdevice-time-trace="$out/trace$1" \
    "$out/cuda_gpu" compile 'a[i] = a * 3 + 1' >/dev/null
  rm -rf "$cache" "$ccache"
}
k=1
while [ $k -le "$rounds" ]; do stages $k; k=$((k + 1)); done
python3 - "$out" <<'EOF'
import glob, json, statistics, sys
STAGES = [("front_end", "CUDA C++ Front-End"), ("  its_header", "Processing Header File"),
          ("nvvm", "LibNVVM"), ("  libdevice_link", "NVVM Module Linker"),
          ("  optimizer", "NVVM Optimizer"), ("  codegen", "NVVM CodeGen"),
          ("ptxas", "Total PTXAS Time"), ("  ptxas_setup", "PTX parsing and setup time")]
runs = []
for fn in sorted(glob.glob(sys.argv[1] + "/trace*")):
    ev = json.load(open(fn))
    s = {}
    for e in ev["traceEvents"] if isinstance(ev, dict) else ev:
        if e.get("ph") == "X":
            s[e["name"]] = s.get(e["name"], 0) + e["dur"] / 1000
    runs.append(s)
for label, name in STAGES if runs else []:
    v = [r.get(name, 0) for r in runs]
    print("stage_ms %-16s %5.1f  (%s)" % (label, statistics.median(v), ", ".join("%.1f" % x for x in v)))
EOF
CUDA=${CUDA_HOME:-/usr/local/cuda}
if ${CC:-cc} -O2 -std=c11 -I"$CUDA/include" -o "$out/nvrtc_alone" bench/nvrtc_alone.c \
     -L"$CUDA/lib64" -lnvrtc -lcuda -Wl,-rpath,"$CUDA/lib64" 2>"$out/cc.log" &&
   "$BUILD/jitc" -t cuda --emit cuda -n 1 'a[i] = a * 3 + 1' >"$out/k.cu"; then
  for mode in cubin ptx cubin ptx cubin ptx; do
    ccache=$(mktemp -d)
    CUDA_CACHE_PATH=$ccache "$out/nvrtc_alone" "$out/k.cu" $mode --fmad=false -minimal
    rm -rf "$ccache"
  done
else
  echo "cold_compile: nvrtc_alone did not build: $(head -c 300 "$out/cc.log")"
fi
