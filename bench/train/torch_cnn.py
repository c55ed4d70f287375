# SPDX-License-Identifier: MIT
# torch_cnn.py - the demo's CNN (conv 32, pool, conv 64, pool, dense 128, dense 10 on 28 x 28 x 1
# images, 3 x 3 convolutions with padding 1, ReLU, 2 x 2 max pooling; cross-entropy; Adam)
# trained by PyTorch on the host CPU on a fixed batch of random images, fp32 or bf16 autocast,
# on a given number of threads: prints one line of key=value pairs that bench_train.py reads.
#
#   python3 torch_cnn.py --precision fp32|bf16 --threads N [--steps N] [--warmup N] [--batch N]
import argparse
import sys
import time

import torch
from torch import nn


def net():
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--precision", choices=["fp32", "bf16"], required=True)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--batch", type=int, default=64)
    a = p.parse_args()
    if a.threads < 1 or a.steps < 1 or a.warmup < 0 or a.batch < 1:
        sys.exit("torch_cnn.py: --threads, --steps and --batch must be >= 1, --warmup >= 0")
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    model = net()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(a.batch, 1, 28, 28)
    y = torch.randint(0, 10, (a.batch,))

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(a.warmup):
        step()
    start = time.perf_counter()
    for _ in range(a.steps):
        step()
    wall = time.perf_counter() - start
    print(f"torch precision={a.precision} threads={a.threads} steps={a.steps} batch={a.batch} "
          f"wall_ms={1000 * wall / a.steps:.3f} wall_samples_s={a.steps * a.batch / wall:.1f} "
          f"version={torch.__version__}")


if __name__ == "__main__":
    main()
