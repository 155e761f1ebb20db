#!/usr/bin/env python3
"""PyTorch's FP8 GEMM, the peer of `gpucheck bench --ops gemm --dtype fp8`: torch._scaled_mm with
e4m3 inputs (standard normal values rounded to e4m3), scale tensors of 1.0, out_dtype bf16 and
fast accumulation off (torch's default, and gpucheck's), the second operand column-major (the
"TN" layout cuBLASLt's FP8 kernels need; gpucheck sends B K-major the same way). One JSON object a
line: {"peer": "torch", "op": "gemm", "dtype": "fp8", "m", "n", "k", "median_s", "TFLOPs", ...}.

  python3 fp8_peer.py --gemm 8192,16384 [--reps 30]

Timing as shared/tools/peers.py's median_cuda: CUDA events around each call, three warm-ups, the
median of --reps. 2mnk FLOP a GEMM.
"""
import argparse
import json

import torch


def median_cuda(fn, reps, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    t = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        t.append(s.elapsed_time(e) / 1e3)
    t.sort()
    return t[len(t) // 2], t[0]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gemm", default="8192,16384", help="square sizes m=n=k, comma-separated")
    p.add_argument("--reps", type=int, default=30)
    a = p.parse_args()
    dev = "cuda"
    one = torch.tensor(1.0, device=dev, dtype=torch.float32)
    torch.manual_seed(0)
    for m in [int(v) for v in a.gemm.split(",") if v]:
        A = torch.randn(m, m, device=dev).to(torch.float8_e4m3fn)
        Bt = torch.randn(m, m, device=dev).to(torch.float8_e4m3fn)  # B as n×k row-major
        B = Bt.t()  # k×n, column-major
        out = torch._scaled_mm(A, B, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        # A sanity check of the call itself: the same product from the decoded values in f32.
        ref = A.float() @ B.float()
        rel = ((out.float() - ref).abs().max() / ref.abs().max()).item()
        med, best = median_cuda(
            lambda: torch._scaled_mm(A, B, scale_a=one, scale_b=one, out_dtype=torch.bfloat16), a.reps)
        flop = 2.0 * m ** 3
        print(json.dumps({"peer": "torch", "device": "cuda0", "op": "gemm", "dtype": "fp8", "m": m,
                          "n": m, "k": m, "median_s": med, "min_s": best, "TFLOPs": flop / med / 1e12,
                          "max_rel_diff_vs_f32": rel, "torch": torch.__version__}),
              flush=True)
        del A, Bt, B, out, ref
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
