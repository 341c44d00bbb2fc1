# mk/tsan.mk - `make test-tsan`: the threaded tests under ThreadSanitizer
# (build-tsan/). The activity buffers, the clock's sequence lock, the
# string table and the OpenCL wrappers (the program's threads, the
# driver's callbacks and our reaper) are written by several threads at
# once; TSan checks that every such access is ordered (C11 atomics or
# locks). TSAN_TESTS names them (harness patterns).

# (activity_fork_child_starts_afresh is left out: TSan cannot start
# threads after a fork of a threaded process.)
# The record_* tests run recorded programs built with TSan too (their
# collector, flushes and death handlers); so do the producer_* tests (the
# producer's reader thread, the collector and the program's threads).
TSAN_TESTS ?= 'activity_[a-e]*' 'activity_[g-z]*' 'activity_four_*' \
              'clock_*' 'strings_*' 'opencl_*' 'markers_*' 'session_*' \
              'callback_*' \
              'record_sim*' 'record_sigkill*' 'record_killed*' \
              'record_children*' 'producer_[d-z]*' 'lifetime_*'

ifneq ($(TSAN),)
BASE_CFLAGS += -fsanitize=thread -fno-omit-frame-pointer
SAN_LDFLAGS += -fsanitize=thread
endif

# The live side of `gpuperf top`: its publishing thread, the collector's
# observer and the readers of its region.
TSAN_TESTS += 'live_*'

.PHONY: test-tsan
test-tsan:
	$(MAKE) BUILD=build-tsan TSAN=1 OPT=-O1 all tests
	TSAN_OPTIONS="halt_on_error=1 exitcode=66 $(TSAN_OPTIONS)" \
	  GPUPERF_CLI=$(abspath build-tsan/gpuperf) GPUPERF_SHARED=$(SHARED) \
	  GPUPERF_BUILD=$(abspath build-tsan) build-tsan/tests/gpuperf-tests \
	  $(TSAN_TESTS)
