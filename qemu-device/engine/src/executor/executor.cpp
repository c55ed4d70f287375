// SPDX-License-Identifier: MIT
// The run loop of one job: program checks, instruction fetch, dispatch, faults and counters;
// and the instructions without a compute unit of their own (NOP, HALT, SYNC, TIMESTAMP, DMA).
#include "executor/executor.hpp"

#include <algorithm>
#include <cstring>
#include <variant>

#include "executor/cycle_model.hpp"

namespace tpu::engine {

Fault Executor::start(uint32_t ctx_id, uint32_t program_size) {
    // Every job starts from empty on-chip state, whatever happens next.
    dev_.clear_state();
    if (program_size == 0 || program_size % TPU_INSN_SIZE != 0 ||
        program_size > TPU_PROGRAM_MAX_BYTES)
        return make_fault(TPU_ERR_PROGRAM);
    return dev_.mmu.bind(ctx_id);
}

Fault Executor::fetch(uint64_t program_addr, uint32_t count, uint32_t keep_from) {
    const uint32_t kept = window_end_ - keep_from;
    std::memmove(window_.data(), window_.data() + (keep_from - window_begin_),
                 kept * sizeof(tpu_insn));
    window_begin_ = keep_from;
    const uint32_t pc = window_end_;
    const uint32_t want = std::min(count - pc, kFetchWindow);
    uint64_t done;
    // program_addr beyond the 39-bit space faults on the first instruction, so the sum below
    // cannot wrap.
    Fault f = dev_.dma.read(program_addr + uint64_t(pc) * TPU_INSN_SIZE,
                            reinterpret_cast<uint8_t *>(window_.data() + kept),
                            uint64_t(want) * TPU_INSN_SIZE, &done);
    window_end_ = pc + uint32_t(done / TPU_INSN_SIZE);
    fetch_fault_ = f;
    return window_end_ > pc ? kOk : f;
}

uint64_t Executor::dma_cycles(uint64_t bytes) const {
    return cycles::dma(bytes, dev_.clock_mhz, dev_.dma_mbps);
}

Fault Executor::execute(const NopInsn &) {
    timeline_.schedule(Step{});
    return kOk;
}

Fault Executor::execute(const HaltInsn &) {
    timeline_.schedule(Step{});
    return kOk;
}

Fault Executor::execute(const SyncInsn &) {
    Step step;
    step.barrier = true;
    timeline_.schedule(step);
    return kOk;
}

Fault Executor::execute(const TimestampInsn &insn) {
    Step step;
    step.barrier = true;
    const tpu_timestamp record{timeline_.start_of(step), insn.tag, pc_};
    Fault f =
        dev_.dma.write(insn.host_addr, reinterpret_cast<const uint8_t *>(&record), sizeof(record));
    if (!f.ok())
        return f;
    result_.dma_write_bytes += sizeof(record);
    timeline_.schedule(step);
    return kOk;
}

Fault Executor::flush_deferred() {
    if (deferred_.empty() || deferred_.flush())
        return kOk;
    return make_fault(TPU_ERR_ABORTED);
}

Fault Executor::execute(const DmaInsn &insn) {
    if (!insn.to_host && !insn.from_acc) {
        deferred_.ub_will_write(insn.local);
        // Rows back to back are written in full: bytes there that the job's start left to be
        // zeroed need not be (a faulting DMA ends the job, and nothing reads the rest before
        // the next job's start zeroes it again). Otherwise the gaps between rows must be zero.
        if (insn.rows == 1 || insn.local.stride == insn.row_bytes)
            dev_.ub.will_overwrite(insn.local.addr, insn.local.end());
        else
            dev_.ub.zero_pending();
    }
    Fault f = dev_.dma.transfer(insn, insn.from_acc ? dev_.acc : dev_.ub, dev_.abort_requested);
    if (!f.ok())
        return f;
    (insn.to_host ? result_.dma_write_bytes : result_.dma_read_bytes) += insn.bytes();
    Step step;
    step.units = kUnitDma;
    step.cost = dma_cycles(insn.bytes());
    step.add(insn.from_acc ? Space::Acc : Space::Ub, insn.local.addr, insn.local.end(),
             !insn.to_host);
    timeline_.schedule(step);
    return kOk;
}

tpu_job_result Executor::run(uint32_t ctx_id, uint64_t program_addr, uint32_t program_size) {
    result_ = tpu_job_result{};
    dev_.hold.start_job();
    Fault f = start(ctx_id, program_size);
    const uint32_t count = program_size / TPU_INSN_SIZE;

    for (pc_ = 0; f.ok() && pc_ < count; pc_++) {
        dev_.hold.at(pc_); // test only: waits here while held (tpu_engine_test_hold())
        if (dev_.abort_requested.load(std::memory_order_relaxed)) {
            f = make_fault(TPU_ERR_ABORTED);
            break;
        }
        dev_.progress.fetch_add(1, std::memory_order_relaxed);
        if (pc_ == window_end_) {
            f = fetch_fault_.ok() ? fetch(program_addr, count, pc_) : fetch_fault_;
            if (!f.ok())
                break;
        }
        // The on-chip memories are zeroed lazily (LocalMemory): before anything but a DMA_IN,
        // which may overwrite them, or a NOP or HALT, which touch nothing.
        const uint8_t opcode = window_[pc_ - window_begin_].hdr.opcode;
        if (opcode != TPU_OP_DMA_IN && opcode != TPU_OP_NOP && opcode != TPU_OP_HALT) {
            dev_.ub.zero_pending();
            dev_.acc.zero_pending();
        }
        if (!dev_.cycle_accurate && opcode == TPU_OP_LOAD_W) {
            // A K chain, else a sequence of pairs over the same accumulators.
            bool chain = true;
            uint32_t links =
                pair_links(program_addr, count, kMaxChainLinks, &Executor::chains_with);
            if (links == 0) {
                chain = false;
                links =
                    pair_links(program_addr, count, kMaxSequenceLinks, &Executor::sequences_with);
            }
            if (links) {
                // Leaves pc_ at the last instruction, or at the MATMUL it stopped in.
                f = flush_deferred();
                if (f.ok())
                    f = chain ? execute_chain(links) : execute_sequence(links);
                if (!f.ok())
                    break;
                continue;
            }
        }
        Insn insn;
        f = decode(window_[pc_ - window_begin_], dev_.limits, &insn);
        if (!f.ok())
            break;
        // Deferred MATMULs wait only across DMAs into the UB, LOAD_Ws and MATMULs (which
        // join them or flush them).
        const DmaInsn *dma = std::get_if<DmaInsn>(&insn);
        if (!(dma && !dma->from_acc) && !std::holds_alternative<LoadWInsn>(insn) &&
            !std::holds_alternative<MatmulInsn>(insn)) {
            f = flush_deferred();
            if (!f.ok())
                break;
        }
        f = std::visit([this](const auto &i) { return execute(i); }, insn);
        if (!f.ok() || std::holds_alternative<HaltInsn>(insn))
            break;
    }
    // MATMULs before a fault or the end still take effect (the final state is observable).
    const Fault flushed = flush_deferred();
    if (f.ok())
        f = flushed;
    staged_w_.reset(); // the next job starts with no weights

    result_.cycles = timeline_.cycles();
    result_.stall_cycles = timeline_.stall_cycles();
    if (!f.ok()) {
        result_.status = f.status;
        result_.error_pc = pc_;
        result_.fault_addr = f.addr;
        result_.mmu_faults = f.status == TPU_ERR_MMU_FAULT;
    }
    return result_;
}

} // namespace tpu::engine
