# mk/v3ddouble.mk - the V3D render-node test double (tests/v3d,
# tests/v3d/README.md) and the program its tests run:
#
#   $(BUILD)/tests/libv3d-double.so   LD_PRELOAD library answering open()
#                                     of $V3D_DOUBLE_NODE and its ioctls
#                                     as the kernel's v3d driver documents
#   $(BUILD)/tests/v3d-jobs           submits jobs, holds the counters,
#                                     checks the double's refusals; links
#                                     libgpuperf so that record records it
#
# The double is preloaded into programs built without sanitizers, so it
# is built without them even in build-asan. It reuses the V3D counter
# tables (src/counters/v3dtables.c), compiled again here.

V3DD_LIB = $(BUILD)/tests/libv3d-double.so
V3DD_JOBS = $(BUILD)/tests/v3d-jobs
V3DD_CFLAGS = -std=c11 -D_GNU_SOURCE -g $(OPT) $(WARN) -fPIC -fvisibility=hidden \
              -Iinclude -Isrc -MMD -MP $(CFLAGS)

tests: $(V3DD_LIB) $(V3DD_JOBS)
test: $(V3DD_LIB) $(V3DD_JOBS)

$(BUILD)/v3d-obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(V3DD_CFLAGS) -c $< -o $@

$(V3DD_LIB): $(BUILD)/v3d-obj/tests/v3d/v3d_double.o \
    $(BUILD)/v3d-obj/src/counters/v3dtables.o
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,--no-undefined $(LDFLAGS) -o $@ $^ -ldl -lpthread

$(V3DD_JOBS): tests/v3d/v3d_jobs.c src/backend/linux/v3d_uapi.h $(SHARED_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< -L$(BUILD) \
	  -lgpuperf -Wl,-rpath,'$$ORIGIN/..' $(LDLIBS_LIB)

-include $(wildcard $(BUILD)/v3d-obj/tests/v3d/*.d \
                    $(BUILD)/v3d-obj/src/counters/*.d)
