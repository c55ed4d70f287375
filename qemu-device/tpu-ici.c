/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * TPU card - "tpu-ici", the inter-chip interconnect shared by the cards of
 * one QEMU process (docs/hardware.md section 10), like can-bus is shared by
 * CAN controllers:
 *
 *   -object tpu-ici,id=ici0,topology=ring,dims=4,preset=v5e
 *   -device tpu,ici=ici0,ici-coord=0 ... -device tpu,ici=ici0,ici-coord=3
 *   -object tpu-ici,id=ici1,topology=torus2d,dims=2x2,link-gbps=400,hop-ns=1000
 *   -device tpu,ici=ici1,ici-coord=1:0 ...
 *
 * Properties:
 *   topology   "ring" (default) or "torus2d"
 *   dims       "N" for a ring, "XxY" for a torus (2..64 each); required
 *   preset     "v4" (360 Gbit/s, 1000 ns a hop) or "v5e" (400 Gbit/s,
 *              1000 ns): Cloud TPU's ICI links; link-gbps and hop-ns set
 *              as well win
 *   link-gbps  each link direction's bandwidth in Gbit/s (default 400)
 *   hop-ns     latency of one hop in ns (default 1000)
 *   credits    packets of 4 KiB a port's receive buffer holds (default 256)
 *   y-link-gbps, y-hop-ns  spec 2.4, a torus: the y links' own figures (the
 *              links between servers of a pod); 0 (default): the x links'
 *
 * At run time (qom-set /objects/ici0 link-down "0:1"), write-only:
 *   link-down  "<coord>:<port>" (coord as in ici-coord): takes that link of
 *              a card of this QEMU down; jobs using it end LINK_DOWN. A link
 *              to another process closes its connection and stays down.
 *   link-up    the same: the link comes up again (once cards sit at both
 *              ends; a link to another process, with its next connection)
 *
 * The links themselves are the engine library's (tpu_fabric_*, and each
 * card's engine moves data over them on its worker thread); this object
 * parses the properties, makes the fabric and places the cards on it. It
 * cannot be deleted while a card is on it.
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qemu/ctype.h"
#include "qemu/cutils.h"
#include "qemu/module.h"
#include "qom/object_interfaces.h"
#include "tpu-ici.h"

#define TPU_ICI_DEFAULT_GBPS 400
#define TPU_ICI_DEFAULT_HOP_NS 1000
#define TPU_ICI_DEFAULT_CREDITS 256

static const struct {
    const char *name;
    uint32_t link_gbps;
    uint32_t hop_ns;
} tpu_ici_presets[] = {
    { "v4", 360, 1000 },    /* 45 GB/s each way, ~1 us a hop */
    { "v5e", 400, 1000 },   /* 50 GB/s each way */
};

/* A decimal number in [min, max] taking all of text up to end; false if not. */
static bool tpu_ici_parse_uint(const char *text, const char **end,
                               uint32_t min, uint32_t max, uint32_t *out)
{
    uint64_t v;

    if (!qemu_isdigit(*text) || qemu_strtou64(text, end, 10, &v) ||
        v < min || v > max) {
        return false;
    }
    *out = v;
    return true;
}

static bool tpu_ici_parse_dims(TPUIciState *s, Error **errp)
{
    const char *end;
    bool torus = s->cfg.topology == TPU_ICI_TOPO_TORUS2D;

    if (!s->dims) {
        error_setg(errp, "tpu-ici: dims is required (\"N\" for a ring, "
                   "\"XxY\" for a 2-D torus)");
        return false;
    }
    s->cfg.dim_y = 1;
    if (!tpu_ici_parse_uint(s->dims, &end, 2, TPU_ICI_MAX_DIM,
                            &s->cfg.dim_x) ||
        (torus && (*end != 'x' ||
                   !tpu_ici_parse_uint(end + 1, &end, 2, TPU_ICI_MAX_DIM,
                                       &s->cfg.dim_y))) ||
        *end) {
        error_setg(errp, "tpu-ici: dims \"%s\": a %s needs %s, each 2..%d",
                   s->dims, torus ? "2-D torus" : "ring",
                   torus ? "\"XxY\"" : "\"N\"", TPU_ICI_MAX_DIM);
        return false;
    }
    return true;
}

static bool tpu_ici_configure(TPUIciState *s, Error **errp)
{
    unsigned i;

    s->cfg.link_gbps = TPU_ICI_DEFAULT_GBPS;
    s->cfg.hop_ns = TPU_ICI_DEFAULT_HOP_NS;
    if (!s->topology || !strcmp(s->topology, "ring")) {
        s->cfg.topology = TPU_ICI_TOPO_RING;
    } else if (!strcmp(s->topology, "torus2d")) {
        s->cfg.topology = TPU_ICI_TOPO_TORUS2D;
    } else {
        error_setg(errp, "tpu-ici: topology must be \"ring\" or \"torus2d\", "
                   "not \"%s\"", s->topology);
        return false;
    }
    if (s->preset) {
        for (i = 0; i < ARRAY_SIZE(tpu_ici_presets); i++) {
            if (!strcmp(s->preset, tpu_ici_presets[i].name)) {
                break;
            }
        }
        if (i == ARRAY_SIZE(tpu_ici_presets)) {
            error_setg(errp, "tpu-ici: preset must be \"v4\" or \"v5e\", "
                       "not \"%s\"", s->preset);
            return false;
        }
        s->cfg.link_gbps = tpu_ici_presets[i].link_gbps;
        s->cfg.hop_ns = tpu_ici_presets[i].hop_ns;
    }
    if (s->link_gbps_set) {
        s->cfg.link_gbps = s->link_gbps;
    }
    if (s->hop_ns_set) {
        s->cfg.hop_ns = s->hop_ns;
    }
    s->cfg.credits = s->credits;
    s->cfg.y_link_gbps = s->y_link_gbps;
    s->cfg.y_hop_ns = s->y_hop_ns;
    return tpu_ici_parse_dims(s, errp);
}

static void tpu_ici_complete(UserCreatable *uc, Error **errp)
{
    TPUIciState *s = TPU_ICI(uc);
    char err[256] = "";

    if (!tpu_ici_configure(s, errp)) {
        return;
    }
    s->fabric = tpu_fabric_create(&s->cfg, err, sizeof(err));
    if (!s->fabric) {
        error_setg(errp, "tpu-ici: %s", err);
    }
}

/* "x" on a ring, "x:y" on a torus; false if coord is not. */
static bool tpu_ici_parse_coord(TPUIciState *s, const char *coord,
                                uint32_t *x, uint32_t *y)
{
    bool torus = s->cfg.topology == TPU_ICI_TOPO_TORUS2D;
    const char *end;

    *y = 0;
    return coord && tpu_ici_parse_uint(coord, &end, 0, UINT16_MAX, x) &&
           (!torus || (*end == ':' &&
                       tpu_ici_parse_uint(end + 1, &end, 0, UINT16_MAX, y))) &&
           !*end;
}

bool tpu_ici_attach(TPUIciState *s, struct tpu_engine *eng, const char *coord,
                    Error **errp)
{
    bool torus = s->cfg.topology == TPU_ICI_TOPO_TORUS2D;
    uint32_t x, y;
    char err[256] = "";

    if (!tpu_ici_parse_coord(s, coord, &x, &y)) {
        error_setg(errp, "tpu: ici-coord \"%s\": a card on a %s needs %s",
                   coord ? coord : "", torus ? "2-D torus" : "ring",
                   torus ? "\"x:y\"" : "\"x\"");
        return false;
    }
    if (tpu_engine_attach(eng, s->fabric, x, y, err, sizeof(err))) {
        error_setg(errp, "tpu: ici-coord %s on %s: %s", coord,
                   object_get_canonical_path_component(OBJECT(s)), err);
        return false;
    }
    s->cards++;
    return true;
}

void tpu_ici_detach(TPUIciState *s, struct tpu_engine *eng)
{
    tpu_engine_detach(eng);
    s->cards--;
}

/* A "coord:port" value of link-down or link-up: its link goes down or up. */
static void tpu_ici_set_link(TPUIciState *s, const char *value, bool up,
                             Error **errp)
{
    const char *colon = value ? strrchr(value, ':') : NULL;
    g_autofree char *coord = NULL;
    uint32_t x, y = 0, port;
    const char *end;
    char err[256] = "";

    if (!s->fabric) {
        error_setg(errp, "tpu-ici: not complete yet");
        return;
    }
    if (!colon || !tpu_ici_parse_uint(colon + 1, &end, 0, TPU_ICI_MAX_PORTS,
                                      &port) || *end) {
        error_setg(errp, "tpu-ici: link-%s \"%s\": needs \"<coord>:<port>\"",
                   up ? "up" : "down", value ? value : "");
        return;
    }
    coord = g_strndup(value, colon - value);
    if (!tpu_ici_parse_coord(s, coord, &x, &y)) {
        error_setg(errp, "tpu-ici: link-%s \"%s\": the coordinate is %s",
                   up ? "up" : "down", value,
                   s->cfg.topology == TPU_ICI_TOPO_TORUS2D ? "\"x:y\""
                                                           : "\"x\"");
        return;
    }
    if (tpu_fabric_set_link(s->fabric, x, y, port, up, err, sizeof(err))) {
        error_setg(errp, "tpu-ici: link-%s \"%s\": %s", up ? "up" : "down",
                   value, err);
    }
}

static void tpu_ici_set_link_down(Object *obj, const char *value, Error **errp)
{
    tpu_ici_set_link(TPU_ICI(obj), value, false, errp);
}

static void tpu_ici_set_link_up(Object *obj, const char *value, Error **errp)
{
    tpu_ici_set_link(TPU_ICI(obj), value, true, errp);
}

static bool tpu_ici_can_be_deleted(UserCreatable *uc)
{
    return !TPU_ICI(uc)->cards;
}

static char *tpu_ici_get_topology(Object *obj, Error **errp)
{
    return g_strdup(TPU_ICI(obj)->topology);
}

static void tpu_ici_set_topology(Object *obj, const char *value, Error **errp)
{
    TPUIciState *s = TPU_ICI(obj);

    g_free(s->topology);
    s->topology = g_strdup(value);
}

static char *tpu_ici_get_dims(Object *obj, Error **errp)
{
    return g_strdup(TPU_ICI(obj)->dims);
}

static void tpu_ici_set_dims(Object *obj, const char *value, Error **errp)
{
    TPUIciState *s = TPU_ICI(obj);

    g_free(s->dims);
    s->dims = g_strdup(value);
}

static char *tpu_ici_get_preset(Object *obj, Error **errp)
{
    return g_strdup(TPU_ICI(obj)->preset);
}

static void tpu_ici_set_preset(Object *obj, const char *value, Error **errp)
{
    TPUIciState *s = TPU_ICI(obj);

    g_free(s->preset);
    s->preset = g_strdup(value);
}

/* The numeric properties: the field is at opaque's offset. */
static void tpu_ici_get_uint32(Object *obj, Visitor *v, const char *name,
                               void *opaque, Error **errp)
{
    uint32_t *field = (uint32_t *)((char *)obj + (uintptr_t)opaque);

    visit_type_uint32(v, name, field, errp);
}

static void tpu_ici_set_uint32(Object *obj, Visitor *v, const char *name,
                               void *opaque, Error **errp)
{
    TPUIciState *s = TPU_ICI(obj);
    uint32_t *field = (uint32_t *)((char *)obj + (uintptr_t)opaque);

    if (!visit_type_uint32(v, name, field, errp)) {
        return;
    }
    if (field == &s->link_gbps) {
        s->link_gbps_set = true;
    } else if (field == &s->hop_ns) {
        s->hop_ns_set = true;
    }
}

static void tpu_ici_instance_init(Object *obj)
{
    TPUIciState *s = TPU_ICI(obj);

    s->link_gbps = TPU_ICI_DEFAULT_GBPS;
    s->hop_ns = TPU_ICI_DEFAULT_HOP_NS;
    s->credits = TPU_ICI_DEFAULT_CREDITS;
}

static void tpu_ici_instance_finalize(Object *obj)
{
    TPUIciState *s = TPU_ICI(obj);

    tpu_fabric_destroy(s->fabric);
    g_free(s->topology);
    g_free(s->dims);
    g_free(s->preset);
}

static void tpu_ici_add_uint32(ObjectClass *oc, const char *name,
                               size_t offset, const char *description)
{
    object_class_property_add(oc, name, "uint32", tpu_ici_get_uint32,
                              tpu_ici_set_uint32, NULL,
                              (void *)(uintptr_t)offset);
    object_class_property_set_description(oc, name, description);
}

static void tpu_ici_class_init(ObjectClass *oc, void *data)
{
    UserCreatableClass *ucc = USER_CREATABLE_CLASS(oc);

    ucc->complete = tpu_ici_complete;
    ucc->can_be_deleted = tpu_ici_can_be_deleted;
    object_class_property_add_str(oc, "topology", tpu_ici_get_topology,
                                  tpu_ici_set_topology);
    object_class_property_set_description(oc, "topology",
                                          "\"ring\" (default) or \"torus2d\"");
    object_class_property_add_str(oc, "dims", tpu_ici_get_dims,
                                  tpu_ici_set_dims);
    object_class_property_set_description(oc, "dims",
        "cards: \"N\" for a ring, \"XxY\" for a 2-D torus (2..64 each)");
    object_class_property_add_str(oc, "preset", tpu_ici_get_preset,
                                  tpu_ici_set_preset);
    object_class_property_set_description(oc, "preset",
        "\"v4\" (360 Gbit/s, 1000 ns a hop) or \"v5e\" (400 Gbit/s, 1000 ns)");
    tpu_ici_add_uint32(oc, "link-gbps", offsetof(TPUIciState, link_gbps),
                       "each link direction's bandwidth, Gbit/s (default 400)");
    tpu_ici_add_uint32(oc, "hop-ns", offsetof(TPUIciState, hop_ns),
                       "latency of one hop, ns (default 1000)");
    object_class_property_add_str(oc, "link-down", NULL,
                                  tpu_ici_set_link_down);
    object_class_property_set_description(oc, "link-down",
        "\"<coord>:<port>\": takes that link down (write-only)");
    object_class_property_add_str(oc, "link-up", NULL, tpu_ici_set_link_up);
    object_class_property_set_description(oc, "link-up",
        "\"<coord>:<port>\": lets that link come up again (write-only)");
    tpu_ici_add_uint32(oc, "credits", offsetof(TPUIciState, credits),
                       "packets of 4 KiB a port's receive buffer holds "
                       "(2..65536, default 256)");
    tpu_ici_add_uint32(oc, "y-link-gbps", offsetof(TPUIciState, y_link_gbps),
                       "a torus: the y links' bandwidth, Gbit/s (default 0: "
                       "link-gbps)");
    tpu_ici_add_uint32(oc, "y-hop-ns", offsetof(TPUIciState, y_hop_ns),
                       "a torus: the y links' hop latency, ns (default 0: "
                       "hop-ns)");
}

static const TypeInfo tpu_ici_info = {
    .name = TYPE_TPU_ICI,
    .parent = TYPE_OBJECT,
    .instance_size = sizeof(TPUIciState),
    .instance_init = tpu_ici_instance_init,
    .instance_finalize = tpu_ici_instance_finalize,
    .class_init = tpu_ici_class_init,
    .interfaces = (InterfaceInfo[]) {
        { TYPE_USER_CREATABLE },
        { }
    },
};

static void tpu_ici_register_types(void)
{
    type_register_static(&tpu_ici_info);
}

type_init(tpu_ici_register_types)
