# stvm: `make` builds the libraries, tools and examples; `make check` installs what is
# missing, builds and runs every test (assembly and ucontext back ends, then ASan+UBSan);
# `make demo` runs the two experiments (DelayBenchmark, ZnClient). See README.md.

CC      ?= cc
PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR  ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
DESTDIR ?=

.DEFAULT_GOAL := all

B       := build
WARN    := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
OPT     ?= -O2 -g
# The public names before the noun_verb sweep (include/stvm/deprecated.h) are hidden from
# everything built here but bench/, so nothing else can use one; bench/ is renamed later.
NODEP   := -DSTVM_NO_DEPRECATED
CFLAGS_LIB = $(WARN) $(OPT) $(NODEP) -D_GNU_SOURCE -fPIC -fvisibility=hidden -Iinclude
LDLIBS  := -lffi -ldl -lpthread -lm
# The tests drive the VM from a real libuv loop too (tests/test_host_loop.c).
TEST_LIBS := -luv

# The public headers: stvm.h and the one header per audience it includes (include/README.md).
PUBLIC_H := include/stvm.h $(wildcard include/stvm/*.h)
LIB_SRC := $(wildcard vm/*.c scheduler/*.c primitives/*.c image-stubs/*.c image-stubs/*/*.c)
LIB_ASM := scheduler/switch_x86_64.S
TEST_SRC := $(wildcard tests/test_*.c)
# The HTTP harness (a real nginx, wrk) is the benchmark's, and its own tests use it too.
TEST_BENCH_SRC := bench/nginx.c bench/wrk.c bench/child.c
EXAMPLES := $(patsubst examples/%.c,$(B)/examples/%,$(wildcard examples/*.c))
BENCH_SRC := $(wildcard bench/*.c)

# Variants: asm (default), uctx (portable ucontext back end), asan (ASan+UBSan, asm);
# mk/*.mk may add more. $(2): compiler flags; $(3): test sources linked into this
# variant's test binary only. Library objects carry the headers they include as
# dependencies (-MMD), so a changed header rebuilds exactly what includes it.
define variant
$(1)_DIR := $(B)/$(1)
$(1)_OBJ := $$(patsubst %.c,$(B)/$(1)/obj/%.o,$(LIB_SRC)) $$(if $$(findstring -DSTVM_CTX_UCONTEXT,$(2)),,$(B)/$(1)/obj/scheduler/switch_x86_64.o)
$(B)/$(1)/obj/%.o: %.c | $(B)/$(1)/obj
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_LIB) $(2) -MMD -MP -c $$< -o $$@
$(B)/$(1)/obj/%.o: %.S | $(B)/$(1)/obj
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_LIB) $(2) -MMD -MP -c $$< -o $$@
-include $$($(1)_OBJ:.o=.d)
$(B)/$(1)/obj:
	@mkdir -p $$@
$(B)/$(1)/libstvm.a: $$($(1)_OBJ)
	rm -f $$@ && ar rcs $$@ $$^
$(B)/$(1)/stvm-tests: $(TEST_SRC) $(3) $(TEST_BENCH_SRC) bench/nginx.h bench/wrk.h bench/child.h tests/helpers.h $(PUBLIC_H) $(B)/$(1)/libstvm.a
	$$(CC) $(WARN) $(OPT) $(NODEP) $(2) -D_GNU_SOURCE -Iinclude -Itests $(TEST_SRC) $(3) $(TEST_BENCH_SRC) $(B)/$(1)/libstvm.a -lcriterion $(TEST_LIBS) $(LDLIBS) -o $$@
endef

# The benchmark tool's own tests (its --trace, its HTTP harness) are a binary of their
# own: they test bench/, not the library, and run the tool built above.
BENCH_TEST_SRC := $(wildcard tests/bench/test_*.c)
$(B)/bench/stvm-bench-tests: $(BENCH_TEST_SRC) $(TEST_BENCH_SRC) bench/nginx.h bench/wrk.h bench/child.h tests/helpers.h $(B)/asm/libstvm.a
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(OPT) $(NODEP) -D_GNU_SOURCE -Iinclude -Itests $(BENCH_TEST_SRC) $(TEST_BENCH_SRC) $(B)/asm/libstvm.a -lcriterion $(LDLIBS) -o $@

$(B)/asan/leak-canary: tests/canary/leak.c $(B)/asan/libstvm.a
	$(CC) $(WARN) $(NODEP) -O1 -fsanitize=address,undefined -Iinclude $< $(B)/asan/libstvm.a $(LDLIBS) -o $@

$(eval $(call variant,asm,))
$(eval $(call variant,uctx,-DSTVM_CTX_UCONTEXT))
comma := ,
$(eval $(call variant,asan,-O1 -fno-omit-frame-pointer -fsanitize=address$(comma)undefined -fno-sanitize-recover=all))

.PHONY: all lib tools examples check test demo deps install uninstall clean layering symbols install-smoke bench-micro soak fuzz lab-golden doc-images

# Further test kinds live in mk/*.mk, one file each (model-based testing, fuzzing,
# ThreadSanitizer, ...). Each adds the target make check runs to CHECK_EXTRA and may
# add to SOAK_EXTRA (make soak) and FUZZ_EXTRA (make fuzz).
CHECK_EXTRA :=
SOAK_EXTRA :=
FUZZ_EXTRA :=
include $(wildcard mk/*.mk)

all: lib tools examples

lib: $(B)/libstvm.a $(B)/libstvm.so

$(B)/libstvm.a: $(B)/asm/libstvm.a
	cp $< $@

# The soname's number is STVM_ABI_VERSION and the release is STVM_VERSION_STRING, both
# read from stvm/core.h, their one home (include/README.md, "When the soname changes").
VERSION := $(shell sed -n 's/\#define STVM_VERSION_STRING "\(.*\)"/\1/p' include/stvm/core.h)
ABI := $(shell sed -n 's/^\#define STVM_ABI_VERSION \([0-9]*\)$$/\1/p' include/stvm/core.h)

$(B)/libstvm.so: $(asm_OBJ)
	$(CC) -shared -Wl,-soname,libstvm.so.$(ABI) -o $@ $^ $(LDLIBS)

# stvm-bench is linked with the assembly back end, stvm-bench-ucontext with the portable
# one; each reports its own back end (`make bench-micro` runs both).
tools: $(B)/stvm-bench $(B)/stvm-bench-ucontext $(B)/stvm-lab

# The scenario lab (lab/README.md); `make lab-golden` rewrites its expected outputs.
LAB_SRC := $(wildcard lab/*.c)
$(B)/stvm-lab: $(LAB_SRC) $(wildcard lab/*.h) $(B)/asm/libstvm.a
	$(CC) $(WARN) $(OPT) $(NODEP) -D_GNU_SOURCE -Iinclude $(LAB_SRC) $(B)/asm/libstvm.a $(LDLIBS) -o $@

lab-golden: $(B)/stvm-lab
	@sh scripts/lab-golden.sh $(B)/stvm-lab tests/lab

# The README's picture, drawn by the lab (needs gnuplot); rerun when the lab changes.
doc-images: $(B)/stvm-lab
	$(B)/stvm-lab run zn_first_read_legacy --png docs/images/zn_first_read_legacy.png > /dev/null

$(B)/stvm-bench: $(BENCH_SRC) $(wildcard bench/*.h) $(B)/asm/libstvm.a
	$(CC) $(WARN) $(OPT) -D_GNU_SOURCE -Iinclude $(BENCH_SRC) $(B)/asm/libstvm.a $(LDLIBS) -o $@

$(B)/stvm-bench-ucontext: $(BENCH_SRC) $(wildcard bench/*.h) $(B)/uctx/libstvm.a
	$(CC) $(WARN) $(OPT) -D_GNU_SOURCE -Iinclude $(BENCH_SRC) $(B)/uctx/libstvm.a $(LDLIBS) -o $@

examples: $(EXAMPLES)
$(B)/examples/%: examples/%.c $(B)/libstvm.a $(PUBLIC_H)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(OPT) $(NODEP) -Iinclude $< $(B)/libstvm.a $(LDLIBS) -o $@

# The one example that lives in a libuv loop (docs/io.md, "Running inside another event
# loop") is, with the tests (TEST_LIBS), the only thing built with libuv: an explicit
# rule, so the pattern rule above never links it without -luv.
UV_CFLAGS = $(shell pkg-config --cflags libuv)
UV_LIBS = $(shell pkg-config --libs libuv)
$(B)/examples/libuv_host: examples/libuv_host.c $(B)/libstvm.a $(PUBLIC_H)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(OPT) $(NODEP) -Iinclude $(UV_CFLAGS) $< $(B)/libstvm.a $(UV_LIBS) $(LDLIBS) -o $@

deps:
	@sh scripts/install-deps.sh

# The stop suite judges in real time how soon a stop ends a run (100 ms), so it runs by
# itself after the other suites, with no other test's load (a million processes, an
# nginx) on the machine's cores: run_suites BINARY runs both parts.
TESTS_ALONE := stop
run_suites = $(1) --jobs 2 --filter '!($(TESTS_ALONE)/*)' && $(1) --jobs 1 --filter '$(TESTS_ALONE)/*'

# The tests: both back ends, then the sanitizer build; any failure or crash fails make.
check: deps
	$(MAKE) all $(B)/asm/stvm-tests $(B)/uctx/stvm-tests $(B)/asan/stvm-tests $(B)/asan/leak-canary $(B)/bench/stvm-bench-tests
	$(MAKE) layering symbols
	@echo "== tests: assembly back end" && $(call run_suites,$(B)/asm/stvm-tests)
	@echo "== tests: the benchmark tool and its HTTP harness" && $(B)/bench/stvm-bench-tests --jobs 1
	@echo "== compare.py reads two stvm-bench runs (gbench format)" && \
	    sh scripts/gbench-compare-check.sh $(B)/stvm-bench > /dev/null
	@echo "== tests: ucontext back end" && $(call run_suites,$(B)/uctx/stvm-tests)
	@echo "== tests: ASan+UBSan (leaks, memory errors and undefined behaviour fail)" && \
	    $(call run_suites,sh scripts/run-sanitized.sh $(B)/asan/stvm-tests)
	@echo "== leak canary: a leaking program must be caught" && \
	    if sh scripts/run-sanitized.sh $(B)/asan/leak-canary > /dev/null 2>&1; then \
	        echo "the leak check is not live"; exit 1; else echo "canary caught"; fi
	$(MAKE) install-smoke
	@for e in $(EXAMPLES); do echo "== example $$e"; $$e > /dev/null || exit 1; done
	@echo "== libuv host: the uv driver in both run modes and plain stvm_run, under curl and wrk" && \
	    sh scripts/libuv-host-check.sh $(B)/examples/libuv_host
	$(if $(strip $(CHECK_EXTRA)),$(MAKE) $(CHECK_EXTRA))
	@echo "check: all passed"

# Longer runs of the same tests, not part of make check (mk/*.mk say what each runs).
soak: all $(SOAK_EXTRA)
fuzz: $(FUZZ_EXTRA)

test: check

# Includes point down only: vm < scheduler < primitives < image-stubs < bench/examples.
layering:
	@sh scripts/check-layering.sh

# Only stvm_ symbols may leave the shared library.
symbols: $(B)/libstvm.so
	@bad=$$(nm -D --defined-only $(B)/libstvm.so | awk '{print $$3}' | grep -v '^stvm_' | grep -v '^_' ); \
	if [ -n "$$bad" ]; then echo "exported non-stvm symbols: $$bad"; exit 1; fi; \
	echo "symbols: only stvm_ exported"

# Install into a scratch prefix and build an outside program with pkg-config.
install-smoke: lib tools
	@sh scripts/install-smoke.sh

# Two experiments, each about a minute: the DelayBenchmark sweep, then the ZnClient
# experiment against a real nginx (the seed's table per idle mode and a sweep of the
# subscriber's cost, beside wrk -t1 -c1).
demo: deps all
	$(B)/stvm-bench delay --cpu 0 --plot $(B)/delay-benchmark.png --report $(B)/delay-benchmark.md
	$(B)/stvm-bench zn --idle-mode poll,legacy,spin --subscriber-cost-us 0,10,20,40,60,120,240 \
	    --requests 1000 --max-seconds 1 --plot $(B)/znclient-experiment.png \
	    --report $(B)/znclient-experiment.md

bench-micro: tools
	$(B)/stvm-bench micro --cpu 0
	$(B)/stvm-bench-ucontext micro --cpu 0

# install copies the headers, the libraries, stvm.pc, stvm-bench and stvm-lab, and records
# what it put there and which folders it created in $(DATADIR)/stvm/install-manifest;
# uninstall removes exactly those, then the folders it created, when they are empty
# (scripts/install.sh).
INSTALL_VARS = DESTDIR='$(DESTDIR)' PREFIX='$(PREFIX)' LIBDIR='$(LIBDIR)' INCLUDEDIR='$(INCLUDEDIR)' \
    BINDIR='$(BINDIR)' DATADIR='$(DATADIR)' VERSION='$(VERSION)' ABI='$(ABI)' B='$(B)'
install: lib tools
	@$(INSTALL_VARS) sh scripts/install.sh install

uninstall:
	@$(INSTALL_VARS) sh scripts/install.sh uninstall

clean:
	rm -rf $(B)
