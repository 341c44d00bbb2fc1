# mk/writer.mk - build steps of the trace writer's area: helper programs
# the tests run (build/tests/programs/), built with `make tests`.
#
#   sim_app    drives the simulated GPUs; linked with the shared library, so
#              that `gpuperf record` can record it (the library's
#              constructor starts the session)
#   tracedump  prints a trace with gpuperf's decoder (static library)
#   perfetto_peer  the service side of Perfetto's producer protocol

WRITER_PROGS = $(BUILD)/tests/programs/sim_app $(BUILD)/tests/programs/tracedump \
               $(BUILD)/tests/programs/perfetto_peer

tests: $(WRITER_PROGS)
test: $(WRITER_PROGS)

$(BUILD)/tests/programs/sim_app: $(BUILD)/obj/tests/programs/sim_app.o $(SHARED_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< -L$(BUILD) -lgpuperf \
	  -Wl,-rpath,'$$ORIGIN/../..' $(LDLIBS_LIB)

$(BUILD)/tests/programs/tracedump: $(BUILD)/obj/tests/programs/tracedump.o $(STATIC_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(STATIC_LIB) $(LDLIBS_LIB)

# The service side of Perfetto's producer protocol (tests of the producer).
$(BUILD)/tests/programs/perfetto_peer: $(BUILD)/obj/tests/programs/perfetto_peer.o $(STATIC_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(STATIC_LIB) $(LDLIBS_LIB)

-include $(BUILD)/obj/tests/programs/sim_app.d $(BUILD)/obj/tests/programs/tracedump.d

# libFuzzer targets (clang): $(BUILD)/fuzz/fuzz_tconfig, fuzz_tracedump,
# fuzz_ipc (the frames a tracing service sends a producer; its corpus is
# tests/fuzz/corpus/ipc, replayed by the normal suite) and fuzz_merge (two
# traces merged and re-timed; tests/fuzz/fuzz_merge.c) and fuzz_salvage (a
# killed process's death page salvaged; tests/fuzz/fuzz_salvage.c),
# built by `make fuzz-writer` (not by `all`: they need clang).
# Run one with e.g. build/fuzz/fuzz_tconfig -max_total_time=60.
# (Its own variable: FUZZ_BUILD belongs to the importer's fuzzer, mk/tp.mk.)
WRITER_FUZZ_BUILD = $(BUILD)
FUZZ_FLAGS = -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
             -fno-sanitize-recover=undefined -Iinclude -Isrc
WRITER_FUZZ_SRCS = $(foreach d,src/core src/session src/counters src/backend/sim \
                     src/backend/linux src/perfetto,$(wildcard $(d)/*.c))

.PHONY: fuzz-writer
fuzz-writer: $(WRITER_FUZZ_BUILD)/fuzz/fuzz_tconfig \
             $(WRITER_FUZZ_BUILD)/fuzz/fuzz_tracedump \
             $(WRITER_FUZZ_BUILD)/fuzz/fuzz_ipc \
             $(WRITER_FUZZ_BUILD)/fuzz/fuzz_merge \
             $(WRITER_FUZZ_BUILD)/fuzz/fuzz_salvage

$(WRITER_FUZZ_BUILD)/fuzz/%: tests/fuzz/%.c $(WRITER_FUZZ_SRCS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang $(FUZZ_FLAGS) -Itests/fuzz -o $@ $< $(WRITER_FUZZ_SRCS) -lpthread -lm
