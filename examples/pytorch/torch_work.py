# A real workload: cuBLAS GEMM (bf16) and a PyTorch layer norm. PLANT_PCT adds K-work to the GEMM.
import argparse, os, sys
import torch
p = argparse.ArgumentParser()
p.add_argument("--n", type=int, required=True)
p.add_argument("--iters", type=int, default=3)
a = p.parse_args()
plant = int(os.environ.get("PLANT_PCT", "0"))
n = a.n
k = n + n * plant // 100
torch.manual_seed(0)
A = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
B = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
X = torch.randn(8 * n, 4096, device="cuda", dtype=torch.float16)
ln = torch.nn.LayerNorm(4096, device="cuda", dtype=torch.float16)
for _ in range(a.iters):
    C = A @ B
    Y = ln(X)
torch.cuda.synchronize()
print(f"ok n={n} k={k} c00={float(C[0,0]):.3f} y00={float(Y[0,0]):.3f}")
