/*
 * test-list.h - the registry of every test: GP_TEST_ENTRY(name, timeout_s).
 * A test listed here is declared by harness.h and run by harness.c; one
 * defined but not listed is a compile error (-Wmissing-prototypes). Each
 * subsystem keeps its entries in its own file under lists/.
 */
#include "lists/core.h"
#include "lists/counters.h"
#include "lists/writer.h"
#include "lists/tp.h"
#include "lists/tp_robust.h"
#include "lists/opencl.h"
#include "lists/cuda.h"
#include "lists/vulkan.h"
#include "lists/opengl.h"
#include "lists/gpulinux.h"
#include "lists/multi.h"
#include "lists/safety.h"
#include "lists/report.h"
#include "lists/lifetime.h"
#include "lists/glhud.h"
#include "lists/gl_double.h"
#include "lists/v3d.h"
