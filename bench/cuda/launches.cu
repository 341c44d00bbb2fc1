/*
 * bench/cuda/launches.cu - a program that launches small kernels as fast
 * as it can, and says how fast by its own clock: the program that
 * bench/cuda/launches.sh runs with and without `gpuperf record`.
 *
 *   launches [KERNELS] [PER_SYNC]     (defaults 200000, 1000)
 *
 * Launches KERNELS tiny kernels (one block of 32 threads, one add each)
 * on one stream, synchronising every PER_SYNC, after a warm-up of 1000.
 * Prints "launches: N kernels in T ms: R kernels/s" and checks the
 * result. Exit 77 without a CUDA device, 1 on a wrong result.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__global__ void bump(int *x) {
  if (threadIdx.x == 0)
    atomicAdd(x, 1);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 200000;
  long per_sync = argc > 2 ? atol(argv[2]) : 1000;
  if (n < 1 || per_sync < 1) {
    fprintf(stderr, "usage: launches [KERNELS] [PER_SYNC]\n");
    return 2;
  }
  int *x;
  if (cudaMalloc(&x, sizeof(int)) != cudaSuccess) {
    fprintf(stderr, "launches: no CUDA device\n");
    return 77;
  }
  cudaMemset(x, 0, sizeof(int));
  cudaStream_t s;
  cudaStreamCreate(&s);
  for (int i = 0; i < 1000; i++)
    bump<<<1, 32, 0, s>>>(x);
  cudaStreamSynchronize(s);
  double t0 = now_ms();
  for (long i = 0; i < n; i++) {
    bump<<<1, 32, 0, s>>>(x);
    if ((i + 1) % per_sync == 0)
      cudaStreamSynchronize(s);
  }
  cudaStreamSynchronize(s);
  double ms = now_ms() - t0;
  int got = 0;
  cudaMemcpy(&got, x, sizeof(int), cudaMemcpyDeviceToHost);
  if (got != n + 1000) {
    fprintf(stderr, "launches: wrong result %d, want %ld\n", got, n + 1000);
    return 1;
  }
  printf("launches: %ld kernels in %.1f ms: %.0f kernels/s\n", n, ms,
         n / (ms / 1e3));
  return 0;
}
