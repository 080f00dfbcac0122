# A kernel without epoll_pwait2 (Linux before 5.11; docs/debugging.md, "Older kernels"):
# `make check-old-kernel` (part of make check) runs the aio suite and the IO suites of
# the assembly test binary under build/without-pwait2, which installs a seccomp filter
# that answers epoll_pwait2 ENOSYS and then runs the binary (tests/oldkernel/): every VM
# then waits with epoll_wait (vm/aio.c). `build/without-pwait2 PROGRAM ARGS...` runs any
# program so.

OLD_KERNEL_SUITES ?= aio socket socket_plugin fd_wait host_loop zn_log timed_wait delay
old_kernel_empty :=
old_kernel_space := $(old_kernel_empty) $(old_kernel_empty)

$(B)/without-pwait2: tests/oldkernel/without_pwait2.c tests/oldkernel/no_pwait2.h
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(OPT) -D_GNU_SOURCE $< -o $@

.PHONY: check-old-kernel
check-old-kernel: $(B)/without-pwait2 $(B)/asm/stvm-tests
	@echo "== tests without epoll_pwait2 (seccomp answers ENOSYS): $(OLD_KERNEL_SUITES)"
	@$(B)/without-pwait2 $(B)/asm/stvm-tests --jobs 2 \
	    --filter '@($(subst $(old_kernel_space),|,$(strip $(OLD_KERNEL_SUITES))))/*'

CHECK_EXTRA += check-old-kernel
