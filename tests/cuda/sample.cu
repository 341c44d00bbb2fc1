// sample.cu - the CUDA program scripts/device-check-cuda.sh records.
//
// Per iteration, inside an NVTX range "iteration": an async host-to-device
// copy and a kernel (scale) on stream 1, an event recorded after it; on
// stream 2 another copy, a fill, a wait for that event, a second kernel
// (add) that reads what scale wrote, and a device-to-host copy back. So a
// trace of N iterations holds exactly N scale and N add kernels, 3N
// copies (2N HtoD, N DtoH), N fills, N event dependencies (add waits for
// scale) and N+1 NVTX ranges ("setup" once; each "iteration" green,
// 0xff00c000, with its index as payload). The program checks its own
// results and prints what it did; exit 77 when there is no CUDA device.
//
//   sample [ITERATIONS]   (default 10)
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

__global__ void scale(float *x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= a;
}

__global__ void add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] += a[i] + b[i];
}

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "sample: %s: %s\n", #call, cudaGetErrorString(e_)); \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  int iters = argc > 1 ? std::atoi(argv[1]) : 10;
  if (iters <= 0 || iters > 100000) {
    std::fprintf(stderr, "usage: sample [ITERATIONS 1..100000]\n");
    return 2;
  }
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices <= 0) {
    std::fprintf(stderr, "sample: no CUDA device: %s\n",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 77;
  }
  const int n = 1 << 20;
  const size_t bytes = n * sizeof(float);
  nvtxRangePushA("setup");
  float *ha, *hb, *hc, *da, *db, *dc;
  CHECK(cudaMallocHost(&ha, bytes));
  CHECK(cudaMallocHost(&hb, bytes));
  CHECK(cudaMallocHost(&hc, bytes));
  CHECK(cudaMalloc(&da, bytes));
  CHECK(cudaMalloc(&db, bytes));
  CHECK(cudaMalloc(&dc, bytes));
  for (int i = 0; i < n; i++) {
    ha[i] = 1.0f;
    hb[i] = 2.0f;
  }
  cudaStream_t s1, s2;
  cudaEvent_t scaled;
  CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  CHECK(cudaEventCreateWithFlags(&scaled, cudaEventDisableTiming));
  nvtxRangePop();

  const int block = 256, grid = (n + block - 1) / block;
  for (int it = 0; it < iters; it++) {
    nvtxEventAttributes_t attr = {};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.colorType = NVTX_COLOR_ARGB;
    attr.color = 0xff00c000u;
    attr.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    attr.payload.ullValue = (unsigned long long)it;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = "iteration";
    nvtxRangePushEx(&attr);
    CHECK(cudaMemcpyAsync(da, ha, bytes, cudaMemcpyHostToDevice, s1));
    scale<<<grid, block, 0, s1>>>(da, n, 3.0f);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(scaled, s1));
    CHECK(cudaMemcpyAsync(db, hb, bytes, cudaMemcpyHostToDevice, s2));
    CHECK(cudaMemsetAsync(dc, 0, bytes, s2));
    CHECK(cudaStreamWaitEvent(s2, scaled, 0));
    add<<<grid, block, 0, s2>>>(da, db, dc, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(hc, dc, bytes, cudaMemcpyDeviceToHost, s2));
    // The next iteration's copy into da must not overtake add's reads.
    CHECK(cudaStreamSynchronize(s2));
    nvtxRangePop();
  }
  CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; i++) {
    if (std::fabs(hc[i] - 5.0f) > 1e-6f) {
      std::fprintf(stderr, "sample: wrong result at %d: %f\n", i, hc[i]);
      return 1;
    }
  }
  std::printf("sample: %d iterations: %d kernels, %d copies, %d fills, "
              "%d event waits, %d ranges\n",
              iters, 2 * iters, 3 * iters, iters, iters, iters + 1);
  cudaEventDestroy(scaled);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaFreeHost(ha);
  cudaFreeHost(hb);
  cudaFreeHost(hc);
  return 0;
}
