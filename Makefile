# stvm (README.md, "Two commands" and "Other targets"):
#   make, make all   the libraries, the tools (stvm-bench per back end, stvm-lab) and the
#                    examples; never installs anything
#   make test        the maintainers' loop: builds the assembly test binary and runs its
#                    unit suites (UNIT_SKIP below says what is left for check)
#   make check       everything, as CI runs it: setup, then every test binary and suite
#                    (asm, ucontext, ASan+UBSan, mk/*.mk: tsan, fuzz, trace cost, ...),
#                    layering, symbols, manual pages, install, examples
#   make setup       installs the missing Debian packages (scripts/install-deps.sh; deps
#                    is its old name); check and demo call it first
#   make demo        the two seed experiments (experiments/delay-benchmark, znclient)
#   make man         build/man/stvm-bench.1 (written by stvm-bench --man)
#   make install, make uninstall (PREFIX, DESTDIR, MANDIR, ...), make clean
# Every object is compiled on its own with its header dependencies (-MMD -MP), so an
# edit recompiles what it touches and relinks; `make -j2` builds two at a time.

CC      ?= cc
PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR  ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR  ?= $(DATADIR)/man
DESTDIR ?=

.DEFAULT_GOAL := all

B       := build
WARN    := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
OPT     ?= -O2 -g
# The public names before the noun_verb sweep (include/stvm/deprecated.h) are hidden from
# everything built here, so nothing in the tree can use one.
NODEP   := -DSTVM_NO_DEPRECATED
CFLAGS_LIB = $(WARN) $(OPT) $(NODEP) -D_GNU_SOURCE -fPIC -fvisibility=hidden -Iinclude
LDLIBS  := -lffi -ldl -lpthread -lm
# The tests drive the VM from a real libuv loop too (tests/test_host_loop.c).
TEST_LIBS := -luv

# The public headers: stvm.h and the one header per audience it includes (include/README.md).
PUBLIC_H := include/stvm.h $(wildcard include/stvm/*.h)
LIB_SRC := $(wildcard vm/*.c scheduler/*.c primitives/*.c image-stubs/*.c image-stubs/*/*.c)
# The context switch's assembly, chosen by the machine $(CC) builds for (so that
# `make CC=aarch64-linux-gnu-gcc` builds the aarch64 one); none on any other machine,
# where scheduler/context.h falls back to ucontext by itself. Before the install step
# has put a compiler there (make demo and make check on a fresh machine read this file
# first), the machine is this one's.
CC_MACHINE := $(or $(shell $(CC) -dumpmachine 2>/dev/null),$(shell uname -m)-linux-gnu)
LIB_ASM := $(if $(filter x86_64-%,$(CC_MACHINE)),scheduler/switch_x86_64.S,$(if $(filter aarch64-%,$(CC_MACHINE)),scheduler/switch_aarch64.S))
# The API table's suite (test_api_table.c) is split by the header's parts (tests/api_table/).
TEST_SRC := $(wildcard tests/test_*.c tests/api_table/*.c)
# The HTTP harness (experiments/znclient/harness/README.md: a real nginx, wrk) has one
# home, the ZnClient experiment's, and is built per variant as a static library of its
# own, libstvm-harness.a: the tests that need a real server (tests/test_zn_client.c)
# and the experiment link it; neither the library nor stvm-bench contains it.
HARNESS_SRC := $(addprefix experiments/znclient/harness/,nginx.c wrk.c child.c)
# The lab's trace reader and HTML page are tested in the unit binaries (suite lab_html);
# the page's template is a generated C file ($(LAB_PAGE_C), below).
TEST_LAB_SRC = lab/trace_read.c lab/timeline.c lab/html.c $(LAB_PAGE_C)
EXAMPLES := $(patsubst examples/%.c,$(B)/examples/%,$(wildcard examples/*.c))
BENCH_SRC := $(wildcard bench/*.c)

# Flags per kind of program built against the public header (a later -D for all of one
# kind goes here, once): tests, the benchmark tool, the lab, the examples.
TEST_CFLAGS = $(WARN) $(OPT) $(NODEP) -D_GNU_SOURCE -Iinclude -Itests
BENCH_CFLAGS = $(WARN) $(OPT) $(NODEP) -D_GNU_SOURCE -Iinclude
LAB_CFLAGS = $(WARN) $(OPT) $(NODEP) -D_GNU_SOURCE -Iinclude
TOOLS_CFLAGS = $(WARN) $(OPT) $(NODEP) -D_GNU_SOURCE -Iinclude
# stvm-lab's installed scenarios (lab/scenarios/*.scenario, put there by make install):
# the last folder it looks in (lab/main.c, scenario_dir).
$(B)/obj/lab/main.o: LAB_CFLAGS += -DSTVM_LAB_DATADIR='"$(DATADIR)/stvm/scenarios"'
EXAMPLE_CFLAGS = $(WARN) $(OPT) $(NODEP) -Iinclude
# Every object is compiled on its own with -MMD -MP: its .d file beside it names the
# headers it includes, so an edit recompiles exactly the objects that see it and relinks.
DEPFLAGS := -MMD -MP

# Variants: asm (default), uctx (portable ucontext back end), asan (ASan+UBSan, asm, and
# the allocation-failure injector: -DSTVM_FAULTS, vm/alloc.h, which the suite
# alloc_failure drives); mk/*.mk may add more. $(2): compiler flags, for the library's and the tests' objects
# and the test binary's link; $(3): test sources linked into this variant's test binary
# only. Under $(B)/$(1): obj/ holds the library's objects, tobj/ the tests' and the HTTP
# harness's (libstvm-harness.a, HARNESS_SRC).
define variant
$(1)_DIR := $(B)/$(1)
$(1)_OBJ := $$(patsubst %.c,$(B)/$(1)/obj/%.o,$(LIB_SRC)) $$(if $$(findstring -DSTVM_CTX_UCONTEXT,$(2)),,$$(patsubst %.S,$(B)/$(1)/obj/%.o,$(LIB_ASM)))
$(1)_HARNESS_OBJ := $$(patsubst %.c,$(B)/$(1)/tobj/%.o,$(HARNESS_SRC))
$(1)_TEST_OBJ := $$(patsubst %.c,$(B)/$(1)/tobj/%.o,$(TEST_SRC) $(3) $(TEST_LAB_SRC))
$(B)/$(1)/obj/%.o: %.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_LIB) $(2) $$(DEPFLAGS) -c $$< -o $$@
$(B)/$(1)/obj/%.o: %.S
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_LIB) $(2) $$(DEPFLAGS) -c $$< -o $$@
$(B)/$(1)/tobj/%.o: %.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(TEST_CFLAGS) $(2) $$(DEPFLAGS) -c $$< -o $$@
-include $$($(1)_OBJ:.o=.d) $$($(1)_TEST_OBJ:.o=.d) $$($(1)_HARNESS_OBJ:.o=.d)
$(B)/$(1)/libstvm.a: $$($(1)_OBJ)
	rm -f $$@ && ar rcs $$@ $$^
$(B)/$(1)/libstvm-harness.a: $$($(1)_HARNESS_OBJ)
	rm -f $$@ && ar rcs $$@ $$^
$(B)/$(1)/stvm-tests: $$($(1)_TEST_OBJ) $(B)/$(1)/libstvm.a $(B)/$(1)/libstvm-harness.a
	$$(CC) $(OPT) $(2) $$(filter %.o %.a,$$^) -lcriterion $(TEST_LIBS) $(LDLIBS) -o $$@
endef

# Objects of the programs that do not depend on the variant (the tools, the examples, the
# benchmark tool's tests): $(B)/obj/FOLDER/NAME.o, one pattern rule per folder's flags.
# The tools' objects are linked with each back end's library (stvm-bench,
# stvm-bench-ucontext, build/notrace/stvm-bench): nothing in bench/ looks at the back end.
$(B)/obj/bench/%.o: bench/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $(DEPFLAGS) -c $< -o $@
$(B)/obj/lab/%.o: lab/%.c
	@mkdir -p $(dir $@)
	$(CC) $(LAB_CFLAGS) $(DEPFLAGS) -c $< -o $@
$(B)/obj/tools/%.o: tools/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TOOLS_CFLAGS) $(DEPFLAGS) -c $< -o $@
$(B)/obj/examples/%.o: examples/%.c
	@mkdir -p $(dir $@)
	$(CC) $(EXAMPLE_CFLAGS) $(DEPFLAGS) -c $< -o $@
$(B)/obj/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(DEPFLAGS) -c $< -o $@

# stvm-bench is its own objects and the library: no lab object (a trace's page is
# `stvm-lab show FILE --html PAGE` of the file --trace writes).
BENCH_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(BENCH_SRC))
LAB_SRC := $(wildcard lab/*.c)
# Code the tools share (tools/README.md), linked into each tool that uses it.
TOOLS_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(wildcard tools/*.c))
# The HTML page's template (lab/html_page.html, its CSS and script) stays an HTML file to
# edit; the lab links it as the C string lab_html_page, made here.
LAB_PAGE_C := $(B)/gen/lab/html_page.c
LAB_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(LAB_SRC)) $(B)/obj/gen/lab/html_page.o $(TOOLS_OBJ)
$(LAB_PAGE_C): lab/html_page.html
	@mkdir -p $(dir $@)
	{ echo '/* Made by the Makefile from lab/html_page.html: edit that file. */'; \
	  echo 'const char lab_html_page[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; echo ';'; } > $@
$(B)/obj/gen/lab/html_page.o: $(LAB_PAGE_C)
	@mkdir -p $(dir $@)
	$(CC) $(LAB_CFLAGS) -c $< -o $@
EXAMPLE_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(wildcard examples/*.c))

# The benchmark tool's own tests (its views, its options, --trace) are a binary of their
# own: they test bench/, not the library, and run the tool built above.
BENCH_TEST_SRC := $(wildcard tests/bench/test_*.c)
BENCH_TEST_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(BENCH_TEST_SRC))
$(B)/bench/stvm-bench-tests: $(BENCH_TEST_OBJ) $(B)/asm/libstvm.a
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $(filter %.o %.a,$^) -lcriterion $(LDLIBS) -o $@

$(B)/asan/leak-canary: tests/canary/leak.c $(B)/asan/libstvm.a
	$(CC) $(WARN) $(NODEP) -O1 -fsanitize=address,undefined -Iinclude $(DEPFLAGS) $< $(B)/asan/libstvm.a $(LDLIBS) -o $@

-include $(BENCH_OBJ:.o=.d) $(LAB_OBJ:.o=.d) $(TOOLS_OBJ:.o=.d) $(EXAMPLE_OBJ:.o=.d) $(BENCH_TEST_OBJ:.o=.d) \
    $(B)/asan/leak-canary.d

$(eval $(call variant,asm,))
$(eval $(call variant,uctx,-DSTVM_CTX_UCONTEXT))
comma := ,
$(eval $(call variant,asan,-O1 -fno-omit-frame-pointer -fsanitize=address$(comma)undefined -fno-sanitize-recover=all -DSTVM_FAULTS))

.PHONY: all lib tools examples experiments check test demo setup deps man man-check docs-errors install uninstall clean layering symbols install-smoke bench-micro soak fuzz lab-golden doc-images

# Further test kinds live in mk/*.mk, one file each (model-based testing, fuzzing,
# ThreadSanitizer, ...). Each adds the target make check runs to CHECK_EXTRA and may
# add to SOAK_EXTRA (make soak) and FUZZ_EXTRA (make fuzz); an example that one of them
# runs its own way (one that must not exit 0) goes on EXAMPLES_OWN_CHECK, which make
# check's loop over the examples leaves out.
CHECK_EXTRA :=
SOAK_EXTRA :=
FUZZ_EXTRA :=
EXAMPLES_OWN_CHECK :=
include $(wildcard mk/*.mk)

all: lib tools examples experiments

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
$(B)/stvm-lab: $(LAB_OBJ) $(B)/asm/libstvm.a
	$(CC) $(OPT) $(filter %.o %.a,$^) $(LDLIBS) -o $@

lab-golden: $(B)/stvm-lab
	@sh scripts/lab-golden.sh $(B)/stvm-lab tests/lab

# The README's picture, drawn by the lab (needs gnuplot); rerun when the lab changes.
doc-images: $(B)/stvm-lab $(B)/experiments/znclient
	$(B)/stvm-lab run zn_first_read_legacy --png docs/images/zn_first_read_legacy.png > /dev/null
	$(B)/experiments/znclient --model --preset seed2-2017 --repeat 1 --quiet --phase \
	    --out $(B)/znclient-phase-model.json
	python3 experiments/znclient/report.py $(B)/znclient-phase-model.json \
	    --phase-plot $(B)/znclient-phase-model.png
	cp $(B)/znclient-phase-model.png docs/images/znclient-phase.png

$(B)/stvm-bench: $(BENCH_OBJ) $(B)/asm/libstvm.a
	$(CC) $(OPT) $(filter %.o %.a,$^) $(LDLIBS) -o $@

$(B)/stvm-bench-ucontext: $(BENCH_OBJ) $(B)/uctx/libstvm.a
	$(CC) $(OPT) $(filter %.o %.a,$^) $(LDLIBS) -o $@

examples: $(EXAMPLES)
# Reached through the pattern below only, so make would delete them after each link.
.SECONDARY: $(EXAMPLE_OBJ)
$(B)/examples/%: $(B)/obj/examples/%.o $(B)/libstvm.a
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $(filter %.o %.a,$^) $(LDLIBS) -o $@

# Experiments (experiments/README.md): one folder per question the project answers with
# measurements, never installed. experiments/NAME/ holds its program(s) (<stvm.h> only;
# znclient also experiments/znclient/internal.h, the one documented exception), the
# script that makes its report from the program's JSON or CSV, and its README.md;
# build/experiments/NAME is the program. make experiments-check runs their tests.
EXPERIMENT_CFLAGS = $(WARN) $(OPT) $(NODEP) -D_GNU_SOURCE -Iinclude
EXPERIMENTS := $(B)/experiments/osvm785 $(B)/experiments/znclient
experiments: $(EXPERIMENTS)
$(B)/obj/experiments/%.o: experiments/%.c
	@mkdir -p $(dir $@)
	$(CC) $(EXPERIMENT_CFLAGS) $(DEPFLAGS) -c $< -o $@
.SECONDARY: $(B)/obj/experiments/osvm785/osvm785.o
$(B)/experiments/osvm785: $(B)/obj/experiments/osvm785/osvm785.o $(B)/libstvm.a
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $(filter %.o %.a,$^) $(LDLIBS) -o $@
# The ZnClient experiment's program: its own files, the HTTP harness, the library.
ZNCLIENT_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(wildcard experiments/znclient/zn*.c))
$(B)/experiments/znclient: $(ZNCLIENT_OBJ) $(B)/asm/libstvm-harness.a $(B)/libstvm.a
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $(filter %.o %.a,$^) $(LDLIBS) -o $@
# The harness's own tests (a real nginx, wrk, curl; every exit path leaves nothing).
$(B)/experiments/harness-tests: $(B)/obj/experiments/znclient/harness/test_harness.o \
        $(B)/asm/libstvm-harness.a
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $(filter %.o %.a,$^) -lcriterion -o $@
-include $(ZNCLIENT_OBJ:.o=.d) $(B)/obj/experiments/osvm785/osvm785.d \
    $(B)/obj/experiments/znclient/harness/test_harness.d

# The experiments' tests: the harness's suite, then each experiment's checks of its
# program and its report script (python3's unittest, which make setup installs).
.PHONY: experiments-check
experiments-check: all $(B)/experiments/harness-tests
	@echo "== experiments: the HTTP harness (nginx, wrk)" && $(B)/experiments/harness-tests --jobs 1
	@for t in experiments/*/test_*.py; do echo "== experiments: $$t"; \
	    STVM_BUILD=$(abspath $(B)) python3 $$t || exit 1; done

# The examples that can live in a libuv loop (docs/io.md, "Running inside another event
# loop") are, with the tests (TEST_LIBS), the only things built with libuv: explicit
# rules, so the pattern rule above never links them without -luv.
UV_CFLAGS = $(shell pkg-config --cflags libuv)
UV_LIBS = $(shell pkg-config --libs libuv)
UV_EXAMPLES := libuv_host chat
$(UV_EXAMPLES:%=$(B)/obj/examples/%.o): EXAMPLE_CFLAGS += $(UV_CFLAGS)
$(UV_EXAMPLES:%=$(B)/examples/%): $(B)/examples/%: $(B)/obj/examples/%.o $(B)/libstvm.a
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $(filter %.o %.a,$^) $(UV_LIBS) $(LDLIBS) -o $@

# Installs the missing Debian packages (scripts/install-deps.sh: as root; otherwise it
# prints the command and fails). check and demo call it, all never does; deps is the
# old name.
setup:
	@sh scripts/install-deps.sh
deps: setup

# The stop suite judges in real time how soon a stop ends a run (100 ms), so it runs by
# itself after the other suites, with no other test's load (a million processes, an
# nginx) on the machine's cores: run_suites BINARY runs both parts.
TESTS_ALONE := stop
run_suites = $(1) --jobs 2 --filter '!($(TESTS_ALONE)/*$(2))' && $(1) --jobs 1 --filter '$(TESTS_ALONE)/*'
# The scale tests (a million processes, and each guard method's memory given back: half
# of a test binary's time) exercise the stacks of vm/stack.c, which every back end shares,
# and the suites lab, lab_file and lab_show run the tool build/stvm-lab, the same program
# whichever binary starts it: the assembly build runs them, the ucontext and sanitizer
# builds leave them out (run_suites' second argument, OTHER_BUILDS_SKIP), which keeps make
# check inside CI's 15 minutes.
SCALE_TESTS := boundaries/*_give_back_their_memory
OTHER_BUILDS_SKIP := $(SCALE_TESTS)|lab/*|lab_file/*|lab_show/*
# The reference model runs its default 4,000,000 operations in the assembly build and
# OTHER_MODEL_OPS in the other two (make soak-model runs far more on both back ends).
OTHER_MODEL_OPS ?= 1000000

# The tests: both back ends, then the sanitizer build; any failure or crash fails make.
# The build compiles CHECK_JOBS objects at a time (CI's machine has 2 cores); the tests
# then run one binary at a time.
CHECK_JOBS ?= 2
check: setup
	$(MAKE) -j$(CHECK_JOBS) all $(B)/asm/stvm-tests $(B)/uctx/stvm-tests $(B)/asan/stvm-tests $(B)/asan/leak-canary $(B)/bench/stvm-bench-tests $(B)/experiments/harness-tests
	$(MAKE) layering symbols man-check
	@echo "== tests: assembly back end" && $(call run_suites,$(B)/asm/stvm-tests)
	@echo "== tests: the benchmark tool" && $(B)/bench/stvm-bench-tests --jobs 1
	$(MAKE) experiments-check
	@echo "== compare.py reads two stvm-bench runs (gbench format)" && \
	    sh scripts/gbench-compare-check.sh $(B)/stvm-bench > /dev/null
	@echo "== tests: ucontext back end (left out: $(OTHER_BUILDS_SKIP))" && \
	    $(call run_suites,STVM_MODEL_OPS=$(OTHER_MODEL_OPS) $(B)/uctx/stvm-tests,|$(OTHER_BUILDS_SKIP))
	@echo "== tests: ASan+UBSan (leaks, memory errors and undefined behaviour fail; left out: $(OTHER_BUILDS_SKIP))" && \
	    $(call run_suites,STVM_MODEL_OPS=$(OTHER_MODEL_OPS) sh scripts/run-sanitized.sh $(B)/asan/stvm-tests,|$(OTHER_BUILDS_SKIP))
	@echo "== leak canary: a leaking program must be caught" && \
	    if sh scripts/run-sanitized.sh $(B)/asan/leak-canary > /dev/null 2>&1; then \
	        echo "the leak check is not live"; exit 1; else echo "canary caught"; fi
	$(MAKE) install-smoke
	@for e in $(filter-out $(EXAMPLES_OWN_CHECK),$(EXAMPLES)); do echo "== example $$e"; $$e > /dev/null || exit 1; done
	@echo "== libuv host: the uv driver in both run modes and plain stvm_run, under curl and wrk" && \
	    sh scripts/libuv-host-check.sh $(B)/examples/libuv_host
	@echo "== chat example: plain and in a libuv loop, against Python's socket module (half-close, 20 clients, idle)" && \
	    sh scripts/chat-check.sh $(B)/examples/chat
	$(if $(strip $(CHECK_EXTRA)),$(MAKE) $(CHECK_EXTRA))
	@echo "check: all passed"

# Longer runs of the same tests, not part of make check (mk/*.mk say what each runs).
soak: all $(SOAK_EXTRA)
fuzz: $(FUZZ_EXTRA)

# make test: the maintainers' loop, the unit suites of the assembly build only (no
# packages installed, nothing else built; about 20 s of tests on 2 cores, and one test
# file's edit recompiles that file alone). Left out, for make check: the suites of
# UNIT_SKIP, which need a real nginx (zn_client), want an idle machine (stop judges in
# real time that a stop ends a run within 100 ms) or run a built tool (lab, lab_file and
# lab_show run build/stvm-lab); the scale tests of UNIT_SKIP_TESTS (boundaries: a million processes,
# and each guard method's memory given back, 32 s). The model runs UNIT_MODEL_OPS
# operations, not make check's 4,000,000.
UNIT_SKIP ?= zn_client stop lab lab_file lab_show
UNIT_SKIP_TESTS ?= $(SCALE_TESTS)
UNIT_MODEL_OPS ?= 200000
unit_empty :=
unit_space := $(unit_empty) $(unit_empty)
UNIT_FILTER = !(@($(subst $(unit_space),|,$(strip $(UNIT_SKIP))))/*$(foreach t,$(UNIT_SKIP_TESTS),|$(t)))
test: $(B)/asm/stvm-tests
	@echo "== unit suites, assembly back end (left out: $(strip $(UNIT_SKIP) $(UNIT_SKIP_TESTS)); make check runs every test)"
	@STVM_MODEL_OPS=$(UNIT_MODEL_OPS) $(B)/asm/stvm-tests --jobs 2 --filter '$(UNIT_FILTER)'

# Includes point down only: vm < scheduler < primitives < image-stubs < the tools, and
# the tools (bench/, lab/, examples/, experiments/) include <stvm.h> and their own
# folder's headers only (scripts/check-layering.sh names the one exception).
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

# The two seed experiments, about 4 minutes in all (experiments/README.md): the
# DelayBenchmark (experiments/delay-benchmark/run.sh: the calibrated simulated sweep
# beside the seed's table, then the real clock to saturation; the simulated one run twice
# more and compared), then the ZnClient experiment against a real nginx
# (experiments/znclient/run.sh: the seed's fitted world, the sweep per idle mode beside
# wrk -t1 -c1, the fit, the recording and its replay, the phase diagram; the replay run
# twice and compared). Each leaves its JSON, report and plots in $(B)/ (delay-benchmark.*,
# znclient-*).
demo: setup all
	sh experiments/delay-benchmark/run.sh $(B)
	sh experiments/znclient/run.sh $(B)

bench-micro: tools
	$(B)/stvm-bench micro --cpu 0
	$(B)/stvm-bench-ucontext micro --cpu 0

# The manual pages: stvm-lab(1) and stvm(3) are written by hand as man/*.in, and made
# here with what has one home elsewhere: the release and the soname's number from
# stvm/core.h (VERSION, ABI), stvm(3)'s ERRORS section from the error list
# STVM_ERRNO_MAP (scripts/errors-table.c), so that no page can name another release,
# soname or error text. stvm-bench(1) is written by the tool from its commands' option
# tables (`stvm-bench --man`), so it names every option the tool has. make check renders
# all three and checks what they name (scripts/man-check.sh), and compares the docs'
# copies of the error table (scripts/docs-check.sh).
MAN_PAGES := $(B)/man/stvm-lab.1 $(B)/man/stvm.3
man: $(B)/man/stvm-bench.1 $(MAN_PAGES)
$(B)/gen/errors-table: scripts/errors-table.c $(PUBLIC_H)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(OPT) $(NODEP) -Iinclude $< -o $@
# docs/embedding.md's copy of the error table, rewritten from STVM_ERRNO_MAP.
docs-errors: $(B)/gen/errors-table
	@b='<!-- errors-table: made by `make docs-errors` from STVM_ERRNO_MAP; do not edit -->'; \
	e='<!-- errors-table end -->'; $(B)/gen/errors-table markdown > $(B)/gen/errors.md && \
	awk -v b="$$b" -v e="$$e" -v t=$(B)/gen/errors.md \
	    '$$0 == e {on = 0} !on {print} $$0 == b {on = 1; while ((getline l < t) > 0) print l}' \
	    docs/embedding.md > $(B)/gen/embedding.md && mv $(B)/gen/embedding.md docs/embedding.md
$(B)/man/%: man/%.in $(B)/gen/errors-table include/stvm/core.h
	@mkdir -p $(dir $@)
	$(B)/gen/errors-table roff > $@.errors
	sed -e 's/@VERSION@/$(VERSION)/g' -e 's/@ABI@/$(ABI)/g' -e '/^@ERRORS@$$/{r $@.errors' -e 'd;}' $< > $@.tmp
	@rm -f $@.errors && mv $@.tmp $@
$(B)/man/stvm-bench.1: $(B)/stvm-bench
	@mkdir -p $(dir $@)
	@if ! $(B)/stvm-bench --man > $@.tmp 2> $@.err || ! grep -q '^\.TH' $@.tmp; then \
	    echo "man: '$(B)/stvm-bench --man' wrote no manual page (the option comes with the"; \
	    echo "man: option tables of bench/, branch bench-core); it said:"; \
	    sed 's/^/    /' $@.err; rm -f $@.tmp $@.err; exit 1; fi
	@mv $@.tmp $@ && rm -f $@.err && echo "man: $@ written by $(B)/stvm-bench --man"

man-check: $(B)/stvm-lab $(B)/stvm-bench $(B)/man/stvm-bench.1 $(MAN_PAGES) $(B)/gen/errors-table
	@sh scripts/man-check.sh $(B)/stvm-lab $(B)/stvm-bench $(B)/man/stvm-bench.1
	@sh scripts/docs-check.sh $(B)/gen/errors-table $(VERSION) $(ABI)

# install copies the headers, the libraries, stvm.pc, stvm-bench and stvm-lab and their
# manual pages (into MANDIR/man1 and man3), stvm-bench's plot scripts (DATADIR/stvm/plots), stvm-lab's scenarios (DATADIR/stvm/scenarios), and records what it put there and which folders it created in $(DATADIR)/stvm/install-manifest;
# uninstall removes exactly those, then the folders it created, when they are empty
# (scripts/install.sh).
INSTALL_VARS = DESTDIR='$(DESTDIR)' PREFIX='$(PREFIX)' LIBDIR='$(LIBDIR)' INCLUDEDIR='$(INCLUDEDIR)' \
    BINDIR='$(BINDIR)' DATADIR='$(DATADIR)' MANDIR='$(MANDIR)' VERSION='$(VERSION)' ABI='$(ABI)' B='$(B)'
install: lib tools man
	@$(INSTALL_VARS) sh scripts/install.sh install

uninstall:
	@$(INSTALL_VARS) sh scripts/install.sh uninstall

clean:
	rm -rf $(B)
