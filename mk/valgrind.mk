# valgrind (docs/debugging.md, "Running under valgrind"): `make valgrind-check` (part of
# make check) runs every example under memcheck with its default options
# (--leak-check=full, --error-exitcode=1: any error or leak fails), then
# examples/libuv_host as a TCP server under memcheck answering curl
# (scripts/valgrind-examples.sh). About 10 s: each example runs in under 1 s under
# memcheck, so none is left out.
#
# The library registers every green process's stack with valgrind (vm/valgrind.h):
# without that, memcheck counted millions of false errors per example. Needs Debian's
# valgrind package (its <valgrind/valgrind.h> at build time, valgrind to run;
# scripts/install-deps.sh installs it).

.PHONY: valgrind-check
valgrind-check: examples
	@echo "== examples under valgrind memcheck (default options; any error fails)"
	@sh scripts/valgrind-examples.sh $(B)/examples

CHECK_EXTRA += valgrind-check
