# mk/gldouble.mk - the GL_AMD_performance_monitor test double (tests/gl,
# tests/gl/README.md) and the GL program its tests run:
#
#   $(BUILD)/tests/libgl-amdpm-double.so   LD_PRELOAD library exposing the
#                                          extension over llvmpipe
#   $(BUILD)/tests/libgl-intelpq-double.so LD_PRELOAD library exposing
#                                          GL_INTEL_performance_query over
#                                          llvmpipe, on the AMD double's
#                                          monitors (its two files built
#                                          again with -DGLD_INTEL)
#   $(BUILD)/tests/gl-intelpq-client       a GL program that uses
#                                          GL_INTEL_performance_query as
#                                          its specification describes
#   $(BUILD)/tests/gl-amdpm-client         a GL program written from the
#                                          extension's specification
#   $(BUILD)/tests/libgl-tap.so            another GL interposer, put
#                                          before or after the double
#   $(BUILD)/tests/gl-local-probe          a GL program that opens libEGL
#                                          itself (RTLD_LOCAL), links none
#
# Both are preloaded into or run as programs that are not ours, so they
# are built without sanitizers even in build-asan (an ASan library cannot
# be preloaded into a program without ASan). The double reuses the V3D
# counter table (src/counters/v3dtables.c), compiled again here with
# the same flags. Built only where the GL and EGL headers are installed
# (libgl-dev, libegl-dev); without them the tests skip, saying why.

GLD_HAVE := $(if $(wildcard /usr/include/GL/glext.h),$(if $(wildcard /usr/include/EGL/egl.h),yes))

ifeq ($(GLD_HAVE),yes)
GLD_LIB = $(BUILD)/tests/libgl-amdpm-double.so
GLD_INTEL_LIB = $(BUILD)/tests/libgl-intelpq-double.so
GLD_CLIENT = $(BUILD)/tests/gl-amdpm-client
GLD_INTEL_CLIENT = $(BUILD)/tests/gl-intelpq-client
GLD_TAP = $(BUILD)/tests/libgl-tap.so
GLD_PROBE = $(BUILD)/tests/gl-local-probe
GLD_CFLAGS = -std=c11 -D_GNU_SOURCE -g $(OPT) $(WARN) -fPIC -fvisibility=hidden \
             -Iinclude -Isrc -MMD -MP $(CFLAGS)

tests: $(GLD_LIB) $(GLD_INTEL_LIB) $(GLD_CLIENT) $(GLD_INTEL_CLIENT) \
       $(GLD_TAP) $(GLD_PROBE)
test: $(GLD_LIB) $(GLD_INTEL_LIB) $(GLD_CLIENT) $(GLD_INTEL_CLIENT) \
      $(GLD_TAP) $(GLD_PROBE)

$(BUILD)/gl-obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(GLD_CFLAGS) -c $< -o $@

$(GLD_LIB): $(BUILD)/gl-obj/tests/gl/amdpm_double.o $(BUILD)/gl-obj/tests/gl/amdpm_gl.o \
    $(BUILD)/gl-obj/src/counters/v3dtables.o
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,--no-undefined $(LDFLAGS) -o $@ $^ -ldl -lpthread

$(BUILD)/gl-obj-intel/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(GLD_CFLAGS) -DGLD_INTEL -c $< -o $@

$(GLD_INTEL_LIB): $(BUILD)/gl-obj-intel/tests/gl/intelpq_double.o \
    $(BUILD)/gl-obj-intel/tests/gl/amdpm_double.o \
    $(BUILD)/gl-obj-intel/tests/gl/amdpm_gl.o \
    $(BUILD)/gl-obj/src/counters/v3dtables.o
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,--no-undefined $(LDFLAGS) -o $@ $^ -ldl -lpthread

$(GLD_TAP): $(BUILD)/gl-obj/tests/gl/gltap.o
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,--no-undefined $(LDFLAGS) -o $@ $^ -ldl

$(GLD_PROBE): $(BUILD)/gl-obj/tests/gl/local_probe.o
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -ldl

$(GLD_CLIENT): $(BUILD)/gl-obj/tests/gl/amdpm_client.o
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -lEGL -lGL -ldl

$(GLD_INTEL_CLIENT): $(BUILD)/gl-obj/tests/gl/intelpq_client.o
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -lEGL -lGL

-include $(wildcard $(BUILD)/gl-obj/tests/gl/*.d \
                    $(BUILD)/gl-obj-intel/tests/gl/*.d \
                    $(BUILD)/gl-obj/src/counters/*.d)
endif
