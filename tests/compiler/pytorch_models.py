#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# pytorch_models.py - real PyTorch models exported to ONNX at test time with seeded weights, the
# compiler's models from the outside: an MLP and the Fashion-MNIST CNN (opset 14, PyTorch
# 1.13's default), torchvision's ResNet-18 in eval mode at 64x64 and a transformer encoder layer
# (opset 17, fixed shapes). For each model writes DIR/NAME.onnx, the input DIR/NAME.x.f32 and
# PyTorch's output DIR/NAME.y.f32 (raw little-endian float32), and prints "NAME INPUT SHAPE"
# (SHAPE as 4x1x28x28) per line. Usage: pytorch_models.py DIR   (Debian's python3-torch)
import sys

import torch
import torchvision


class Cnn(torch.nn.Module):
    """The stack's CNN: conv 16, pool, conv 32, pool, dense 128, dense 10."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = torch.nn.Linear(32 * 7 * 7, 128)
        self.fc2 = torch.nn.Linear(128, 10)

    def forward(self, x):
        x = torch.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = torch.max_pool2d(torch.relu(self.conv2(x)), 2)
        return self.fc2(torch.relu(self.fc1(x.view(x.size(0), -1))))


def models():
    mlp = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                              torch.nn.Linear(256, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    encoder = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
    return [("mlp", mlp, (4, 784), 14), ("cnn", Cnn(), (4, 1, 28, 28), 14),
            ("resnet18", torchvision.models.resnet18(num_classes=10), (1, 3, 64, 64), 14),
            ("encoder", encoder, (2, 8, 64), 17)]


def randomise(model):
    """Biases and batch-norm statistics away from their initial zeros and ones."""
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 1:
                p.uniform_(-0.2, 0.2)
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)


def main():
    out = sys.argv[1]
    torch.set_num_threads(1)
    torch.manual_seed(0)
    for name, model, shape, opset in models():
        randomise(model)
        model.eval()
        x = torch.randn(*shape)
        with torch.no_grad():
            y = model(x)
        torch.onnx.export(model, (x,), f"{out}/{name}.onnx", opset_version=opset,
                          input_names=["x"], output_names=["y"])
        x.numpy().astype("<f4").tofile(f"{out}/{name}.x.f32")
        y.numpy().astype("<f4").tofile(f"{out}/{name}.y.f32")
        print(name, "x", "x".join(str(d) for d in shape))


if __name__ == "__main__":
    main()
