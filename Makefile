# jitc -- build, test, install.
#
#   make                 build/jitc, build/libjitc.a, build/libjitc.so, build/jitc.pc
#   make test            the whole test suite (ends with "N passed, N failed")
#   make test SAN=1      the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make install PREFIX=/usr/local
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

LIB_SRCS := $(filter-out src/main.c,$(wildcard src/*.c)) $(wildcard runtime/*.c)
LIB_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS))
HDRS     := $(wildcard src/*.h runtime/*.h)

all: $(BUILD)/jitc $(BUILD)/libjitc.a $(BUILD)/libjitc.so $(BUILD)/jitc.pc
	@echo "$(LLVM_MSG)"

# Installs the Debian packages and Python modules the build and tests use
# (apt-get as root; otherwise it prints the command to run).
deps:
	sh scripts/install-deps.sh

$(BUILD)/%.o: %.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LLVM_CFLAGS) -c -o $@ $<

$(BUILD)/libjitc.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libjitc.so: $(LIB_OBJS)
	$(CC) -shared $(LDFLAGS) -o $@ $^ $(LLVM_LIBS) $(LDLIBS)

$(BUILD)/jitc: $(BUILD)/src/main.o $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LLVM_LIBS) $(LDLIBS)

# The pkg-config file, for the PREFIX given (make install writes it anew).
PC_TEXT = printf 'prefix=%s\nincludedir=$${prefix}/include\nlibdir=$${prefix}/lib\n\nName: jitc\nDescription: JIT compiler for element-wise array programs\nVersion: %s\nCflags: -I$${includedir}\nLibs: -L$${libdir} -ljitc\nLibs.private: %s\n' \
	  '$(PREFIX)' "$$(sed -n 's/^\#define JITC_VERSION "\(.*\)"/\1/p' src/jitc.h)" '$(LLVM_LIBS) $(LDLIBS)'

$(BUILD)/jitc.pc: Makefile src/jitc.h
	@mkdir -p $(BUILD)
	$(PC_TEXT) > $@

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include
	install -m 755 $(BUILD)/jitc $(DESTDIR)$(PREFIX)/bin/jitc
	install -m 644 $(BUILD)/libjitc.a $(DESTDIR)$(PREFIX)/lib/libjitc.a
	install -m 755 $(BUILD)/libjitc.so $(DESTDIR)$(PREFIX)/lib/libjitc.so
	install -m 644 src/jitc.h $(DESTDIR)$(PREFIX)/include/jitc.h
	$(PC_TEXT) > $(DESTDIR)$(PREFIX)/lib/pkgconfig/jitc.pc

test: all
	@python3 -c 'import numpy' 2>/dev/null || sh scripts/install-deps.sh
	BUILD=$(BUILD) CC="$(CC)" CFLAGS="$(CFLAGS)" LDFLAGS="$(LDFLAGS)" sh tests/run.sh

# The cuda target on a machine with an NVIDIA GPU (H100/H200): differential
# suite against interp, edge sizes, buffers, out of memory, timings.
test-gpu: all
	BUILD=$(BUILD) CC="$(CC)" LDFLAGS="$(LDFLAGS)" sh tests/gpu/run.sh

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
bench: $(BUILD)/libjitc.a
	BUILD=$(BUILD) FULL=$(FULL) QUICK=$(QUICK) LLVM_LIBS="$(LLVM_LIBS)" LDLIBS="$(LDLIBS)" sh bench/run.sh

bench-gpu:
	sh bench/gpu.sh

# Compile time against the size of the program (bench/compile_time.py): cpu,
# NVRTC to PTX and to a CUBIN for sm_90 (no GPU needed), cuda where a GPU is.
bench-compile: $(BUILD)/jitc
	python3 bench/compile_time.py --jitc $(BUILD)/jitc --out bench/results/compile_time.md
	python3 bench/docs.py

.PHONY: bench bench-gpu bench-compile

# Reliability (docs/RELIABILITY.md).  `make fuzz` builds the libFuzzer target
# tests/fuzz/fuzz_jitc.c with clang in build-fuzz/ and fuzzes the front end and
# both code generators for FUZZ_SECONDS; `make fuzz-diff` runs N random
# programs of seed SEED on every available target and compares the results.
FUZZ_SECONDS ?= 60
SEED ?= 1
N ?= 200
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/fuzz/run.sh

fuzz-diff: $(BUILD)/jitc
	JITC=$(BUILD)/jitc python3 tests/fuzz_diff.py --seed $(SEED) -n $(N)

.PHONY: fuzz fuzz-diff
