/*
 * test_code_kinds.c - the MODULE, FUNCTION and DEVICE_ATTRIBUTE records
 * of the simulated GPUs: a module and a function per kernel created (the
 * names are the ones the test gave), an unload when it is destroyed, and
 * the attributes of every simulated device, whether the kind was enabled
 * before the devices appeared or after. Attribute values are checked
 * against the simulator's documented models (model.c: the "compute" GPU
 * has 108 units at 1.41 GHz and 80 GiB, the V3D 8 QPUs at 500 MHz).
 */
#include "harness.h"
#include "testutil.h"

/* The API record of the nth call named name, or NULL. */
static const gp_activity_api *api_named(const char *name, size_t nth) {
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_API, i)); i++) {
    const gp_activity_api *a = (const gp_activity_api *)r;
    if (strcmp(gp_activity_string(a->name_id), name) == 0 && nth-- == 0)
      return a;
  }
  return NULL;
}

static const gp_activity_module *module_record(size_t i) {
  return (const gp_activity_module *)tu_find(GP_ACTIVITY_KIND_MODULE, i);
}

static const gp_activity_function *function_record(size_t i) {
  return (const gp_activity_function *)tu_find(GP_ACTIVITY_KIND_FUNCTION, i);
}

TEST(sim_module_and_function_per_kernel) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_API));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MODULE));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_FUNCTION));
  const char *names[2] = {"_Z4saxpyifPKfPf", "_Z6reducePKfPfi"};
  gp_sim_kernel *k[2];
  for (int i = 0; i < 2; i++) {
    gp_sim_kernel_desc kd = tu_kernel_desc(names[i], 64, 16);
    ASSERT_OK(gp_sim_kernel_create(&kd, &k[i]));
  }
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  ASSERT_OK(gp_sim_launch(s, k[1], tu_dim(64), tu_dim(128), 0));
  ASSERT_OK(gp_sim_stream_synchronize(s));
  ASSERT_OK(gp_sim_kernel_destroy(k[0]));
  ASSERT_OK(gp_activity_flush_all(0));

  /* Two loads, then the unload of the first kernel's module. */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MODULE), 3);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_FUNCTION), 2);
  for (size_t i = 0; i < 2; i++) {
    const gp_activity_module *m = module_record(i);
    const gp_activity_function *f = function_record(i);
    ASSERT_EQ(m->hdr.size, sizeof(*m));
    ASSERT_EQ(f->hdr.size, sizeof(*f));
    ASSERT_EQ(m->flags, 0);
    ASSERT_STR_EQ(gp_activity_string(m->name_id), names[i]);
    ASSERT_STR_EQ(gp_activity_string(f->name_id), names[i]);
    ASSERT_EQ(m->context_id, 0); /* a simulated kernel runs anywhere */
    ASSERT_EQ(m->size_bytes, 0); /* and has no code */
    ASSERT_NE(m->module_id, 0);
    ASSERT_EQ(f->module_id, m->module_id);
    ASSERT_EQ(f->context_id, m->context_id);
    ASSERT_EQ(f->function_index, 0);
    ASSERT_NE(f->id, 0);
    /* Made during the gp_sim_kernel_create call that made the kernel. */
    const gp_activity_api *a = api_named("gp_sim_kernel_create", i);
    ASSERT_NOT_NULL(a);
    ASSERT_EQ(a->return_value, 0);
    ASSERT_GE(m->timestamp, a->start);
    ASSERT_LE(m->timestamp, a->end);
    ASSERT_EQ(f->timestamp, m->timestamp);
  }
  ASSERT_NE(module_record(0)->module_id, module_record(1)->module_id);
  ASSERT_NE(function_record(0)->id, function_record(1)->id);

  /* The unload names the first module, during gp_sim_kernel_destroy. */
  const gp_activity_module *u = module_record(2);
  ASSERT_EQ(u->flags, GP_ACTIVITY_FLAG_MODULE_UNLOAD);
  ASSERT_EQ(u->module_id, module_record(0)->module_id);
  ASSERT_STR_EQ(gp_activity_string(u->name_id), names[0]);
  const gp_activity_api *d = api_named("gp_sim_kernel_destroy", 0);
  ASSERT_NOT_NULL(d);
  ASSERT_GE(u->timestamp, d->start);
  ASSERT_LE(u->timestamp, d->end);

  /* The kernel that ran is the second function, by name. */
  const gp_activity_kernel *kr =
      (const gp_activity_kernel *)tu_find(GP_ACTIVITY_KIND_KERNEL, 0);
  ASSERT_NOT_NULL(kr);
  ASSERT_EQ(kr->name_id, function_record(1)->name_id);
  ASSERT_OK(gp_sim_kernel_destroy(k[1]));
  ASSERT_OK(gp_sim_context_destroy(ctx));
}

TEST(sim_module_function_follow_their_enables) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_FUNCTION));
  gp_sim_kernel_desc kd = tu_kernel_desc("only_function", 1, 1);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  ASSERT_OK(gp_sim_kernel_destroy(k));
  ASSERT_OK(gp_activity_disable(GP_ACTIVITY_KIND_FUNCTION));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MODULE));
  kd = tu_kernel_desc("only_module", 1, 1);
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  ASSERT_OK(gp_sim_kernel_destroy(k));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_FUNCTION), 1);
  ASSERT_STR_EQ(gp_activity_string(function_record(0)->name_id),
                "only_function");
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MODULE), 2); /* load and unload */
  ASSERT_STR_EQ(gp_activity_string(module_record(0)->name_id), "only_module");
  ASSERT_EQ(module_record(1)->flags, GP_ACTIVITY_FLAG_MODULE_UNLOAD);
}

/* The simulated models' attributes, as model.c documents them. */
typedef struct model_attrs {
  const char *model;
  int64_t v[GP_DEVICE_ATTR_COUNT];
} model_attrs;

static const model_attrs sim_models[] = {
    {"SimCompute X100",
     {[GP_DEVICE_ATTR_COMPUTE_UNITS] = 108,
      [GP_DEVICE_ATTR_MAX_THREADS_PER_BLOCK] = 1024,
      [GP_DEVICE_ATTR_GLOBAL_MEMORY_BYTES] = 80ll << 30,
      [GP_DEVICE_ATTR_CORE_CLOCK_KHZ] = 1410000,
      [GP_DEVICE_ATTR_MAX_SHARED_MEMORY_PER_BLOCK] = 48 * 1024}},
    {"V3D 4.2",
     {[GP_DEVICE_ATTR_COMPUTE_UNITS] = 8,
      [GP_DEVICE_ATTR_MAX_THREADS_PER_BLOCK] = 256,
      [GP_DEVICE_ATTR_GLOBAL_MEMORY_BYTES] = 1ll << 30,
      [GP_DEVICE_ATTR_CORE_CLOCK_KHZ] = 500000,
      [GP_DEVICE_ATTR_MAX_SHARED_MEMORY_PER_BLOCK] = 16 * 1024}},
};

/* Checks that the captured DEVICE_ATTRIBUTE records are exactly one per
 * attribute of each simulated device, with its model's values. */
static void check_sim_attributes(void) {
  uint32_t n;
  ASSERT_OK(gp_sim_device_count(&n));
  ASSERT_EQ(n, 3); /* compute, compute, v3d by default */
  const uint32_t per_device = GP_DEVICE_ATTR_COUNT - 1;
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE), n * per_device);
  uint32_t seen[3] = {0};
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE, i)); i++) {
    const gp_activity_device_attribute *a = (const void *)r;
    ASSERT_EQ(a->hdr.size, sizeof(*a));
    ASSERT_LT(a->device_id, n);
    ASSERT_EQ(a->flags, 0);
    ASSERT_EQ(a->value_type, GP_VALUE_INT64);
    ASSERT_GT(a->attribute, GP_DEVICE_ATTR_UNKNOWN);
    ASSERT_LT(a->attribute, GP_DEVICE_ATTR_COUNT);
    ASSERT_EQ(seen[a->device_id] & (1u << a->attribute), 0);
    seen[a->device_id] |= 1u << a->attribute;
    gp_device_info info;
    ASSERT_OK(gp_device_get_info(a->device_id, &info));
    const model_attrs *m = NULL;
    for (size_t j = 0; j < sizeof(sim_models) / sizeof(sim_models[0]); j++)
      if (strcmp(info.model, sim_models[j].model) == 0)
        m = &sim_models[j];
    ASSERT_NOT_NULL(m);
    ASSERT_EQ(a->value.i64, m->v[a->attribute]);
  }
}

TEST(sim_device_attributes_when_devices_appear) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE));
  gp_sim_context *ctx; /* the simulator and its devices start here */
  ASSERT_OK(gp_sim_context_create(2, &ctx));
  ASSERT_OK(gp_activity_flush_all(0));
  check_sim_attributes();
  ASSERT_OK(gp_sim_context_destroy(ctx));
}

TEST(sim_device_attributes_when_enabled_later) {
  tu_capture(1 << 16, 0);
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE), 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE));
  /* Enabling again is no new enable: no second set. */
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE));
  ASSERT_OK(gp_activity_flush_all(0));
  check_sim_attributes();
  ASSERT_OK(gp_sim_context_destroy(ctx));
}
