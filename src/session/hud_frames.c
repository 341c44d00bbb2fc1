/*
 * hud_frames.c - the HUD's frame metrics: "fps", "frametime" and
 * "gpu-frametime", from what a library that owns a window feeds at each
 * frame (libgpuperf-gl.so, through the backend table's hud_feed).
 *
 * Swaps come with their time; each interval between two swaps is one
 * frame's CPU time. At each HUD period (hud.c's tick) the period's frames
 * give one value of each metric: frametime the mean interval in ms, fps
 * the number of intervals over their sum (so fps is exactly 1000 over
 * frametime); gpu-frametime the mean of the GPU times fed in the period
 * (they come late: the GL library reads its timer queries frames after
 * the frame). A period in which no frame ended shows the frame still in
 * progress: frametime the time since the last swap, fps its inverse, so
 * that a program that stops drawing shows it; gpu-frametime keeps its
 * last value. These names need no device and no catalog.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "core/hud_view.h"
#include "hudInt.h"

static struct {
  pthread_mutex_t lock;
  uint64_t last_swap; /* CLOCK_MONOTONIC ns of the latest swap, 0 none */
  uint64_t intervals; /* frames that ended in this period */
  double cpu_ms;      /* their summed intervals */
  uint64_t gpu_n;     /* GPU times fed in this period */
  double gpu_ms;
} fr = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const char *const names[] = {
    [GP__HUD_FPS] = "fps",
    [GP__HUD_FRAMETIME] = "frametime",
    [GP__HUD_GPU_FRAMETIME] = "gpu-frametime",
};

/* See hudInt.h. */
int gp__hud_frame_metric(const char *name) {
  for (int m = GP__HUD_FPS; m <= GP__HUD_GPU_FRAMETIME; m++)
    if (strcmp(name, names[m]) == 0)
      return m;
  return 0;
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* See hudInt.h. */
void gp__hud_frames_feed(uint32_t what, uint64_t t_ns, double value) {
  if (what == GP_HUD_FEED_SWAP) {
    uint64_t t = t_ns ? t_ns : now_ns();
    pthread_mutex_lock(&fr.lock);
    /* A swap at or before the one before it (a caller's clock that went
     * back) is no frame: it only moves the mark. */
    if (fr.last_swap && t > fr.last_swap) {
      fr.intervals++;
      fr.cpu_ms += (double)(t - fr.last_swap) / 1e6;
    }
    fr.last_swap = t;
    pthread_mutex_unlock(&fr.lock);
  } else if (what == GP_HUD_FEED_GPU_FRAME && value >= 0) {
    pthread_mutex_lock(&fr.lock);
    fr.gpu_n++;
    fr.gpu_ms += value;
    pthread_mutex_unlock(&fr.lock);
  }
}

/* See hudInt.h. */
unsigned gp__hud_frames_take(uint64_t now, double out[4]) {
  unsigned got = 0;
  pthread_mutex_lock(&fr.lock);
  if (fr.intervals && fr.cpu_ms > 0) {
    out[GP__HUD_FRAMETIME] = fr.cpu_ms / (double)fr.intervals;
    out[GP__HUD_FPS] = (double)fr.intervals * 1000.0 / fr.cpu_ms;
    got |= 1u << GP__HUD_FPS | 1u << GP__HUD_FRAMETIME;
  } else if (fr.last_swap && now > fr.last_swap) {
    out[GP__HUD_FRAMETIME] = (double)(now - fr.last_swap) / 1e6;
    out[GP__HUD_FPS] = 1e9 / (double)(now - fr.last_swap);
    got |= 1u << GP__HUD_FPS | 1u << GP__HUD_FRAMETIME;
  }
  if (fr.gpu_n) {
    out[GP__HUD_GPU_FRAMETIME] = fr.gpu_ms / (double)fr.gpu_n;
    got |= 1u << GP__HUD_GPU_FRAMETIME;
  }
  fr.intervals = 0;
  fr.cpu_ms = 0;
  fr.gpu_n = 0;
  fr.gpu_ms = 0;
  pthread_mutex_unlock(&fr.lock);
  return got;
}
