# mk/gpulinux.mk - the Linux GPU sources' libFuzzer target (clang):
# `make fuzz-linux` builds $(FUZZ_BUILD)/fuzz/fuzz_linux (the DRM fdinfo
# and tracefs line parsers); run it with e.g.
# build-fuzz/fuzz/fuzz_linux -max_total_time=60 tests/data/linux/fdinfo

FUZZ_BUILD ?= build-fuzz
FUZZ_CC ?= clang
LINUX_FUZZ_SRCS = src/backend/linux/fdinfo.c src/backend/linux/tracefs_parse.c

.PHONY: fuzz-linux
fuzz-linux: $(FUZZ_BUILD)/fuzz/fuzz_linux

$(FUZZ_BUILD)/fuzz/fuzz_linux: tests/fuzz/fuzz_linux.c $(LINUX_FUZZ_SRCS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  FUZZLD  $@")
	$(Q)$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 $(WARN) -Iinclude -Isrc \
	  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -o $@ $^
