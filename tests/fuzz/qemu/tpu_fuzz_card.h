/*
 * tpu_fuzz_card.h - what the card's own QEMU fuzz targets (tpu_unplug_fuzz.c,
 * tpu_ici_peer_fuzz.c) share: PCI config writes as a driver makes them, and
 * BAR0 mapped where the targets reach it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef TPU_FUZZ_CARD_H
#define TPU_FUZZ_CARD_H

#include "hw/pci/pci.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pci_host.h"
#include "tpu_hw.h"

#define TPU_FUZZ_BAR0   0xe0000000ULL   /* in q35's PCI hole */
#define TPU_FUZZ_MEM    0x200000ULL     /* guest memory the targets fill */

static inline void tpu_fuzz_config_write(PCIDevice *pdev, uint32_t addr,
                                         uint32_t val, int len)
{
    pci_host_config_write_common(pdev, addr, pci_config_size(pdev), val, len);
}

/* BAR0 at TPU_FUZZ_BAR0, memory decoding and bus mastering on. */
static inline void tpu_fuzz_enable(PCIDevice *pdev)
{
    tpu_fuzz_config_write(pdev, PCI_BASE_ADDRESS_0 + 4 * TPU_BAR_REGS,
                          TPU_FUZZ_BAR0, 4);
    tpu_fuzz_config_write(pdev, PCI_COMMAND,
                          PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
}

#endif /* TPU_FUZZ_CARD_H */
