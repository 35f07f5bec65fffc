// Shared helpers for cgp-gate's example benchmarks.
//
// Build-time knobs for planted regressions (used by the real-GPU validation):
//   -DCGP_EXTRA_WORK_PCT=N   every kernel does N% more arithmetic on the same data
//   -DCGP_BAD_LAUNCH=1       a worse launch configuration (tiny blocks)
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#ifndef CGP_EXTRA_WORK_PCT
#define CGP_EXTRA_WORK_PCT 0
#endif
#ifndef CGP_BAD_LAUNCH
#define CGP_BAD_LAUNCH 0
#endif

#define CUDA_CHECK(call)                                                                  \
  do {                                                                                    \
    cudaError_t err_ = (call);                                                            \
    if (err_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                  \
                   cudaGetErrorString(err_));                                             \
      std::exit(2);                                                                       \
    }                                                                                     \
  } while (0)

// `--name value` from argv, or the default.
static long arg_long(int argc, char** argv, const char* name, long fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) {
      char* end = nullptr;
      long v = std::strtol(argv[i + 1], &end, 10);
      if (end == argv[i + 1] || *end != '\0' || v <= 0) {
        std::fprintf(stderr, "invalid value for %s: %s\n", name, argv[i + 1]);
        std::exit(2);
      }
      return v;
    }
  }
  return fallback;
}

// Extra dependent FMAs: a known amount of added work per element that the compiler cannot drop.
__device__ __forceinline__ float cgp_extra_work(float x, int base_ops) {
#if CGP_EXTRA_WORK_PCT > 0
  int extra = (base_ops * CGP_EXTRA_WORK_PCT + 99) / 100;
  float y = x;
  for (int i = 0; i < extra; ++i) y = fmaf(y, 1.0000001f, 1e-7f);
  return y - (y - x);
#else
  (void)base_ops;
  return x;
#endif
}
