/*
 * vkutil.h - what the Vulkan tests share (vkutil.c).
 */
#ifndef GPUPERF_TESTS_VKUTIL_H
#define GPUPERF_TESTS_VKUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if __has_include("gpuperf/tp.h")
#include "gpuperf/tp.h"
#include "tp/tputil.h"
#define HAVE_TP 1
#else
#define HAVE_TP 0
#endif

#define VALIDATION_MANIFEST                                                    \
  "/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json"

/* The path of build output name in buf, skipping the test where it was
 * not built. */
const char *vk_built(const char *name, char *buf, size_t size);

/* The CLI, skipping where it is not known. In sanitizer builds `gpuperf
 * record` enables no layer (an instrumented layer cannot load into
 * uninstrumented programs): with sample set (the instrumented sample is
 * the program) the layer is enabled here by the loader's variables and
 * the recording is checked under the sanitizers; otherwise the test is
 * skipped. */
const char *vk_cli_path(bool sample);

/* Lavapipe only, quietly: no other driver, no stray layers. With
 * GPUPERF_TEST_VK_ICD set, that ICD manifest's driver instead (a real
 * GPU's, where one is lent). */
void vk_env(void);

/* True if prog is found on PATH. */
bool vk_on_path(const char *prog);

/* Skips the test unless xvfb-run, Xvfb and vkcube are installed. */
void vk_need_vkcube(void);

#if HAVE_TP
#define Q_EQ(tp, sql, want)                                                    \
  do {                                                                         \
    int64_t got_ = tp_int(tp, sql);                                            \
    if (got_ != (int64_t)(want))                                               \
      gp_test_fail(__FILE__, __LINE__, "%s\n    got %lld, want %lld", sql,     \
                   (long long)got_, (long long)(want));                        \
  } while (0)

/* No stat of tp says an error or lost data. */
#define Q_NO_LOSS(tp)                                                          \
  Q_EQ(tp,                                                                     \
       "SELECT count(*) FROM stats WHERE severity IN ('error', 'data_loss') "  \
       "AND value > 0",                                                        \
       0)

/* The GPU log of tp holds n rows (0: nothing the validation layer or
 * the layer said). */
#define Q_GPU_LOG_ROWS(tp, n)                                                  \
  Q_EQ(tp,                                                                     \
       "SELECT count(*) FROM slice s JOIN track t ON s.track_id = t.id "       \
       "WHERE t.name = 'GPU Log'",                                             \
       n)

/* Records cmd with `gpuperf record -c config` (NULL: default) and the
 * options in args (NULL-terminated, may be NULL) into the test's trace;
 * returns the opened trace, the program's stdout in *out. */
gp_tp *vk_record_with(char *const *cmd, const char *config, char *const *args,
                      char **out);

/* vk_record_with() without options. */
gp_tp *vk_record(char *const *cmd, const char *config, char **out);

/* The GPU row: the device's UUID and its driver, whatever Vulkan version
 * the program asked for (vkcube asks for 1.0). */
void vk_check_gpu_info(gp_tp *tp);
#endif

#endif
