// c = a + b over n floats: a memory-bound kernel.
// Usage: vector_add --n N [--launches L]   (L kernel launches in one process, default 30)
#include "common.cuh"

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // The planted extra work: N% more elements (the buffers are padded for it).
  if (i < cgp_with_extra(n)) c[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
  const int n = static_cast<int>(arg_long(argc, argv, "--n", 1 << 24));
  const int launches = static_cast<int>(arg_long(argc, argv, "--launches", 30));
  const long work = cgp_with_extra(n);
  if (work > (1L << 30)) {
    std::fprintf(stderr, "--n %d is too large\n", n);
    return 2;
  }
  float *a, *b, *c;
  CUDA_CHECK(cudaMalloc(&a, sizeof(float) * work));
  CUDA_CHECK(cudaMalloc(&b, sizeof(float) * work));
  CUDA_CHECK(cudaMalloc(&c, sizeof(float) * work));
  cgp_fill_device(a, work, 1);
  cgp_fill_device(b, work, 2);
  CUDA_CHECK(cudaMemset(c, 0xff, sizeof(float) * work));  // NaN: an unwritten output fails the check
  const int block = CGP_BAD_LAUNCH ? 32 : 256;
  const int grid = static_cast<int>((work + block - 1) / block);
  for (int l = 0; l < launches; ++l) {
    vector_add<<<grid, block>>>(a, b, c, n);
    CUDA_CHECK_LAUNCH();
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  // Check the first and last elements against the host's own sums.
  const long idx[] = {0, 1, n / 2, n - 2, n - 1};
  for (long i : idx) {
    float got = 0.0f;
    CUDA_CHECK(cudaMemcpy(&got, c + i, sizeof(float), cudaMemcpyDeviceToHost));
    const float want = cgp_value(static_cast<uint32_t>(i), 1) + cgp_value(static_cast<uint32_t>(i), 2);
    cgp_expect_close("c", i, got, want, 0.0);
  }
  CUDA_CHECK(cudaFree(a));
  CUDA_CHECK(cudaFree(b));
  CUDA_CHECK(cudaFree(c));
  std::printf("vector_add n=%d launches=%d extra_work_pct=%d bad_launch=%d ok\n", n, launches,
              CGP_EXTRA_WORK_PCT, CGP_BAD_LAUNCH);
  return 0;
}
