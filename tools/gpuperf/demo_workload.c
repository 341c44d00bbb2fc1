/*
 * demo_workload.c - the simulated training step behind `gpuperf demo`.
 *
 * Data-parallel training on N simulated compute GPUs: every step copies a
 * batch to each GPU, runs the forward pass (matmul, softmax) and the
 * backward pass (softmax and matmul gradients), exchanges gradients with
 * the next GPU over the peer-to-peer link, applies the update once the
 * peer's gradients have arrived, and copies the loss back to the host.
 * Steps and passes are user ranges ("training step N", "forward",
 * "backward"), as a framework would mark them. Uses the public API only.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define MAX_GPUS GP_SIM_MAX_DEVICES

typedef struct demo_gpu {
  gp_sim_context *ctx;
  gp_sim_stream *compute, *copy, *comm;
  gp_sim_event *batch_ready, *grads_ready, *grads_sent, *step_done;
  uint64_t batch, weights, activations, grads, peer_grads, loss;
} demo_gpu;

/* Variants of a kernel doing more or less work (--jitter): a launch
 * takes one at random, so its duration varies as a real GPU's does. */
#define VARIANTS 8

typedef struct demo_kernel {
  gp_sim_kernel *v[VARIANTS];
  uint32_t n;
} demo_kernel;

typedef struct demo_kernels {
  demo_kernel matmul, softmax, softmax_bwd, matmul_bwd, sgd;
  uint64_t rng; /* xorshift64 state, from the seed */
} demo_kernels;

/* The variant the next launch of k uses. */
static gp_sim_kernel *pick(demo_kernels *ks, const demo_kernel *k) {
  if (k->n == 1)
    return k->v[0];
  ks->rng ^= ks->rng << 13;
  ks->rng ^= ks->rng >> 7;
  ks->rng ^= ks->rng << 17;
  return k->v[ks->rng % k->n];
}

static const uint64_t BATCH_BYTES = 8ull << 20;
static const uint64_t WEIGHT_BYTES = 64ull << 20;
static const uint64_t GRAD_BYTES = 64ull << 20;

/* One kernel and its variants: work scaled by (1 + slow %), and with
 * jitter spread evenly over +-jitter % around that. */
static int make_kernel(const demo_options *o, const char *shortname,
                       const char *mangled, const char *demangled, double flops,
                       double bytes, double locality, uint32_t regs,
                       uint32_t shared, demo_kernel *out) {
  gp_sim_kernel_desc d;
  memset(&d, 0, sizeof(d));
  d.name = mangled;
  d.demangled_name = demangled;
  d.read_fraction = 0.7;
  d.cache_locality = locality;
  d.registers_per_thread = regs;
  d.static_shared_memory = shared;
  double scale =
      o->slow && strcmp(o->slow, shortname) == 0 ? 1 + o->slow_pct / 100 : 1;
  out->n = o->jitter > 0 ? VARIANTS : 1;
  for (uint32_t i = 0; i < out->n; i++) {
    double f = scale;
    if (out->n > 1)
      f *= 1 + o->jitter / 100 * (2.0 * i / (out->n - 1) - 1);
    d.flops_per_thread = flops * f;
    d.bytes_per_thread = bytes * f;
    int rc = gp_sim_kernel_create(&d, &out->v[i]);
    if (rc)
      return rc;
  }
  return 0;
}

static int make_kernels(const demo_options *o, demo_kernels *k) {
  int rc;
  k->rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)o->seed * 0xbf58476d1ce4e5b9ull);
  if (!k->rng)
    k->rng = 1;
  if ((rc = make_kernel(o, "matmul_kernel", "_Z13matmul_kernelPKfS0_Pfiii",
                        "matmul_kernel(float const*, float const*, float*, "
                        "int, int, int)",
                        1650, 48, 0.85, 64, 8192, &k->matmul)))
    return rc;
  if ((rc = make_kernel(o, "softmax_kernel", "_Z14softmax_kernelPKfPfii",
                        "softmax_kernel(float const*, float*, int, int)", 40,
                        96, 0.3, 32, 4096, &k->softmax)))
    return rc;
  if ((rc = make_kernel(o, "softmax_bwd_kernel",
                        "_Z18softmax_bwd_kernelPKfS0_Pfii",
                        "softmax_bwd_kernel(float const*, float const*, "
                        "float*, int, int)",
                        80, 196, 0.25, 40, 4096, &k->softmax_bwd)))
    return rc;
  if ((rc = make_kernel(o, "matmul_bwd_kernel",
                        "_Z17matmul_bwd_kernelPKfS0_S0_PfS1_iii",
                        "matmul_bwd_kernel(float const*, float const*, float "
                        "const*, float*, float*, int, int, int)",
                        2380, 64, 0.8, 72, 8192, &k->matmul_bwd)))
    return rc;
  return make_kernel(o, "sgd_update", "_Z10sgd_updatePfPKffi",
                     "sgd_update(float*, float const*, float, int)", 8, 24, 0.1,
                     24, 0, &k->sgd);
}

static void destroy_kernels(demo_kernels *k) {
  demo_kernel *all[] = {&k->matmul, &k->softmax, &k->softmax_bwd,
                        &k->matmul_bwd, &k->sgd};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
    for (uint32_t j = 0; j < all[i]->n; j++)
      gp_sim_kernel_destroy(all[i]->v[j]);
}

static int setup_gpu(uint32_t i, demo_gpu *g) {
  int rc;
  if ((rc = gp_sim_context_create(i, &g->ctx)) ||
      (rc = gp_sim_stream_create(g->ctx, &g->compute)) ||
      (rc = gp_sim_stream_create(g->ctx, &g->copy)) ||
      (rc = gp_sim_stream_create(g->ctx, &g->comm)) ||
      (rc = gp_sim_stream_set_name(g->compute, "compute")) ||
      (rc = gp_sim_stream_set_name(g->copy, "copy")) ||
      (rc = gp_sim_stream_set_name(g->comm, "comm")) ||
      (rc = gp_sim_event_create(g->ctx, &g->batch_ready)) ||
      (rc = gp_sim_event_create(g->ctx, &g->grads_ready)) ||
      (rc = gp_sim_event_create(g->ctx, &g->grads_sent)) ||
      (rc = gp_sim_event_create(g->ctx, &g->step_done)) ||
      (rc = gp_sim_malloc(g->ctx, BATCH_BYTES, &g->batch)) ||
      (rc = gp_sim_malloc(g->ctx, WEIGHT_BYTES, &g->weights)) ||
      (rc = gp_sim_malloc(g->ctx, 4 * BATCH_BYTES, &g->activations)) ||
      (rc = gp_sim_malloc(g->ctx, GRAD_BYTES, &g->grads)) ||
      (rc = gp_sim_malloc(g->ctx, GRAD_BYTES, &g->peer_grads)) ||
      (rc = gp_sim_malloc(g->ctx, 4096, &g->loss)))
    return rc;
  return 0;
}

static int forward(demo_kernels *k, demo_gpu *g) {
  const gp_sim_dim3 mm_grid = {64, 64, 1}, mm_block = {16, 16, 1};
  const gp_sim_dim3 sm_grid = {4096, 1, 1}, sm_block = {256, 1, 1};
  int rc;
  if ((rc = gp_sim_launch(g->compute, pick(k, &k->matmul), mm_grid, mm_block,
                          0)) ||
      (rc = gp_sim_launch(g->compute, pick(k, &k->softmax), sm_grid, sm_block,
                          0)))
    return rc;
  return 0;
}

static int backward(demo_kernels *k, demo_gpu *g) {
  const gp_sim_dim3 mm_grid = {64, 64, 1}, mm_block = {16, 16, 1};
  const gp_sim_dim3 sm_grid = {4096, 1, 1}, sm_block = {256, 1, 1};
  int rc;
  if ((rc = gp_sim_launch(g->compute, pick(k, &k->softmax_bwd), sm_grid,
                          sm_block, 0)) ||
      (rc = gp_sim_launch(g->compute, pick(k, &k->matmul_bwd), mm_grid,
                          mm_block, 0)))
    return rc;
  return 0;
}

static int step(uint32_t n, demo_kernels *k, demo_gpu *gpus, uint32_t ngpus,
                bool collective, const void *host_batch, void *host_loss) {
  char name[48];
  int rc;
  snprintf(name, sizeof(name), "training step %u", n);
  if ((rc = gp_range_push("demo", name)))
    return rc;
  /* The data loader prepares the batch on the CPU. */
  if ((rc = gp_sim_host_work(150000)))
    return rc;
  for (uint32_t i = 0; i < ngpus; i++) {
    demo_gpu *g = &gpus[i];
    if ((rc = gp_sim_memcpy_async(g->copy, g->batch, GP_SIM_HOST(host_batch),
                                  BATCH_BYTES, GP_MEMCPY_HTOD)) ||
        (rc = gp_sim_event_record(g->batch_ready, g->copy)) ||
        (rc = gp_sim_stream_wait_event(g->compute, g->batch_ready)))
      return rc;
  }
  if ((rc = gp_range_push("demo", "forward")))
    return rc;
  for (uint32_t i = 0; i < ngpus; i++)
    if ((rc = forward(k, &gpus[i])))
      return rc;
  if ((rc = gp_range_pop()) || (rc = gp_range_push("demo", "backward")))
    return rc;
  for (uint32_t i = 0; i < ngpus; i++)
    if ((rc = backward(k, &gpus[i])))
      return rc;
  if ((rc = gp_range_pop()))
    return rc;
  /* Gradient exchange: each GPU sends its gradients to the next one. As
   * one node of several (demo --machines), the exchange and the update
   * are the collective that every node ends together. */
  if (collective && (rc = gp_range_push("demo", "allreduce")))
    return rc;
  for (uint32_t i = 0; i < ngpus; i++) {
    demo_gpu *g = &gpus[i], *peer = &gpus[(i + 1) % ngpus];
    if ((rc = gp_sim_event_record(g->grads_ready, g->compute)) ||
        (rc = gp_sim_stream_wait_event(g->comm, g->grads_ready)))
      return rc;
    if (ngpus > 1 &&
        (rc = gp_sim_memcpy_async(g->comm, peer->peer_grads, g->grads,
                                  GRAD_BYTES, GP_MEMCPY_PTOP)))
      return rc;
    if ((rc = gp_sim_event_record(g->grads_sent, g->comm)))
      return rc;
  }
  const gp_sim_dim3 up_grid = {2048, 1, 1}, up_block = {256, 1, 1};
  for (uint32_t i = 0; i < ngpus; i++) {
    demo_gpu *g = &gpus[i], *from = &gpus[(i + ngpus - 1) % ngpus];
    if ((rc = gp_sim_stream_wait_event(g->compute, from->grads_sent)) ||
        (rc = gp_sim_launch(g->compute, pick(k, &k->sgd), up_grid, up_block,
                            0)) ||
        (rc = gp_sim_memset_async(g->compute, g->grads, 0, GRAD_BYTES)) ||
        (rc = gp_sim_event_record(g->step_done, g->compute)) ||
        (rc = gp_sim_stream_wait_event(g->copy, g->step_done)) ||
        (rc = gp_sim_memcpy_async(g->copy, GP_SIM_HOST(host_loss), g->loss,
                                  4096, GP_MEMCPY_DTOH)))
      return rc;
  }
  for (uint32_t i = 0; i < ngpus; i++)
    if ((rc = gp_sim_context_synchronize(gpus[i].ctx)))
      return rc;
  if (collective && (rc = gp_range_pop()))
    return rc;
  return gp_range_pop();
}

/* See cli.h. */
int demo_sim_init(const demo_options *opts) {
  if (opts->gpus < 1 || opts->gpus > MAX_GPUS)
    return GP_EINVAL;
  gp_sim_config cfg;
  memset(&cfg, 0, sizeof(cfg));
  cfg.num_devices = opts->gpus;
  for (uint32_t i = 0; i < opts->gpus; i++)
    cfg.models[i] = GP_SIM_MODEL_COMPUTE;
  return gp_sim_init(&cfg);
}

/* See cli.h. */
int demo_workload_run(const demo_options *opts) {
  uint32_t have = 0;
  int rc = gp_sim_device_count(&have);
  if (rc)
    return rc;
  if (opts->gpus < 1 || opts->gpus > have)
    return GP_EINVAL;
  static char host_batch[64], host_loss[64];
  demo_gpu gpus[MAX_GPUS];
  demo_kernels k;
  memset(gpus, 0, sizeof(gpus));
  if ((rc = gp_sim_host_register(host_batch, BATCH_BYTES)) ||
      (rc = make_kernels(opts, &k)))
    return rc;
  for (uint32_t i = 0; i < opts->gpus; i++)
    if ((rc = setup_gpu(i, &gpus[i])))
      return rc;
  for (uint32_t s = 1; s <= opts->steps; s++)
    if ((rc = step(s, &k, gpus, opts->gpus, opts->collective, host_batch,
                   host_loss)))
      return rc;
  for (uint32_t i = 0; i < opts->gpus; i++)
    if ((rc = gp_sim_context_destroy(gpus[i].ctx)))
      return rc;
  destroy_kernels(&k);
  return gp_sim_host_unregister(host_batch);
}
