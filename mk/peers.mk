# The peers experiment (experiments/peers/README.md): the DelayBenchmark workload in Go,
# libuv and Erlang, built into build/peers/ and run by experiments/peers/run.py right
# after stvm's on the same pinned core. make bench-peers installs the peers' packages
# first (scripts/install-deps.sh --peers: golang-go, erlang-nox, libuv1-dev), which
# nothing else installs, and leaves build/peers.json (the measurements) and
# build/peers.md (the report); make check neither builds nor runs the peers (its
# experiments-check runs run.py without them), so nothing here is added to CHECK_EXTRA.
.PHONY: bench-peers peers peers-setup
PEERS_DIR := $(B)/peers
PEERS := $(PEERS_DIR)/delay-go $(PEERS_DIR)/delay-uv $(PEERS_DIR)/delay_peer.beam
# What make bench-peers runs: N = 10,000 (the seed's concurrency) and beyond saturation.
PEERS_ARGS ?= --cpu 0 --concurrency 10000,100000,150000 --repeat 3

peers-setup:
	@sh scripts/install-deps.sh --peers

peers: $(PEERS)

# Go's build cache under build/, so a build leaves nothing in the user's home.
$(PEERS_DIR)/delay-go: experiments/peers/delay.go
	@mkdir -p $(dir $@)
	cd experiments/peers && GOCACHE=$(abspath $(B))/go-cache GO111MODULE=off go build -o $(abspath $@) delay.go

$(PEERS_DIR)/delay-uv: experiments/peers/delay_uv.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(OPT) -D_GNU_SOURCE $(UV_CFLAGS) $< $(UV_LIBS) -o $@

$(PEERS_DIR)/delay_peer.beam: experiments/peers/delay_peer.erl
	@mkdir -p $(dir $@)
	erlc +warnings_as_errors -o $(PEERS_DIR) $<

bench-peers: peers-setup
	$(MAKE) $(B)/stvm-bench peers
	python3 experiments/peers/run.py --bench $(B)/stvm-bench --peers-dir $(PEERS_DIR) \
	    $(PEERS_ARGS) --out $(B)/peers.json --report $(B)/peers.md
