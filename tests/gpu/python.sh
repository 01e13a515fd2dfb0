#!/bin/sh
# tests/gpu/python.sh -- the Python package on a machine with a GPU: builds
# it with PYTHON's pip (offline: --no-build-isolation, setuptools and NumPy
# installed) into a scratch directory and runs tests/python, the CuPy and
# PyTorch tests included, then the per-call benchmark.
#   PYTHON=/opt/torch/.venv/bin/python3 sh tests/gpu/python.sh [OUTDIR]
set -u
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
out=${1:-$(mktemp -d)}
site=$(mktemp -d)
mkdir -p "$out"
$PYTHON -m pip install --no-build-isolation --no-deps --target "$site" . >"$out/pip.log" 2>&1 ||
  { tail -40 "$out/pip.log"; echo "FAIL python.install"; exit 1; }
echo "ok python.install"
here=$PWD
(cd "$site" && PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" $PYTHON -m pytest -v -rfEs -p no:cacheprovider \
   "$here/tests/python" >"$out/pytest.txt" 2>&1)
status=$?
grep -E 'passed|failed' "$out/pytest.txt" | tail -1
(cd "$site" && PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" $PYTHON "$here/bench/python_call.py" --jitc "$here/build/jitc" \
   >"$out/bench.txt" 2>&1)
cat "$out/bench.txt"
exit $status
