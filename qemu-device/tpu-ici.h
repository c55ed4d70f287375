/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * TPU card - the inter-chip interconnect object "tpu-ici" (tpu-ici.c): a
 * fabric of links that TPU cards of this QEMU join with -device
 * tpu,ici=<id>,ici-coord=<x[:y]> (docs/hardware.md section 10).
 */

#ifndef HW_MISC_TPU_ICI_H
#define HW_MISC_TPU_ICI_H

#include "qom/object.h"
#include "tpu_engine.h"
#include "tpu_hw.h"

#define TYPE_TPU_ICI "tpu-ici"
OBJECT_DECLARE_SIMPLE_TYPE(TPUIciState, TPU_ICI)

struct TPUIciState {
    Object parent_obj;

    /* Properties. */
    char *topology;
    char *dims;
    char *preset;
    uint32_t link_gbps;
    uint32_t hop_ns;
    uint32_t credits;
    uint32_t y_link_gbps;       /* 0: the x links' */
    uint32_t y_hop_ns;
    bool link_gbps_set;
    bool hop_ns_set;

    struct tpu_fabric_config cfg;
    struct tpu_fabric *fabric;  /* made by complete() */
    unsigned cards;             /* cards joined; the object stays while any */
};

/*
 * Joins a card's engine to the fabric at coord ("x" on a ring, "x:y" on a
 * 2-D torus); BQL held, no job running. False with errp set if coord is
 * malformed, outside the fabric or taken, or the card's clock differs.
 */
bool tpu_ici_attach(TPUIciState *ici, struct tpu_engine *eng,
                    const char *coord, Error **errp);
/* Takes the engine off the fabric: its links go down; BQL held. */
void tpu_ici_detach(TPUIciState *ici, struct tpu_engine *eng);

#endif /* HW_MISC_TPU_ICI_H */
