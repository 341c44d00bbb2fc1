/*
 * cl_api.h - the OpenCL 3.0 core API as one X-macro table.
 *
 * One row per entry point the interception library defines:
 *
 *   X(handling, result, name, return type, (parameters), (arguments))
 *
 * handling: P for a plain call (plain.c generates a wrapper that forwards
 * it and writes its API record), S for a call with a hand-written wrapper
 * (enqueues, queue and context creation, events...: see enqueue.c and
 * objects.c). result says how the return value becomes the API record's
 * return_value: INT (a cl_int error code), OBJ (an object, with the error
 * code in the last parameter, errcode_ret), PTR (a pointer, 0 if non-NULL,
 * else -1) or VOID (always 0).
 *
 * The row's index is the call's id (cbid) in API records of domain
 * GP_API_DOMAIN_OPENCL; ids are stable: new rows go at the end. The
 * parameter lists match <CL/cl.h> of OpenCL 3.0 (the compiler checks each
 * wrapper against its declaration there). The cl_gl/cl_egl interop calls
 * and extension functions are not in the table: they reach the driver
 * unrecorded (see docs/opencl.md).
 */
#ifndef GPUPERF_OPENCL_CL_API_H
#define GPUPERF_OPENCL_CL_API_H

/* clang-format off */
#define GP_CL_API(X) \
  X(P, INT, clGetPlatformIDs, cl_int, (cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms), (num_entries, platforms, num_platforms)) \
  X(P, INT, clGetPlatformInfo, cl_int, (cl_platform_id platform, cl_platform_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (platform, param_name, param_value_size, param_value, param_value_size_ret)) \
  X(P, INT, clGetDeviceIDs, cl_int, (cl_platform_id platform, cl_device_type device_type, cl_uint num_entries, cl_device_id *devices, cl_uint *num_devices), (platform, device_type, num_entries, devices, num_devices)) \
  X(P, INT, clGetDeviceInfo, cl_int, (cl_device_id device, cl_device_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (device, param_name, param_value_size, param_value, param_value_size_ret)) \
  X(P, INT, clCreateSubDevices, cl_int, (cl_device_id in_device, const cl_device_partition_property *properties, cl_uint num_devices, cl_device_id *out_devices, cl_uint *num_devices_ret), (in_device, properties, num_devices, out_devices, num_devices_ret)) \
  X(P, INT, clRetainDevice, cl_int, (cl_device_id device), (device)) \
  X(P, INT, clReleaseDevice, cl_int, (cl_device_id device), (device)) \
  X(P, INT, clSetDefaultDeviceCommandQueue, cl_int, (cl_context context, cl_device_id device, cl_command_queue command_queue), (context, device, command_queue)) \
  X(P, INT, clGetDeviceAndHostTimer, cl_int, (cl_device_id device, cl_ulong *device_timestamp, cl_ulong *host_timestamp), (device, device_timestamp, host_timestamp)) \
  X(P, INT, clGetHostTimer, cl_int, (cl_device_id device, cl_ulong *host_timestamp), (device, host_timestamp)) \
  X(S, OBJ, clCreateContext, cl_context, (const cl_context_properties *properties, cl_uint num_devices, const cl_device_id *devices, void (*pfn_notify)(const char *errinfo, const void *private_info, size_t cb, void *user_data), void *user_data, cl_int *errcode_ret), (properties, num_devices, devices, pfn_notify, user_data, errcode_ret)) \
  X(S, OBJ, clCreateContextFromType, cl_context, (const cl_context_properties *properties, cl_device_type device_type, void (*pfn_notify)(const char *errinfo, const void *private_info, size_t cb, void *user_data), void *user_data, cl_int *errcode_ret), (properties, device_type, pfn_notify, user_data, errcode_ret)) \
  X(P, INT, clRetainContext, cl_int, (cl_context context), (context)) \
  X(P, INT, clReleaseContext, cl_int, (cl_context context), (context)) \
  X(P, INT, clGetContextInfo, cl_int, (cl_context context, cl_context_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (context, param_name, param_value_size, param_value, param_value_size_ret)) \
  X(P, INT, clSetContextDestructorCallback, cl_int, (cl_context context, void (*pfn_notify)(cl_context context, void *user_data), void *user_data), (context, pfn_notify, user_data)) \
  X(S, OBJ, clCreateCommandQueueWithProperties, cl_command_queue, (cl_context context, cl_device_id device, const cl_queue_properties *properties, cl_int *errcode_ret), (context, device, properties, errcode_ret)) \
  X(P, INT, clRetainCommandQueue, cl_int, (cl_command_queue command_queue), (command_queue)) \
  X(S, INT, clReleaseCommandQueue, cl_int, (cl_command_queue command_queue), (command_queue)) \
  X(S, INT, clGetCommandQueueInfo, cl_int, (cl_command_queue command_queue, cl_command_queue_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (command_queue, param_name, param_value_size, param_value, param_value_size_ret)) \
  X(P, OBJ, clCreateBuffer, cl_mem, (cl_context context, cl_mem_flags flags, size_t size, void *host_ptr, cl_int *errcode_ret), (context, flags, size, host_ptr, errcode_ret)) \
  X(P, OBJ, clCreateSubBuffer, cl_mem, (cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type buffer_create_type, const void *buffer_create_info, cl_int *errcode_ret), (buffer, flags, buffer_create_type, buffer_create_info, errcode_ret)) \
  X(P, OBJ, clCreateImage, cl_mem, (cl_context context, cl_mem_flags flags, const cl_image_format *image_format, const cl_image_desc *image_desc, void *host_ptr, cl_int *errcode_ret), (context, flags, image_format, image_desc, host_ptr, errcode_ret)) \
  X(P, OBJ, clCreatePipe, cl_mem, (cl_context context, cl_mem_flags flags, cl_uint pipe_packet_size, cl_uint pipe_max_packets, const cl_pipe_properties *properties, cl_int *errcode_ret), (context, flags, pipe_packet_size, pipe_max_packets, properties, errcode_ret)) \
  X(P, OBJ, clCreateBufferWithProperties, cl_mem, (cl_context context, const cl_mem_properties *properties, cl_mem_flags flags, size_t size, void *host_ptr, cl_int *errcode_ret), (context, properties, flags, size, host_ptr, errcode_ret)) \
  X(P, OBJ, clCreateImageWithProperties, cl_mem, (cl_context context, const cl_mem_properties *properties, cl_mem_flags flags, const cl_image_format *image_format, const cl_image_desc *image_desc, void *host_ptr, cl_int *errcode_ret), (context, properties, flags, image_format, image_desc, host_ptr, errcode_ret)) \
  X(P, INT, clRetainMemObject, cl_int, (cl_mem memobj), (memobj)) \
  X(P, INT, clReleaseMemObject, cl_int, (cl_mem memobj), (memobj)) \
  X(P, INT, clGetSupportedImageFormats, cl_int, (cl_context context, cl_mem_flags flags, cl_mem_object_type image_type, cl_uint num_entries, cl_image_format *image_formats, cl_uint *num_image_formats), (context, flags, image_type, num_entries, image_formats, num_image_formats)) \
  X(P, INT, clGetMemObjectInfo, cl_int, (cl_mem memobj, cl_mem_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (memobj, param_name, param_value_size, param_value, param_value_size_ret)) \
  X(P, INT, clGetImageInfo, cl_int, (cl_mem image, cl_image_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (image, param_name, param_value_size, param_value, param_value_size_ret)) \
  X(P, INT, clGetPipeInfo, cl_int, (cl_mem pipe, cl_pipe_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (pipe, param_name, param_value_size, param_value, param_value_size_ret)) \
  X(P, INT, clSetMemObjectDestructorCallback, cl_int, (cl_mem memobj, void (*pfn_notify)(cl_mem memobj, void *user_data), void *user_data), (memobj, pfn_notify, user_data)) \
  X(S, PTR, clSVMAlloc, void *, (cl_context context, cl_svm_mem_flags flags, size_t size, cl_uint alignment), (context, flags, size, alignment)) \
  X(S, VOID, clSVMFree, void, (cl_context context, void *svm_pointer), (context, svm_pointer)) \
  X(P, OBJ, clCreateSamplerWithProperties, cl_sampler, (cl_context context, const cl_sampler_properties *sampler_properties, cl_int *errcode_ret), (context, sampler_properties, errcode_ret)) \
  X(P, INT, clRetainSampler, cl_int, (cl_sampler sampler), (sampler)) \
  X(P, INT, clReleaseSampler, cl_int, (cl_sampler sampler), (sampler)) \
  X(P, INT, clGetSamplerInfo, cl_int, (cl_sampler sampler, cl_sampler_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (sampler, param_name, param_value_size, param_value, param_value_size_ret)) \
  X(P, OBJ, clCreateProgramWithSource, cl_program, (cl_context context, cl_uint count, const char * *strings, const size_t *lengths, cl_int *errcode_ret), (context, count, strings, lengths, errcode_ret)) \
  X(P, OBJ, clCreateProgramWithBinary, cl_program, (cl_context context, cl_uint num_devices, const cl_device_id *device_list, const size_t *lengths, const unsigned char * *binaries, cl_int *binary_status, cl_int *errcode_ret), (context, num_devices, device_list, lengths, binaries, binary_status, errcode_ret)) \
  X(P, OBJ, clCreateProgramWithBuiltInKernels, cl_program, (cl_context context, cl_uint num_devices, const cl_device_id *device_list, const char *kernel_names, cl_int *errcode_ret), (context, num_devices, device_list, kernel_names, errcode_ret)) \
  X(P, OBJ, clCreateProgramWithIL, cl_program, (cl_context context, const void *il, size_t length, cl_int *errcode_ret), (context, il, length, errcode_ret)) \
  X(P, INT, clRetainProgram, cl_int, (cl_program program), (program)) \
  X(P, INT, clReleaseProgram, cl_int, (cl_program program), (program)) \
  X(S, INT, clBuildProgram, cl_int, (cl_program program, cl_uint num_devices, const cl_device_id *device_list, const char *options, void (*pfn_notify)(cl_program program, void *user_data), void *user_data), (program, num_devices, device_list, options, pfn_notify, user_data)) \
  X(P, INT, clCompileProgram, cl_int, (cl_program program, cl_uint num_devices, const cl_device_id *device_list, const char *options, cl_uint num_input_headers, const cl_program *input_headers, const char * *header_include_names, void (*pfn_notify)(cl_program program, void *user_data), void *user_data), (program, num_devices, device_list, options, num_input_headers, input_headers, header_include_names, pfn_notify, user_data)) \
  X(P, OBJ, clLinkProgram, cl_program, (cl_context context, cl_uint num_devices, const cl_device_id *device_list, const char *options, cl_uint num_input_programs, const cl_program *input_programs, void (*pfn_notify)(cl_program program, void *user_data), void *user_data, cl_int *errcode_ret), (context, num_devices, device_list, options, num_input_programs, input_programs, pfn_notify, user_data, errcode_ret)) \
  X(P, INT, clSetProgramReleaseCallback, cl_int, (cl_program program, void (*pfn_notify)(cl_program program, void *user_data), void *user_data), (program, pfn_notify, user_data)) \
  X(P, INT, clSetProgramSpecializationConstant, cl_int, (cl_program program, cl_uint spec_id, size_t spec_size, const void *spec_value), (program, spec_id, spec_size, spec_value)) \
  X(P, INT, clUnloadPlatformCompiler, cl_int, (cl_platform_id platform), (platform)) \
  X(P, INT, clGetProgramInfo, cl_int, (cl_program program, cl_program_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (program, param_name, param_value_size, param_value, param_value_size_ret)) \
  X(P, INT, clGetProgramBuildInfo, cl_int, (cl_program program, cl_device_id device, cl_program_build_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (program, device, param_name, param_value_size, param_value, param_value_size_ret)) \
  X(S, OBJ, clCreateKernel, cl_kernel, (cl_program program, const char *kernel_name, cl_int *errcode_ret), (program, kernel_name, errcode_ret)) \
  X(S, INT, clCreateKernelsInProgram, cl_int, (cl_program program, cl_uint num_kernels, cl_kernel *kernels, cl_uint *num_kernels_ret), (program, num_kernels, kernels, num_kernels_ret)) \
  X(S, OBJ, clCloneKernel, cl_kernel, (cl_kernel source_kernel, cl_int *errcode_ret), (source_kernel, errcode_ret)) \
  X(P, INT, clRetainKernel, cl_int, (cl_kernel kernel), (kernel)) \
  X(P, INT, clReleaseKernel, cl_int, (cl_kernel kernel), (kernel)) \
  X(S, INT, clSetKernelArg, cl_int, (cl_kernel kernel, cl_uint arg_index, size_t arg_size, const void *arg_value), (kernel, arg_index, arg_size, arg_value)) \
  X(P, INT, clSetKernelArgSVMPointer, cl_int, (cl_kernel kernel, cl_uint arg_index, const void *arg_value), (kernel, arg_index, arg_value)) \
  X(P, INT, clSetKernelExecInfo, cl_int, (cl_kernel kernel, cl_kernel_exec_info param_name, size_t param_value_size, const void *param_value), (kernel, param_name, param_value_size, param_value)) \
  X(P, INT, clGetKernelInfo, cl_int, (cl_kernel kernel, cl_kernel_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (kernel, param_name, param_value_size, param_value, param_value_size_ret)) \
  X(P, INT, clGetKernelArgInfo, cl_int, (cl_kernel kernel, cl_uint arg_indx, cl_kernel_arg_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (kernel, arg_indx, param_name, param_value_size, param_value, param_value_size_ret)) \
  X(P, INT, clGetKernelWorkGroupInfo, cl_int, (cl_kernel kernel, cl_device_id device, cl_kernel_work_group_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (kernel, device, param_name, param_value_size, param_value, param_value_size_ret)) \
  X(P, INT, clGetKernelSubGroupInfo, cl_int, (cl_kernel kernel, cl_device_id device, cl_kernel_sub_group_info param_name, size_t input_value_size, const void *input_value, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (kernel, device, param_name, input_value_size, input_value, param_value_size, param_value, param_value_size_ret)) \
  X(S, INT, clWaitForEvents, cl_int, (cl_uint num_events, const cl_event *event_list), (num_events, event_list)) \
  X(P, INT, clGetEventInfo, cl_int, (cl_event event, cl_event_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (event, param_name, param_value_size, param_value, param_value_size_ret)) \
  X(S, OBJ, clCreateUserEvent, cl_event, (cl_context context, cl_int *errcode_ret), (context, errcode_ret)) \
  X(P, INT, clRetainEvent, cl_int, (cl_event event), (event)) \
  X(S, INT, clReleaseEvent, cl_int, (cl_event event), (event)) \
  X(P, INT, clSetUserEventStatus, cl_int, (cl_event event, cl_int execution_status), (event, execution_status)) \
  X(P, INT, clSetEventCallback, cl_int, (cl_event event, cl_int command_exec_callback_type, void (*pfn_notify)(cl_event event, cl_int event_command_status, void *user_data), void *user_data), (event, command_exec_callback_type, pfn_notify, user_data)) \
  X(S, INT, clGetEventProfilingInfo, cl_int, (cl_event event, cl_profiling_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (event, param_name, param_value_size, param_value, param_value_size_ret)) \
  X(P, INT, clFlush, cl_int, (cl_command_queue command_queue), (command_queue)) \
  X(S, INT, clFinish, cl_int, (cl_command_queue command_queue), (command_queue)) \
  X(S, INT, clEnqueueReadBuffer, cl_int, (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read, size_t offset, size_t size, void *ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, buffer, blocking_read, offset, size, ptr, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueReadBufferRect, cl_int, (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read, const size_t *buffer_origin, const size_t *host_origin, const size_t *region, size_t buffer_row_pitch, size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch, void *ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, buffer, blocking_read, buffer_origin, host_origin, region, buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueWriteBuffer, cl_int, (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write, size_t offset, size_t size, const void *ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, buffer, blocking_write, offset, size, ptr, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueWriteBufferRect, cl_int, (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write, const size_t *buffer_origin, const size_t *host_origin, const size_t *region, size_t buffer_row_pitch, size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch, const void *ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, buffer, blocking_write, buffer_origin, host_origin, region, buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueFillBuffer, cl_int, (cl_command_queue command_queue, cl_mem buffer, const void *pattern, size_t pattern_size, size_t offset, size_t size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, buffer, pattern, pattern_size, offset, size, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueCopyBuffer, cl_int, (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer, size_t src_offset, size_t dst_offset, size_t size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, src_buffer, dst_buffer, src_offset, dst_offset, size, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueCopyBufferRect, cl_int, (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer, const size_t *src_origin, const size_t *dst_origin, const size_t *region, size_t src_row_pitch, size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, src_buffer, dst_buffer, src_origin, dst_origin, region, src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueReadImage, cl_int, (cl_command_queue command_queue, cl_mem image, cl_bool blocking_read, const size_t *origin, const size_t *region, size_t row_pitch, size_t slice_pitch, void *ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, image, blocking_read, origin, region, row_pitch, slice_pitch, ptr, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueWriteImage, cl_int, (cl_command_queue command_queue, cl_mem image, cl_bool blocking_write, const size_t *origin, const size_t *region, size_t input_row_pitch, size_t input_slice_pitch, const void *ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, image, blocking_write, origin, region, input_row_pitch, input_slice_pitch, ptr, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueFillImage, cl_int, (cl_command_queue command_queue, cl_mem image, const void *fill_color, const size_t *origin, const size_t *region, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, image, fill_color, origin, region, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueCopyImage, cl_int, (cl_command_queue command_queue, cl_mem src_image, cl_mem dst_image, const size_t *src_origin, const size_t *dst_origin, const size_t *region, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, src_image, dst_image, src_origin, dst_origin, region, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueCopyImageToBuffer, cl_int, (cl_command_queue command_queue, cl_mem src_image, cl_mem dst_buffer, const size_t *src_origin, const size_t *region, size_t dst_offset, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, src_image, dst_buffer, src_origin, region, dst_offset, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueCopyBufferToImage, cl_int, (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_image, size_t src_offset, const size_t *dst_origin, const size_t *region, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, src_buffer, dst_image, src_offset, dst_origin, region, num_events_in_wait_list, event_wait_list, event)) \
  X(S, OBJ, clEnqueueMapBuffer, void *, (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_map, cl_map_flags map_flags, size_t offset, size_t size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event, cl_int *errcode_ret), (command_queue, buffer, blocking_map, map_flags, offset, size, num_events_in_wait_list, event_wait_list, event, errcode_ret)) \
  X(S, OBJ, clEnqueueMapImage, void *, (cl_command_queue command_queue, cl_mem image, cl_bool blocking_map, cl_map_flags map_flags, const size_t *origin, const size_t *region, size_t *image_row_pitch, size_t *image_slice_pitch, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event, cl_int *errcode_ret), (command_queue, image, blocking_map, map_flags, origin, region, image_row_pitch, image_slice_pitch, num_events_in_wait_list, event_wait_list, event, errcode_ret)) \
  X(S, INT, clEnqueueUnmapMemObject, cl_int, (cl_command_queue command_queue, cl_mem memobj, void *mapped_ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, memobj, mapped_ptr, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueMigrateMemObjects, cl_int, (cl_command_queue command_queue, cl_uint num_mem_objects, const cl_mem *mem_objects, cl_mem_migration_flags flags, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, num_mem_objects, mem_objects, flags, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueNDRangeKernel, cl_int, (cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim, const size_t *global_work_offset, const size_t *global_work_size, const size_t *local_work_size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, kernel, work_dim, global_work_offset, global_work_size, local_work_size, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueNativeKernel, cl_int, (cl_command_queue command_queue, void (*user_func)(void *), void *args, size_t cb_args, cl_uint num_mem_objects, const cl_mem *mem_list, const void * *args_mem_loc, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, user_func, args, cb_args, num_mem_objects, mem_list, args_mem_loc, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueMarkerWithWaitList, cl_int, (cl_command_queue command_queue, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueBarrierWithWaitList, cl_int, (cl_command_queue command_queue, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueSVMFree, cl_int, (cl_command_queue command_queue, cl_uint num_svm_pointers, void *svm_pointers[], void (*pfn_free_func)(cl_command_queue queue, cl_uint num_svm_pointers, void *svm_pointers[], void *user_data), void *user_data, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, num_svm_pointers, svm_pointers, pfn_free_func, user_data, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueSVMMemcpy, cl_int, (cl_command_queue command_queue, cl_bool blocking_copy, void *dst_ptr, const void *src_ptr, size_t size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, blocking_copy, dst_ptr, src_ptr, size, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueSVMMemFill, cl_int, (cl_command_queue command_queue, void *svm_ptr, const void *pattern, size_t pattern_size, size_t size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, svm_ptr, pattern, pattern_size, size, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueSVMMap, cl_int, (cl_command_queue command_queue, cl_bool blocking_map, cl_map_flags flags, void *svm_ptr, size_t size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, blocking_map, flags, svm_ptr, size, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueSVMUnmap, cl_int, (cl_command_queue command_queue, void *svm_ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, svm_ptr, num_events_in_wait_list, event_wait_list, event)) \
  X(S, INT, clEnqueueSVMMigrateMem, cl_int, (cl_command_queue command_queue, cl_uint num_svm_pointers, const void * *svm_pointers, const size_t *sizes, cl_mem_migration_flags flags, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, num_svm_pointers, svm_pointers, sizes, flags, num_events_in_wait_list, event_wait_list, event)) \
  X(P, PTR, clGetExtensionFunctionAddressForPlatform, void *, (cl_platform_id platform, const char *func_name), (platform, func_name)) \
  X(S, INT, clSetCommandQueueProperty, cl_int, (cl_command_queue command_queue, cl_command_queue_properties properties, cl_bool enable, cl_command_queue_properties *old_properties), (command_queue, properties, enable, old_properties)) \
  X(P, OBJ, clCreateImage2D, cl_mem, (cl_context context, cl_mem_flags flags, const cl_image_format *image_format, size_t image_width, size_t image_height, size_t image_row_pitch, void *host_ptr, cl_int *errcode_ret), (context, flags, image_format, image_width, image_height, image_row_pitch, host_ptr, errcode_ret)) \
  X(P, OBJ, clCreateImage3D, cl_mem, (cl_context context, cl_mem_flags flags, const cl_image_format *image_format, size_t image_width, size_t image_height, size_t image_depth, size_t image_row_pitch, size_t image_slice_pitch, void *host_ptr, cl_int *errcode_ret), (context, flags, image_format, image_width, image_height, image_depth, image_row_pitch, image_slice_pitch, host_ptr, errcode_ret)) \
  X(S, INT, clEnqueueMarker, cl_int, (cl_command_queue command_queue, cl_event *event), (command_queue, event)) \
  X(S, INT, clEnqueueWaitForEvents, cl_int, (cl_command_queue command_queue, cl_uint num_events, const cl_event *event_list), (command_queue, num_events, event_list)) \
  X(S, INT, clEnqueueBarrier, cl_int, (cl_command_queue command_queue), (command_queue)) \
  X(P, INT, clUnloadCompiler, cl_int, (void), ()) \
  X(P, PTR, clGetExtensionFunctionAddress, void *, (const char *func_name), (func_name)) \
  X(S, OBJ, clCreateCommandQueue, cl_command_queue, (cl_context context, cl_device_id device, cl_command_queue_properties properties, cl_int *errcode_ret), (context, device, properties, errcode_ret)) \
  X(P, OBJ, clCreateSampler, cl_sampler, (cl_context context, cl_bool normalized_coords, cl_addressing_mode addressing_mode, cl_filter_mode filter_mode, cl_int *errcode_ret), (context, normalized_coords, addressing_mode, filter_mode, errcode_ret)) \
  X(S, INT, clEnqueueTask, cl_int, (cl_command_queue command_queue, cl_kernel kernel, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, kernel, num_events_in_wait_list, event_wait_list, event))

/* clang-format on */

#endif /* GPUPERF_OPENCL_CL_API_H */
