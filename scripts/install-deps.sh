#!/bin/sh
# Installs what jitc's build and tests use, where it is missing:
#   llvm-19-dev   the cpu target (LLVM-C API, ORC JIT)
#   libsleef-dev  vectorised math functions for the cpu target
#   zlib1g-dev    the command line's compressed .npz inputs (np.savez_compressed)
#   python3 numpy the tests' oracle (NumPy >= 2, from PyPI when the system's is older)
#   groff-base    groff, which the tests render the man page docs/jitc.1 with
#   python3-dev, pytest, setuptools, wheel, ml_dtypes   the Python package's build and tests
#   dask[array,distributed]                  jitc.dask and its tests
# Run as root (it calls apt-get); without root it prints the commands instead.
# What is there already is found as the build finds it, and nothing is
# installed when everything is there (tests/t_deps.sh checks it).
set -u
# LLVM: the Makefile's search, LLVM_CONFIG (make passes its own) or the
# newest llvm-config-NN from 21 down to 17.
have_llvm() {
  [ -n "${LLVM_CONFIG:-}" ] && "$LLVM_CONFIG" --version >/dev/null 2>&1 && return 0
  for v in 21 20 19 18 17; do
    command -v "llvm-config-$v" >/dev/null 2>&1 && return 0
  done
  return 1
}
# SLEEF: the library that src/cpu/build.c loads (libsleef.so.3) in the
# loader's cache, or the package as pkg-config or the C compiler finds it
# (Debian puts sleef.h under /usr/include/<triplet>/, not /usr/include/).
have_sleef() {
  ldc=$(command -v ldconfig 2>/dev/null || echo /sbin/ldconfig)
  "$ldc" -p 2>/dev/null | grep -q 'libsleef\.so\.3 ' && return 0
  pkg-config --exists sleef 2>/dev/null && return 0
  echo '#include <sleef.h>' | ${CC:-cc} -E - >/dev/null 2>&1
}
# zlib: its header, as the Makefile looks for it (the build goes on without
# it, reading and writing stored .npz files only).
have_zlib() {
  echo '#include <zlib.h>' | ${CC:-cc} -E - >/dev/null 2>&1
}
need_apt=""
have_llvm || need_apt="$need_apt llvm-19-dev"
have_sleef || need_apt="$need_apt libsleef-dev"
have_zlib || need_apt="$need_apt zlib1g-dev"
command -v python3 >/dev/null 2>&1 || need_apt="$need_apt python3 python3-pip"
command -v groff >/dev/null 2>&1 || need_apt="$need_apt groff-base"
# Python.h of the python3 that runs the tests (a python of its own, such as
# pyenv's, brings its headers).
python3 -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(
  sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null || need_apt="$need_apt python3-dev"
if [ -n "$need_apt" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing:$need_apt"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need_apt >/dev/null ||
      { echo "apt-get failed; install by hand:$need_apt" >&2; exit 1; }
  else
    echo "missing:$need_apt -- run: sudo apt-get install$need_apt" >&2
  fi
fi
if ! python3 -c 'import numpy, sys; sys.exit(int(numpy.__version__.split(".")[0]) < 2)' 2>/dev/null; then
  echo "installing numpy >= 2 (pip)"
  python3 -m pip install -q 'numpy>=2' 2>/dev/null ||
    python3 -m pip install -q --break-system-packages 'numpy>=2' ||
    { echo "could not install numpy; run: python3 -m pip install 'numpy>=2'" >&2; exit 1; }
fi
# The Python package: built with pip --no-build-isolation (setuptools,
# wheel) and tested with pytest; ml_dtypes, the bfloat16 of NumPy, for the
# tests of that type.
for m in pytest setuptools wheel ml_dtypes; do
  python3 -c "import $m" 2>/dev/null && continue
  echo "installing $m (pip)"
  python3 -m pip install -q "$m" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "$m" ||
    { echo "could not install $m; run: python3 -m pip install $m" >&2; exit 1; }
done
# jitc.dask and its tests: Dask arrays and dask.distributed (optional for
# the package itself; the tests skip without them).
if ! python3 -c 'import dask.array, distributed' 2>/dev/null; then
  echo "installing dask[array,distributed] (pip)"
  python3 -m pip install -q 'dask[array,distributed]' 2>/dev/null ||
    python3 -m pip install -q --break-system-packages 'dask[array,distributed]' ||
    { echo "could not install dask; run: python3 -m pip install 'dask[array,distributed]'" >&2; exit 1; }
fi
exit 0
