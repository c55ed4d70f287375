// SPDX-License-Identifier: MIT
// launch.cpp - building an op's launch from tensors, running it (or a sequence of launches) and
// waiting (see launch.hpp).
#include "tpurt/card/launch.hpp"

#include "tpurt/device.hpp"

namespace tpurt {

std::vector<const Buffer *> OpLaunch::buffer_pointers() const {
    std::vector<const Buffer *> pointers;
    pointers.reserve(buffers.size());
    for (const std::shared_ptr<Buffer> &buffer : buffers)
        pointers.push_back(buffer.get());
    return pointers;
}

OpLaunch launch_of(std::shared_ptr<const Executable> exe,
                   std::initializer_list<const Tensor *> operands) {
    return launch_of(std::move(exe),
                     std::span<const Tensor *const>(operands.begin(), operands.size()));
}

OpLaunch launch_of(std::shared_ptr<const Executable> exe, std::span<const Tensor *const> operands) {
    OpLaunch launch{.executable = std::move(exe), .bases = {}, .buffers = {}};
    for (const Tensor *t : operands) {
        if (!t)
            continue;
        launch.bases.push_back(t->device_addr());
        launch.buffers.push_back(t->storage());
    }
    return launch;
}

MatmulStats OpLaunch::run(Device &device, std::chrono::nanoseconds timeout) const {
    const std::vector<const Buffer *> pointers = buffer_pointers();
    return executable->run(device, bases, pointers, timeout);
}

MatmulStats OpSequence::run(Device &device, std::chrono::nanoseconds timeout) const {
    MatmulStats total;
    for (const OpLaunch &launch : launches) {
        const MatmulStats s = launch.run(device, timeout);
        total += s;
        total.jobs += s.jobs;
    }
    return total;
}

} // namespace tpurt
