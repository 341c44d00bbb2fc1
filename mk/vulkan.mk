# mk/vulkan.mk - the Vulkan backend: the layer, its manifest, the sample
# program the tests record, and the benchmark.
#
#   $(BUILD)/libgpuperf-vulkan.so          the layer VK_LAYER_GPUPERF_trace,
#                                          writing into libgpuperf.so
#   $(BUILD)/vulkan/gpuperf_layer.json     its manifest (a directory of its
#                                          own, for VK_ADD_LAYER_PATH)
#   $(BUILD)/vulkan/vulkan/implicit_layer.d/gpuperf_layer.json
#                                          the same layer as an implicit one,
#                                          enabled by GPUPERF_VULKAN_LAYER=1
#                                          ($(BUILD)/vulkan in XDG_DATA_DIRS:
#                                          how `gpuperf record` loads it)
#   $(BUILD)/tests/vulkan-sample           headless Vulkan sample (lavapipe)
#   $(BUILD)/tests/vulkan-cb-probe         the callback API through the layer
#   $(BUILD)/bench/vulkan                  the layer's cost per call
#
# Built only where the Vulkan headers and loader (libvulkan-dev) are
# installed; the sample's shaders are compiled to SPIR-V with
# glslangValidator (glslang-tools) at build time. Without them nothing
# here is built and the Vulkan tests skip, saying why. This is decided
# after scripts/install-deps.sh ran (the Makefile reads this file again
# once it has), so a fresh machine builds the layer on the first `make`.
#
#   VK_HEADER, VK_LIBS   the header and the loader's link library looked
#                        for (any one of VK_LIBS)

VK_HEADER ?= /usr/include/vulkan/vulkan.h
VK_LIBS ?= /usr/lib/x86_64-linux-gnu/libvulkan.so /usr/lib/libvulkan.so
VK_HAVE := $(if $(wildcard $(VK_HEADER)),$(if $(wildcard $(VK_LIBS)),yes))
VK_GLSLANG := $(shell command -v glslangValidator 2>/dev/null)

ifeq ($(VK_HAVE),yes)
VK_SRCS = $(wildcard src/backend/vulkan/*.c)
VK_OBJS = $(patsubst %.c,$(BUILD)/obj/%.o,$(VK_SRCS))
VK_LAYER = $(BUILD)/libgpuperf-vulkan.so
VK_MANIFEST = $(BUILD)/vulkan/gpuperf_layer.json
VK_IMPLICIT = $(BUILD)/vulkan/vulkan/implicit_layer.d/gpuperf_layer.json
VK_MAP = src/backend/vulkan/exports.map

all: $(VK_LAYER) $(VK_MANIFEST) $(VK_IMPLICIT)
tests: $(VK_LAYER) $(VK_MANIFEST) $(VK_IMPLICIT)
test: $(VK_LAYER) $(VK_MANIFEST) $(VK_IMPLICIT)

# Like the OpenCL library: no core of its own, libgpuperf.so.0 found next
# to it (or one directory up once installed in lib/gpuperf/). The loader
# unloads layers with their instance, but the core keeps our flush hook:
# -z nodelete keeps the code it points to.
$(VK_LAYER): $(VK_OBJS) $(SHARED_LIB) $(VK_MAP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libgpuperf-vulkan.so -Wl,--no-undefined \
	  -Wl,-z,nodelete \
	  -Wl,--version-script=$(VK_MAP) $(ALL_LDFLAGS) -o $@ $(VK_OBJS) \
	  -L$(BUILD) -lgpuperf -Wl,-rpath,'$$ORIGIN:$$ORIGIN/..' $(LDLIBS_LIB)

$(VK_MANIFEST): src/backend/vulkan/layer.json.in
	@mkdir -p $(@D)
	$(Q)sed -e 's|@LIB@|../libgpuperf-vulkan.so|' $< > $@

# The loader reads <dir>/vulkan/implicit_layer.d for each dir of
# XDG_DATA_DIRS; the library path is relative to the manifest.
$(VK_IMPLICIT): src/backend/vulkan/implicit_layer.json.in
	@mkdir -p $(@D)
	$(Q)sed -e 's|@LIB@|../../../libgpuperf-vulkan.so|' $< > $@

ifneq ($(VK_GLSLANG),)
VK_SAMPLE = $(BUILD)/tests/vulkan-sample
VK_SHADERS = $(wildcard tests/vulkan/shaders/*)
VK_SPV = $(patsubst tests/vulkan/shaders/%,$(BUILD)/gen/vulkan/%.h,$(VK_SHADERS))

# Each shader becomes a C array named after it (sample_vert, ...).
$(BUILD)/gen/vulkan/%.h: tests/vulkan/shaders/%
	@mkdir -p $(@D)
	@$(if $(Q),echo "  GLSL    $<")
	$(Q)glslangValidator -s -V --vn $(subst .,_,$*) -o $@ $<

$(BUILD)/obj/tests/vulkan/sample.o: $(VK_SPV)
$(BUILD)/obj/tests/vulkan/sample.o: ALL_CFLAGS += -I$(BUILD)/gen/vulkan

# The sample is an ordinary Vulkan program: the loader, nothing of ours.
$(VK_SAMPLE): $(BUILD)/obj/tests/vulkan/sample.o
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< -lvulkan

tests: $(VK_SAMPLE)
test: $(VK_SAMPLE)
endif

# The benchmark shares the layer's core: it links libgpuperf.so.
$(BUILD)/bench/vulkan: $(BUILD)/obj/bench/vulkan.o $(VK_LAYER) $(VK_MANIFEST)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< -L$(BUILD) -lgpuperf \
	  -Wl,-rpath,'$$ORIGIN/..' -lvulkan $(LDLIBS_LIB)

# The callback probe links libgpuperf.so too, and enables the layer itself.
VK_CB_PROBE = $(BUILD)/tests/vulkan-cb-probe
$(VK_CB_PROBE): $(BUILD)/obj/tests/vulkan/cb_probe.o $(VK_LAYER) $(VK_MANIFEST)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< -L$(BUILD) -lgpuperf \
	  -Wl,-rpath,'$$ORIGIN/..' -lvulkan $(LDLIBS_LIB)
tests: $(VK_CB_PROBE)
test: $(VK_CB_PROBE)

.PHONY: install-vulkan
install: install-vulkan
install-vulkan: $(VK_LAYER)
	install -d $(DESTDIR)$(PREFIX)/lib/gpuperf/vulkan \
	  $(DESTDIR)$(PREFIX)/lib/gpuperf/vulkan/vulkan/implicit_layer.d
	install -m 755 $(VK_LAYER) $(DESTDIR)$(PREFIX)/lib/gpuperf/
	sed -e 's|@LIB@|../libgpuperf-vulkan.so|' src/backend/vulkan/layer.json.in \
	  > $(DESTDIR)$(PREFIX)/lib/gpuperf/vulkan/gpuperf_layer.json
	sed -e 's|@LIB@|../../../libgpuperf-vulkan.so|' \
	  src/backend/vulkan/implicit_layer.json.in \
	  > $(DESTDIR)$(PREFIX)/lib/gpuperf/vulkan/vulkan/implicit_layer.d/gpuperf_layer.json

-include $(VK_OBJS:.o=.d) $(BUILD)/obj/tests/vulkan/sample.d \
  $(BUILD)/obj/tests/vulkan/cb_probe.d \
  $(BUILD)/obj/bench/vulkan.d
else
# No Vulkan headers: the benchmark is not built.
BENCH_BINS := $(filter-out $(BUILD)/bench/vulkan,$(BENCH_BINS))
endif
