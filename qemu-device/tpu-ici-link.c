/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * TPU card - a port linked to its neighbour in another QEMU process by a
 * socket chardev (docs/hardware.md section 10, "Links to other processes"):
 *
 *   -chardev socket,id=l0,path=/tmp/ici0.sock,server=on,wait=off
 *   -device tpu,ici=ici0,ici-coord=0,ici-port0=l0            (one QEMU)
 *   -chardev socket,id=l1,path=/tmp/ici0.sock,reconnect-ms=200
 *   -device tpu,ici=ici0,ici-coord=1,ici-port1=l1            (the other)
 *
 * The engine (tpu_remote_link_*) speaks the wire protocol and bridges the
 * port's channels; this file carries its bytes in the main loop, under the
 * BQL, never blocking: it hands the engine what the chardev reads, writes
 * what the engine has to send as far as the socket takes it (a watch resumes
 * the rest), and closes the connection when the engine asks (the peer broke
 * the protocol or the link was taken down). The engine's notify callback,
 * called from the card's worker under an engine lock, only schedules the
 * bottom half. Each reason a link goes down is reported once, until the
 * link is up again.
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "tpu-ici-link.h"

/* What one read from the chardev may bring. */
#define TPU_ICI_LINK_READ_MAX (64 * 1024)

static void tpu_ici_link_report(TPUIciLink *l, const char *why)
{
    if (!g_strcmp0(why, l->reported)) {
        return;
    }
    error_report("tpu ici-coord %s: ici-port%u: %s; the link is down",
                 l->coord, l->port, why);
    g_free(l->reported);
    l->reported = g_strdup(why);
}

static bool tpu_ici_link_up(TPUIciLink *l)
{
    struct tpu_link_port_info info;

    return tpu_engine_port_info(l->engine, l->port, &info) && info.up;
}

static void tpu_ici_link_kick(void *opaque);

static gboolean tpu_ici_link_writable(void *do_not_use, GIOCondition cond,
                                      void *opaque)
{
    TPUIciLink *l = opaque;

    l->watch = 0;
    tpu_ici_link_kick(l);
    return G_SOURCE_REMOVE;
}

/* Bottom half: closes the connection, or writes what the engine has. */
static void tpu_ici_link_kick(void *opaque)
{
    TPUIciLink *l = opaque;
    const void *data;
    size_t n;
    int done;

    if (tpu_remote_link_close_due(l->link)) {
        qemu_chr_fe_disconnect(&l->chr);
        return;
    }
    if (tpu_ici_link_up(l)) {
        g_free(l->reported);
        l->reported = NULL;
    }
    if (l->watch) {
        return;
    }
    while ((n = tpu_remote_link_output(l->link, &data)) > 0) {
        done = qemu_chr_fe_write(&l->chr, data, MIN(n, INT_MAX));
        if (done > 0) {
            tpu_remote_link_written(l->link, done);
            continue;
        }
        if (done == 0 || errno == EAGAIN) {
            l->watch = qemu_chr_fe_add_watch(&l->chr, G_IO_OUT | G_IO_HUP,
                                             tpu_ici_link_writable, l);
        }
        /* Otherwise the connection is failing: its CLOSED event follows. */
        return;
    }
}

static void tpu_ici_link_notify(void *opaque)
{
    TPUIciLink *l = opaque;

    qemu_bh_schedule(l->bh);
}

static int tpu_ici_link_can_read(void *opaque)
{
    return TPU_ICI_LINK_READ_MAX;
}

static void tpu_ici_link_read(void *opaque, const uint8_t *buf, int size)
{
    TPUIciLink *l = opaque;
    const char *why = tpu_remote_link_input(l->link, buf, size);

    if (why) {
        tpu_ici_link_report(l, why); /* the bottom half closes */
    }
}

static void tpu_ici_link_event(void *opaque, QEMUChrEvent event)
{
    TPUIciLink *l = opaque;

    switch (event) {
    case CHR_EVENT_OPENED:
        tpu_remote_link_open(l->link);
        break;
    case CHR_EVENT_CLOSED:
        if (l->watch) {
            g_source_remove(l->watch);
            l->watch = 0;
        }
        if (tpu_ici_link_up(l)) {
            tpu_ici_link_report(l, "the peer closed the connection");
        }
        tpu_remote_link_close(l->link);
        break;
    default:
        break;
    }
}

bool tpu_ici_link_realize(TPUIciLink *l, struct tpu_engine *eng,
                          unsigned port, const char *coord, Error **errp)
{
    char err[256] = "";

    if (!qemu_chr_fe_backend_connected(&l->chr)) {
        return true;
    }
    l->engine = eng;
    l->port = port;
    l->coord = coord;
    l->bh = qemu_bh_new(tpu_ici_link_kick, l);
    l->link = tpu_remote_link_create(eng, port, tpu_ici_link_notify, l, err,
                                     sizeof(err));
    if (!l->link) {
        error_setg(errp, "tpu: ici-port%u: %s", port, err);
        qemu_bh_delete(l->bh);
        l->bh = NULL;
        return false;
    }
    qemu_chr_fe_set_handlers(&l->chr, tpu_ici_link_can_read,
                             tpu_ici_link_read, tpu_ici_link_event, NULL, l,
                             NULL, true);
    return true;
}

void tpu_ici_link_unrealize(TPUIciLink *l)
{
    if (!l->link) {
        return;
    }
    qemu_chr_fe_set_handlers(&l->chr, NULL, NULL, NULL, NULL, NULL, NULL,
                             true);
    qemu_chr_fe_disconnect(&l->chr); /* the peer's link goes down now */
    if (l->watch) {
        g_source_remove(l->watch);
        l->watch = 0;
    }
    /* After this no notify comes: the bottom half may go. */
    tpu_remote_link_destroy(l->link);
    l->link = NULL;
    qemu_bh_delete(l->bh);
    l->bh = NULL;
    g_free(l->reported);
    l->reported = NULL;
}
