/*
 * perjob.c - which path a driver's counters take in this process.
 *
 * Some GPUs count one way at a time: the V3D kernel driver refuses a
 * job's own perfmon while a global (system-wide) perfmon is set, and the
 * other way round. In a process that draws with OpenGL, gpuperf reads
 * such a driver's counters per frame through GL_AMD_performance_monitor
 * (the program's own jobs); the system-wide provider of the same driver
 * must then leave the counters free. The GL backend claims the per-job
 * path here at its first context; the system-wide provider asks before
 * it takes the counters, and is told (a hook) if the claim comes while
 * it holds them.
 */
#include <pthread.h>
#include <string.h>

#include "countersInt.h"

#define MAX_CLAIMS 4
#define MAX_HOOKS 4

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char claimed[MAX_CLAIMS][16];
static struct {
  char driver[16];
  void (*fn)(void);
} hooks[MAX_HOOKS];

/* See countersInt.h. */
bool gp__counters_perjob_claimed(const char *driver) {
  bool yes = false;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < MAX_CLAIMS && !yes; i++)
    yes = strcmp(claimed[i], driver) == 0;
  pthread_mutex_unlock(&lock);
  return yes;
}

/* See countersInt.h. */
void gp__counters_perjob_claim(const char *driver) {
  if (!driver || !*driver || strlen(driver) >= sizeof(claimed[0]) ||
      gp__counters_perjob_claimed(driver))
    return;
  void (*run[MAX_HOOKS])(void);
  int n = 0;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < MAX_CLAIMS; i++) {
    if (!claimed[i][0]) {
      strcpy(claimed[i], driver);
      break;
    }
  }
  for (int i = 0; i < MAX_HOOKS; i++)
    if (hooks[i].fn && strcmp(hooks[i].driver, driver) == 0)
      run[n++] = hooks[i].fn;
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < n; i++)
    run[i](); /* without our lock: they take their own */
}

/* See countersInt.h. */
int gp__counters_perjob_on_claim(const char *driver, void (*fn)(void)) {
  int rc = GP_ENOSPC;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < MAX_HOOKS && rc; i++) {
    if (!hooks[i].fn && strlen(driver) < sizeof(hooks[i].driver)) {
      strcpy(hooks[i].driver, driver);
      hooks[i].fn = fn;
      rc = 0;
    }
  }
  pthread_mutex_unlock(&lock);
  return rc;
}
