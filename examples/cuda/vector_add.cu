// c = a + b over n floats: a memory-bound kernel.
// Usage: vector_add --n N [--launches L]
#include "common.cuh"

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = cgp_extra_work(a[i] + b[i], 8);
}

int main(int argc, char** argv) {
  const int n = static_cast<int>(arg_long(argc, argv, "--n", 1 << 24));
  const int launches = static_cast<int>(arg_long(argc, argv, "--launches", 3));
  float *a, *b, *c;
  CUDA_CHECK(cudaMalloc(&a, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&b, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&c, sizeof(float) * n));
  CUDA_CHECK(cudaMemset(a, 0, sizeof(float) * n));
  CUDA_CHECK(cudaMemset(b, 0, sizeof(float) * n));
  const int block = CGP_BAD_LAUNCH ? 32 : 256;
  const int grid = (n + block - 1) / block;
  for (int l = 0; l < launches; ++l) vector_add<<<grid, block>>>(a, b, c, n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaFree(a));
  CUDA_CHECK(cudaFree(b));
  CUDA_CHECK(cudaFree(c));
  std::printf("vector_add n=%d launches=%d ok\n", n, launches);
  return 0;
}
