# SPDX-License-Identifier: MIT
# bench_train.py - the demo's CNN trained on the in-process card (tpu-bench-train: the host's
# real engine, wall and modelled card time) and by Debian's PyTorch (torch_cnn.py: fp32 and bf16
# autocast, 1 and 2 threads; the engine with as many worker threads) on the same host in the same
# run, in alternating rounds (the best of each kept, so both see the same machine load); prints
# samples/s of each and the ratios of the card's best to PyTorch's best (bench/README.md).
# Without python3-torch it says so and measures the card alone.
#
#   python3 bench_train.py TPU_BENCH_TRAIN [--rounds N] [--steps N] [--threads 1,2]
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def fields(line):
    return dict(kv.split("=", 1) for kv in line.split()[1:])


def run(cmd):
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return fields(out.strip().splitlines()[-1])


def have_torch(python):
    return subprocess.run([python, "-c", "import torch"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def cpu_model():
    with open("/proc/cpuinfo") as f:
        info = f.read()
    model = next((l.split(":", 1)[1].strip() for l in info.splitlines()
                  if l.startswith("model name")), "unknown CPU")
    flags = next((l.split(":", 1)[1].split() for l in info.splitlines()
                  if l.startswith("flags")), [])
    wanted = ["avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_int8"]
    return f"{model}, {os.cpu_count()} CPUs, " + " ".join(f for f in wanted if f in flags)


def main():
    p = argparse.ArgumentParser(description="the demo's CNN: the card against PyTorch")
    p.add_argument("bench", help="the tpu-bench-train program")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--threads", default="1,2", help="PyTorch's thread counts")
    p.add_argument("--python", default="/usr/bin/python3", help="the Python with torch")
    a = p.parse_args()
    if a.rounds < 1 or a.steps < 1:
        sys.exit("bench_train.py: --rounds and --steps must be >= 1")
    if not os.access(a.bench, os.X_OK):
        sys.exit(f"bench_train.py: {a.bench} is not an executable (make host builds it)")
    threads = [int(t) for t in a.threads.split(",")]
    torch_ok = have_torch(a.python)
    configs = [(pr, t) for t in threads for pr in ("fp32", "bf16")] if torch_ok else []
    steps = ["--steps", str(a.steps)]

    cards, torch = {}, {}
    for _ in range(a.rounds):
        for t in threads:
            r = run([a.bench, "--threads", str(t)] + steps)
            if t not in cards or float(r["wall_ms"]) < float(cards[t]["wall_ms"]):
                cards[t] = r
        for pr, t in configs:
            r = run([a.python, os.path.join(HERE, "torch_cnn.py"), "--precision", pr,
                     "--threads", str(t)] + steps)
            if (pr, t) not in torch or float(r["wall_ms"]) < float(torch[(pr, t)]["wall_ms"]):
                torch[(pr, t)] = r

    print(f"the demo's CNN, batch 64, Adam; {cpu_model()}; best of {a.rounds} rounds "
          f"of {a.steps} steps")
    for t, r in cards.items():
        print(f"  card (in-process engine, bf16, captured step), {t} engine "
              f"thread{'s' if t > 1 else ' '}: {float(r['wall_samples_s']):8.1f} samples/s wall "
              f"({float(r['wall_ms']):.2f} ms a step)")
    ct, card = max(cards.items(), key=lambda kv: float(kv[1]["wall_samples_s"]))
    print(f"  card, modelled card time {float(card['modelled_ms']):.3f} ms a step = "
          f"{float(card['modelled_samples_s']):.1f} samples/s; {float(card['gmac']):.3f} GMAC and "
          f"{float(card['jobs']):.0f} job(s) a step")
    if not torch_ok:
        print(f"  PyTorch: not measured, {a.python} cannot import torch "
              "(apt-get install python3-torch; tools/setup-host.sh installs it)")
        return
    for (pr, t), r in torch.items():
        print(f"  PyTorch {r['version']} {pr:4} {t} thread{'s' if t > 1 else ' '}: "
              f"{float(r['wall_samples_s']):8.1f} samples/s ({float(r['wall_ms']):.2f} ms a step)")
    (bpr, bt), best = max(torch.items(), key=lambda kv: float(kv[1]["wall_samples_s"]))
    bs = float(best["wall_samples_s"])
    print(f"card's best ({ct} engine thread{'s' if ct > 1 else ''}) / PyTorch's best "
          f"({bpr}, {bt} thread{'s' if bt > 1 else ''}): "
          f"{float(card['wall_samples_s']) / bs:.2f}x in wall time, "
          f"{float(card['modelled_samples_s']) / bs:.2f}x in modelled card time")


if __name__ == "__main__":
    main()
