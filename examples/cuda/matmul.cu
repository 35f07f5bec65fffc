// C = A * B for square n x n floats with shared-memory tiles: a compute-leaning kernel.
// Usage: matmul --n N [--launches L]
#include "common.cuh"

template <int TILE>
__global__ void matmul_tiled(const float* A, const float* B, float* C, int n) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y;
  int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
    int ac = t * TILE + threadIdx.x;
    int br = t * TILE + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < n && ac < n) ? A[row * n + ac] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (br < n && col < n) ? B[br * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < n && col < n) C[row * n + col] = cgp_extra_work(acc, n);
}

int main(int argc, char** argv) {
  const int n = static_cast<int>(arg_long(argc, argv, "--n", 1024));
  const int launches = static_cast<int>(arg_long(argc, argv, "--launches", 3));
  size_t bytes = sizeof(float) * static_cast<size_t>(n) * n;
  float *A, *B, *C;
  CUDA_CHECK(cudaMalloc(&A, bytes));
  CUDA_CHECK(cudaMalloc(&B, bytes));
  CUDA_CHECK(cudaMalloc(&C, bytes));
  CUDA_CHECK(cudaMemset(A, 0, bytes));
  CUDA_CHECK(cudaMemset(B, 0, bytes));
#if CGP_BAD_LAUNCH
  constexpr int TILE = 8;
#else
  constexpr int TILE = 32;
#endif
  dim3 block(TILE, TILE);
  dim3 grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
  for (int l = 0; l < launches; ++l) matmul_tiled<TILE><<<grid, block>>>(A, B, C, n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaFree(A));
  CUDA_CHECK(cudaFree(B));
  CUDA_CHECK(cudaFree(C));
  std::printf("matmul n=%d launches=%d ok\n", n, launches);
  return 0;
}
