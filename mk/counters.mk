# mk/counters.mk - build steps of the counters subsystem: the helper
# program the `gpuperf stat` and GPUPERF_HUD=help tests run. It links the
# shared library, as a program measured by `gpuperf stat` must.

STAT_APP = $(BUILD)/tests/stat_app

$(STAT_APP): tests/programs/stat_app.c tests/programs/stat_app.h $(SHARED_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -Itests $(ALL_LDFLAGS) -o $@ $< -L$(BUILD) \
	  -lgpuperf -Wl,-rpath,'$$ORIGIN/..' $(LDLIBS_LIB)

tests: $(STAT_APP)
test: $(STAT_APP)
