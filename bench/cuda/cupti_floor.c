/*
 * bench/cuda/cupti_floor.c - CUPTI's own cost, the floor under any CUPTI
 * collector: an injection library (CUDA_INJECTION64_PATH) that enables
 * what gpuperf's collector enables for a timeline - runtime and driver
 * API records, concurrent kernels, copies and fills - with buffers whose
 * records it only counts, and (FLOOR_CALLBACKS=1) empty callbacks on the
 * runtime and driver API domains, as the collector subscribes. Prints
 * the count at exit. Used by bench/cuda/launches.sh.
 *
 *   gcc -shared -fPIC -I$CUDA_HOME/include -o cupti_floor.so
 *       cupti_floor.c -L$CUDA_HOME/lib64 -lcupti
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cupti.h>

#define BUF (8u << 20)

static uint64_t records;

static void CUPTIAPI request(uint8_t **buf, size_t *size, size_t *max) {
  *buf = aligned_alloc(8, BUF);
  *size = BUF;
  *max = 0;
}

static void CUPTIAPI complete(CUcontext ctx, uint32_t stream, uint8_t *buf,
                              size_t size, size_t valid) {
  (void)ctx, (void)stream, (void)size;
  CUpti_Activity *r = NULL;
  while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
    records++;
  free(buf);
}

static void CUPTIAPI on_api(void *u, CUpti_CallbackDomain d,
                            CUpti_CallbackId id, const void *data) {
  (void)u, (void)d, (void)id, (void)data;
}

static void at_exit(void) {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  fprintf(stderr, "cupti_floor: %llu records\n", (unsigned long long)records);
}

int InitializeInjection(void);
int InitializeInjection(void) {
  static const CUpti_ActivityKind kinds[] = {
      CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
      CUPTI_ACTIVITY_KIND_MEMSET};
  if (cuptiActivityRegisterCallbacks(request, complete) != CUPTI_SUCCESS)
    return 0;
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
    cuptiActivityEnable(kinds[i]);
  const char *cb = getenv("FLOOR_CALLBACKS");
  if (cb && *cb == '1') {
    CUpti_SubscriberHandle sub;
    if (cuptiSubscribe(&sub, on_api, NULL) == CUPTI_SUCCESS) {
      cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
      cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API);
    }
  }
  atexit(at_exit);
  return 1;
}
