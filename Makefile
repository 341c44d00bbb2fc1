# gpuperf - GNU Makefile
#
#   make            library (static + shared) and the gpuperf CLI
#   make demo       run the simulated-GPU demo (the main job)
#   make test       build and run the unit and API tests
#   make test-asan  the same under AddressSanitizer + UBSan
#   make ubsan-corpus  every CLI entry point over the fuzz corpus under
#                   ASan + UBSan (scripts/ubsan-corpus.sh)
#   make check-layers  no lower layer includes or calls a higher one
#                   (docs/architecture.md)
#   make test-tsan  the threaded tests under ThreadSanitizer (mk/tsan.mk)
#   make bench      build the benchmarks (bench/*)
#   make install PREFIX=/usr/local
#
# Build outputs go to $(BUILD) (default build/). Missing Debian packages are
# installed by scripts/install-deps.sh the first time (as root), or the
# exact apt-get line is printed.

BUILD ?= build
PREFIX ?= /usr/local

SAN ?=
OPT ?= -O2

# Quiet by default; make V=1 shows the commands.
ifeq ($(V),1)
Q =
else
Q = @
endif

WARN = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
       -Wno-unused-parameter
BASE_CFLAGS = -std=c11 -D_GNU_SOURCE -g $(OPT) $(WARN) -fPIC -fvisibility=hidden \
              -Iinclude -Isrc
ifneq ($(SAN),)
BASE_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer \
               -fno-sanitize-recover=undefined
SAN_LDFLAGS = -fsanitize=address,undefined
endif
ALL_CFLAGS = $(BASE_CFLAGS) $(CFLAGS)
LDLIBS_LIB = -lpthread -lm
# The CLI alone: libcurl for the ClickHouse export's HTTP(S), libcrypto for
# its content-hash trace names.
LDLIBS_CLI = -lcurl -lcrypto
ALL_LDFLAGS = $(SAN_LDFLAGS) $(LDFLAGS)

# Library sources: every .c of each subsystem directory.
LIB_DIRS = src/core src/session src/counters src/backend/sim src/backend/linux src/perfetto src/tp \
           src/report
LIB_SRCS = $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c))
LIB_OBJS = $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))

CLI_SRCS = $(wildcard tools/gpuperf/*.c)
CLI_OBJS = $(patsubst %.c,$(BUILD)/obj/%.o,$(CLI_SRCS))

TEST_SRCS = $(wildcard tests/*.c tests/unit/*.c tests/api/*.c tests/tp/*.c)
TEST_OBJS = $(patsubst %.c,$(BUILD)/obj/%.o,$(TEST_SRCS))

BENCH_SRCS = $(wildcard bench/*.c)

# Where the shared reference data and conformance cases live.
SHARED ?= $(abspath ../shared)
BENCH_BINS = $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

STATIC_LIB = $(BUILD)/libgpuperf.a
SHARED_LIB = $(BUILD)/libgpuperf.so
SONAME = libgpuperf.so.0
CLI = $(BUILD)/gpuperf
TEST_BIN = $(BUILD)/tests/gpuperf-tests
DEPS_STAMP = $(BUILD)/.deps.mk

.PHONY: all lib tests demo test test-python test-asan ubsan-corpus bench install uninstall clean deps \
        format check-format check-layers

# Keep objects of programs built by pattern rules.
.SECONDARY:

all: $(STATIC_LIB) $(SHARED_LIB) $(CLI)

lib: $(STATIC_LIB) $(SHARED_LIB)

tests: $(TEST_BIN)

# Debian packages: checked once per build directory, before anything is
# decided. The stamp is a makefile that this one includes, so make brings
# it up to date first (running install-deps.sh) and then reads every
# makefile again: what mk/*.mk look for when they are read (the Vulkan
# headers, glslang, lttng-ust) is then what install-deps.sh installed,
# and the first `make` on a fresh machine builds everything. Goals that
# build nothing install nothing.
NODEPS_GOALS = clean format check-format deps uninstall
ifneq ($(filter-out $(NODEPS_GOALS),$(or $(MAKECMDGOALS),all)),)
include $(DEPS_STAMP)
endif
$(DEPS_STAMP): scripts/install-deps.sh
	@scripts/install-deps.sh
	@mkdir -p $(@D) && echo "# scripts/install-deps.sh found every package" > $@

deps:
	@scripts/install-deps.sh

$(BUILD)/obj/tests/%.o: ALL_CFLAGS += -Itests

$(BUILD)/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(STATIC_LIB): $(LIB_OBJS)
	@mkdir -p $(@D)
	@rm -f $@
	@$(if $(Q),echo "  AR      $@")
	$(Q)ar rcs $@ $^

$(SHARED_LIB): $(LIB_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined $(ALL_LDFLAGS) \
	  -o $@ $^ $(LDLIBS_LIB)
	@ln -sf libgpuperf.so $(BUILD)/$(SONAME)

# The CLI uses the public API only, from the shared library.
$(CLI): $(CLI_OBJS) $(SHARED_LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJS) -L$(BUILD) -lgpuperf \
	  -Wl,-rpath,'$$ORIGIN:$$ORIGIN/../lib' $(LDLIBS_CLI) $(LDLIBS_LIB)

# Tests reach internals too, so they link the static library.
$(TEST_BIN): $(TEST_OBJS) $(STATIC_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(TEST_OBJS) $(STATIC_LIB) $(LDLIBS_LIB)

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(STATIC_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(STATIC_LIB) $(LDLIBS_LIB)

# Everything `make` builds, so that the machine records OpenCL and Vulkan
# programs too after its first `make demo`.
demo: all
	$(CLI) demo

# The C suite's output is kept (tee, its status through a file: sh has no
# pipefail) so that the closing line can count both suites.
test: $(TEST_BIN) $(CLI) check-layers
	@rm -f $(BUILD)/test-c.status
	( GPUPERF_CLI=$(abspath $(CLI)) GPUPERF_SHARED=$(SHARED) \
	  GPUPERF_BUILD=$(abspath $(BUILD)) $(TEST_BIN) $(TESTFLAGS); \
	  echo $$? > $(BUILD)/test-c.status ) | tee $(BUILD)/test-c.log
	@exit $$(cat $(BUILD)/test-c.status)
ifeq ($(SAN),)
	@$(MAKE) --no-print-directory test-python
	@echo "make test: C $$(sed -n 's/^\([0-9]* passed, .*\) (.*s)$$/\1/p' \
	  $(BUILD)/test-c.log | tail -n 1); Python $$(tail -n 1 \
	  $(BUILD)/test-python.log | sed 's/ in [0-9.]*s.*$$//')"
endif

# The Python package (python/) with Debian's pytest, against this build.
# Not under a sanitizer: the interpreter cannot load an instrumented
# library. Its closing line (and `make test`'s) counts the Python tests.
PYTHON ?= /usr/bin/python3
test-python: $(SHARED_LIB) $(CLI)
	@rm -f $(BUILD)/test-python.status
	@( GPUPERF_CLI=$(abspath $(CLI)) GPUPERF_BUILD=$(abspath $(BUILD)) \
	  PYTHONPATH=$(abspath python) $(PYTHON) -m pytest -q -p no:cacheprovider \
	  python/tests; echo $$? > $(BUILD)/test-python.status ) | \
	  tee $(BUILD)/test-python.log
	@exit $$(cat $(BUILD)/test-python.status)

test-asan:
	$(MAKE) BUILD=build-asan SAN=1 OPT=-O1 test

# Every CLI entry point that reads a trace (query, report in each format,
# export, diff, merge) over every file of the fuzz corpus, under ASan and
# UBSan (the build of test-asan): fails on any sanitizer report.
ubsan-corpus:
	$(MAKE) BUILD=build-asan SAN=1 OPT=-O1 build-asan/gpuperf
	scripts/ubsan-corpus.sh build-asan/gpuperf

bench: $(BENCH_BINS)

install: all
	install -d $(DESTDIR)$(PREFIX)/include/gpuperf $(DESTDIR)$(PREFIX)/lib \
	  $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/gpuperf/*.h $(DESTDIR)$(PREFIX)/include/gpuperf/
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libgpuperf.so
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/gpuperf
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(shell sed -n 's/^#define GP_VERSION_STRING "\(.*\)"/\1/p' include/gpuperf/gpuperf.h)|g' \
	  gpuperf.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/gpuperf.pc

uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/include/gpuperf
	rm -f $(DESTDIR)$(PREFIX)/lib/libgpuperf.a $(DESTDIR)$(PREFIX)/lib/libgpuperf.so \
	  $(DESTDIR)$(PREFIX)/lib/$(SONAME) $(DESTDIR)$(PREFIX)/bin/gpuperf \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig/gpuperf.pc

format:
	clang-format -i $$(git ls-files --cached --others --exclude-standard '*.c' '*.h')

# Includes (the tree) and calls (the objects; mk/*.mk add theirs).
check-layers: $(LIB_OBJS)
	$(Q)scripts/check-layers.sh --self-test
	$(Q)scripts/check-layers.sh
	$(Q)scripts/check-layers.sh --objects $(BUILD)/obj

check-format:
	clang-format --dry-run -Werror $$(git ls-files --cached --others --exclude-standard '*.c' '*.h')

clean:
	rm -rf build build-asan build-clang build-tsan

# Subsystems with build steps of their own (extra libraries, preload
# libraries, fuzzers) add them in mk/*.mk.
-include $(sort $(wildcard mk/*.mk))

# Every object's header dependencies, those of the subsystems' own
# libraries and programs (mk/*.mk) included: a changed header rebuilds
# whatever includes it.
-include $(wildcard $(BUILD)/obj/*/*.d $(BUILD)/obj/*/*/*.d \
                    $(BUILD)/obj/*/*/*/*.d $(BUILD)/obj/*/*/*/*/*.d)
