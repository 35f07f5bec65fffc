// Sum of n floats: a two-stage tree reduction with warp shuffles.
// Usage: reduce --n N [--launches L]   (L kernel launches in one process, default 30)
#include "common.cuh"

// MAX_BLOCK sizes the shared array; the block the host launches may be smaller (a multiple of 32).
// The kernel's name stays `reduce_sum<256>` whatever the launch (BAD_LAUNCH changes only that).
template <int MAX_BLOCK>
__global__ void reduce_sum(const float* in, float* out, int n) {
  __shared__ float warp_sums[MAX_BLOCK / 32];
  // The planted extra work: N% more elements (the input is padded for it).
  const long work = cgp_with_extra(n);
  float v = 0.0f;
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < work;
       i += static_cast<long>(gridDim.x) * blockDim.x)
    v += in[i];
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (threadIdx.x == 0) atomicAdd(out, v);
  }
}

int main(int argc, char** argv) {
  const int n = static_cast<int>(arg_long(argc, argv, "--n", 1 << 24));
  const int launches = static_cast<int>(arg_long(argc, argv, "--launches", 30));
  const long work = cgp_with_extra(n);
  if (work > (1L << 30)) {
    std::fprintf(stderr, "--n %d is too large\n", n);
    return 2;
  }
  constexpr int MAX_BLOCK = 256;
  float *in, *out;
  CUDA_CHECK(cudaMalloc(&in, sizeof(float) * work));
  CUDA_CHECK(cudaMalloc(&out, sizeof(float)));
  cgp_fill_device(in, work, 5);
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
#if CGP_BAD_LAUNCH
  // Small blocks and one block per multiprocessor: too few loads in flight for the memory system.
  const int block = 64;
  const int grid = sms;
#else
  const int block = MAX_BLOCK;
  const int grid = sms * 8;
#endif
  for (int l = 0; l < launches; ++l) {
    CUDA_CHECK(cudaMemset(out, 0, sizeof(float)));
    reduce_sum<MAX_BLOCK><<<grid, block>>>(in, out, n);
    CUDA_CHECK_LAUNCH();
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  // The sum of the first n elements only would differ with the planted extra work, so the
  // reference sums exactly what the kernel reads: `work` values, in double precision.
  double want = 0.0;
  for (long i = 0; i < work; ++i) want += cgp_value(static_cast<uint32_t>(i), 5);
  float got = 0.0f;
  CUDA_CHECK(cudaMemcpy(&got, out, sizeof(float), cudaMemcpyDeviceToHost));
  cgp_expect_close("sum", 0, got, want, 1e-4 * want + 1e-3);
  CUDA_CHECK(cudaFree(in));
  CUDA_CHECK(cudaFree(out));
  std::printf("reduce n=%d launches=%d extra_work_pct=%d bad_launch=%d ok\n", n, launches,
              CGP_EXTRA_WORK_PCT, CGP_BAD_LAUNCH);
  return 0;
}
