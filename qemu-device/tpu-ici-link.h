/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * TPU card - a port linked to a card in another QEMU process by a socket
 * chardev (tpu-ici-link.c, docs/hardware.md section 10).
 */

#ifndef HW_MISC_TPU_ICI_LINK_H
#define HW_MISC_TPU_ICI_LINK_H

#include "chardev/char-fe.h"
#include "tpu_engine.h"

/* Ports that may be bound to a chardev (ici-port0 .. ici-port3). */
#define TPU_ICI_LINK_PORTS 4

typedef struct TPUIciLink {
    CharBackend chr;                /* ici-port<p>: the chardev, or none */
    struct tpu_engine *engine;
    struct tpu_remote_link *link;   /* the engine's end, while realized */
    QEMUBH *bh;                     /* writes, or closes, in the main loop */
    guint watch;                    /* waits for the socket to take more */
    unsigned port;
    const char *coord;              /* the card's ici-coord, for messages */
    char *reported;                 /* the last reason reported */
} TPUIciLink;

/*
 * Binds port of the card's engine (on a fabric) to the chardev set as
 * ici-port<port>, if any; BQL held. False with errp set if it cannot.
 */
bool tpu_ici_link_realize(TPUIciLink *l, struct tpu_engine *eng,
                          unsigned port, const char *coord, Error **errp);
/*
 * Unbinds it and closes the connection (the link goes down at both ends);
 * BQL held, before the card leaves its fabric.
 */
void tpu_ici_link_unrealize(TPUIciLink *l);

#endif /* HW_MISC_TPU_ICI_LINK_H */
