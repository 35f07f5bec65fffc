// Shared helpers for cgp-gate's example benchmarks.
//
// Build-time knobs for planted regressions (used by the real-GPU validation, scripts/validate-gpu.sh):
//   -DCGP_EXTRA_WORK_PCT=N   every kernel thread does N% more of its own work: vector_add and reduce
//                            run over N% more elements (more bytes and more time), matmul does N% more
//                            inner-product steps per output element out of shared memory (more
//                            instructions and more time, the same global memory traffic). The
//                            outputs that the programs check are unchanged. The device code differs
//                            from the plain build (the work bound is a compile-time constant inside
//                            each kernel): tests/gpu_kit.rs checks that in the SASS.
//   -DCGP_BAD_LAUNCH=1       a worse launch configuration chosen on the host (smaller blocks; for
//                            reduce also a smaller grid) with the SAME kernels: their names and their
//                            machine code are identical to the plain build, as when a pull request
//                            changes only a launch. tests/gpu_kit.rs checks that too.
//
// Inputs are filled with hash-derived values in [0, 1) on the device (never zeros: zeros hide
// unwritten outputs and can run faster than real data), and each program checks a few outputs
// against a host reference before it reports success: exit 0 means the kernels computed the
// right thing, any failure exits 2 with a message.
#pragma once
#include <cmath>
#include <cstdint>
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

#if CGP_EXTRA_WORK_PCT < 0 || CGP_EXTRA_WORK_PCT > 1000
#error "CGP_EXTRA_WORK_PCT must be between 0 and 1000"
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

// A launch's own errors (bad configuration) and, after a synchronisation, its execution errors.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

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

// The amount of work with the planted extra: `base` plus CGP_EXTRA_WORK_PCT percent, rounded to
// the nearest unit. A compile-time function of the macro, so the device code carries it.
__host__ __device__ __forceinline__ long cgp_with_extra(long base) {
  return base + (base * CGP_EXTRA_WORK_PCT + 50) / 100;
}

// A value in [0, 1) for index i: the same on host and device, so the host can check results
// without copying inputs back.
__host__ __device__ __forceinline__ float cgp_value(uint32_t i, uint32_t seed) {
  uint32_t x = i * 0x9E3779B1u ^ seed;
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  x *= 0xC2B2AE35u;
  x ^= x >> 16;
  return static_cast<float>(x >> 8) * (1.0f / 16777216.0f);
}

// Fills p[0..n) with cgp_value(i, seed). Not profiled: every spec names its kernels.
__global__ void cgp_fill(float* p, long n, uint32_t seed) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    p[i] = cgp_value(static_cast<uint32_t>(i), seed);
  }
}

static void cgp_fill_device(float* p, long n, uint32_t seed) {
  cgp_fill<<<1024, 256>>>(p, n, seed);
  CUDA_CHECK_LAUNCH();
}

// Exit 2 with a message when `got` is not within `tol` of `want`.
static void cgp_expect_close(const char* what, long index, double got, double want, double tol) {
  if (!(std::fabs(got - want) <= tol)) {
    std::fprintf(stderr, "wrong result: %s[%ld] = %.9g, expected %.9g (tolerance %.3g)\n", what, index,
                 got, want, tol);
    std::exit(2);
  }
}
