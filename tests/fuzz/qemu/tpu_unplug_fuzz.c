/*
 * tpu-unplug: register accesses that reach the TPU card after it was
 * hot-unplugged.
 *
 * A vCPU looks an MMIO address up in the flat view without the big lock and
 * then takes the lock to dispatch; if the card is unplugged in between, the
 * access reaches the card's handlers after its unrealize.  That window is not
 * reachable on demand under TCG, so this target builds it in-process: each
 * input plugs a card into a PCIe root port, maps BAR0 and looks it up as a
 * vCPU does (the look-up holds the region, hence the card), runs the input's
 * register and guest-memory writes, unplugs the card at the input's mark,
 * then dispatches the rest of the input and a sweep of every register
 * through the stale look-up.  After the unplug every read must return 0 and
 * every write must be ignored (docs/hardware.md section 4); a crash, an
 * assertion or a sanitizer report is a finding.  Built into qemu-fuzz-x86_64
 * by tools/build-qemu-fuzz.sh; seeds in tests/fuzz/qemu/unplug-seeds/
 * (make-seeds.py).
 *
 * Input: records of 12 bytes, little-endian:
 *   u8 kind (low 3 bits), u8 flags (bit 0: 8-byte access), u16 offset,
 *   u64 value
 * kind 0: read BAR0 at offset; 1: write value to BAR0 at offset;
 * 2: write value's low 4 bytes to guest memory at TPU_FUZZ_MEM + offset;
 * 3: unplug the card (once); 4: run the main loop (bottom halves).
 * The first byte's bit 3 selects the card's x-sync-worker mode.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/rcu.h"
#include "qapi/error.h"
#include "exec/address-spaces.h"
#include "exec/memory.h"
#include "hw/qdev-properties.h"
#include "tests/qtest/libqtest.h"
#include "fuzz.h"
#include "tpu_fuzz_card.h"

#define TPU_FUZZ_RECORD     12

enum { REC_READ, REC_WRITE, REC_MEM, REC_UNPLUG, REC_MAIN_LOOP };

typedef struct TPUFuzzCard {
    PCIDevice *pdev;
    MemoryRegionSection stale;  /* the vCPU's look-up of BAR0 */
    bool unplugged;
} TPUFuzzCard;

/*
 * The root port the card is plugged into, forwarding the 1 MiB window of
 * BAR0 and the card's DMA; returns its secondary bus.
 */
static PCIBus *tpu_fuzz_port(void)
{
    Object *obj = object_resolve_path("/machine/peripheral/tpu-port", NULL);
    PCIDevice *port = obj ? PCI_DEVICE(obj) : NULL;
    BusState *bus = obj ? qdev_get_child_bus(DEVICE(obj), "tpu-port") : NULL;

    if (!bus) {
        fprintf(stderr, "tpu-unplug: no root port tpu-port\n");
        abort();
    }
    tpu_fuzz_config_write(port, PCI_MEMORY_BASE, TPU_FUZZ_BAR0 >> 16, 2);
    tpu_fuzz_config_write(port, PCI_MEMORY_LIMIT, TPU_FUZZ_BAR0 >> 16, 2);
    tpu_fuzz_config_write(port, PCI_COMMAND,
                          PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
    return PCI_BUS(bus);
}

/* Plugs a card with BAR0 mapped, memory decoding and bus mastering on. */
static void tpu_fuzz_plug(TPUFuzzCard *card, bool sync_worker)
{
    PCIBus *bus = tpu_fuzz_port();
    PCIDevice *pdev = pci_new(-1, "tpu");

    qdev_prop_set_bit(DEVICE(pdev), "x-sync-worker", sync_worker);
    pci_realize_and_unref(pdev, bus, &error_fatal);
    tpu_fuzz_enable(pdev);

    card->pdev = pdev;
    card->unplugged = false;
    card->stale = memory_region_find(get_system_memory(), TPU_FUZZ_BAR0,
                                     TPU_BAR_REGS_SIZE);
    if (!card->stale.mr ||
        card->stale.mr != pdev->io_regions[TPU_BAR_REGS].memory) {
        fprintf(stderr, "tpu-unplug: BAR0 is not mapped at 0x%llx\n",
                TPU_FUZZ_BAR0);
        abort();
    }
}

/* Unplugs the card as pcie_unplug_device() does; the look-up keeps it. */
static void tpu_fuzz_unplug(TPUFuzzCard *card)
{
    if (!card->unplugged) {
        object_unparent(OBJECT(card->pdev));
        card->unplugged = true;
    }
}

/* An access through the stale look-up; after the unplug, reads give 0. */
static void tpu_fuzz_access(TPUFuzzCard *card, bool write, hwaddr offset,
                            unsigned size, uint64_t value)
{
    MemoryRegion *mr = card->stale.mr;
    hwaddr addr = card->stale.offset_within_region + offset;
    MemOp op = size_memop(size) | MO_LE;

    if (write) {
        memory_region_dispatch_write(mr, addr, value, op,
                                     MEMTXATTRS_UNSPECIFIED);
        return;
    }
    value = 0;
    memory_region_dispatch_read(mr, addr, &value, op, MEMTXATTRS_UNSPECIFIED);
    if (card->unplugged && value) {
        fprintf(stderr, "tpu-unplug: %u-byte read at 0x%" HWADDR_PRIx
                " after the unplug gave 0x%" PRIx64 ", not 0\n",
                size, offset, value);
        abort();
    }
}

static void tpu_fuzz_record(QTestState *qts, TPUFuzzCard *card,
                            const unsigned char *rec)
{
    unsigned size = rec[1] & 1 ? 8 : 4;
    hwaddr offset = QEMU_ALIGN_DOWN(lduw_le_p(rec + 2) % TPU_BAR_REGS_SIZE,
                                    size);
    uint64_t value = ldq_le_p(rec + 4);
    uint32_t word = value;

    switch (rec[0] & 7) {
    case REC_READ:
        tpu_fuzz_access(card, false, offset, size, 0);
        break;
    case REC_WRITE:
        tpu_fuzz_access(card, true, offset, size, value);
        break;
    case REC_MEM:
        address_space_write(&address_space_memory,
                            TPU_FUZZ_MEM + lduw_le_p(rec + 2),
                            MEMTXATTRS_UNSPECIFIED, &word, sizeof(word));
        break;
    case REC_UNPLUG:
        tpu_fuzz_unplug(card);
        break;
    case REC_MAIN_LOOP:
        flush_events(qts);
        break;
    }
}

/* After the unplug: every register read at both widths and written. */
static void tpu_fuzz_sweep(TPUFuzzCard *card)
{
    hwaddr offset;

    for (offset = 0; offset < TPU_BAR_REGS_SIZE; offset += 4) {
        tpu_fuzz_access(card, false, offset, 4, 0);
        if (!(offset & 7)) {
            tpu_fuzz_access(card, false, offset, 8, 0);
        }
        tpu_fuzz_access(card, true, offset, 4,
                        offset == TPU_REG_RESET ? TPU_RESET_MAGIC : 1);
    }
}

static void tpu_unplug_fuzz(QTestState *qts, const unsigned char *data,
                            size_t size)
{
    TPUFuzzCard card;
    size_t pos;

    tpu_fuzz_plug(&card, size && (data[0] & 8));
    for (pos = 0; pos + TPU_FUZZ_RECORD <= size; pos += TPU_FUZZ_RECORD) {
        tpu_fuzz_record(qts, &card, data + pos);
    }
    tpu_fuzz_unplug(&card);
    flush_events(qts);
    tpu_fuzz_sweep(&card);

    /* The last reference: the card is finalized (as the old view's is). */
    memory_region_unref(card.stale.mr);
    drain_call_rcu();
    flush_events(qts);
}

static GString *tpu_unplug_cmdline(FuzzTarget *t)
{
    return g_string_new(TARGET_NAME " -machine q35,accel=qtest -nodefaults "
                        "-m 64 -display none "
                        "-device pcie-root-port,id=tpu-port,chassis=1,slot=1 "
                        "-L /usr/share/seabios -L /usr/share/qemu "
                        "-global tpu.mxu-rows=32 -global tpu.mxu-cols=32 "
                        "-global tpu.ub-size=1M -global tpu.acc-size=512K "
                        "-global tpu.num-queues=4 -global tpu.num-ctx=16 "
                        "-global tpu.tlb-entries=64 -global tpu.threads=1");
}

static void register_tpu_unplug_fuzz(void)
{
    fuzz_add_target(&(FuzzTarget){
        .name = "tpu-unplug",
        .description = "TPU card register accesses dispatched after the "
                       "card was hot-unplugged (a vCPU's stale look-up)",
        .get_init_cmdline = tpu_unplug_cmdline,
        .fuzz = tpu_unplug_fuzz,
    });
}

fuzz_target_init(register_tpu_unplug_fuzz);
