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
# pytest -v prints "FILE::TEST[PARAM] PASSED|FAILED|SKIPPED|ERROR ...";
# -rfE adds the details of failures.
(cd "$tmp" && PYTHONPATH="$tmp/site" $PYTHON -m pytest -v -rfEs -p no:cacheprovider \
   "$OLDPWD/tests/python" >"$tmp/out" 2>&1)
status=$?
sed -n 's/^[^ ]*tests\/python\/\([^ ]*\)\.py::\([^ ]*\) PASSED.*/ok python.\1.\2/p
         s/^[^ ]*tests\/python\/\([^ ]*\)\.py::\([^ ]*\) \(FAILED\|ERROR\).*/FAIL python.\1.\2/p
         s/^[^ ]*tests\/python\/\([^ ]*\)\.py::\([^ ]*\) SKIPPED.*/skip python.\1.\2: see below/p' \
  "$tmp/out"
grep -q 'PASSED' "$tmp/out" || { cat "$tmp/out"; echo "FAIL python.pytest: no test ran"; exit 1; }
[ $status -eq 0 ] || grep -v ' PASSED\| SKIPPED' "$tmp/out" | tail -80
grep '^SKIPPED' "$tmp/out"
exit 0
