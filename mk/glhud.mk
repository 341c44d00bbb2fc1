# mk/glhud.mk - the HUD drawn in a GL window: the test program that
# draws a fixed scene and the HUD's renderer over it
# (src/backend/opengl/hud_gl.c, linked in), for the screenshot tests and
# the frame-rate figure (tests/programs/gl_hud_app.c).
#
#   $(BUILD)/tests/gl_hud_app    GLX (compatibility or core) and EGL (ES)
#
# Built only where the GL, EGL and X11 headers and libraries are
# (libgl-dev, libegl-dev, libx11-dev); without them the tests skip,
# saying why.

GLHUD_HDRS = /usr/include/GL/glcorearb.h /usr/include/GL/glx.h \
             /usr/include/EGL/egl.h /usr/include/X11/Xlib.h
GLHUD_HAVE := $(if $(filter-out $(wildcard $(GLHUD_HDRS)),$(GLHUD_HDRS)),,yes)

ifeq ($(GLHUD_HAVE),yes)
GLHUD_APP = $(BUILD)/tests/gl_hud_app
GLHUD_OBJS = $(BUILD)/obj/tests/programs/gl_hud_app.o \
             $(BUILD)/obj/tests/programs/gl_win.o \
             $(BUILD)/obj/src/backend/opengl/hud_gl.o

# The program links libgpuperf.so, as a program the GL library records
# does (--hud live reaches the HUD through its backend table).
$(GLHUD_APP): $(GLHUD_OBJS) $(SHARED_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(GLHUD_OBJS) -L$(BUILD) -lgpuperf \
	  -Wl,-rpath,'$$ORIGIN/..' -lGL -lEGL -lX11 -lm $(LDLIBS_LIB)

tests: $(GLHUD_APP)
test: $(GLHUD_APP)
endif
