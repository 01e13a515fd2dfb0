#!/bin/sh
# tests/t_deps.sh -- `make deps` (scripts/install-deps.sh), the README's
# first command, installs nothing where everything is installed: it must
# work offline on a machine that builds and tests jitc.
#
# The package managers are replaced by fakes that write down each call and
# succeed: apt-get, apt, dpkg, sudo, pip, pip3, and python3 (and python) for
# `-m pip` / `-m ensurepip`, every other use going to the real interpreter.
#   deps.nothing_to_install   make deps where everything is here: exit 0,
#                             no call, no "installing" or "missing" line
#   deps.installs_sleef       with SLEEF hidden (ldconfig, pkg-config and
#                             cc fail) it asks apt-get for libsleef-dev
#   deps.installs_numpy       with numpy hidden (an import that fails) it
#                             asks pip for numpy
#   deps.installs_zlib        with zlib.h hidden (cc -E fails) it asks
#                             apt-get for zlib1g-dev
# The last three show that the fakes see a call when one is made.  Where this
# machine lacks something the script would install, the first is skipped.
set -u
cd "$(dirname "$0")/.." || exit 1
JITC_TARGETS=${JITC_TARGETS:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
real_py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
if [ -z "$real_py" ]; then
  echo "skip deps: no python3"; exit 0
fi
calls=$tmp/calls
mkdir "$tmp/bin" "$tmp/nosleef" "$tmp/nozlib"
for pm in apt-get apt dpkg sudo pip pip3; do
  printf '#!/bin/sh\necho "%s $*" >>"%s"\n' "$pm" "$calls" >"$tmp/bin/$pm"
done
for py in python3 python; do
  cat >"$tmp/bin/$py" <<EOF
#!/bin/sh
case "\${1:-} \${2:-}" in
  "-m pip"|"-m pip3"|"-m ensurepip") echo "$py \$*" >>"$calls"; exit 0 ;;
esac
exec "$real_py" "\$@"
EOF
done
# What hides SLEEF from the script: each way it may look for it fails.
for t in ldconfig pkg-config cc; do
  printf '#!/bin/sh\nexit 1\n' >"$tmp/nosleef/$t"
done
# What hides zlib.h: the compiler that looks for it fails.
printf '#!/bin/sh\nexit 1\n' >"$tmp/nozlib/cc"
chmod +x "$tmp"/bin/* "$tmp"/nosleef/* "$tmp"/nozlib/*
# An import of numpy that fails, for the python3 that the script runs.
mkdir "$tmp/nonumpy"
echo 'raise ImportError("hidden by tests/t_deps.sh")' >"$tmp/nonumpy/numpy.py"

# What this machine lacks of what the script installs, found independently
# of it: the cpu target working means LLVM; libsleef.so.3 loading as
# src/cpu/build.c loads it means SLEEF.
lacks=""
case " $JITC_TARGETS " in
  *" cpu "*) ;;
  *) ${JITC:-build/jitc} -t cpu -q -n 1 'b = a + 1' >/dev/null 2>&1 || lacks="$lacks LLVM" ;;
esac
command -v groff >/dev/null 2>&1 || lacks="$lacks groff"
echo '#include <zlib.h>' | cc -E - >/dev/null 2>&1 || lacks="$lacks zlib"
# probe WHAT PYTHON: WHAT is lacking unless the statements succeed.
probe() { "$real_py" -c "$2" >/dev/null 2>&1 || lacks="$lacks $1"; }
probe SLEEF 'import ctypes; ctypes.CDLL("libsleef.so.3")'
probe Python.h 'import sysconfig, os, sys
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'
probe "numpy>=2" 'import numpy, sys; sys.exit(int(numpy.__version__.split(".")[0]) < 2)'
for m in pytest setuptools wheel ml_dtypes dask.array distributed; do
  probe $m "import $m"
done

# deps NAME [VAR=VALUE...]: runs `make deps` with the fakes first on PATH
# (and the assignments in its environment); output in $tmp/NAME.out, the
# fakes' calls in $calls, the exit status in $rc.
deps() {
  name=$1; shift
  : >"$calls"
  env -u CC PATH="$tmp/bin:$PATH" "$@" make -s deps >"$tmp/$name.out" 2>&1
  rc=$?
}
fail() {
  echo "FAIL deps.$1: $2"
  sed 's/^/  | /' "$tmp/$1.out"
  [ -s "$calls" ] && sed 's/^/  called: /' "$calls"
}

if [ -n "$lacks" ]; then
  echo "skip deps.nothing_to_install: this machine lacks$lacks (make deps installs it)"
else
  deps nothing_to_install
  if [ -s "$calls" ]; then
    fail nothing_to_install "a package manager ran where everything is installed"
  elif [ $rc -ne 0 ]; then
    fail nothing_to_install "exit status $rc"
  elif grep -qiE 'installing|missing' "$tmp/nothing_to_install.out"; then
    fail nothing_to_install "it says something is missing"
  else
    echo "ok deps.nothing_to_install"
  fi
fi

# Without root the script names the packages instead of calling apt-get.
deps installs_sleef PATH="$tmp/bin:$tmp/nosleef:$PATH"
if [ "$(id -u)" = 0 ]; then
  grep -q '^apt-get install .*libsleef-dev' "$calls"
else
  grep -q 'missing:.*libsleef-dev' "$tmp/installs_sleef.out"
fi && echo "ok deps.installs_sleef" ||
  fail installs_sleef "no apt-get install of libsleef-dev with SLEEF hidden"

deps installs_zlib PATH="$tmp/bin:$tmp/nozlib:$PATH"
if [ "$(id -u)" = 0 ]; then
  grep -q '^apt-get install .*zlib1g-dev' "$calls"
else
  grep -q 'missing:.*zlib1g-dev' "$tmp/installs_zlib.out"
fi && echo "ok deps.installs_zlib" ||
  fail installs_zlib "no apt-get install of zlib1g-dev with zlib.h hidden"

deps installs_numpy PYTHONPATH="$tmp/nonumpy"
if grep -q '^python3 -m pip install .*numpy' "$calls"; then
  echo "ok deps.installs_numpy"
else
  fail installs_numpy "no pip install of numpy with numpy hidden"
fi
exit 0
