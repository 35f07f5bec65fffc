// Sum of n floats: a two-stage tree reduction with warp shuffles.
// Usage: reduce --n N [--launches L]
#include "common.cuh"

template <int BLOCK>
__global__ void reduce_sum(const float* in, float* out, int n) {
  __shared__ float warp_sums[BLOCK / 32];
  float v = 0.0f;
  for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK) v += in[i];
  v = cgp_extra_work(v, 16);
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < BLOCK / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (threadIdx.x == 0) atomicAdd(out, v);
  }
}

int main(int argc, char** argv) {
  const int n = static_cast<int>(arg_long(argc, argv, "--n", 1 << 24));
  const int launches = static_cast<int>(arg_long(argc, argv, "--launches", 3));
  float *in, *out;
  CUDA_CHECK(cudaMalloc(&in, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&out, sizeof(float)));
  CUDA_CHECK(cudaMemset(in, 0, sizeof(float) * n));
#if CGP_BAD_LAUNCH
  constexpr int BLOCK = 64;
#else
  constexpr int BLOCK = 256;
#endif
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int grid = sms * 8;
  for (int l = 0; l < launches; ++l) {
    CUDA_CHECK(cudaMemset(out, 0, sizeof(float)));
    reduce_sum<BLOCK><<<grid, BLOCK>>>(in, out, n);
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaFree(in));
  CUDA_CHECK(cudaFree(out));
  std::printf("reduce n=%d launches=%d ok\n", n, launches);
  return 0;
}
