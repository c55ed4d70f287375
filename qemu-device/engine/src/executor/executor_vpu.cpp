// SPDX-License-Identifier: MIT
// The vector unit's instructions: execution by vpu.cpp, then their place on the timeline. An
// abort request stops one between rows (vpu.hpp) and ends the job ABORTED at it.
#include "executor/cycle_model.hpp"
#include "executor/executor.hpp"
#include "fp_env.hpp"
#include "vpu/vpu.hpp"

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

// The end of every VPU instruction: its destination counts as written even when it stopped
// early (so the next job's clear covers it); stopped, it is ABORTED and takes no time.
Fault finish(bool completed, LocalMemory &ub, const Extent2D &dst, Timeline &timeline,
             const Step &step) {
    ub.mark_dirty(dst.addr, dst.end());
    if (!completed)
        return make_fault(TPU_ERR_ABORTED);
    timeline.schedule(step);
    return kOk;
}

} // namespace

Fault Executor::execute(const ActivateInsn &insn) {
    bool completed;
    {
        FpEnvGuard fp_env;
        completed =
            vpu::activate(insn, dev_.acc.data(), dev_.ub.data(), dev_.abort_requested, &dev_.pool);
    }
    Step step;
    step.units = kUnitVpu;
    step.cost = cycles::vpu(uint64_t(insn.rows) * insn.cols);
    step.add(Space::Acc, insn.acc.addr, insn.acc.end(), false);
    step.add(Space::Ub, insn.dst.addr, insn.dst.end(), true);
    if (insn.bias)
        step.add(Space::Ub, insn.bias_addr, insn.bias_addr + 4 * uint64_t(insn.cols), false);
    return finish(completed, dev_.ub, insn.dst, timeline_, step);
}

Fault Executor::execute(const VectorInsn &insn) {
    bool completed;
    {
        FpEnvGuard fp_env;
        completed = vpu::vector(insn, dev_.ub.data(), dev_.abort_requested, &dev_.pool);
    }
    return finish(completed, dev_.ub, insn.dst, timeline_,
                  vpu_step(uint64_t(insn.rows) * insn.cols, {insn.a, insn.b}, insn.dst));
}

Fault Executor::execute(const ReduceInsn &insn) {
    bool completed;
    {
        FpEnvGuard fp_env;
        completed = vpu::reduce(insn, dev_.ub.data(), dev_.abort_requested);
    }
    return finish(completed, dev_.ub, insn.dst, timeline_,
                  vpu_step(uint64_t(insn.rows) * insn.cols, {insn.a}, insn.dst));
}

Fault Executor::execute(const PoolInsn &insn) {
    bool completed;
    {
        FpEnvGuard fp_env;
        completed = vpu::pool(insn, dev_.ub.data(), dev_.abort_requested);
    }
    const uint64_t elements =
        uint64_t(insn.out_h) * insn.out_w * insn.channels * insn.win_h * insn.win_w;
    return finish(completed, dev_.ub, insn.dst, timeline_,
                  vpu_step(elements, {insn.src}, insn.dst));
}

Fault Executor::execute(const TransposeInsn &insn) {
    const bool completed = vpu::transpose(insn, dev_.ub.data(), dev_.abort_requested, &dev_.pool);
    return finish(completed, dev_.ub, insn.dst, timeline_,
                  vpu_step(uint64_t(insn.rows) * insn.cols, {insn.a}, insn.dst));
}

} // namespace tpu::engine
