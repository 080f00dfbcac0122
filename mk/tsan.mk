# ThreadSanitizer: the library and the test binary built with -fsanitize=thread
# (build/tsan/), and `make tsan-check` (part of make check), which runs the
# cross-thread suites in it and fails on any report. Each green process is a TSan
# fiber (scheduler/context.c), so a switch is a hand-off between fibers and only
# accesses between OS threads can race.
#
# Compiler: $(CC), as for the other variants (gcc 12 on Debian, whose libtsan2 comes
# with build-essential; clang 14 works as well). tests/tsan/criterion_arena.c lets
# Criterion's sandbox start under TSan (see there).
#
# TSAN_SUITES names the Criterion suites that run: threads (tests/test_threads.c),
# external (signals from other threads and a handler) and vm (two VMs on two
# threads), run_modes (stvm_stop and the backend descriptor from other threads) and
# fd_wait (descriptors written by other threads), ffi_threads, socket_names (host
# names looked up on the VM's worker threads), and stop (a thousand stops from another
# thread; its signal-handler half is left out here, see tests/test_stop.c). A cross-thread test goes into one of them, or its suite is added
# here.
# The binary holds every suite: `build/tsan/stvm-tests --filter 'mutex/*'` runs others.
TSAN_SUITES ?= threads external vm run_modes fd_wait ffi_threads stop queue_threads \
               socket_names

# Criterion's per-test timeouts (SIGPROF) may never fire under TSan: TSan holds a
# signal that lands outside a blocking call until the receiving fiber or thread next
# enters libc. This bounds the whole run instead (it takes about 20 s).
TSAN_TIME_LIMIT ?= 600

tsan_empty :=
tsan_space := $(tsan_empty) $(tsan_empty)
# The suites of TESTS_ALONE (the Makefile: stop judges in real time how soon a stop ends
# a run) run after the others, by themselves: beside the threads suite's load on CI's two
# cores, two stops in a thousand once took 502 ms under TSan.
TSAN_SHARED = $(filter-out $(TESTS_ALONE),$(TSAN_SUITES))
TSAN_ALONE = $(filter $(TESTS_ALONE),$(TSAN_SUITES))
tsan_filter = @($(subst $(tsan_space),|,$(strip $(1))))/*
TSAN_FILTER = $(call tsan_filter,$(TSAN_SUITES))

$(eval $(call variant,tsan,-fsanitize=thread,tests/tsan/criterion_arena.c))

.PHONY: tsan-check
tsan-check: $(B)/tsan/stvm-tests
	@echo "== tests under ThreadSanitizer: $(TSAN_FILTER) (any report fails)"
	@start=$$(date +%s); \
	timeout -k 10 $(TSAN_TIME_LIMIT) sh -c \
	    "sh scripts/run-sanitized.sh $(B)/tsan/stvm-tests --jobs 2 --filter '$(call tsan_filter,$(TSAN_SHARED))' $(if $(TSAN_ALONE),&& sh scripts/run-sanitized.sh $(B)/tsan/stvm-tests --jobs 1 --filter '$(call tsan_filter,$(TSAN_ALONE))')" || \
	    { echo "tsan-check: failed (or ran past $(TSAN_TIME_LIMIT) s)"; exit 1; }; \
	echo "tsan-check: passed in $$(( $$(date +%s) - start )) s"

CHECK_EXTRA += tsan-check
