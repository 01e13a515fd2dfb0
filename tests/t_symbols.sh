#!/bin/sh
# tests/t_symbols.sh -- what the libraries show to the programs linked with
# them: only the functions of jitc.h are exported, from libjitc.so and from
# libjitc.a; a program with its own parse, check and tokenize links with both
# and runs kernels (tests/symbols_check.c); libjitc.so carries the SONAME
# libjitc.so.0 with the usual links; `make install` into a temporary prefix
# gives a library that a program built with pkg-config (and the rpath recipe
# of the README) finds without LD_LIBRARY_PATH, shared or static, and the
# man page in share/man/man1.
# Environment: BUILD, CC, CFLAGS, LDFLAGS, JITC_TARGETS (set by tests/run.sh),
# and SAN, LLVM_CONFIG to rebuild nothing in `make install`.
set -u
BUILD=${BUILD:-build}
CC=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset LD_LIBRARY_PATH

# The targets to run on: interp, and cpu where this build has it.
targets=interp
case " ${JITC_TARGETS:-} " in *" cpu "*) targets="interp cpu" ;; esac

# Functions declared by jitc.h (lines of the header that begin a declaration).
grep -E '^[A-Za-z]' src/jitc.h | grep -v '^typedef' | grep -oE '\bjitc_[a-z0-9_]+\(' |
  tr -d '(' | sort -u >"$tmp/api"

# exported NAME FILE: the names in FILE (one a line) must all be jitc_ and be
# exactly the functions of jitc.h.
exported() {
  bad=$(grep -v '^jitc_' "$2" | head -n 20 | tr '\n' ' ')
  sort -u "$2" >"$2.sorted"
  missing=$(comm -23 "$tmp/api" "$2.sorted" | tr '\n' ' ')
  extra=$(comm -13 "$tmp/api" "$2.sorted" | grep '^jitc_' | tr '\n' ' ')
  if [ -n "$bad" ]; then
    echo "FAIL symbols.$1: exports $(grep -vc '^jitc_' "$2") names that are not jitc_*: $bad"
  elif [ -n "$missing" ] || [ -n "$extra" ]; then
    echo "FAIL symbols.$1: not the functions of jitc.h: missing $missing; extra $extra"
  else
    echo "ok symbols.$1"
  fi
}
nm -D --defined-only "$BUILD/libjitc.so" | awk 'NF == 3 { print $3 }' >"$tmp/so.syms"
exported shared_exports "$tmp/so.syms"
nm -g --defined-only "$BUILD/libjitc.a" | awk 'NF == 3 { print $3 }' >"$tmp/a.syms"
exported static_globals "$tmp/a.syms"

# SONAME, the real file and the links.
soname=$(readelf -d "$BUILD/libjitc.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
real=$(readlink -f "$BUILD/libjitc.so")
if [ "$soname" = libjitc.so.0 ] && [ -L "$BUILD/libjitc.so" ] && [ -L "$BUILD/libjitc.so.0" ] &&
   [ "$(readlink -f "$BUILD/libjitc.so.0")" = "$real" ] &&
   case "$real" in */libjitc.so.0.*.*) true ;; *) false ;; esac; then
  echo "ok symbols.soname"
else
  echo "FAIL symbols.soname: SONAME '$soname', libjitc.so -> $real"
fi

# run NAME PROGRAM: runs the program on the targets, tagging its lines.
run() {
  # shellcheck disable=SC2086
  "$2" $targets >"$tmp/run.out" 2>&1
  rc=$?
  sed "s/^ok /ok symbols.$1./; s/^FAIL /FAIL symbols.$1./" "$tmp/run.out"
  [ $rc -le 1 ] || echo "FAIL symbols.$1: exited with status $rc"
}

# build NAME COMMAND...: runs the compile command; on failure prints FAIL.
build() {
  name=$1; shift
  if "$@" >"$tmp/cc.log" 2>&1; then return 0; fi
  echo "FAIL symbols.$name: does not link: $(head -c 1500 "$tmp/cc.log")"
  return 1
}

private=$(sed -n 's/^Libs.private: //p' "$BUILD/jitc.pc")
# shellcheck disable=SC2086
build own_names_static $CC ${CFLAGS:-} -Isrc -o "$tmp/static" tests/symbols_check.c \
  "$BUILD/libjitc.a" $private ${LDFLAGS:-} && run own_names_static "$tmp/static"
# shellcheck disable=SC2086
build own_names_shared $CC ${CFLAGS:-} -Isrc -o "$tmp/shared" tests/symbols_check.c \
  -L"$BUILD" -ljitc -Wl,-rpath,"$PWD/$BUILD" ${LDFLAGS:-} && run own_names_shared "$tmp/shared"

# make_install LOG VAR=VALUE...: make install with the make variables of
# this build, so that nothing is rebuilt.
make_install() {
  log=$1; shift
  [ -n "${SAN:-}" ] && set -- "$@" SAN="$SAN"
  [ -n "${LLVM_CONFIG+x}" ] && set -- "$@" LLVM_CONFIG="$LLVM_CONFIG"
  MAKEFLAGS='' make --no-print-directory install BUILD="$BUILD" "$@" >"$log" 2>&1
}

# Into a temporary prefix (no ldconfig: not a directory of the loader's).
prefix=$tmp/prefix
if ! make_install "$tmp/install.log" PREFIX="$prefix" LDCONFIG=; then
  echo "FAIL symbols.install: $(tail -n 20 "$tmp/install.log")"
  exit 0
fi
lib=$prefix/lib
if [ -f "$lib/libjitc.a" ] && [ -f "$prefix/include/jitc.h" ] && [ -x "$prefix/bin/jitc" ] &&
   cmp -s docs/jitc.1 "$prefix/share/man/man1/jitc.1" &&
   [ -L "$lib/libjitc.so" ] && [ -L "$lib/libjitc.so.0" ] &&
   [ "$(readlink "$lib/libjitc.so.0")" = "$(basename "$real")" ] &&
   [ ! -L "$lib/$(basename "$real")" ] && [ -f "$lib/$(basename "$real")" ]; then
  echo "ok symbols.install_files"
else
  echo "FAIL symbols.install_files: $(find "$prefix" | tr '\n' ' ')"
fi

# man finds the page by name under the prefix.
if ! command -v man >/dev/null 2>&1; then
  echo "skip symbols.install_man: man is not installed"
elif [ "$(MANPATH="$prefix/share/man" man -w jitc 2>&1)" = "$prefix/share/man/man1/jitc.1" ]; then
  echo "ok symbols.install_man"
else
  echo "FAIL symbols.install_man: MANPATH=$prefix/share/man man -w jitc: $(MANPATH="$prefix/share/man" man -w jitc 2>&1)"
fi

# A staged install (DESTDIR) for a package: the files under DESTDIR, the
# pkg-config file naming the final prefix, no ldconfig.
staged=$tmp/stage/usr/local/lib
if make_install "$tmp/stage.log" DESTDIR="$tmp/stage" PREFIX=/usr/local &&
   [ "$(readlink "$staged/libjitc.so")" = libjitc.so.0 ] && [ -f "$staged/libjitc.so.0" ] &&
   [ -f "$tmp/stage/usr/local/share/man/man1/jitc.1" ] &&
   grep -qx 'prefix=/usr/local' "$staged/pkgconfig/jitc.pc" && ! grep -q ldconfig "$tmp/stage.log"; then
  echo "ok symbols.install_destdir"
else
  echo "FAIL symbols.install_destdir: $(tail -n 5 "$tmp/stage.log"; ls -l "$staged" 2>&1)"
fi

export PKG_CONFIG_PATH="$lib/pkgconfig"
# The README's recipes: shared with an rpath, static with --static.
# shellcheck disable=SC2046,SC2086
build installed_shared $CC ${CFLAGS:-} -o "$tmp/inst_shared" tests/symbols_check.c \
  $(pkg-config --cflags --libs jitc) -Wl,-rpath,"$(pkg-config --variable=libdir jitc)" \
  ${LDFLAGS:-} && run installed_shared "$tmp/inst_shared"
if [ -f "$tmp/inst_shared" ]; then
  if readelf -d "$tmp/inst_shared" | grep -q 'NEEDED.*\[libjitc\.so\.0\]'; then
    echo "ok symbols.needs_soname"
  else
    echo "FAIL symbols.needs_soname: $(readelf -d "$tmp/inst_shared" | grep NEEDED | tr -s ' ')"
  fi
fi
# shellcheck disable=SC2046,SC2086
if build installed_static $CC ${CFLAGS:-} -o "$tmp/inst_static" tests/symbols_check.c \
     $(pkg-config --cflags jitc) -Wl,-Bstatic -ljitc -Wl,-Bdynamic -Wl,--as-needed \
     $(pkg-config --static --libs jitc) ${LDFLAGS:-}; then
  run installed_static "$tmp/inst_static"
  if ! readelf -d "$tmp/inst_static" >"$tmp/static.dyn" 2>&1 || ! grep -q NEEDED "$tmp/static.dyn"; then
    echo "FAIL symbols.static_alone: readelf cannot list what it needs: $(head -c 300 "$tmp/static.dyn")"
  elif grep -q 'NEEDED.*libjitc' "$tmp/static.dyn"; then
    echo "FAIL symbols.static_alone: the static link still needs libjitc.so"
  else
    echo "ok symbols.static_alone"
  fi
fi
exit 0
