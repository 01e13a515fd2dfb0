#!/bin/sh
# tests/gpu/run.sh -- `make test-gpu`: the cuda target on a machine with a GPU.
#
# Runs the differential suite against interp (tests/t_diff.py with
# JITC_TARGETS="interp cuda"), the large programs that become several
# kernels against interp (tests/t_split.py), the cuda group of the normal suite (which
# executes where a GPU is present), and tests/gpu/cuda_gpu.c: sizes 0 to
# above 2^32 elements, misaligned arrays, the scalar, sliced and chunked
# paths, device buffers, device out of memory, then timings; and
# tests/gpu/devptr_gpu.c: jitc_run_device on the program's own device memory
# and streams, also under compute-sanitizer's memcheck when it is installed;
# tests/gpu/reduce_gpu.c and reduce_numpy.py: reductions on every path
# against interp and NumPy, 20 runs bit-identical, 2^31 + 4099 elements;
# tests/gpu/host_gpu.c: the host pipeline on every path (pageable, pinned,
# registered, mixed) against interp, its overlap and its timings.
# tests/gpu/types_gpu.c: every type (int8 to uint64, float16, bfloat16 and
# the rest) through every op, cast and reduction against interp, at odd
# sizes, on every path, one element off alignment.
# tests/gpu/multi_gpu.c: a run over host arrays split over several GPUs
# against interp and, bit for bit, against one GPU (reductions included):
# with "0,0" (two pipelines on one GPU) anywhere, with "0,1", "1,0" and
# "0,1,0" where the driver sees two GPUs, and again with
# CUDA_VISIBLE_DEVICES=0,0 where the driver takes that as two devices.
# Ends with "N passed, N failed, N skipped" and a table of the timings.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
JITC=${JITC:-$PWD/$BUILD/jitc}
PYTHON=${PYTHON:-python3}
export JITC BUILD
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
log=$out/log
: >"$log"

${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -o "$out/cuda_gpu" tests/gpu/cuda_gpu.c cli/format.c "$BUILD/libjitc_int.a" \
  ${LDFLAGS:-} -ldl -lpthread -lm $(sed -n 's/^Libs.private: //p' "$BUILD/jitc.pc" 2>/dev/null) \
  || { echo "FAIL cuda_gpu: does not build"; exit 1; }
${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -o "$out/devptr_gpu" tests/gpu/devptr_gpu.c "$BUILD/libjitc_int.a" \
  ${LDFLAGS:-} -ldl -lpthread -lm $(sed -n 's/^Libs.private: //p' "$BUILD/jitc.pc" 2>/dev/null) \
  || { echo "FAIL devptr_gpu: does not build"; exit 1; }
${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -o "$out/reduce_gpu" tests/gpu/reduce_gpu.c "$BUILD/libjitc_int.a" \
  ${LDFLAGS:-} -ldl -lpthread -lm $(sed -n 's/^Libs.private: //p' "$BUILD/jitc.pc" 2>/dev/null) \
  || { echo "FAIL reduce_gpu: does not build"; exit 1; }
${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -o "$out/host_gpu" tests/gpu/host_gpu.c "$BUILD/libjitc_int.a" \
  ${LDFLAGS:-} -ldl -lpthread -lm $(sed -n 's/^Libs.private: //p' "$BUILD/jitc.pc" 2>/dev/null) \
  || { echo "FAIL host_gpu: does not build"; exit 1; }

# group NAME COMMAND...: runs a group of checks, its lines shown as they
# come and logged.  One that exits non-zero without printing FAIL (a crash
# partway) is a failure of its own, as tests/run.sh counts it: the status
# of `COMMAND | tee` would be tee's.
group() {
  name=$1; shift
  { "$@" 2>&1; echo $? >"$out/rc"; } | tee "$out/group"
  cat "$out/group" >>"$log"
  rc=$(cat "$out/rc")
  if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$out/group"; then
    echo "FAIL $name: exited with status $rc" | tee -a "$log"
  fi
}

${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -o "$out/types_gpu" tests/gpu/types_gpu.c "$BUILD/libjitc_int.a" \
  ${LDFLAGS:-} -ldl -lpthread -lm $(sed -n 's/^Libs.private: //p' "$BUILD/jitc.pc" 2>/dev/null) \
  || { echo "FAIL types_gpu: does not build"; exit 1; }
${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -o "$out/multi_gpu" tests/gpu/multi_gpu.c "$BUILD/libjitc_int.a" \
  ${LDFLAGS:-} -ldl -lpthread -lm $(sed -n 's/^Libs.private: //p' "$BUILD/jitc.pc" 2>/dev/null) \
  || { echo "FAIL multi_gpu: does not build"; exit 1; }

if [ -f tests/t_diff.py ]; then
  echo "== tests/t_diff.py (JITC_TARGETS=\"interp cuda\")"
  group tests/t_diff.py env JITC_TARGETS="interp cuda" $PYTHON tests/t_diff.py
fi
if [ -f tests/t_split.py ]; then
  echo "== tests/t_split.py (JITC_TARGETS=\"interp cuda\"): programs split into several kernels"
  group tests/t_split.py env JITC_TARGETS="interp cuda" $PYTHON tests/t_split.py
fi
echo "== tests/t_cuda.py"
group tests/t_cuda.py $PYTHON tests/t_cuda.py
echo "== cuda_gpu check"
group cuda_gpu "$out/cuda_gpu" check
echo "== devptr_gpu check: jitc_run_device on the program's own device memory and streams"
group devptr_gpu "$out/devptr_gpu" check
echo "== reduce_gpu check: reductions on every path against interp, determinism, 2^31 + 4099 bools"
group reduce_gpu "$out/reduce_gpu" check
echo "== host_gpu check: the host pipeline on every path against interp, its overlap, its timings"
group host_gpu "$out/host_gpu" check
echo "== types_gpu check: every element type's ops, casts and reductions against interp"
group types_gpu "$out/types_gpu" check
echo "== multi_gpu check: a run split over several GPUs against interp and one GPU ($("$out/multi_gpu" count))"
group multi_gpu "$out/multi_gpu" check
# The same GPU twice, as the driver numbers it: two contexts of one GPU, or
# one device (the driver drops the repeat), or refused; said either way.
twice=$(CUDA_VISIBLE_DEVICES=0,0 "$out/multi_gpu" count 2>&1)
echo "== CUDA_VISIBLE_DEVICES=0,0: $twice"
case $twice in
  "devices 2"*) group multi_gpu_visible_twice env CUDA_VISIBLE_DEVICES=0,0 "$out/multi_gpu" quick ;;
  *) echo "skip multi.visible_twice: CUDA_VISIBLE_DEVICES=0,0 gives: $twice" | tee -a "$log" ;;
esac
echo "== tests/gpu/reduce_numpy.py: reductions against NumPy through the command line"
group tests/gpu/reduce_numpy.py $PYTHON tests/gpu/reduce_numpy.py
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
if [ -n "$cs" ]; then
  echo "== devptr_gpu quick under compute-sanitizer --tool memcheck"
  if "$cs" --tool memcheck --error-exitcode 9 "$out/devptr_gpu" quick >"$out/cs" 2>&1; then
    echo "ok devptr.memcheck" | tee -a "$log"
  else
    grep -m 20 -B2 -A12 "=========" "$out/cs" | head -120; tail -n 5 "$out/cs"; echo "FAIL devptr.memcheck: see above" | tee -a "$log"
  fi
  echo "== types_gpu quick under compute-sanitizer --tool memcheck"
  if TYPES_GPU_TEST=uint8,int16,float16,bfloat16 "$cs" --tool memcheck --error-exitcode 9 \
      "$out/types_gpu" quick >"$out/cs" 2>&1; then
    echo "ok types.memcheck" | tee -a "$log"
  else
    grep -m 20 -B2 -A12 "=========" "$out/cs" | head -120; tail -n 5 "$out/cs"; echo "FAIL types.memcheck: see above" | tee -a "$log"
  fi
  echo "== reduce_gpu quick under compute-sanitizer --tool memcheck"
  if "$cs" --tool memcheck --error-exitcode 9 "$out/reduce_gpu" quick >"$out/cs" 2>&1; then
    echo "ok reduce.memcheck" | tee -a "$log"
  else
    grep -m 20 -B2 -A12 "=========" "$out/cs" | head -120; tail -n 5 "$out/cs"; echo "FAIL reduce.memcheck: see above" | tee -a "$log"
  fi
  echo "== multi_gpu quick under compute-sanitizer --tool memcheck"
  if "$cs" --tool memcheck --error-exitcode 9 "$out/multi_gpu" quick >"$out/cs" 2>&1; then
    echo "ok multi.memcheck" | tee -a "$log"
  else
    grep -m 20 -B2 -A12 "=========" "$out/cs" | head -120; tail -n 5 "$out/cs"; echo "FAIL multi.memcheck: see above" | tee -a "$log"
  fi
  echo "== host_gpu quick under compute-sanitizer --tool memcheck"
  if "$cs" --tool memcheck --error-exitcode 9 "$out/host_gpu" quick >"$out/cs" 2>&1; then
    echo "ok host.memcheck" | tee -a "$log"
  else
    grep -m 20 -B2 -A12 "=========" "$out/cs" | head -120; tail -n 5 "$out/cs"; echo "FAIL host.memcheck: see above" | tee -a "$log"
  fi
else
  echo "skip devptr.memcheck: no compute-sanitizer" | tee -a "$log"
fi

echo "== compile latency (fresh processes)"
cache=$(mktemp -d)
JITC_CACHE_DIR=$cache "$out/cuda_gpu" compile 'a[i] = a * 3 + 1' | sed 's/^time /time cold_/' | tee -a "$log"
JITC_CACHE_DIR=$cache "$out/cuda_gpu" compile 'a[i] = a * 3 + 1' | sed 's/^time /time warm_disk_/' | tee -a "$log"
rm -rf "$cache"

echo "== jitc -t cuda -n 5 --dtype f32 --in a=randn:1 'exp(a)'"
"$JITC" -t cuda -n 5 --dtype f32 --in a=randn:1 'exp(a)' 2>&1 | tee -a "$log"
echo "== whole process: jitc -t cuda 'a[i] += 1' (warm disk cache), then numba-cuda"
"$JITC" -t cuda -q 'a[i] += 1' >/dev/null 2>&1
s=$(date +%s%N); "$JITC" -t cuda 'a[i] += 1' >"$out/p" 2>&1; e=$(date +%s%N)
cat "$out/p"
echo "time process_jitc_ms $(( (e - s) / 1000000 ))" | tee -a "$log"
s=$(date +%s%N)
$PYTHON - >"$out/p" 2>&1 <<'PY'
import numpy as np
np.row_stack = np.vstack
from numba import cuda
@cuda.jit
def k(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1
a = np.ones(10_000_000)
k[(a.size + 255) // 256, 256](a)
print(a[:3], a[-3:])
PY
e=$(date +%s%N)
tail -2 "$out/p"
echo "time process_numba_ms $(( (e - s) / 1000000 ))" | tee -a "$log"

p=$(grep -c '^ok ' "$log"); f=$(grep -c '^FAIL ' "$log"); k=$(grep -c '^skip ' "$log")
echo
echo "== timings"
grep '^time ' "$log" | sed 's/^time /  /'
echo "$p passed, $f failed, $k skipped"
[ "$f" -eq 0 ]
