# Model-based random testing of the scheduler (tests/test_model.c, tests/model/*.h).
#
# The lock-step tests are Criterion suite `model`, so make check runs them in all three
# test binaries (asm, ucontext, ASan+UBSan): STVM_MODEL_OPS operations per binary,
# 4,000,000 by default. `make soak-model` runs 100,000,000 operations (SOAK_MODEL_OPS)
# over fresh seeds on both back ends, in chunks on two jobs at a time.

# The objects of tests/test_model.c carry the model's headers as dependencies (-MMD), so
# an edit there recompiles that file alone and relinks.

SOAK_MODEL_OPS ?= 100000000
SOAK_MODEL_CHUNKS ?= 20
SOAK_MODEL_JOBS ?= 2

.PHONY: soak-model
soak-model: $(B)/asm/stvm-tests $(B)/uctx/stvm-tests
	@echo "== model soak: $(SOAK_MODEL_OPS) operations, both back ends, $(SOAK_MODEL_JOBS) jobs"
	@sh scripts/soak-model.sh $(SOAK_MODEL_OPS) $(SOAK_MODEL_CHUNKS) $(SOAK_MODEL_JOBS) \
	    $(B)/asm/stvm-tests $(B)/uctx/stvm-tests

SOAK_EXTRA += soak-model
