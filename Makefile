# jitc -- build, test, install.
#
#   make                 build/jitc, build/libjitc.a, build/libjitc.so (a link to
#                        libjitc.so.0, itself a link to libjitc.so.VERSION), build/jitc.pc
#   make test            the whole test suite (ends with "N passed, N failed")
#   make test SAN=1      the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make install PREFIX=/usr/local   (DESTDIR=dir stages it; LDCONFIG= skips ldconfig):
#                        bin/jitc, lib/libjitc.*, lib/pkgconfig/jitc.pc, include/jitc.h,
#                        share/man/man1/jitc.1
#
# The cpu target needs LLVM (llvm-config); without it the build still succeeds
# and says so, and `-t cpu` reports that the target is not available.

CC      ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -fPIC -Wall -Wextra -Wno-unused-parameter \
           -Wno-missing-field-initializers
LDLIBS  += -ldl -lpthread -lm

ifeq ($(SAN),1)
BUILD   := build-san
CFLAGS  += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

# LLVM 17 or newer (the cpu target uses its C API for the new pass manager and
# ORC): the newest llvm-config-NN found, unless LLVM_CONFIG is given
# (LLVM_CONFIG= builds without the cpu target).  Older versions are ignored.
LLVM_CONFIG ?= $(firstword $(foreach v,21 20 19 18 17,$(shell command -v llvm-config-$(v) 2>/dev/null)))
ifneq ($(LLVM_CONFIG),)
LLVM_CFLAGS := -DJITC_HAVE_LLVM=1 -isystem $(shell $(LLVM_CONFIG) --includedir)
LLVM_LIBS   := $(shell $(LLVM_CONFIG) --ldflags) $(shell $(LLVM_CONFIG) --libs core orcjit native passes target analysis ipo vectorize instcombine scalaropts transformutils bitwriter mc support 2>/dev/null || $(LLVM_CONFIG) --libs)
LLVM_MSG    := cpu target: LLVM $(shell $(LLVM_CONFIG) --version) ($(LLVM_CONFIG))
else
LLVM_MSG    := cpu target: disabled (no LLVM >= 17 found; run make deps, or apt-get install llvm-19-dev)
endif

# zlib, for the command line's compressed .npz inputs (np.savez_compressed):
# used where its header is found (ZLIB=0 builds without it; stored .npz files,
# as np.savez writes them, are read and written either way).
ZLIB ?= $(shell echo '\#include <zlib.h>' | $(CC) -E - >/dev/null 2>&1 && echo 1 || echo 0)
ifeq ($(ZLIB),1)
CLI_CFLAGS := -DJITC_HAVE_ZLIB=1
CLI_LIBS   := -lz
ZLIB_MSG   := ; .npz: zlib
else
ZLIB_MSG   := ; .npz: stored only (no zlib: apt-get install zlib1g-dev)
endif

# The library: the compiler (src/) and what its targets need to run
# (runtime/).  The command line (cli/) is a client of the library: its
# binary links the library's objects with its own.
TARGETS  := interp cpu cuda
LIB_SRCS := $(wildcard src/*.c) $(foreach t,$(TARGETS),$(wildcard src/$(t)/*.c)) $(wildcard runtime/*.c)
LIB_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS))
CLI_SRCS := $(wildcard cli/*.c)
CLI_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(CLI_SRCS))
HDRS     := $(wildcard src/*.h $(foreach t,$(TARGETS),src/$(t)/*.h) runtime/*.h cli/*.h)

# The library exports the functions of jitc.h (marked JITC_API) and nothing
# else: every other name is hidden, whatever CFLAGS says, so that it never
# meets a name of the program linked with it.
VISIBILITY := -fvisibility=hidden
OBJCOPY    ?= objcopy

# The shared library: the real file libjitc.so.VERSION; libjitc.so.MAJOR, the
# SONAME that programs record and the loader looks for; libjitc.so, the name
# the linker's -ljitc finds.  VERSION comes from jitc.h.
VERSION := $(shell sed -n 's/^\#define JITC_VERSION "\(.*\)"/\1/p' src/jitc.h)
SONAME  := libjitc.so.$(firstword $(subst ., ,$(VERSION)))
SOREAL  := libjitc.so.$(VERSION)

all: $(BUILD)/jitc $(BUILD)/libjitc.a $(BUILD)/libjitc.so $(BUILD)/jitc.pc
	@echo "$(LLVM_MSG)$(ZLIB_MSG)"

# Installs the Debian packages and Python modules the build and tests use
# (apt-get as root; otherwise it prints the command to run).
deps:
	LLVM_CONFIG="$(LLVM_CONFIG)" sh scripts/install-deps.sh

# The gather and scatter loops of move.c (a[::2], a broadcast axis) want
# the vectoriser, which gcc's -O2 leaves to the cheapest loops.
$(BUILD)/src/move.o: CFLAGS += -ftree-vectorize
# The transposes of tiles.c: loops of fixed counts over arrays of vectors,
# which gcc's -O2 leaves in memory on the stack and -O3 unrolls into
# registers (a (4096, 4096) float32 band scattered by AVX2 in 4.1 ms at -O2,
# 2.6 at -O3).
$(BUILD)/src/tiles.o: CFLAGS += -O3

$(BUILD)/%.o: %.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(VISIBILITY) $(LLVM_CFLAGS) -c -o $@ $<

# The static archive holds one object: the library's objects linked into one
# (ld -r), then every hidden name made local, so that only the functions of
# jitc.h stay global, as in the shared library.
$(BUILD)/libjitc.a: $(LIB_OBJS)
	$(LD) -r -o $(BUILD)/libjitc.o $^
	$(OBJCOPY) --localize-hidden $(BUILD)/libjitc.o
	rm -f $@ && ar rcs $@ $(BUILD)/libjitc.o

# Every object with its names as they are, for the GPU tests and the
# benchmarks, which call internal functions; never installed.  One object
# linked with ld -r, as libjitc.a, since ar keeps members by file name and
# the targets' folders hold files of the same name (cpu/gen.c, cuda/gen.c).
$(BUILD)/libjitc_int.a: $(LIB_OBJS)
	$(LD) -r -o $(BUILD)/libjitc_int.o $^
	rm -f $@ && ar rcs $@ $(BUILD)/libjitc_int.o

# The version script also keeps the linker's own names (_end, __bss_start)
# and anything linked in statically from being exported.
$(BUILD)/$(SOREAL): $(LIB_OBJS)
	printf '{\n  global: jitc_*;\n  local: *;\n};\n' > $(BUILD)/libjitc.map
	$(CC) -shared $(LDFLAGS) -Wl,-soname,$(SONAME) -Wl,--version-script,$(BUILD)/libjitc.map \
	  -o $@ $^ $(LLVM_LIBS) $(LDLIBS)

$(BUILD)/$(SONAME): $(BUILD)/$(SOREAL)
	ln -sf $(SOREAL) $@

$(BUILD)/libjitc.so: $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $@

$(CLI_OBJS): CFLAGS += $(CLI_CFLAGS)
$(BUILD)/jitc: $(CLI_OBJS) $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LLVM_LIBS) $(CLI_LIBS) $(LDLIBS)

# The pkg-config file, for the PREFIX given (make install writes it anew).
PC_TEXT = printf 'prefix=%s\nincludedir=$${prefix}/include\nlibdir=$${prefix}/lib\n\nName: jitc\nDescription: JIT compiler for element-wise array programs\nVersion: %s\nCflags: -I$${includedir}\nLibs: -L$${libdir} -ljitc\nLibs.private: %s\n' \
	  '$(PREFIX)' '$(VERSION)' '$(LLVM_LIBS) $(LDLIBS)'

$(BUILD)/jitc.pc: Makefile src/jitc.h
	@mkdir -p $(BUILD)
	$(PC_TEXT) > $@

# The dynamic loader finds a new library in /usr/local/lib (or another
# directory of ld.so.conf) only once ldconfig has cached it: install runs it
# when installing as root into such a directory, as libtool --finish does.
# Elsewhere programs need an rpath or LD_LIBRARY_PATH (README, "Embedding").
LDCONFIG ?= ldconfig

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/jitc $(DESTDIR)$(PREFIX)/bin/jitc
	install -m 644 $(BUILD)/libjitc.a $(DESTDIR)$(PREFIX)/lib/libjitc.a
	install -m 755 $(BUILD)/$(SOREAL) $(DESTDIR)$(PREFIX)/lib/$(SOREAL)
	ln -sf $(SOREAL) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libjitc.so
	install -m 644 src/jitc.h $(DESTDIR)$(PREFIX)/include/jitc.h
	install -m 644 docs/jitc.1 $(DESTDIR)$(PREFIX)/share/man/man1/jitc.1
	$(PC_TEXT) > $(DESTDIR)$(PREFIX)/lib/pkgconfig/jitc.pc
	@ldc='$(LDCONFIG)'; lib='$(PREFIX)/lib'; \
	if [ -n "$(DESTDIR)" ] || [ -z "$$ldc" ]; then :; \
	elif ! $$ldc -N -v 2>/dev/null | grep -q "^$$lib:"; then \
	  echo "note: $$lib is not in the loader's path: link with -Wl,-rpath,$$lib (README)"; \
	elif [ "$$(id -u)" = 0 ]; then echo "$$ldc"; $$ldc; \
	else echo "note: run $$ldc as root so that programs find $(SONAME)"; fi

test: all $(BUILD)/libjitc_int.a
	@python3 -c 'import numpy' 2>/dev/null || sh scripts/install-deps.sh
	BUILD=$(BUILD) CC="$(CC)" CFLAGS="$(CFLAGS)" LDFLAGS="$(LDFLAGS)" SAN="$(SAN)" \
	  LLVM_CONFIG="$(LLVM_CONFIG)" sh tests/run.sh

# The cuda target on a machine with an NVIDIA GPU (H100/H200): differential
# suite against interp, edge sizes, buffers, out of memory, timings.
# GPU_GROUPS="types ..." runs some of its groups (tests/gpu/run.sh names them).
test-gpu: all $(BUILD)/libjitc_int.a
	BUILD=$(BUILD) CC="$(CC)" LDFLAGS="$(LDFLAGS)" GPU_GROUPS="$(GPU_GROUPS)" sh tests/gpu/run.sh

# Rewrites the golden files from the current output; review with git diff.
golden: all
	JITC=$(BUILD)/jitc UPDATE=1 sh tests/t_golden.sh

clean:
	rm -rf build build-san

.PHONY: all deps install test test-gpu clean golden

# The benchmark suite, bench/run.sh: jitc against C, memcpy, NumPy, numexpr and
# numba; results in bench/results/ and docs/PERFORMANCE.md.  FULL=1 adds 1e8
# elements, QUICK=1 is a smoke test.  bench-gpu (bench/gpu.sh) is the same on
# a machine with an NVIDIA GPU, against PyTorch, CuPy and numba-cuda.
bench: $(BUILD)/libjitc_int.a
	BUILD=$(BUILD) FULL=$(FULL) QUICK=$(QUICK) LLVM_LIBS="$(LLVM_LIBS)" LDLIBS="$(LDLIBS)" sh bench/run.sh

# Reductions on the cpu target (bench/reduce_cpu.py): s = sum(a*b) against the
# copy limit, the C loop, numpy.dot and numexpr, and three reductions plus an
# output against the output alone; bench/results/reduce_cpu.*.
bench-reduce: all $(BUILD)/libjitc_int.a
	BUILD=$(BUILD) BUILD_ONLY=1 LLVM_LIBS="$(LLVM_LIBS)" LDLIBS="$(LDLIBS)" sh bench/run.sh
	BUILD=$(BUILD) python3 bench/reduce_cpu.py --build $(BUILD)
	python3 bench/docs.py

# Reductions over an axis on the cpu target (bench/axis_cpu.py): sum(x, axis=1)
# and sum(x, axis=0) of a (4096, 4096) float32 matrix against NumPy, numexpr
# and the copy of 64 MB; bench/results/axis_cpu.*.
bench-axis: all $(BUILD)/libjitc_int.a
	BUILD=$(BUILD) BUILD_ONLY=1 LLVM_LIBS="$(LLVM_LIBS)" LDLIBS="$(LDLIBS)" sh bench/run.sh
	BUILD=$(BUILD) python3 bench/axis_cpu.py --build $(BUILD)
	python3 bench/docs.py

bench-gpu:
	sh bench/gpu.sh

# Compile time against the size of the program (bench/compile_time.py): cpu,
# NVRTC to PTX and to a CUBIN for sm_90 (no GPU needed), cuda where a GPU is.
bench-compile: $(BUILD)/jitc
	python3 bench/compile_time.py --jitc $(BUILD)/jitc --out bench/results/compile_time.md
	python3 bench/docs.py

.PHONY: bench bench-gpu bench-compile bench-reduce bench-axis

# Reliability (docs/RELIABILITY.md).  `make fuzz` builds the libFuzzer target
# tests/fuzz/fuzz_jitc.c with clang in build-fuzz/ and fuzzes the front end and
# both code generators for FUZZ_SECONDS; `make fuzz-diff` runs N random
# programs of seed SEED on every available target in JOBS processes and compares
# the results with a NumPy oracle and with interp (a part of them over shapes
# and strided views, through the Python package it builds first).
FUZZ_SECONDS ?= 60
SEED ?= 1
N ?= 200
JOBS ?= 2
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/fuzz/run.sh

fuzz-diff: $(BUILD)/jitc
	BUILD=$(BUILD) JITC=$(BUILD)/jitc JITC_FUZZ_DIFF_SEED=$(SEED) JITC_FUZZ_DIFF_N=$(N) \
	  JITC_FUZZ_DIFF_JOBS=$(JOBS) sh tests/t_fuzz_diff.sh

.PHONY: fuzz fuzz-diff
