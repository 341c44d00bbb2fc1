# mk/bench_activity.mk - bench/activity's LTTng-UST peer (issue 15).
#
# Where liblttng-ust-dev is installed (pkg-config lttng-ust), the bench is
# built with an LTTng-UST tracepoint (bench/activity_lttng.h) and measures
# it beside gpuperf's records, recording it with a session daemon it
# starts itself; elsewhere it says the line is skipped.

LTTNG_UST_LIBS := $(shell pkg-config --libs lttng-ust 2>/dev/null)

ifneq ($(LTTNG_UST_LIBS),)
$(BUILD)/obj/bench/activity.o: ALL_CFLAGS += -DGP_HAVE_LTTNG_UST=1 \
  $(shell pkg-config --cflags lttng-ust 2>/dev/null) -Ibench
$(BUILD)/bench/activity: LDLIBS_LIB += $(LTTNG_UST_LIBS)
endif
