#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpora of the card's QEMU fuzz targets (tools/build-qemu-fuzz.sh).

generic-fuzz-tpu, into tests/fuzz/qemu/seeds/: generic-fuzz inputs, commands separated by "FUZZ", that read the
registers, run a NOP job and a DMA job through a ring, reset a queue and the card, invalidate the
TLB and send MSI-X interrupts. generic-fuzz has no command that writes guest memory: memory the
card reads by DMA is filled, at the read, with the next of the input's DMA patterns, one pattern
per read in turn. So each job's patterns are given in the order the card reads: ring entry,
context entry, the three page-table entries of the program's page, the program, then its data.

tpu-unplug (tpu_unplug_fuzz.c), into tests/fuzz/qemu/unplug-seeds/: 12-byte records (read, write,
guest memory write, unplug, main loop) that lay out and start jobs, unplug the card with a job
queued or running, then touch its registers through the stale look-up.

tpu-ici-peer (tpu_ici_peer_fuzz.c), into tests/fuzz/qemu/ici-peer-seeds/: a flags byte (bit 0: the
peer answers the card's hello), a chunk size - 1, then the peer's bytes in the link's wire format
(docs/hardware.md section 10): whole and partial messages, a cut one, credits overrun and never
earned, a second hello, a bad version and sequence, a message before the hello.

    tests/fuzz/qemu/make-seeds.py [OUT_DIR [UNPLUG_OUT_DIR [ICI_PEER_OUT_DIR]]]
"""
import os
import struct
import sys

SEP = b"FUZZ"
OP_READ, OP_WRITE, OP_PCI_WRITE, OP_ADD_DMA_PATTERN, OP_CLOCK_STEP = 2, 3, 5, 7, 9
SIZES = {1: 0, 2: 1, 4: 2, 8: 3}
REGS, MSIX_TABLE = 0, 1  # generic-fuzz's index of the card's MMIO regions (by address)

# BAR0 registers (include/tpu_hw.h)
CONTROL, STATUS, RESET, IRQ_STATUS, IRQ_MASK = 0x040, 0x044, 0x048, 0x050, 0x054
CTX_TABLE, TLB_INVAL, TLB_INVAL_DONE, ERR_CODE = 0x060, 0x068, 0x06C, 0x080
CNT_JOBS_DONE, CNT_JOBS_FAILED = 0x128, 0x130
Q_RING_BASE, Q_RING_SIZE, Q_TAIL, Q_COMPL_BASE, Q_CONTROL, Q_DONE_SEQ = 0, 8, 0x10, 0x18, 0x20, 0x28
RESET_MAGIC = 0x52535421
RING_OP_RUN, OP_NOP, OP_HALT, OP_DMA_IN, OP_DMA_OUT = 1, 0, 1, 2, 3
PTE_VALID, PTE_READ, PTE_WRITE = 1, 2, 4
MSIX_CAP = 0x40  # msix_init() places the capability first, before the PCIe one at 0x80

# Guest physical memory of the jobs (the fuzzer's machine has 512 MiB).
RING, COMPL, CTX, L0, L1, L2, PAGE = (0x200000 + i * 0x1000 for i in range(7))


def queue(q, reg):
    return 0x400 + q * 0x40 + reg


def write(offset, value, size=4, region=REGS):
    return bytes([OP_WRITE]) + struct.pack("<BBxxIQ", SIZES[size], region, offset, value)


def read(offset, size=4, region=REGS):
    return bytes([OP_READ]) + struct.pack("<BBxxI", SIZES[size], region, offset)


def pci_write(offset, value, size):
    return bytes([OP_PCI_WRITE]) + struct.pack("<BBBxI", SIZES[size], 0, offset, value)


def pattern(data):
    return bytes([OP_ADD_DMA_PATTERN, 0, 0]) + data


def seed(*commands):
    return SEP.join(commands)


def ring_entry(seqno, program_size, ctx=0, program_addr=0):
    return struct.pack("<IIQQII32x", RING_OP_RUN, ctx, seqno, program_addr, program_size, 0)


def insn(opcode, rest=b""):
    return (bytes([opcode]) + rest).ljust(32, b"\0")


def dma(opcode, cols, host_addr, local_addr):
    # struct tpu_insn_dma: int8, one row of cols bytes
    return struct.pack("<BBHHHQIIII", opcode, 0, 0, 1, cols, host_addr, cols, local_addr, cols, 0)


def job_patterns(seqno, program):
    """The card's DMA reads of a job from context 0 at VA 0, in order."""
    return [
        pattern(ring_entry(seqno, len(program))),
        pattern(struct.pack("<QQ", L0 | PTE_VALID, 0)),
        pattern(struct.pack("<Q", L1 | PTE_VALID)),
        pattern(struct.pack("<Q", L2 | PTE_VALID)),
        pattern(struct.pack("<Q", PAGE | PTE_VALID | PTE_READ | PTE_WRITE)),
        pattern(program),
    ]


def setup_queue(q=0):
    return [
        write(CTX_TABLE, CTX, 8),
        write(queue(q, Q_RING_BASE), RING, 8),
        write(queue(q, Q_RING_SIZE), 2),
        write(queue(q, Q_COMPL_BASE), COMPL, 8),
        write(queue(q, Q_CONTROL), 1),
        write(CONTROL, 1),
        write(IRQ_MASK, 3),
    ]


def results(q=0):
    return [read(queue(q, Q_DONE_SEQ), 8), read(IRQ_STATUS), read(ERR_CODE),
            read(CNT_JOBS_DONE, 8), read(CNT_JOBS_FAILED, 8)]


NOP_PROGRAM = insn(OP_NOP) + insn(OP_HALT)
DMA_PROGRAM = (dma(OP_DMA_IN, 64, 0x800, 0) + dma(OP_DMA_OUT, 64, 0xc00, 0) + insn(OP_HALT))
MSIX = [
    pci_write(MSIX_CAP + 2, 0x8000, 2),                    # MSI-X enable
    write(0x0, 0xFEE00000, 4, MSIX_TABLE),                 # vector 0 (DONE): address
    write(0x8, 0x41, 4, MSIX_TABLE),                       # data
    write(0xC, 0, 4, MSIX_TABLE),                          # unmasked
    write(0x1C, 0, 4, MSIX_TABLE),                         # vector 1 (ERROR) unmasked
]

SEEDS = {
    "registers": seed(*[read(off) for off in range(0, 0x24, 4)],
                      read(STATUS), read(CTX_TABLE, 8), read(TLB_INVAL_DONE),
                      read(queue(0, Q_CONTROL)), read(0xF00)),
    "nop-job": seed(*setup_queue(), *job_patterns(1, NOP_PROGRAM),
                    write(queue(0, Q_TAIL), 1), *results()),
    "dma-job": seed(*setup_queue(), *job_patterns(7, DMA_PROGRAM),
                    pattern(bytes(range(64))), write(queue(0, Q_TAIL), 1), *results()),
    "msix-job": seed(*MSIX, *setup_queue(), *job_patterns(2, NOP_PROGRAM),
                     write(queue(0, Q_TAIL), 1), *results(), write(IRQ_STATUS, 3),
                     write(IRQ_MASK, 0), write(queue(0, Q_TAIL), 0), write(IRQ_MASK, 3)),
    "resets": seed(*setup_queue(), *job_patterns(3, NOP_PROGRAM),
                   write(queue(0, Q_TAIL), 1), write(queue(0, Q_CONTROL), 3),
                   read(queue(0, Q_TAIL)), write(RESET, RESET_MAGIC), read(STATUS),
                   write(RESET, 0), *setup_queue(), write(queue(0, Q_TAIL), 1), *results()),
    "tlb-inval": seed(*setup_queue(), *job_patterns(4, NOP_PROGRAM),
                      write(queue(0, Q_TAIL), 1), write(TLB_INVAL, 0),
                      write(TLB_INVAL, 0xFFFFFFFF), write(TLB_INVAL, 99),
                      read(TLB_INVAL_DONE), OP_CLOCK_STEP.to_bytes(1, "little")),
    "bad-ring": seed(*setup_queue(), write(queue(0, Q_RING_SIZE), 3),
                     write(queue(0, Q_CONTROL), 0), write(queue(0, Q_RING_SIZE), 3),
                     write(queue(0, Q_CONTROL), 1), read(queue(0, 0x24)),
                     pattern(b"\xff" * 64), write(queue(0, Q_TAIL), 1), *results()),
}


# tpu-unplug records (tpu_unplug_fuzz.c): kind, flags (bit 0: 8 bytes), offset, value
U_READ, U_WRITE, U_MEM, U_UNPLUG, U_MAIN_LOOP = range(5)
U_SYNC_WORKER = 8  # in the first record's kind: the card runs with x-sync-worker=on
U_MEM_BASE = 0x200000  # TPU_FUZZ_MEM: guest memory the records write, a 64 KiB window


def u_record(kind, offset=0, value=0, size=4):
    return struct.pack("<BBHQ", kind, 1 if size == 8 else 0, offset, value)


def u_memory(addr, data):
    """Guest memory at addr (in the window) holding data, 4 bytes a record."""
    data = data.ljust((len(data) + 3) // 4 * 4, b"\0")
    return b"".join(u_record(U_MEM, addr - U_MEM_BASE + i, int.from_bytes(data[i:i + 4], "little"))
                    for i in range(0, len(data), 4))


def u_job(seqno, program, slot=0):
    """Ring slot `slot` and the context 0 page tables mapping the program at VA 0."""
    return b"".join([
        u_memory(RING + slot * 64, ring_entry(seqno, len(program))),
        u_memory(CTX, struct.pack("<QQ", L0 | PTE_VALID, 0)),
        u_memory(L0, struct.pack("<Q", L1 | PTE_VALID)),
        u_memory(L1, struct.pack("<Q", L2 | PTE_VALID)),
        u_memory(L2, struct.pack("<Q", PAGE | PTE_VALID | PTE_READ | PTE_WRITE)),
        u_memory(PAGE, program),
    ])


def u_setup_queue(q=0):
    return b"".join([
        u_record(U_WRITE, CTX_TABLE, CTX, 8),
        u_record(U_WRITE, queue(q, Q_RING_BASE), RING, 8),
        u_record(U_WRITE, queue(q, Q_RING_SIZE), 2),
        u_record(U_WRITE, queue(q, Q_COMPL_BASE), COMPL, 8),
        u_record(U_WRITE, queue(q, Q_CONTROL), 1),
        u_record(U_WRITE, CONTROL, 1),
        u_record(U_WRITE, IRQ_MASK, 3),
    ])


def u_after_unplug():
    return b"".join([
        u_record(U_UNPLUG),
        u_record(U_READ, STATUS), u_record(U_READ, queue(0, Q_DONE_SEQ), size=8),
        u_record(U_WRITE, queue(0, Q_TAIL), 1), u_record(U_WRITE, TLB_INVAL, 0xFFFFFFFF),
        u_record(U_WRITE, RESET, RESET_MAGIC), u_record(U_WRITE, queue(0, Q_CONTROL), 3),
        u_record(U_MAIN_LOOP), u_record(U_READ, TLB_INVAL_DONE),
    ])


# DMAs of 65,535 rows of 64 bytes, each row the same host and local one (strides 0): a job that
# is still running when the card goes.
LONG_DMA = struct.pack("<BBHHHQIIII", OP_DMA_IN, 0, 0, 0xFFFF, 64, 0x800, 0, 0, 0, 0)
LONG_PROGRAM = LONG_DMA * 64 + insn(OP_HALT)

UNPLUG_SEEDS = {
    "idle": b"",
    "registers": b"".join([u_record(U_READ, off) for off in range(0, 0x24, 4)]) + u_after_unplug(),
    "nop-job": u_setup_queue() + u_job(1, NOP_PROGRAM) + u_record(U_WRITE, queue(0, Q_TAIL), 1) +
               u_record(U_MAIN_LOOP) + u_after_unplug(),
    "running-job": u_job(1, LONG_PROGRAM) + u_setup_queue() +
                   u_record(U_WRITE, queue(0, Q_TAIL), 1) + u_record(U_MAIN_LOOP) + u_after_unplug(),
    "sync-worker-job": u_record(U_READ | U_SYNC_WORKER, STATUS) + u_job(1, LONG_PROGRAM) +
                        u_setup_queue() + u_record(U_WRITE, queue(0, Q_TAIL), 1) +
                        u_record(U_MAIN_LOOP) + u_after_unplug(),
    "reset-then-unplug": u_job(2, LONG_PROGRAM) + u_setup_queue() +
                         u_record(U_WRITE, queue(0, Q_TAIL), 1) +
                         u_record(U_WRITE, RESET, RESET_MAGIC) + u_after_unplug(),
}


# tpu-ici-peer: the wire format (qemu-device/engine/src/link/wire.hpp) and the fabric of the
# target's command line (ring of 2, preset v5e: 400 Gbit/s, 1000 ns a hop; 4 credits; 700 MHz).
W_MAGIC, W_VERSION = 0x49434954, 2
W_HELLO, W_DATA, W_CREDIT, W_CUT = 1, 2, 3, 4
W_PACKET = 4096


def w_message(kind, seq, body, tag=0, time=0, version=W_VERSION):
    return struct.pack("<IHBBIIQQ", W_MAGIC, version, kind, 0, len(body), tag, seq, time) + body


def w_hello(seq=1):
    # topology ring, dims 2 x 1, link_gbps, hop_ns, credits, clock_mhz, x, y, port, and the y
    # links' figures (a ring's are the x links')
    return w_message(W_HELLO, seq,
                     struct.pack("<12I", 1, 2, 1, 400, 1000, 4, 700, 1, 0, 1, 400, 1000))


def w_packets(first_seq, msg, length, tag=0, time=1000):
    """A message of `length` bytes as its packets, numbered from first_seq."""
    out = b""
    for i, offset in enumerate(range(0, length, W_PACKET)):
        payload = bytes((offset + j) & 0xFF for j in range(min(W_PACKET, length - offset)))
        out += w_message(W_DATA, first_seq + i, struct.pack("<QII", msg, length, offset) + payload,
                         tag, time)
    return out


def peer_seed(messages, answer=True, chunk=256):
    return bytes([1 if answer else 0, chunk - 1]) + messages


ICI_PEER_SEEDS = {
    "hello-only": peer_seed(b""),
    "messages": peer_seed(w_packets(2, 1, 64) + w_packets(3, 2, 5000, tag=7)),
    "messages-byte-by-byte": peer_seed(w_packets(2, 1, 64) + w_packets(3, 2, 5000), chunk=1),
    "cut": peer_seed(w_message(W_DATA, 2, struct.pack("<QII", 1, 8192, 0) + bytes(W_PACKET)) +
                     w_message(W_CUT, 3, struct.pack("<Q", 1))),
    "credits-overrun": peer_seed(b"".join(w_packets(2 + i, 1 + i, 64) for i in range(5))),
    "credit-never-earned": peer_seed(w_message(W_CREDIT, 2, struct.pack("<I", 1))),
    "second-hello": peer_seed(w_hello(2)),
    "partial-message": peer_seed(w_packets(2, 1, 64)[:50]),
    "bad-version": peer_seed(w_message(W_DATA, 2, struct.pack("<QII", 1, 4, 0) + b"abcd",
                                       version=3)),
    "bad-sequence": peer_seed(w_packets(7, 1, 64)),
    "before-hello": peer_seed(w_packets(1, 1, 64), answer=False),
    "hello-then-data-unanswered": peer_seed(w_hello(1) + w_packets(2, 1, 64), answer=False),
}


def write_corpus(out, seeds):
    os.makedirs(out, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    write_corpus(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "seeds"), SEEDS)
    write_corpus(sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "unplug-seeds"),
                 UNPLUG_SEEDS)
    write_corpus(sys.argv[3] if len(sys.argv) > 3 else os.path.join(here, "ici-peer-seeds"),
                 ICI_PEER_SEEDS)


if __name__ == "__main__":
    main()
