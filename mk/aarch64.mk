# aarch64: the library and a test binary cross-built for aarch64 and run under
# qemu-user, on this x86-64 machine (docs/scheduler.md, "Back ends").
#
#   make check-aarch64   (part of make check) builds build/aarch64/libstvm.a (with
#                        scheduler/switch_aarch64.S) and build/aarch64/stvm-tests with
#                        $(AARCH64_CC), then runs the suites of AARCH64_SUITES under
#                        $(QEMU_AARCH64) (scripts/check-aarch64.sh), and prints
#                        "check-aarch64: N suites, T tests, all passed in S s".
#
# Needs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, qemu-user and the arm64 builds of
# libffi-dev, libuv1-dev and libgit2-1.5 (Debian multiarch; scripts/install-deps.sh
# adds the arm64 architecture and installs them). The arm64 Criterion cannot be
# installed beside the amd64 one (libnanomsg5's versions differ between the two
# architectures on Debian 12): scripts/aarch64-criterion.sh downloads its two packages
# and unpacks them into $(A64_B)/criterion/, and the test binary finds them there by
# its rpath (A64_CRIT_LIB; DT_RPATH, not RUNPATH, so that libcriterion's own
# libnanomsg.so.5 is found there too). The arm64 libc6 puts the aarch64 dynamic loader in /lib, so
# qemu needs no -L prefix. Criterion's per-test execve of the test binary goes through
# qemu by tests/qemu/execve.c (the machine has no binfmt_misc entry for aarch64, and
# the project does not make one).
#
# Budget: make check is near CI's 15 minutes on 2 cores, and this target gets about 90
# s of it, build included. So the test binary holds the suites that exercise what
# differs on aarch64 and nothing else: the switch, its first frame, the back end's name
# and the raw switch measurement (vm; every test switches), stacks (stack), overflow
# detection (stack_guard), semaphores (semaphore), mutexes (mutex), Delays (delay), timed waits
# (timed_wait), external signals from other threads (external, threads, the threads
# with 8 signalling threads against the VM), the FFI's callouts and callbacks, threaded
# ones included (ffi, ffi_threads). Left out:
#  - every other suite (process and the Pharo suites among them): they test the
#    scheduler's and the image stubs' logic, which is the same C on both machines and
#    runs on x86-64 in three builds (asm, ucontext, ASan+UBSan) and under
#    ThreadSanitizer; under qemu each test costs a qemu start-up (about 0.2 s) and
#    runs several times slower;
#  - threads/signals_from_eight_threads_wake_a_vm_asleep_in_its_idle_process: it waits
#    until /proc/self/task/TID/syscall shows the VM's thread in epoll_pwait2 or ppoll,
#    and under qemu-user that file shows qemu's own host (x86-64) system calls, never
#    the guest's, so it waits out its timeout;
#  - ffi_threads/vm_free_detaches_a_worker_still_in_a_call_after_five_seconds: its
#    forked child starts a thread (the FFI worker), and qemu 7.2 aborts on assertions
#    of its own (plugins/core.c qemu_plugin_vcpu_init_hook, accel/tcg/cpu-exec.c
#    cpu_exec) when the child of a fork made while another thread was alive creates a
#    thread: a ten-line program that does only that aborts the same way. A qemu
#    fault, not the library's.

AARCH64_CC ?= aarch64-linux-gnu-gcc
QEMU_AARCH64 ?= qemu-aarch64
AARCH64_JOBS ?= 2
A64_B := $(B)/aarch64
AARCH64_SUITES := vm stack stack_guard semaphore mutex delay timed_wait external threads \
    ffi ffi_threads
AARCH64_LEFT_OUT := threads/signals_from_eight_threads_wake_a_vm_asleep_in_its_idle_process \
    ffi_threads/vm_free_detaches_a_worker_still_in_a_call_after_five_seconds
A64_TEST_SRC := $(addprefix tests/,test_vm.c test_stack.c test_stack_guard.c test_semaphore.c \
    test_mutex.c test_delay.c test_timed_wait.c test_external.c test_threads.c test_ffi.c \
    test_ffi_threads.c qemu/execve.c)
A64_OBJ := $(patsubst %.c,$(A64_B)/obj/%.o,$(LIB_SRC)) $(A64_B)/obj/scheduler/switch_aarch64.o
A64_TEST_OBJ := $(patsubst %.c,$(A64_B)/tobj/%.o,$(A64_TEST_SRC))

$(A64_B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(CFLAGS_LIB) $(DEPFLAGS) -c $< -o $@
$(A64_B)/obj/%.o: %.S
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(CFLAGS_LIB) $(DEPFLAGS) -c $< -o $@
$(A64_B)/tobj/%.o: %.c
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(TEST_CFLAGS) $(DEPFLAGS) -c $< -o $@
-include $(A64_OBJ:.o=.d) $(A64_TEST_OBJ:.o=.d)
$(A64_B)/libstvm.a: $(A64_OBJ)
	rm -f $@ && ar rcs $@ $^
A64_CRIT_LIB = $(abspath $(A64_B)/criterion/usr/lib/aarch64-linux-gnu)
$(A64_B)/criterion/.unpacked: scripts/aarch64-criterion.sh
	@sh scripts/aarch64-criterion.sh $(A64_B)/criterion && touch $@
$(A64_B)/stvm-tests: $(A64_TEST_OBJ) $(A64_B)/libstvm.a $(A64_B)/criterion/.unpacked
	$(AARCH64_CC) $(OPT) $(filter %.o %.a,$^) -L$(A64_CRIT_LIB) -Wl,--disable-new-dtags,-rpath,$(A64_CRIT_LIB) \
	    -l:libcriterion.so.3 $(LDLIBS) -o $@

.PHONY: check-aarch64 aarch64-tools
aarch64-tools:
	@for t in $(AARCH64_CC) $(QEMU_AARCH64); do command -v $$t > /dev/null || { \
	    echo "check-aarch64: $$t not found (make setup installs it: scripts/install-deps.sh)"; \
	    exit 1; }; done

check-aarch64: aarch64-tools
	@echo "== tests: aarch64 back end under $(QEMU_AARCH64) (suites: $(AARCH64_SUITES))"
	@start=$$(date +%s.%N) && \
	    $(MAKE) --no-print-directory -s -j$(AARCH64_JOBS) $(A64_B)/stvm-tests && \
	    sh scripts/check-aarch64.sh $(A64_B)/stvm-tests "$(QEMU_AARCH64)" $(AARCH64_JOBS) \
	        "$(AARCH64_SUITES)" "$(AARCH64_LEFT_OUT)" $$start

CHECK_EXTRA += check-aarch64

# Instructions per semaphore hand-off and per raw switch on both back ends
# (docs/scheduler.md, "Back ends"): tests/qemu/switch_count.c, linked statically so that
# no dynamic loading is counted, and scripts/switch-count.sh, which counts each run
# twice (N and 2N operations) and prints the difference over N. Not part of make check.
$(A64_B)/switch-count: tests/qemu/switch_count.c $(A64_B)/libstvm.a
	$(AARCH64_CC) $(TEST_CFLAGS) -static $^ $(LDLIBS) -o $@
$(B)/switch-count: tests/qemu/switch_count.c $(B)/asm/libstvm.a
	$(CC) $(TEST_CFLAGS) -static $^ $(LDLIBS) -o $@

.PHONY: switch-count
switch-count: aarch64-tools $(B)/switch-count $(A64_B)/switch-count
	@sh scripts/switch-count.sh $(B)/switch-count $(A64_B)/switch-count
