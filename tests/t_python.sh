#!/bin/sh
# tests/t_python.sh -- the Python package: builds it with pip into a scratch
# directory (linking the library of $BUILD, the one the other groups test)
# and runs its pytest suite (tests/python/) there, one "ok NAME" per case.
# Under SAN=1 the group is skipped: an ASan library cannot be loaded into
# an uninstrumented python without LD_PRELOAD of the sanitizer runtime.
set -u
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ "${SAN:-}" = 1 ]; then
  echo "skip python.package: ASan build (python cannot load it without preloading libasan)"
  exit 0
fi
for m in pytest setuptools wheel numpy; do
  if ! $PYTHON -c "import $m" 2>/dev/null; then
    echo "skip python.package: no $m for $PYTHON (make deps installs it)"
    exit 0
  fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# --no-build-isolation and --no-deps: the build uses the installed
# setuptools and numpy and downloads nothing.  JITC_BUILD makes setup.py
# link $BUILD's archive instead of building the library again.
if ! JITC_BUILD=${BUILD:-build} $PYTHON -m pip install -q --no-build-isolation --no-deps \
     --target "$tmp/site" . >"$tmp/pip.log" 2>&1; then
  cat "$tmp/pip.log"
  echo "FAIL python.install: pip install . failed"
  exit 1
fi
echo "ok python.install"
# conftest.py writes one result line per case to $JITC_RESULTS; pytest's
# own output is shown when something failed.
(cd "$tmp" && JITC_RESULTS="$tmp/results" PYTHONPATH="$tmp/site" $PYTHON -m pytest -q -rfE \
   -p no:cacheprovider "$OLDPWD/tests/python" >"$tmp/out" 2>&1)
status=$?
touch "$tmp/results"
cat "$tmp/results"
if ! grep -q '^ok ' "$tmp/results"; then
  cat "$tmp/out"
  echo "FAIL python.pytest: no test ran (status $status)"
elif [ $status -ne 0 ]; then
  tail -80 "$tmp/out"
  grep -q '^FAIL ' "$tmp/results" || echo "FAIL python.pytest: exited with status $status"
fi
exit 0
