# mk/opengl.mk - the OpenGL backend: libgpuperf-gl.so, preloaded into the
# programs that `gpuperf record` and `gpuperf stat` run, and the GL sample
# the tests record.
#
#   $(BUILD)/libgpuperf-gl.so      LD_PRELOAD library: GLX, EGL and GL entry
#                                  points, writing into libgpuperf.so
#   $(BUILD)/tests/gl-sample       a GL program that draws into two
#                                  framebuffers per frame (tests/gl)
#
# Built where the GL and EGL headers (libgl-dev, libegl-dev) are
# installed; without them nothing here is built and the GL tests skip.

GL_HAVE := $(if $(wildcard /usr/include/GL/glx.h),$(if $(wildcard /usr/include/EGL/egl.h),yes))

ifeq ($(GL_HAVE),yes)
GL_SRCS = $(wildcard src/backend/opengl/*.c)
GL_OBJS = $(patsubst %.c,$(BUILD)/obj/%.o,$(GL_SRCS))
GL_PRELOAD = $(BUILD)/libgpuperf-gl.so
GL_MAP = src/backend/opengl/exports.map
GL_SAMPLE = $(BUILD)/tests/gl-sample
GL_DLSYM = $(BUILD)/tests/gl-dlsym
GL_GETPROC = $(BUILD)/tests/gl-getproc
# libepoxy's program only where its headers are (Debian libepoxy-dev).
GL_EPOXY = $(if $(wildcard /usr/include/epoxy/gl.h),$(BUILD)/tests/gl-epoxy)
GL_TEST_PROGS = $(GL_DLSYM) $(GL_GETPROC) $(GL_EPOXY)

all: $(GL_PRELOAD) $(GL_SAMPLE)
check-layers: $(GL_OBJS)
tests: $(GL_PRELOAD) $(GL_SAMPLE) $(GL_TEST_PROGS)
test: $(GL_PRELOAD) $(GL_SAMPLE) $(GL_TEST_PROGS)
demo: $(GL_PRELOAD)

# dlsym passes dlsym(RTLD_NEXT) on as a tail call (entry.c): the
# optimisation that makes it one is asked for whatever the build's level.
# The wrappers are reached through their exported aliases and resolve.c's
# table, not through prototypes.
$(BUILD)/obj/src/backend/opengl/entry.o: private CFLAGS += -O2 \
  -foptimize-sibling-calls -Wno-missing-prototypes

# Like the OpenCL library: no core of its own (libgpuperf.so.0 next to it,
# or one directory up once installed). It links no GL library: the real
# functions are those of the program's own libGL, libEGL or libGLESv2.
$(GL_PRELOAD): $(GL_OBJS) $(SHARED_LIB) $(GL_MAP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libgpuperf-gl.so -Wl,--no-undefined \
	  -Wl,-z,nodelete \
	  -Wl,--version-script=$(GL_MAP) $(ALL_LDFLAGS) -o $@ $(GL_OBJS) \
	  -L$(BUILD) -lgpuperf -Wl,-rpath,'$$ORIGIN:$$ORIGIN/..' \
	  $(LDLIBS_LIB) -ldl -lm

$(GL_SAMPLE): $(BUILD)/obj/tests/gl/sample.o
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< -lGL -lEGL -lX11 -lm

$(GL_DLSYM): $(BUILD)/obj/tests/gl/dlsym.o
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< -Wl,--no-as-needed -lGL -ldl

# It links libX11 only: libGL is opened and looked up at run time.
$(GL_GETPROC): tests/gl/loaders.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< -lX11 -ldl

$(BUILD)/tests/gl-epoxy: tests/gl/loaders.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -DGP_EPOXY $(ALL_LDFLAGS) -o $@ $< -lepoxy -lX11

# The callback probe links libgpuperf.so and EGL/GL; run with the GL
# library preloaded.
GL_CB_PROBE = $(BUILD)/tests/gl-cb-probe
$(GL_CB_PROBE): $(BUILD)/obj/tests/gl/cb_probe.o $(SHARED_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< -L$(BUILD) -lgpuperf \
	  -Wl,-rpath,'$$ORIGIN/..' -lEGL -lGL $(LDLIBS_LIB)
tests: $(GL_CB_PROBE)
test: $(GL_CB_PROBE)

.PHONY: install-opengl
install: install-opengl
install-opengl: $(GL_PRELOAD)
	install -d $(DESTDIR)$(PREFIX)/lib/gpuperf
	install -m 755 $(GL_PRELOAD) $(DESTDIR)$(PREFIX)/lib/gpuperf/

-include $(GL_OBJS:.o=.d) $(BUILD)/obj/tests/gl/sample.d \
  $(BUILD)/obj/tests/gl/cb_probe.d \
  $(BUILD)/obj/tests/gl/dlsym.d
endif
