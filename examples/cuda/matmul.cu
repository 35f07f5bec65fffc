// C = A * B for square n x n floats with shared-memory tiles: a compute-leaning kernel.
// Usage: matmul --n N [--launches L]   (L kernel launches in one process, default 30)
#include "common.cuh"

constexpr int MAX_TILE = 32;

// One output element per thread, with T x T tiles; T is the block's edge. The shared tiles are
// sized for the largest T, so every instantiation has the same footprint.
template <int T>
__device__ __forceinline__ void matmul_body(const float* A, const float* B, float* C, int n,
                                            float (&As)[MAX_TILE][MAX_TILE],
                                            float (&Bs)[MAX_TILE][MAX_TILE]) {
  const int row = blockIdx.y * T + threadIdx.y;
  const int col = blockIdx.x * T + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < (n + T - 1) / T; ++t) {
    const int ac = t * T + threadIdx.x;
    const int br = t * T + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < n && ac < n) ? A[row * n + ac] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (br < n && col < n) ? B[br * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
    __syncthreads();
  }
#if CGP_EXTRA_WORK_PCT > 0
  // The planted extra work: N% more inner-product steps, the same FMA + shared loads as above,
  // over the last tile (nothing writes the tiles after the last barrier). It is added times zero:
  // the output is unchanged, and the compiler may not drop it (0 * x is NaN for infinite x).
  float extra = 0.0f;
  const int steps = static_cast<int>(cgp_with_extra(n) - n);
#pragma unroll 4
  for (int k = 0; k < steps; ++k) extra = fmaf(As[threadIdx.y][k % T], Bs[k % T][threadIdx.x], extra);
  acc = fmaf(0.0f, extra, acc);
#endif
  if (row < n && col < n) C[row * n + col] = acc;
}

// The template argument is the largest tile: the kernel's name stays `matmul_tiled<32>` whatever
// block shape the host launches it with (BAD_LAUNCH changes only the launch).
template <int TILE>
__global__ void matmul_tiled(const float* A, const float* B, float* C, int n) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  switch (blockDim.x) {
    case 32: matmul_body<32>(A, B, C, n, As, Bs); break;
    case 16: matmul_body<16>(A, B, C, n, As, Bs); break;
    default: matmul_body<8>(A, B, C, n, As, Bs); break;
  }
}

int main(int argc, char** argv) {
  const int n = static_cast<int>(arg_long(argc, argv, "--n", 1024));
  const int launches = static_cast<int>(arg_long(argc, argv, "--launches", 30));
  if (n > 16384) {
    std::fprintf(stderr, "--n %d is too large (at most 16384)\n", n);
    return 2;
  }
  const size_t count = static_cast<size_t>(n) * n;
  const size_t bytes = sizeof(float) * count;
  float *A, *B, *C;
  CUDA_CHECK(cudaMalloc(&A, bytes));
  CUDA_CHECK(cudaMalloc(&B, bytes));
  CUDA_CHECK(cudaMalloc(&C, bytes));
  cgp_fill_device(A, static_cast<long>(count), 3);
  cgp_fill_device(B, static_cast<long>(count), 4);
  CUDA_CHECK(cudaMemset(C, 0xff, bytes));  // NaN: an unwritten output fails the check
  const int tile = CGP_BAD_LAUNCH ? 8 : MAX_TILE;
  dim3 block(tile, tile);
  dim3 grid((n + tile - 1) / tile, (n + tile - 1) / tile);
  for (int l = 0; l < launches; ++l) {
    matmul_tiled<MAX_TILE><<<grid, block>>>(A, B, C, n);
    CUDA_CHECK_LAUNCH();
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  // Check two corners against dot products on the host, in double precision.
  const int cells[][2] = {{0, 0}, {n - 1, n - 1}, {n / 2, n / 3}};
  for (const auto& rc : cells) {
    const int r = rc[0], c = rc[1];
    double want = 0.0, mag = 0.0;
    for (int k = 0; k < n; ++k) {
      const double a = cgp_value(static_cast<uint32_t>(r * n + k), 3);
      const double b = cgp_value(static_cast<uint32_t>(k * n + c), 4);
      want += a * b;
      mag += std::fabs(a * b);
    }
    float got = 0.0f;
    CUDA_CHECK(cudaMemcpy(&got, C + static_cast<size_t>(r) * n + c, sizeof(float), cudaMemcpyDeviceToHost));
    cgp_expect_close("C", static_cast<long>(r) * n + c, got, want, 1e-4 * mag + 1e-6);
  }
  CUDA_CHECK(cudaFree(A));
  CUDA_CHECK(cudaFree(B));
  CUDA_CHECK(cudaFree(C));
  std::printf("matmul n=%d launches=%d extra_work_pct=%d bad_launch=%d ok\n", n, launches,
              CGP_EXTRA_WORK_PCT, CGP_BAD_LAUNCH);
  return 0;
}
