/*
 * testutil.c - see testutil.h.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "testutil.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *log_buf;
static size_t log_size, log_cap;
static size_t buf_size, buf_max_records;
static size_t completed, requested;
static int decline;
static _Atomic unsigned delay_us; /* set by the test, read by the collector */

static void on_request(uint8_t **buffer, size_t *size, size_t *max_records) {
  pthread_mutex_lock(&lock);
  int no = decline;
  requested++;
  pthread_mutex_unlock(&lock);
  if (no) {
    *buffer = NULL;
    return;
  }
  *buffer = aligned_alloc(8, buf_size);
  *size = buf_size;
  *max_records = buf_max_records;
}

static void on_complete(uint8_t *buffer, size_t size, size_t valid) {
  (void)size;
  if (delay_us)
    usleep(delay_us);
  const gp_activity *r = NULL;
  int rc;
  pthread_mutex_lock(&lock);
  while ((rc = gp_activity_get_next_record(buffer, valid, &r)) == 0) {
    if (log_size + r->size > log_cap) {
      size_t ncap = log_cap ? log_cap * 2 : 1 << 20;
      while (ncap < log_size + r->size)
        ncap *= 2;
      log_buf = realloc(log_buf, ncap);
      if (!log_buf)
        abort();
      log_cap = ncap;
    }
    memcpy(log_buf + log_size, r, r->size);
    log_size += r->size;
  }
  if (rc != GP_EEND) {
    fprintf(stderr, "completed buffer is malformed: %s\n", gp_error_name(rc));
    abort();
  }
  completed++;
  pthread_mutex_unlock(&lock);
  free(buffer);
}

void tu_capture(size_t buffer_size, size_t max_records) {
  buf_size = buffer_size;
  buf_max_records = max_records;
  size_t sz = sizeof(size_t);
  ASSERT_OK(gp_activity_set_attribute(GP_ACTIVITY_ATTR_BUFFER_SIZE, &sz,
                                      &buffer_size));
  ASSERT_OK(gp_activity_register_callbacks(on_request, on_complete));
}

void tu_capture_delay(unsigned us) {
  delay_us = us;
}

void tu_capture_decline(int on) {
  pthread_mutex_lock(&lock);
  decline = on;
  pthread_mutex_unlock(&lock);
}

const uint8_t *tu_log(size_t *size) {
  *size = log_size;
  return log_buf;
}

size_t tu_count(uint32_t kind) {
  size_t n = 0;
  pthread_mutex_lock(&lock);
  const gp_activity *r = NULL;
  while (log_buf && gp_activity_get_next_record(log_buf, log_size, &r) == 0)
    if (kind == 0 || r->kind == kind)
      n++;
  pthread_mutex_unlock(&lock);
  return n;
}

size_t tu_buffers_completed(void) {
  pthread_mutex_lock(&lock);
  size_t n = completed;
  pthread_mutex_unlock(&lock);
  return n;
}

size_t tu_buffers_requested(void) {
  pthread_mutex_lock(&lock);
  size_t n = requested;
  pthread_mutex_unlock(&lock);
  return n;
}

const gp_activity *tu_find(uint32_t kind, size_t i) {
  const gp_activity *r = NULL;
  while (log_buf && gp_activity_get_next_record(log_buf, log_size, &r) == 0)
    if (r->kind == kind && i-- == 0)
      return r;
  return NULL;
}

void tu_clear(void) {
  pthread_mutex_lock(&lock);
  log_size = 0;
  pthread_mutex_unlock(&lock);
}

gp_sim_kernel_desc tu_kernel_desc(const char *name, double flops,
                                  double bytes) {
  gp_sim_kernel_desc d;
  memset(&d, 0, sizeof(d));
  d.name = name;
  d.flops_per_thread = flops;
  d.bytes_per_thread = bytes;
  d.read_fraction = 0.5;
  d.cache_locality = 0.5;
  d.registers_per_thread = 32;
  return d;
}

/* See testutil.h. */
gp_sim_dim3 tu_dim(uint32_t x) {
  gp_sim_dim3 d = {x, 1, 1};
  return d;
}

/* See testutil.h. */
uint32_t tu_counter_id(uint32_t dev, const char *name) {
  const char *names[1] = {name};
  uint32_t id = 0;
  size_t n = 0;
  ASSERT_OK(gp_counter_select(dev, names, 1, &id, 1, &n));
  return id;
}
