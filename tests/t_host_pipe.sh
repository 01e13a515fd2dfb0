#!/bin/sh
# The cuda target's host pipeline on a machine without a GPU: tests/cuda_fake.c
# stands in for the driver and NVRTC (kernels do nothing; queued work is done
# only when waited for) and tests/host_pipe_check.c checks that every byte of
# in-place arrays comes back to its place on every path, on one GPU and split
# over two, each element run once on the GPU of its share; arrays of any
# strides (jitc_run_arrays) gathered and scattered to their places; and the
# arithmetic of the shares.  tests/dev_arrays_check.c checks what
# jitc_run_device_arrays sends the kernels of device arrays of any strides.
# On a GPU,
# tests/axis_fake_check.c checks the host side of reductions over axes
# (cuda/axisrun.c) with the fake running a C copy of their kernels.
# tests/gpu/host_gpu.c checks the results themselves (make test-gpu).
set -u
BUILD=${BUILD:-build}
CC=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
libs="$BUILD/libjitc_int.a $(sed -n 's/^Libs.private: //p' "$BUILD/jitc.pc")"
# The fake is built without the sanitizers: the library under test is what they watch.
if ! $CC -O1 -std=c11 -fPIC -shared -o "$tmp/libcuda_fake.so" tests/cuda_fake.c -lpthread 2>"$tmp/err"; then
  echo "FAIL host_pipe.build: $(head -c 2000 "$tmp/err")"; exit 1
fi
# shellcheck disable=SC2086
if ! $CC ${CFLAGS:-} -std=c11 -D_GNU_SOURCE -o "$tmp/check" tests/host_pipe_check.c $libs ${LDFLAGS:-} -ldl -lpthread -lm 2>"$tmp/err"; then
  echo "FAIL host_pipe.build: $(head -c 2000 "$tmp/err")"; exit 1
fi
# shellcheck disable=SC2086
if ! $CC ${CFLAGS:-} -std=c11 -D_GNU_SOURCE -o "$tmp/dev" tests/dev_arrays_check.c $libs ${LDFLAGS:-} -ldl -lpthread -lm 2>"$tmp/err"; then
  echo "FAIL host_pipe.build: $(head -c 2000 "$tmp/err")"; exit 1
fi
# shellcheck disable=SC2086
if ! $CC ${CFLAGS:-} -std=c11 -D_GNU_SOURCE -o "$tmp/axis" tests/axis_fake_check.c $libs ${LDFLAGS:-} -ldl -lpthread -lm 2>"$tmp/err"; then
  echo "FAIL host_pipe.build: $(head -c 2000 "$tmp/err")"; exit 1
fi
# Two fake GPUs: the split over several GPUs too (cuda/multi.c).
FAKE_CUDA_DEVICES=2 JITC_LIBCUDA=$tmp/libcuda_fake.so JITC_LIBNVRTC=$tmp/libcuda_fake.so \
  JITC_CACHE_DIR=$tmp/cache "$tmp/check"
rc=$?
# jitc_run_device_arrays: what the host sends the kernel of a pattern.
JITC_LIBCUDA=$tmp/libcuda_fake.so JITC_LIBNVRTC=$tmp/libcuda_fake.so \
  JITC_CACHE_DIR=$tmp/cache "$tmp/dev" || rc=1
# Reductions over axes: the host side of cuda/axisrun.c, the fake's axis
# kernels running a plain C copy of cuda/axis.c's.
JITC_LIBCUDA=$tmp/libcuda_fake.so JITC_LIBNVRTC=$tmp/libcuda_fake.so \
  JITC_CACHE_DIR=$tmp/cache "$tmp/axis" || rc=1
exit $rc
