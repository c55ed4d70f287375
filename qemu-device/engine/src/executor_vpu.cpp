// SPDX-License-Identifier: MIT
// The vector unit's instructions: execution by vpu.cpp, then their place on the timeline.
#include "cycle_model.hpp"
#include "executor.hpp"
#include "fp_env.hpp"
#include "vpu.hpp"

namespace tpu::engine {
namespace {

// A VPU step over elements that reads the extents in `reads` and writes dst.
Step vpu_step(uint64_t elements, std::initializer_list<Extent2D> reads, const Extent2D &dst) {
    Step step;
    step.units = kUnitVpu;
    step.cost = cycles::vpu(elements);
    for (const Extent2D &e : reads)
        step.add(Space::Ub, e.addr, e.end(), false);
    step.add(Space::Ub, dst.addr, dst.end(), true);
    return step;
}

} // namespace

Fault Executor::execute(const ActivateInsn &insn) {
    {
        FpEnvGuard fp_env;
        vpu::activate(insn, dev_.acc.data(), dev_.ub.data());
    }
    dev_.ub.mark_dirty(insn.dst.addr, insn.dst.end());
    Step step;
    step.units = kUnitVpu;
    step.cost = cycles::vpu(uint64_t(insn.rows) * insn.cols);
    step.add(Space::Acc, insn.acc.addr, insn.acc.end(), false);
    step.add(Space::Ub, insn.dst.addr, insn.dst.end(), true);
    if (insn.bias)
        step.add(Space::Ub, insn.bias_addr, insn.bias_addr + 4 * uint64_t(insn.cols), false);
    timeline_.schedule(step);
    return kOk;
}

Fault Executor::execute(const VectorInsn &insn) {
    {
        FpEnvGuard fp_env;
        vpu::vector(insn, dev_.ub.data());
    }
    dev_.ub.mark_dirty(insn.dst.addr, insn.dst.end());
    timeline_.schedule(vpu_step(uint64_t(insn.rows) * insn.cols, {insn.a, insn.b}, insn.dst));
    return kOk;
}

Fault Executor::execute(const ReduceInsn &insn) {
    {
        FpEnvGuard fp_env;
        vpu::reduce(insn, dev_.ub.data());
    }
    dev_.ub.mark_dirty(insn.dst.addr, insn.dst.end());
    timeline_.schedule(vpu_step(uint64_t(insn.rows) * insn.cols, {insn.a}, insn.dst));
    return kOk;
}

Fault Executor::execute(const PoolInsn &insn) {
    {
        FpEnvGuard fp_env;
        vpu::pool(insn, dev_.ub.data());
    }
    dev_.ub.mark_dirty(insn.dst.addr, insn.dst.end());
    const uint64_t elements =
        uint64_t(insn.out_h) * insn.out_w * insn.channels * insn.win_h * insn.win_w;
    timeline_.schedule(vpu_step(elements, {insn.src}, insn.dst));
    return kOk;
}

Fault Executor::execute(const TransposeInsn &insn) {
    vpu::transpose(insn, dev_.ub.data());
    dev_.ub.mark_dirty(insn.dst.addr, insn.dst.end());
    timeline_.schedule(vpu_step(uint64_t(insn.rows) * insn.cols, {insn.a}, insn.dst));
    return kOk;
}

} // namespace tpu::engine
