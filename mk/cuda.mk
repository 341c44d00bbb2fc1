# mk/cuda.mk - the CUDA collector, libgpuperf-cuda.so, built only where the
# CUDA toolkit with CUPTI is found.
#
#   CUDA_HOME=/path/to/cuda   where the toolkit is (default /usr/local/cuda)
#   GP_CUDA=0                 build without it even if it is there
#
# The toolkit is found when cupti.h and cuda.h are in $(CUDA_HOME)/include
# (or CUPTI's extras/CUPTI/include) and libcupti.so in lib64, lib or
# extras/CUPTI/lib64. Everything else builds and tests without it: the
# CUDA tests then skip, saying why.
#
# libgpuperf-cuda.so holds the collector and no core of its own: it writes
# into the process's one libgpuperf.so.0 through the backend tables
# (src/backend/cuda/coreops.c), the one the program loaded or, when it
# loaded none, the one beside it (rpath $ORIGIN: the build tree, and lib/
# once installed). It links libcupti (with an rpath to where it was
# found) but not libcuda: the driver is found at run time, so the library
# loads where there is none.

CUDA_HOME ?= /usr/local/cuda
GP_CUDA ?= auto

CUDA_FIRST_WITH = $(firstword $(foreach d,$(1),$(if $(wildcard $(d)/$(2)),$(d))))
CUPTI_INC := $(call CUDA_FIRST_WITH,$(CUDA_HOME)/include $(CUDA_HOME)/extras/CUPTI/include,cupti.h)
CUPTI_LIBDIR := $(call CUDA_FIRST_WITH,$(CUDA_HOME)/lib64 $(CUDA_HOME)/lib $(CUDA_HOME)/extras/CUPTI/lib64,libcupti.so)
CUDA_INC := $(call CUDA_FIRST_WITH,$(CUDA_HOME)/include,cuda.h)

HAVE_CUDA :=
ifneq ($(GP_CUDA),0)
ifneq ($(and $(CUPTI_INC),$(CUPTI_LIBDIR),$(CUDA_INC)),)
HAVE_CUDA := 1
endif
endif

CUDA_LIB := $(BUILD)/libgpuperf-cuda.so
CUDA_PROBE := $(BUILD)/tests/cuda-probe

.PHONY: cuda-info

ifeq ($(HAVE_CUDA),1)

CUDA_SRCS := $(wildcard src/backend/cuda/*.c)
CUDA_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(CUDA_SRCS))
# -isystem: the toolkit's headers are not ours to keep warning-free. The
# shim directory (an empty <string>) must come first.
CUDA_CFLAGS := -DGP_HAVE_CUDA=1 -isystem src/backend/cuda/shim \
               -isystem $(CUPTI_INC) -isystem $(CUDA_INC)
CUDA_LDLIBS := -L$(CUPTI_LIBDIR) -lcupti -Wl,-rpath,$(CUPTI_LIBDIR) -ldl

$(CUDA_OBJS): ALL_CFLAGS += $(CUDA_CFLAGS)
$(BUILD)/obj/tests/api/test_cuda%.o: ALL_CFLAGS += $(CUDA_CFLAGS) \
  -Isrc/backend/cuda

all: $(CUDA_LIB)
check-layers: $(CUDA_OBJS)
tests: $(CUDA_LIB) $(CUDA_PROBE)
test: $(CUDA_LIB) $(CUDA_PROBE)

$(CUDA_LIB): $(CUDA_OBJS) $(SHARED_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libgpuperf-cuda.so -Wl,--no-undefined \
	  $(ALL_LDFLAGS) -o $@ $(CUDA_OBJS) -L$(BUILD) -lgpuperf \
	  -Wl,-rpath,'$$ORIGIN' $(CUDA_LDLIBS) $(LDLIBS_LIB)

# The translation tests call the collector's internals: they link its
# objects and libcupti into the test binary.
$(TEST_BIN): $(CUDA_OBJS)
$(TEST_BIN): TEST_OBJS += $(CUDA_OBJS)
$(TEST_BIN): LDLIBS_LIB += $(CUDA_LDLIBS)

# The cost of translation, per CUPTI record (bench/cuda/translate.c).
CUDA_BENCH := $(BUILD)/bench/cuda-translate
bench: $(CUDA_BENCH)
$(BUILD)/obj/bench/cuda/%.o: ALL_CFLAGS += $(CUDA_CFLAGS) -Isrc/backend/cuda
$(CUDA_BENCH): $(BUILD)/obj/bench/cuda/translate.o $(CUDA_OBJS) $(STATIC_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(CUDA_OBJS) $(STATIC_LIB) \
	  $(CUDA_LDLIBS) $(LDLIBS_LIB)

# A CUDA-free program that loads the collector as the driver would.
$(CUDA_PROBE): tests/cuda/probe.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< -ldl

# One process using the simulated GPUs, OpenCL and the injection library
# (tests/cuda/mixed_app.c): linked with libgpuperf.so and libOpenCL, it
# opens libgpuperf-cuda.so at run time as the driver would.
CUDA_MIXED := $(BUILD)/tests/cuda-mixed
tests: $(CUDA_MIXED)
test: $(CUDA_MIXED)
$(CUDA_MIXED): tests/cuda/mixed_app.c $(SHARED_LIB) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(CUDA_CFLAGS) $(ALL_LDFLAGS) -o $@ $< \
	  -L$(BUILD) -lgpuperf -Wl,-rpath,'$$ORIGIN/..' -lOpenCL $(CUDA_LDLIBS) \
	  $(LDLIBS_LIB)

install: install-cuda
uninstall: uninstall-cuda
.PHONY: install-cuda uninstall-cuda
install-cuda: $(CUDA_LIB)
	install -d $(DESTDIR)$(PREFIX)/lib
	install -m 755 $(CUDA_LIB) $(DESTDIR)$(PREFIX)/lib/libgpuperf-cuda.so
uninstall-cuda:
	rm -f $(DESTDIR)$(PREFIX)/lib/libgpuperf-cuda.so

cuda-info:
	@echo "CUDA collector: built from $(CUDA_HOME)"
	@echo "  cupti.h in $(CUPTI_INC), libcupti.so in $(CUPTI_LIBDIR)"

else

cuda-info:
	@echo "CUDA collector: not built ($(if $(filter 0,$(GP_CUDA)),GP_CUDA=0,no cupti.h, cuda.h and libcupti.so under CUDA_HOME=$(CUDA_HOME)))"

endif
