# The two-build ABI check (include/README.md, "Structs that grow"): a program compiled
# against an older stvm.h (this tree's, each public struct's newest fields cut off) runs
# with the shared library built here, which must fill its smaller structs and never
# write past them (scripts/abi-old-header.sh; part of make check).
.PHONY: abi-check
abi-check: $(B)/libstvm.so
	@sh scripts/abi-old-header.sh $(B)

CHECK_EXTRA += abi-check
