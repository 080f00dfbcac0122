# What tracing costs (docs/scheduler.md, "What it costs"), measured side by side.
#
# The library is built a further time with its event points compiled out
# (-DSTVM_TRACE_POINTS=0: vm/trace.h; build/notrace/), and stvm-bench is linked against
# it: the tree that "compiled in but off" is measured against.
#
#   make bench-trace-cost [TRACE_COST_RUNS=11]   off against compiled out (CPU, and
#                             callgrind's instructions when valgrind is installed), and
#                             on against off per event recorded, with the targets
#                             (scripts/trace-cost.sh; a few minutes)
#   make trace-cost-check     (part of make check) builds both and runs one short cell
#                             of each, and checks that the compiled-out build refuses
#                             to trace (its stvm_trace_start answers STVM_ESTATE)

TRACE_COST_RUNS ?= 11

$(eval $(call variant,notrace,-DSTVM_TRACE_POINTS=0))

# The tool's objects are the same as build/stvm-bench's (BENCH_OBJ): only the library
# under them differs.
$(B)/notrace/stvm-bench: $(BENCH_OBJ) $(B)/notrace/libstvm.a
	$(CC) $(OPT) $(filter %.o %.a,$^) $(LDLIBS) -o $@

.PHONY: bench-trace-cost trace-cost-check
bench-trace-cost: $(B)/stvm-bench $(B)/notrace/stvm-bench
	sh scripts/trace-cost.sh $(B)/stvm-bench $(B)/notrace/stvm-bench $(TRACE_COST_RUNS)

trace-cost-check: $(B)/stvm-bench $(B)/notrace/stvm-bench
	@echo "== trace-cost: both builds run a cell; the one without event points cannot trace"
	@TRACE_COST_WINDOW_MS=50 TRACE_COST_CALLGRIND=0 \
	    sh scripts/trace-cost.sh $(B)/stvm-bench $(B)/notrace/stvm-bench 1 > $(B)/trace-cost-check.log
	@if $(B)/notrace/stvm-bench delay --clock sim --concurrency 10 --window-ms 10 \
	        --repr us-smallint61 --trace $(B)/notrace-trace.json > /dev/null 2>&1; then \
	    echo "trace-cost-check: the build without event points accepted --trace"; exit 1; fi
	@echo "trace-cost-check: passed"

CHECK_EXTRA += trace-cost-check
