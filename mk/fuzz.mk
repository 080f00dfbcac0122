# Coverage-guided fuzzing with libFuzzer (tests/fuzz/README.md).
#
# The library is built a fourth time, by clang with coverage instrumentation and
# ASan+UBSan (objects under build/fuzz/obj), and each tests/fuzz/fuzz_*.c is linked
# against it with -fsanitize=fuzzer. clang and libFuzzer come from Debian (clang,
# libclang-rt-14-dev: scripts/install-deps.sh).
#
#   make fuzz-check            replay each target's checked-in corpus, then fuzz each
#                              for FUZZ_CHECK_RUNS (5000) inputs from the fixed seed
#                              FUZZ_SEED (1; 0: a new one each time) in a scratch corpus;
#                              any crash, sanitizer report or failed check fails (make
#                              check). The fixed seed keeps check close to repeatable:
#                              new ground is explored by make fuzz, not by whoever
#                              runs the tests.
#   make fuzz FUZZ_SECONDS=N   fuzz each target for N seconds (300), FUZZ_JOBS (2) targets
#                              at a time (one per core of CI's two), growing a scratch
#                              copy of its corpus under build/fuzz/corpus/; prints each
#                              target's summary line as it ends (its output kept
#                              together), then all of them again, and how to merge what
#                              it found back into tests/fuzz/corpus/; one target's
#                              failure does not stop the others, but fails make
#   make fuzz-targets          only build them

CLANG ?= clang
FUZZ_SECONDS ?= 300
FUZZ_JOBS ?= 2
FUZZ_CHECK_RUNS ?= 5000
FUZZ_SEED ?= 1
FUZZ_B := $(B)/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_NAMES := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(addprefix $(FUZZ_B)/,$(FUZZ_NAMES))
FUZZ_OBJ := $(patsubst %.c,$(FUZZ_B)/obj/%.o,$(LIB_SRC)) $(patsubst %.S,$(FUZZ_B)/obj/%.o,$(LIB_ASM))

$(FUZZ_B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CLANG) $(CFLAGS_LIB) -O1 -fsanitize=fuzzer-no-link $(FUZZ_SAN) -MMD -MP -c $< -o $@
$(FUZZ_B)/obj/%.o: %.S
	@mkdir -p $(dir $@)
	$(CLANG) $(CFLAGS_LIB) -O1 $(FUZZ_SAN) -MMD -MP -c $< -o $@
-include $(FUZZ_OBJ:.o=.d)

$(FUZZ_B)/libstvm.a: $(FUZZ_OBJ)
	rm -f $@ && ar rcs $@ $^

# Each target is one file, compiled and linked in one call; its .d names the headers.
$(FUZZ_B)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_B)/libstvm.a
	$(CLANG) $(WARN) $(NODEP) -O1 -g -D_GNU_SOURCE -Iinclude -fsanitize=fuzzer $(FUZZ_SAN) $(DEPFLAGS) $< \
	    $(FUZZ_B)/libstvm.a $(LDLIBS) -o $@
-include $(FUZZ_BINS:=.d)

# The lab's scenario parser is played and checked too: its target links the lab's three
# files (each its own unit: their static names repeat), so it has a rule of its own.
FUZZ_LAB_SRC := lab/parse.c lab/play.c lab/expect.c
$(FUZZ_B)/fuzz_lab_parse: tests/fuzz/fuzz_lab_parse.c $(FUZZ_LAB_SRC) lab/lab.h $(FUZZ_B)/libstvm.a
	$(CLANG) $(WARN) $(NODEP) -O1 -g -D_GNU_SOURCE -Iinclude -fsanitize=fuzzer $(FUZZ_SAN) \
	    tests/fuzz/fuzz_lab_parse.c $(FUZZ_LAB_SRC) $(FUZZ_B)/libstvm.a $(LDLIBS) -o $@

.PHONY: fuzz-targets fuzz-check fuzz-run
fuzz-targets: $(FUZZ_BINS)

fuzz-check:
	@sh scripts/install-deps.sh
	$(MAKE) fuzz-targets
	@for t in $(FUZZ_NAMES); do \
	    FUZZ_SEED=$(FUZZ_SEED) sh tests/fuzz/run.sh check $$t $(FUZZ_CHECK_RUNS) || exit 1; \
	done
	@echo "fuzz-check: all passed"

# Each target is a make target of its own (fuzz-run-NAME), so that make runs FUZZ_JOBS of
# them at once, keeps each one's lines together (--output-sync) and goes on past a
# failure (-k); its output is kept in build/fuzz/NAME.run.out for the recap at the end.
FUZZ_RUN_TARGETS := $(addprefix fuzz-run-,$(FUZZ_NAMES))
.PHONY: $(FUZZ_RUN_TARGETS)
fuzz-run:
	@sh scripts/install-deps.sh
	$(MAKE) fuzz-targets
	@echo "== fuzzing $(words $(FUZZ_NAMES)) targets for $(FUZZ_SECONDS) s each," \
	    "$(FUZZ_JOBS) at a time"
	@$(MAKE) --no-print-directory -k -j$(FUZZ_JOBS) --output-sync=target \
	    $(FUZZ_RUN_TARGETS); rc=$$?; \
	echo "== fuzz: every target's summary"; \
	for t in $(FUZZ_NAMES); do \
	    grep -h '^fuzz-summary:' $(FUZZ_B)/$$t.run.out 2>/dev/null || \
	        echo "fuzz-summary: $$t run: no summary (see above)"; \
	done; exit $$rc
$(FUZZ_RUN_TARGETS): fuzz-run-%:
	@rm -f $(FUZZ_B)/$*.run.out $(FUZZ_B)/$*.run.rc
	@{ sh tests/fuzz/run.sh run $* $(FUZZ_SECONDS); echo $$? > $(FUZZ_B)/$*.run.rc; } | \
	    tee $(FUZZ_B)/$*.run.out; \
	exit $$(cat $(FUZZ_B)/$*.run.rc)

CHECK_EXTRA += fuzz-check
FUZZ_EXTRA += fuzz-run
