# The examples under load for a long time (scripts/soak.sh; docs/reliability.md, "Soak"):
# the libuv-hosted HTTP server under wrk and a queue example fed by threads, both for
# SOAK_SECONDS (600), sampled every 30 s into build/soak.csv; fails on any error and on
# growth of memory or descriptors beyond noise (the rule is in the script). Part of make
# soak, not of make check. SOAK_QUEUE_EXAMPLE names the queue example: any example that
# takes `--soak SECONDS` and prints "soak: items=N" as it goes (thread_pool does).

SOAK_SECONDS ?= 600
SOAK_QUEUE_EXAMPLE ?= $(B)/examples/thread_pool

.PHONY: soak-examples
soak-examples: $(B)/examples/libuv_host $(SOAK_QUEUE_EXAMPLE)
	@sh scripts/soak.sh $(B)/examples/libuv_host $(SOAK_QUEUE_EXAMPLE) $(SOAK_SECONDS)

SOAK_EXTRA += soak-examples
