# mk/opencl.mk - the OpenCL backend: the interception library, its sample
# program, its tests and its benchmark.
#
#   $(BUILD)/libgpuperf-opencl.so   LD_PRELOAD library: the OpenCL entry
#                                   points, writing into libgpuperf.so
#   $(BUILD)/tests/opencl-sample    the sample OpenCL program (tests/opencl)
#   $(BUILD)/bench/opencl           enqueue overhead, in-process
#
# The test binary links the wrappers themselves (they call the real driver
# through dlsym), so the OpenCL tests capture records in-process.

OCL_SRCS = $(wildcard src/backend/opencl/*.c)
OCL_OBJS = $(patsubst %.c,$(BUILD)/obj/%.o,$(OCL_SRCS))
OCL_PRELOAD = $(BUILD)/libgpuperf-opencl.so
OCL_SAMPLE = $(BUILD)/tests/opencl-sample
OCL_SAMPLE_SRCS = tests/opencl/sample_main.c tests/opencl/workload.c
OCL_SAMPLE_OBJS = $(patsubst %.c,$(BUILD)/obj/%.o,$(OCL_SAMPLE_SRCS))
OCL_MAP = src/backend/opencl/exports.map

OCL_PLUGIN = $(BUILD)/tests/libopencl-plugin.so
OCL_PLUGIN_HOST = $(BUILD)/tests/opencl-plugin-host
OCL_HELPERS = $(OCL_SAMPLE) $(OCL_PLUGIN) $(OCL_PLUGIN_HOST)

all: $(OCL_PRELOAD) $(OCL_SAMPLE)
check-layers: $(OCL_OBJS)
tests: $(OCL_PRELOAD) $(OCL_HELPERS)
test: $(OCL_PRELOAD) $(OCL_HELPERS)

# The preload library has no core of its own: it writes into the process's
# libgpuperf.so.0 (found next to it, or one directory up once installed in
# lib/gpuperf/), reached through gp_backend_interface(). The version script
# keeps all but the cl* entry points local.
$(OCL_PRELOAD): $(OCL_OBJS) $(SHARED_LIB) $(OCL_MAP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libgpuperf-opencl.so -Wl,--no-undefined \
	  -Wl,--version-script=$(OCL_MAP) $(ALL_LDFLAGS) -o $@ $(OCL_OBJS) \
	  -L$(BUILD) -lgpuperf -Wl,-rpath,'$$ORIGIN:$$ORIGIN/..' \
	  $(LDLIBS_LIB) -ldl

# The sample is an ordinary OpenCL program: the loader, nothing of ours.
$(OCL_SAMPLE): $(OCL_SAMPLE_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(OCL_SAMPLE_OBJS) -lOpenCL -lm

# The workload again, as a plugin a host program opens with RTLD_LOCAL.
$(OCL_PLUGIN): $(BUILD)/obj/tests/opencl/plugin.o \
    $(BUILD)/obj/tests/opencl/workload.o
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared $(ALL_LDFLAGS) -o $@ $^ -lOpenCL -lm

$(OCL_PLUGIN_HOST): $(BUILD)/obj/tests/opencl/plugin_host.o
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< -ldl

# Tests: the wrappers, the sample's workload and the helpers join the test
# binary.
# The wrappers as programs that link the static libgpuperf take them:
# without exit.c, whose _exit and abort libgpuperf has itself.
OCL_LINKED_OBJS = $(filter-out %/exit.o,$(OCL_OBJS))
OCL_TEST_OBJS = $(OCL_LINKED_OBJS) \
    $(BUILD)/obj/tests/opencl/workload.o \
  $(BUILD)/obj/tests/opencl/oclutil.o
TEST_OBJS += $(OCL_TEST_OBJS)
$(TEST_BIN): $(OCL_TEST_OBJS)
$(TEST_BIN): private LDLIBS_LIB += -ldl

# The benchmark links the wrappers too, and calls the driver both through
# them and around them.
$(BUILD)/bench/opencl: $(BUILD)/obj/bench/opencl.o $(OCL_LINKED_OBJS) $(STATIC_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(OCL_LINKED_OBJS) $(STATIC_LIB) $(LDLIBS_LIB) -ldl

.PHONY: install-opencl
install: install-opencl
install-opencl: $(OCL_PRELOAD)
	install -d $(DESTDIR)$(PREFIX)/lib/gpuperf
	install -m 755 $(OCL_PRELOAD) $(DESTDIR)$(PREFIX)/lib/gpuperf/

-include $(OCL_OBJS:.o=.d) $(OCL_SAMPLE_OBJS:.o=.d) $(BUILD)/obj/bench/opencl.d \
  $(BUILD)/obj/tests/opencl/plugin.d $(BUILD)/obj/tests/opencl/plugin_host.d

# `make demo` alone must leave `gpuperf record` able to record OpenCL.
demo: $(OCL_PRELOAD)
