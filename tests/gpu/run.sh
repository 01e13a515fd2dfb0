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
# tests/gpu/types_gpu.c: every type (int8 to uint64, float16, bfloat16,
# complex64, complex128 and the rest) through every op, cast and reduction
# against interp, at odd sizes, on every path, one element off alignment;
# and the new types' groups of the normal suite on cuda
# (tests/t_types_interp.py against NumPy and ml_dtypes, tests/t_mixed_fns.py
# against interp, tests/t_complex.py);
# tests/gpu/complex_numpy.py: complex functions and reductions against NumPy.
# tests/t_nd.py with JITC_TARGETS="interp cuda": jitc_run_arrays over random
# views and broadcasts (the host pipeline's gathers and scatters) against
# NumPy, reductions against the bits of contiguous copies laid out in the
# run's order; and tests/gpu/nd_gpu.c: jitc_run_device_arrays over random
# views of device memory against interp on the same views, byte for byte,
# reductions against the bits over such copies, 2^32 + 4102 elements.
# tests/gpu/multi_gpu.c: a run over host arrays split over several GPUs
# against interp and, bit for bit, against one GPU (reductions included):
# with "0,0" (two pipelines on one GPU) anywhere, with "0,1", "1,0" and
# "0,1,0" where the driver sees two GPUs, and again with
# CUDA_VISIBLE_DEVICES=0,0 where the driver takes that as two devices.
# tests/t_axis.py with JITC_TARGETS="interp cuda": reductions over axes
# over host arrays (the host pipeline's chunks of whole pieces) against
# NumPy; and tests/gpu/axis_gpu.c: reductions over axes of device arrays of
# any strides against interp, each run twice bit for bit, long segments of
# several pieces, millions of short ones, columns.
# tests/t_python.sh: the Python package's suite (tests/python), whose
# device tests run here on CuPy arrays and PyTorch tensors against NumPy.
# GPU_GROUPS="NAME ..." runs those groups alone (all when unset): diff,
# split, cuda, cuda_gpu, devptr, reduce, host, nd, axis, python, types,
# reduce_numpy, multi, memcheck, types_memcheck, timings.
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

sh tests/gpu/build.sh "$out" || exit 1

# want NAME: whether group NAME is to run ($GPU_GROUPS).
want() {
  [ -z "${GPU_GROUPS:-}" ] && return 0
  case " $GPU_GROUPS " in *" $1 "*) return 0 ;; esac
  return 1
}

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

# bg NAME COMMAND...: a group run in the background, side by side with
# others (the machine has many cores; the GPU takes several processes);
# bg_wait waits for them and shows and logs each one's lines in turn, as
# group does.
nbg=0
bg() {
  nbg=$((nbg + 1))
  echo "$1" >"$out/bg$nbg.name"
  shift
  { "$@" >"$out/bg$nbg" 2>&1; echo $? >"$out/bg$nbg.rc"; } &
}
bg_wait() {
  wait
  k=1
  while [ "$k" -le "$nbg" ]; do
    name=$(cat "$out/bg$k.name")
    echo "== $name"
    group "$name" cat "$out/bg$k"
    rc=$(cat "$out/bg$k.rc")
    if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$out/bg$k"; then
      echo "FAIL $name: exited with status $rc" | tee -a "$log"
    fi
    k=$((k + 1))
  done
  nbg=0
}

if want diff && [ -f tests/t_diff.py ]; then
  echo "== tests/t_diff.py (JITC_TARGETS=\"interp cuda\")"
  group tests/t_diff.py env JITC_TARGETS="interp cuda" $PYTHON tests/t_diff.py
fi
if want split && [ -f tests/t_split.py ]; then
  echo "== tests/t_split.py (JITC_TARGETS=\"interp cuda\"): programs split into several kernels"
  group tests/t_split.py env JITC_TARGETS="interp cuda" $PYTHON tests/t_split.py
fi
if want cuda; then
  echo "== tests/t_cuda.py"
  group tests/t_cuda.py $PYTHON tests/t_cuda.py
fi
if want cuda_gpu; then
  echo "== cuda_gpu check"
  group cuda_gpu "$out/cuda_gpu" check
fi
if want devptr; then
  echo "== devptr_gpu check: jitc_run_device on the program's own device memory and streams"
  group devptr_gpu "$out/devptr_gpu" check
fi
if want reduce; then
  echo "== reduce_gpu check: reductions on every path against interp, determinism, 2^31 + 4099 bools"
  group reduce_gpu "$out/reduce_gpu" check
fi
if want host; then
  echo "== host_gpu check: the host pipeline on every path against interp, its overlap, its timings"
  group host_gpu "$out/host_gpu" check
fi
if want nd; then
  echo "== tests/t_nd.py (JITC_TARGETS=\"interp cuda\"): arrays of any strides against NumPy"
  group tests/t_nd.py env JITC_TARGETS="interp cuda" $PYTHON tests/t_nd.py
  echo "== nd_gpu check: device arrays of any strides against interp"
  group nd_gpu "$out/nd_gpu" check
fi
if want axis; then
  echo "== tests/t_axis.py (JITC_TARGETS=\"interp cuda\"): reductions over axes against NumPy"
  group tests/t_axis.py env JITC_TARGETS="interp cuda" $PYTHON tests/t_axis.py
  echo "== axis_gpu check: reductions over axes of device arrays of any strides against interp"
  group axis_gpu "$out/axis_gpu" check
fi
if want python; then
  echo "== tests/t_python.sh: the Python package on CuPy arrays and PyTorch tensors (tests/python)"
  group tests/t_python.sh env BUILD="$BUILD" sh tests/t_python.sh
fi
if want types; then
  # Side by side: types_gpu in six processes of a few types each, and the
  # suite's groups of the new types.
  echo "== types_gpu check, t_types_interp.py and t_mixed_fns.py on cuda, side by side"
  for set in bool,int8,int16 int32,int64,uint8 uint16,uint32,uint64 float32,float64 float16,bfloat16 \
    complex64,complex128; do
    bg "types_gpu check: every op, cast and reduction of $set against interp" \
      env TYPES_GPU_TEST=$set "$out/types_gpu" check
  done
  bg "tests/t_types_interp.py (JITC_TARGETS=cuda): the new types against NumPy and ml_dtypes" \
    env JITC_TARGETS=cuda $PYTHON tests/t_types_interp.py
  bg "tests/t_mixed_fns.py (JITC_TARGETS=\"interp cuda\"): ldexp, frexp and modf" \
    env JITC_TARGETS="interp cuda" $PYTHON tests/t_mixed_fns.py
  bg "tests/gpu/complex_numpy.py: complex functions and reductions against NumPy" \
    $PYTHON tests/gpu/complex_numpy.py
  bg "tests/t_complex.py (JITC_TARGETS=\"interp cuda\"): complex against interp and NumPy" \
    env JITC_TARGETS="interp cuda" $PYTHON tests/t_complex.py
  bg_wait
fi
if want multi; then
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
fi
if want reduce_numpy; then
  echo "== tests/gpu/reduce_numpy.py: reductions against NumPy through the command line"
  group tests/gpu/reduce_numpy.py $PYTHON tests/gpu/reduce_numpy.py
fi

# memcheck NAME DRIVER [VAR=VALUE...]: DRIVER's quick mode under
# compute-sanitizer's memcheck, in that environment.
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
memcheck() {
  name=$1 drv=$2
  shift 2
  echo "== $drv quick under compute-sanitizer --tool memcheck"
  if env "$@" "$cs" --tool memcheck --error-exitcode 9 "$out/$drv" quick >"$out/cs" 2>&1; then
    echo "ok $name.memcheck" | tee -a "$log"
  else
    grep -m 20 -B2 -A12 "=========" "$out/cs" | head -120; tail -n 5 "$out/cs"
    echo "FAIL $name.memcheck: see above" | tee -a "$log"
  fi
}
if [ -z "$cs" ]; then
  if want memcheck || want types_memcheck; then
    echo "skip devptr.memcheck: no compute-sanitizer" | tee -a "$log"
  fi
else
  want memcheck && memcheck devptr devptr_gpu
  want types_memcheck && memcheck types types_gpu TYPES_GPU_TEST=uint8,int16,float16,bfloat16
  want memcheck && memcheck reduce reduce_gpu
  want memcheck && memcheck host host_gpu
  want memcheck && memcheck multi multi_gpu
  want memcheck && memcheck nd nd_gpu
  want memcheck && memcheck axis axis_gpu
fi

if want timings; then
  # Three cold compiles, each in a fresh process with an empty disk cache
  # and an empty CUDA compute cache (CUDA_CACHE_PATH): NVRTC keeps an entry
  # for each kernel it compiles in ~/.nv/ComputeCache, and a kernel found
  # there compiles in a fraction of the time (docs/PERFORMANCE.md).
  echo "== compile latency (fresh processes)"
  for r in 1 2 3; do
    cache=$(mktemp -d)
    ccache=$(mktemp -d)
    CUDA_CACHE_PATH=$ccache JITC_CACHE_DIR=$cache "$out/cuda_gpu" compile 'a[i] = a * 3 + 1' | sed "s/^time /time cold${r}_/" | tee -a "$log"
    rm -rf "$ccache"
    [ $r -lt 3 ] && rm -rf "$cache"
  done
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
fi

p=$(grep -c '^ok ' "$log"); f=$(grep -c '^FAIL ' "$log"); k=$(grep -c '^skip ' "$log")
echo
echo "== timings"
grep '^time ' "$log" | sed 's/^time /  /'
echo "$p passed, $f failed, $k skipped"
[ "$f" -eq 0 ]
