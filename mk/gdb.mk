# gdb (docs/debugging.md, "gdb"): `make gdb-check` (part of make check) runs
# examples/deadlock, which deadlocks on purpose, alone (its exit status 3 and its blocked
# report) and under gdb in batch mode with the extension scripts/gdb/stvm-gdb.py, live
# and on its core file (the kernel's, or stvm-gcore's where the machine's core_pattern
# sends cores elsewhere), with the assembly and the ucontext back end
# (scripts/gdb-check.sh): the listing must name each process and what it waits on,
# stvm-bt of a blocked process must reach its entry function and leave the frame and
# registers as they were. About 10 s. Needs Debian's gdb (scripts/install-deps.sh).
#
# The deadlock example exits 3 by design, so make check's loop over the examples leaves
# it to this check (EXAMPLES_OWN_CHECK).

EXAMPLES_OWN_CHECK += $(B)/examples/deadlock

# The example linked with the ucontext back end (the example's object is the same).
$(B)/uctx/examples/deadlock: $(B)/obj/examples/deadlock.o $(B)/uctx/libstvm.a
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $(filter %.o %.a,$^) $(LDLIBS) -o $@

.PHONY: gdb-check
gdb-check: $(B)/examples/deadlock $(B)/uctx/examples/deadlock
	@echo "== gdb: the extension on examples/deadlock, live and on its core file, both back ends"
	@sh scripts/gdb-check.sh $(B)/examples/deadlock $(B)/uctx/examples/deadlock

CHECK_EXTRA += gdb-check
