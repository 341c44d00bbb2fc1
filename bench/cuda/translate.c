/*
 * bench/cuda/translate.c - the cost of turning CUPTI records into ours.
 *
 *   build/bench/cuda-translate [--records N] [--runs N]
 *
 * Fills CUPTI buffers (8 MiB, from the collector's pool) with a realistic
 * mix - per launch a runtime API record, a driver API record, a kernel
 * (12 kernel names, C++ mangled) and every other launch a copy - and
 * completes them through the collector's real completion callback:
 * libcupti walks them, every record is translated (timestamps mapped
 * through the CUPTI clock, ids mapped, names interned and demangled,
 * wait ids looked up) and written into our buffers, which the core's
 * collector thread completes to a recycling consumer. Prints the median
 * over the runs of ns per CUPTI record and records/s, and the same for
 * the bare walk with cuptiActivityGetNextRecord for reference. No GPU is
 * needed: this is the host-side cost the collector adds per record.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cudaInt.h"

#define OUR_BUF (4u << 20)

static void request(uint8_t **buffer, size_t *size, size_t *max_records) {
  *buffer = aligned_alloc(8, OUR_BUF);
  *size = OUR_BUF;
  *max_records = 0;
}

static void complete(uint8_t *buffer, size_t size, size_t valid) {
  (void)size;
  (void)valid;
  free(buffer);
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static const char *names[] = {"_Z6matmulPKfS0_Pfiii",
                              "_Z7softmaxPfi",
                              "_Z4geluPKfPfi",
                              "_Z9layernormPKfS0_S0_Pfii",
                              "_Z8residualPfPKfi",
                              "_Z6scaledPfif",
                              "_Z13matmul_bwd_dAPKfS0_Pf",
                              "_Z13matmul_bwd_dBPKfS0_Pf",
                              "_Z11softmax_bwdPKfS0_Pfi",
                              "_Z8adam_sgdPfS_S_ffi",
                              "_Z9reduce_addPKfPfi",
                              "_ZN4cute6kernelILi128EEEvPKfPf"};

/* Fills one CUPTI buffer; returns the records written. */
static size_t fill(uint8_t *buf, size_t size, size_t *used, uint32_t *corr,
                   uint64_t t0) {
  size_t off = 0, n = 0;
  for (;;) {
    size_t need = sizeof(CUpti_ActivityAPI) * 2 +
                  sizeof(CUpti_ActivityKernel10) +
                  sizeof(CUpti_ActivityMemcpy6);
    if (off + need > size)
      break;
    uint32_t c = (*corr)++;
    uint64_t t = t0 + (uint64_t)c * 1000u;
    CUpti_ActivityAPI *a = (void *)(buf + off);
    memset(a, 0, sizeof(*a));
    a->kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a->cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    a->start = t;
    a->end = t + 300;
    a->processId = 1;
    a->threadId = 2;
    a->correlationId = c;
    off += sizeof(*a);
    CUpti_ActivityAPI *d = (void *)(buf + off);
    *d = *a;
    d->kind = CUPTI_ACTIVITY_KIND_DRIVER;
    d->cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
    off += sizeof(*d);
    CUpti_ActivityKernel10 *k = (void *)(buf + off);
    memset(k, 0, sizeof(*k));
    k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k->start = t + 500;
    k->end = t + 900;
    k->contextId = 1;
    k->streamId = 7 + (c & 3);
    k->gridX = 1024;
    k->gridY = k->gridZ = 1;
    k->blockX = 256;
    k->blockY = k->blockZ = 1;
    k->registersPerThread = 32;
    k->correlationId = c;
    k->name = names[c % (sizeof(names) / sizeof(names[0]))];
    off += sizeof(*k);
    n += 3;
    if (c & 1) {
      CUpti_ActivityMemcpy6 *m = (void *)(buf + off);
      memset(m, 0, sizeof(*m));
      m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
      m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
      m->bytes = 4096;
      m->start = t + 400;
      m->end = t + 450;
      m->contextId = 1;
      m->streamId = 7;
      m->correlationId = c;
      off += sizeof(*m);
      n++;
    }
  }
  *used = off;
  return n;
}

int main(int argc, char **argv) {
  uint64_t want = 2000000;
  int runs = 5;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--records") == 0 && i + 1 < argc)
      want = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: cuda-translate [--records N] [--runs N]\n");
      return 1;
    }
  }
  if (runs < 1 || runs > 100 || want < 1000) {
    fprintf(stderr, "cuda-translate: --runs 1..100, --records >= 1000\n");
    return 1;
  }
  gp_activity_register_callbacks(request, complete);
  gp_activity_enable(GP_ACTIVITY_KIND_API);
  gp_activity_enable(GP_ACTIVITY_KIND_KERNEL);
  gp_activity_enable(GP_ACTIVITY_KIND_MEMCPY);
  gp__cuda_context(1, 0, 0);
  uint64_t t0 = 0;
  cuptiGetTimestamp(&t0);

  double per[100], walk[100];
  uint32_t corr = 1;
  for (int r = 0; r < runs; r++) {
    uint64_t done = 0;
    double spent = 0, spent_walk = 0;
    while (done < want) {
      uint8_t *buf;
      size_t size, maxr, used;
      gp__cuda_buffer_request(&buf, &size, &maxr);
      if (!buf) {
        fprintf(stderr, "cuda-translate: the pool declined a buffer\n");
        return 1;
      }
      size_t n = fill(buf, size, &used, &corr, t0);
      /* The bare walk, for reference. */
      double w0 = now_ns();
      CUpti_Activity *rec = NULL;
      size_t seen = 0;
      while (cuptiActivityGetNextRecord(buf, used, &rec) == CUPTI_SUCCESS)
        seen++;
      spent_walk += now_ns() - w0;
      if (seen != n) {
        fprintf(stderr, "cuda-translate: CUPTI walked %zu of %zu\n", seen, n);
        return 1;
      }
      double a = now_ns();
      gp__cuda_buffer_complete(NULL, 0, buf, size, used);
      spent += now_ns() - a;
      done += n;
    }
    gp_activity_flush_all(0);
    per[r] = spent / (double)done;
    walk[r] = spent_walk / (double)done;
  }
  gp__cuda_buffer_stats st;
  gp__cuda_buffers_stats(&st);
  qsort(per, (size_t)runs, sizeof(double), cmp);
  qsort(walk, (size_t)runs, sizeof(double), cmp);
  double med = per[runs / 2], wmed = walk[runs / 2];
  printf("cuda-translate: %d runs of %llu CUPTI records (API, kernel, copy)\n",
         runs, (unsigned long long)want);
  printf("  translate + write   %7.1f ns/record  %6.2f M records/s (median)\n",
         med, 1e3 / med);
  printf("  CUPTI walk alone    %7.1f ns/record  %6.2f M records/s (median)\n",
         wmed, 1e3 / wmed);
  printf("  translated %llu of %llu, dropped %llu, not translated %llu\n",
         (unsigned long long)st.xlate.translated,
         (unsigned long long)st.xlate.records,
         (unsigned long long)st.xlate.dropped,
         (unsigned long long)st.xlate.unknown);
  return st.xlate.translated == st.xlate.records ? 0 : 1;
}
