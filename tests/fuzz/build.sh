#!/bin/sh
# tests/fuzz/build.sh -- builds the fuzz target tests/fuzz/fuzz_jitc.c.
#
#   sh tests/fuzz/build.sh fuzzer [DIR]   libFuzzer binary DIR/fuzz_jitc (default build-fuzz):
#       the library compiled by clang with -fsanitize=fuzzer-no-link,address,undefined,
#       the target linked with -fsanitize=fuzzer,address,undefined.
#   sh tests/fuzz/build.sh replay LIB OUT  plain replay driver OUT, linked against the
#       static library LIB with $CC $CFLAGS $LDFLAGS (what tests/t_fuzz.sh does).
#
# Environment: CLANG (default clang), LLVM_CONFIG (default: the newest llvm-config).
# Exits 2 when clang cannot build libFuzzer targets here.
set -eu
cd "$(dirname "$0")/../.."
mode=${1:-fuzzer}

llvm_config() {
  if [ -n "${LLVM_CONFIG+x}" ]; then echo "$LLVM_CONFIG"; return; fi
  for v in 21 20 19 18 17 16 15 14; do
    command -v "llvm-config-$v" 2>/dev/null && return
  done
  true
}
LC=$(llvm_config)
if [ -n "$LC" ]; then
  LLVM_CFLAGS="-DJITC_HAVE_LLVM=1 -isystem $($LC --includedir)"
  LLVM_LIBS="$($LC --ldflags) $($LC --libs 2>/dev/null)"
else
  LLVM_CFLAGS=""
  LLVM_LIBS=""
fi

if [ "$mode" = replay ]; then
  lib=$2 out=$3
  # shellcheck disable=SC2086
  ${CC:-cc} ${CFLAGS:--O1 -g} -std=c11 -D_GNU_SOURCE -DFUZZ_REPLAY -o "$out" \
    tests/fuzz/fuzz_jitc.c "$lib" ${LDFLAGS:-} $LLVM_LIBS -ldl -lpthread -lm
  exit 0
fi

dir=${2:-build-fuzz}
CLANG=${CLANG:-clang}
mkdir -p "$dir/obj"
# Can this clang link a libFuzzer target at all?
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >"$dir/probe.c"
if ! $CLANG -fsanitize=fuzzer,address,undefined -o "$dir/probe" "$dir/probe.c" 2>"$dir/probe.log"; then
  echo "fuzz: $CLANG cannot build libFuzzer targets: $(head -c 300 "$dir/probe.log")" >&2
  exit 2
fi
FLAGS="-std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
-fno-sanitize-recover=undefined $LLVM_CFLAGS"
objs=""
# The library's sources as the Makefile lists them: src/, each target's
# folder (src/interp/, src/cpu/, src/cuda/) and runtime/.
for src in src/*.c src/*/*.c runtime/*.c; do
  obj="$dir/obj/$(echo "$src" | tr / _ | sed 's/\.c$/.o/')"
  objs="$objs $obj"
  # Rebuild when the source or any header is newer than the object.
  if [ -f "$obj" ] && [ -z "$(find "$src" src/*.h src/*/*.h runtime/*.h -newer "$obj" 2>/dev/null | head -n 1)" ]; then
    continue
  fi
  echo "$CLANG -fsanitize=fuzzer-no-link $src"
  # shellcheck disable=SC2086
  $CLANG $FLAGS -fsanitize=fuzzer-no-link -c -o "$obj" "$src"
done
# shellcheck disable=SC2086
$CLANG $FLAGS -fsanitize=fuzzer -o "$dir/fuzz_jitc" tests/fuzz/fuzz_jitc.c $objs \
  $LLVM_LIBS -ldl -lpthread -lm
echo "built $dir/fuzz_jitc"
