/* lists/cuda.h - tests of the CUDA/CUPTI collector. */
