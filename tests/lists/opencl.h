/* lists/opencl.h - tests of the OpenCL interception library. */
