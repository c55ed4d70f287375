// SPDX-License-Identifier: MIT
// The run loop of one job: program checks, instruction fetch, dispatch, faults and counters.
#include "executor.hpp"

#include <algorithm>
#include <variant>

#include "cycle_model.hpp"

namespace tpu::engine {

Fault Executor::start(uint32_t ctx_id, uint32_t program_size) {
    // Every job starts from empty on-chip state, whatever happens next.
    dev_.clear_state();
    if (program_size == 0 || program_size % TPU_INSN_SIZE != 0 ||
        program_size > TPU_PROGRAM_MAX_BYTES)
        return make_fault(TPU_ERR_PROGRAM);
    return dev_.mmu.bind(ctx_id);
}

Fault Executor::fetch(uint64_t program_addr, uint32_t pc, uint32_t count) {
    uint32_t want = std::min(count - pc, kFetchWindow);
    uint64_t done;
    // program_addr beyond the 39-bit space faults on the first instruction, so the sum below
    // cannot wrap.
    Fault f = dev_.dma.read(program_addr + uint64_t(pc) * TPU_INSN_SIZE,
                            reinterpret_cast<uint8_t *>(window_.data()),
                            uint64_t(want) * TPU_INSN_SIZE, &done);
    window_begin_ = pc;
    window_end_ = pc + uint32_t(done / TPU_INSN_SIZE);
    fetch_fault_ = f;
    return window_end_ > pc ? kOk : f;
}

Fault Executor::execute(const NopInsn &) {
    result_.cycles += cycles::kIssue;
    return kOk;
}

Fault Executor::execute(const HaltInsn &) {
    result_.cycles += cycles::kIssue;
    return kOk;
}

Fault Executor::execute(const DmaInsn &insn) {
    Fault f = dev_.dma.transfer(insn, insn.from_acc ? dev_.acc : dev_.ub);
    if (!f.ok())
        return f;
    (insn.to_host ? result_.dma_write_bytes : result_.dma_read_bytes) += insn.bytes();
    result_.cycles += cycles::dma(insn.bytes());
    return kOk;
}

Fault Executor::execute(const LoadWInsn &insn) {
    dev_.weights.load(insn.type, insn.k, insn.n, dev_.ub.data() + insn.src.addr, insn.src.stride);
    result_.cycles += cycles::load_w(insn.k);
    return kOk;
}

Fault Executor::execute(const MatmulInsn &insn) {
    const WeightTile &w = dev_.weights;
    if (!w.loaded() || w.type() != insn.type || w.k() != insn.k)
        return make_fault(TPU_ERR_NO_WEIGHTS);

    Extent2D acc{insn.acc_addr, insn.acc_stride, insn.m, 4 * uint64_t(w.n())};
    uint64_t bad;
    if (!extent_fits(acc, dev_.acc.size(), &bad))
        return make_fault(TPU_ERR_ACC_RANGE, bad);
    dev_.acc.mark_dirty(acc.addr, acc.end());

    MatmulArgs args;
    args.src = dev_.ub.data() + insn.src.addr;
    args.src_stride = insn.src.stride;
    args.acc = dev_.acc.data() + acc.addr;
    args.acc_stride = acc.stride;
    args.rows = insn.m;
    args.accumulate = insn.accumulate;
    if (!dev_.mxu.run(w, args, dev_.abort_requested))
        return make_fault(TPU_ERR_ABORTED);

    uint64_t busy = cycles::matmul(insn.m, insn.k, w.n());
    result_.cycles += busy;
    result_.mxu_busy_cycles += busy;
    result_.macs += uint64_t(insn.m) * insn.k * w.n();
    return kOk;
}

tpu_job_result Executor::run(uint32_t ctx_id, uint64_t program_addr, uint32_t program_size) {
    result_ = tpu_job_result{};
    Fault f = start(ctx_id, program_size);
    uint32_t pc = 0;
    const uint32_t count = program_size / TPU_INSN_SIZE;

    while (f.ok() && pc < count) {
        if (dev_.abort_requested.load(std::memory_order_relaxed)) {
            f = make_fault(TPU_ERR_ABORTED);
            break;
        }
        if (pc == window_end_) {
            f = fetch_fault_.ok() ? fetch(program_addr, pc, count) : fetch_fault_;
            if (!f.ok())
                break;
        }
        Insn insn;
        f = decode(window_[pc - window_begin_], dev_.limits, &insn);
        if (!f.ok())
            break;
        f = std::visit([this](const auto &i) { return execute(i); }, insn);
        if (!f.ok() || std::holds_alternative<HaltInsn>(insn))
            break;
        pc++;
    }

    if (!f.ok()) {
        result_.status = f.status;
        result_.error_pc = pc;
        result_.fault_addr = f.addr;
        result_.mmu_faults = f.status == TPU_ERR_MMU_FAULT;
    }
    return result_;
}

} // namespace tpu::engine
