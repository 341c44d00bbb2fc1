# mk/bench.mk - what the benches need beyond their own programs, and
# `make bench-instructions`.
#
# `make bench` builds every program a bench runs: the CLI (bench/tp,
# writer, vulkan, producer, tp_hostile run build/gpuperf), tests/stat_app
# (bench/hud) and tests/programs/perfetto_peer (bench/producer), so that
# each bench runs from a clean clone after `make -j2 && make bench`.
#
# `make bench-instructions` counts instructions per record and per enqueue
# with callgrind (scripts/bench-instructions.sh): the figures a loaded
# machine does not disturb.

# (Paths spelled out: this file is read before counters.mk and writer.mk.)
bench: $(CLI) $(BUILD)/tests/stat_app $(BUILD)/tests/programs/perfetto_peer

.PHONY: bench-instructions
bench-instructions: $(BUILD)/bench/activity $(BUILD)/bench/opencl
	scripts/bench-instructions.sh $(BUILD)
