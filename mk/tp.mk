# mk/tp.mk - build steps of the trace processor (src/tp, tests/tp, fuzz).
#
# The trace processor links SQLite and zlib; the importer and the report
# layer have libFuzzer targets (clang only): `make fuzz` builds
# build-fuzz/fuzz-importer and build-fuzz/fuzz-report, and `make fuzz-run
# FUZZ_SECONDS=60 [FUZZ_TARGET=report]` runs one over
# tests/fuzz/corpus/importer with tests/fuzz/importer.dict (field tags,
# extreme varints), writing new inputs to build-fuzz/fuzz-corpus-TARGET.

LDLIBS_LIB += -lsqlite3 -lz

# --- libFuzzer target for the importer (clang) -------------------------
FUZZ_BUILD ?= build-fuzz
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined \
           -fno-omit-frame-pointer
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -g -O1 $(WARN) -Iinclude -Isrc \
              $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_SRCS = $(wildcard src/tp/*.c) src/perfetto/pb.c src/core/error.c
FUZZ_OBJS = $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,$(FUZZ_SRCS))
FUZZ_BIN = $(FUZZ_BUILD)/fuzz-importer
# The report layer's target reads the same corpus (traces).
FUZZ_REPORT_OBJS = $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,$(wildcard src/report/*.c))
FUZZ_REPORT_BIN = $(FUZZ_BUILD)/fuzz-report
FUZZ_TARGET ?= importer

.PHONY: fuzz fuzz-run

fuzz: $(FUZZ_BIN) $(FUZZ_REPORT_BIN)

$(FUZZ_BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_BIN): tests/fuzz/fuzz_importer.c $(FUZZ_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  FUZZLD  $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS_LIB)

$(FUZZ_REPORT_BIN): tests/fuzz/fuzz_report.c $(FUZZ_OBJS) $(FUZZ_REPORT_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  FUZZLD  $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS_LIB) -lm

# Runs a fuzzer (FUZZ_TARGET=importer, the default, or report) over the
# committed corpus; new interesting inputs land in
# $(FUZZ_BUILD)/fuzz-corpus-$(FUZZ_TARGET) (libFuzzer writes into its
# first corpus directory), not in the repository: merge the ones worth
# keeping into tests/fuzz/corpus/importer with -merge=1 by hand.
fuzz-run: $(FUZZ_BUILD)/fuzz-$(FUZZ_TARGET)
	@mkdir -p $(FUZZ_BUILD)/fuzz-corpus-$(FUZZ_TARGET)
	$(FUZZ_BUILD)/fuzz-$(FUZZ_TARGET) -max_total_time=$(FUZZ_SECONDS) \
	  -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	  -dict=tests/fuzz/importer.dict \
	  $(FUZZ_BUILD)/fuzz-corpus-$(FUZZ_TARGET) tests/fuzz/corpus/importer

-include $(FUZZ_OBJS:.o=.d) $(FUZZ_REPORT_OBJS:.o=.d)

# The fuzz corpus' seed traces (tests/fuzz/make_seeds.c).
.PHONY: fuzz-seeds
fuzz-seeds: $(STATIC_LIB)
	@mkdir -p $(BUILD)/fuzz
	$(Q)$(CC) $(ALL_CFLAGS) -o $(BUILD)/fuzz/make-seeds tests/fuzz/make_seeds.c \
	  $(STATIC_LIB) $(LDLIBS_LIB)
	$(BUILD)/fuzz/make-seeds tests/fuzz/corpus/importer
