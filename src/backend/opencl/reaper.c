/*
 * reaper.c - the thread of ours that reads the queues' reap lists
 * (pending.c, Reaping), so that the program's threads only append to
 * them.
 *
 * The reaper starts with the first batch handed to it and works in
 * rounds: it reads the queues handed to it, sleeps REAP_PERIOD_NS so that
 * the next batches gather, and waits to be woken only after a round in
 * which nothing was handed. A program that keeps enqueueing hands its
 * queue (a flag and a short lock per batch) to a reaper that is not
 * asleep: no system call on the program's thread. Rounds are few because
 * each costs the program's thread more than its share: on the 2-vCPU
 * machine we measured, a reaper waking every 200 us added about twice the
 * CPU time to the enqueueing thread that one waking every 1 ms did (the
 * driver's locks, the scheduler). The period also bounds how far apart
 * the two anchors that map a command's times are: at the trace clock's
 * largest slew (500 ppm), 0.5 us at most.
 */
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "oclInt.h"
#include "core/thread.h"

#define REAP_PERIOD_NS 1000000

static struct {
  pthread_mutex_t lock; /* all but paused */
  pthread_cond_t wake, ready_cond;
  gp__ocl_queue *todo; /* handed queues, through reap_todo_next */
  bool started, ready, asleep;
  bool failed;         /* none could start: lists read where handed */
  bool at_exit_set;    /* reaper_stop registered (also in a child) */
  _Atomic bool paused; /* at exit: no more rounds (set under lock) */
} reaper = {.lock = PTHREAD_MUTEX_INITIALIZER,
            .wake = PTHREAD_COND_INITIALIZER,
            .ready_cond = PTHREAD_COND_INITIALIZER};
static pthread_mutex_t reaper_round_lock = PTHREAD_MUTEX_INITIALIZER;

/* One round of the reaper over the queues handed to it. A queue whose
 * list still holds commands after a round that read some (a program
 * waiting in clFinish, or enqueueing faster than the device runs) stays
 * handed for the next; one whose oldest command did not end during a
 * whole period waits to be handed again. */
static void reaper_round(gp__ocl_queue *list) {
  gp__ocl_queue *again = NULL;
  pthread_mutex_lock(&reaper_round_lock);
  bool go = !atomic_load(&reaper.paused);
  while (list) {
    gp__ocl_queue *q = list;
    list = q->reap_todo_next;
    q->reap_todo_next = NULL;
    /* Handed again from here: what is enqueued during this read waits for
     * the next round. */
    atomic_store(&q->reap_handed, false);
    if (!go)
      continue;
    unsigned n = gp__ocl_reap_batch(q, UINT32_MAX, false, NULL);
    if (n > 0 && gp__ocl_reap_waiting(q) > 0 &&
        !atomic_exchange(&q->reap_handed, true)) {
      q->reap_todo_next = again;
      again = q;
    }
  }
  pthread_mutex_unlock(&reaper_round_lock);
  if (!again)
    return;
  pthread_mutex_lock(&reaper.lock);
  while (again) {
    gp__ocl_queue *q = again;
    again = q->reap_todo_next;
    q->reap_todo_next = reaper.todo;
    reaper.todo = q;
  }
  pthread_mutex_unlock(&reaper.lock);
}

static void *reaper_main(void *unused) {
  (void)unused;
  pthread_mutex_lock(&reaper.lock);
  reaper.ready = true;
  pthread_cond_broadcast(&reaper.ready_cond);
  for (;;) {
    while (!reaper.todo || atomic_load(&reaper.paused)) {
      reaper.asleep = true;
      pthread_cond_wait(&reaper.wake, &reaper.lock);
    }
    reaper.asleep = false;
    gp__ocl_queue *list = reaper.todo;
    reaper.todo = NULL;
    pthread_mutex_unlock(&reaper.lock);
    reaper_round(list);
    struct timespec period = {0, REAP_PERIOD_NS};
    nanosleep(&period, NULL);
    pthread_mutex_lock(&reaper.lock);
  }
  return NULL;
}

/* At exit: the reaper is done with the driver before the driver's own
 * teardown (PoCL's runs after the handlers registered since it loaded);
 * what is left is read by the exit's flush. */
static void reaper_stop(void) {
  pthread_mutex_lock(&reaper.lock);
  atomic_store(&reaper.paused, true);
  pthread_mutex_unlock(&reaper.lock);
  pthread_mutex_lock(&reaper_round_lock); /* waits for a round under way */
  pthread_mutex_unlock(&reaper_round_lock);
}

/* Starts the reaper unless it runs; false if it cannot. Caller holds
 * reaper.lock. */
static bool reaper_start_locked(void) {
  if (reaper.started)
    return true;
  if (reaper.failed)
    return false;
  if (!reaper.at_exit_set)
    reaper.at_exit_set = atexit(reaper_stop) == 0;
  reaper.failed = !reaper.at_exit_set; /* else it could outlive the driver */
  if (reaper.failed)
    return false;
  pthread_t t; /* the program's signals are for the program's threads */
  int rc = gp__thread_start(&t, NULL, reaper_main, NULL);
  if (rc != 0) {
    reaper.failed = true; /* not tried again on every batch */
    return false;
  }
  pthread_detach(t);
  reaper.started = true;
  /* Its start-up (the thread library's allocations) is then over before
   * a fork that might follow. */
  while (!reaper.ready)
    pthread_cond_wait(&reaper.ready_cond, &reaper.lock);
  return true;
}

/* See oclInt.h. */
bool gp__ocl_reaper_take(gp__ocl_queue *q) {
  pthread_mutex_lock(&reaper.lock);
  bool took = !atomic_load(&reaper.paused) && reaper_start_locked();
  if (took) {
    q->reap_todo_next = reaper.todo;
    reaper.todo = q;
    if (reaper.asleep)
      pthread_cond_signal(&reaper.wake);
  }
  pthread_mutex_unlock(&reaper.lock);
  return took;
}

/* See oclInt.h. */
void gp__ocl_reaper_atfork_child(void) {
  /* No reaper here: the first batch starts one. */
  pthread_mutex_init(&reaper.lock, NULL);
  pthread_cond_init(&reaper.wake, NULL);
  pthread_cond_init(&reaper.ready_cond, NULL);
  pthread_mutex_init(&reaper_round_lock, NULL);
  reaper.todo = NULL;
  reaper.started = reaper.ready = reaper.asleep = reaper.failed = false;
}
