// SPDX-License-Identifier: GPL-2.0
/*
 * Sysfs attributes of the card's place on an inter-chip fabric (spec 2.0, CAPS.ICI;
 * docs/hardware.md section 10), one value per file: in /sys/bus/pci/devices/<PCI address>/ici/
 * the topology, coordinate, size and link figures (the y links' apart, spec 2.4) and the jobs'
 * link counters (CNT_LINK_*), and in ici_port<p>/ each port's link state, neighbour and
 * counters. Read from the card's registers on each read; the counters are the card's, since its
 * last reset. Cards without CAPS.ICI or not on a fabric have none of them, and a port the
 * topology does not give the card has no directory.
 */
#include <drm/drm_drv.h>
#include <linux/device.h>
#include <linux/sysfs.h>

#include "tpu_device.h"
#include "tpu_drv.h"
#include "tpu_sysfs.h"

static struct tpu_device *tpu_ici_dev(struct device *dev)
{
	return dev_get_drvdata(dev);
}

/* Reads a register of the card; -ENODEV once it is gone. */
static int tpu_ici_read(struct tpu_device *tdev, u32 reg, bool wide, u64 *value)
{
	int idx;

	if (!drm_dev_enter(&tdev->drm, &idx))
		return -ENODEV;
	*value = wide ? tpu_read64(tdev, reg) : tpu_read(tdev, reg);
	drm_dev_exit(idx);
	return 0;
}

static u32 tpu_ici_ports(struct tpu_device *tdev)
{
	return tdev->ici_info & TPU_ICI_INFO_PORTS_MASK;
}

static u32 tpu_ici_topology(struct tpu_device *tdev)
{
	return (tdev->ici_info >> TPU_ICI_INFO_TOPO_SHIFT) & 0xf;
}

/* A coordinate as ici-coord takes it: "x" on a ring, "x:y" on a torus. */
static ssize_t tpu_ici_emit_coord(struct tpu_device *tdev, char *buf, u64 xy)
{
	if (tpu_ici_topology(tdev) == TPU_ICI_TOPO_RING)
		return sysfs_emit(buf, "%llu\n", xy & 0xff);
	return sysfs_emit(buf, "%llu:%llu\n", xy & 0xff, (xy >> 8) & 0xff);
}

static ssize_t topology_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	u32 topology = tpu_ici_topology(tpu_ici_dev(dev));

	return sysfs_emit(buf, "%s\n", topology == TPU_ICI_TOPO_RING ? "ring" :
			  topology == TPU_ICI_TOPO_TORUS2D ? "torus2d" : "none");
}
static DEVICE_ATTR_RO(topology);

static ssize_t ports_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", tpu_ici_ports(tpu_ici_dev(dev)));
}
static DEVICE_ATTR_RO(ports);

static ssize_t coord_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct tpu_device *tdev = tpu_ici_dev(dev);
	u64 v;
	int ret = tpu_ici_read(tdev, TPU_REG_ICI_COORD, false, &v);

	return ret ? ret : tpu_ici_emit_coord(tdev, buf, v);
}
static DEVICE_ATTR_RO(coord);

static ssize_t dims_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct tpu_device *tdev = tpu_ici_dev(dev);
	u64 v;
	int ret = tpu_ici_read(tdev, TPU_REG_ICI_DIMS, false, &v);

	if (ret)
		return ret;
	if (tpu_ici_topology(tdev) == TPU_ICI_TOPO_RING)
		return sysfs_emit(buf, "%llu\n", v & 0xff);
	return sysfs_emit(buf, "%llux%llu\n", v & 0xff, (v >> 8) & 0xff);
}
static DEVICE_ATTR_RO(dims);

/*
 * The y links' figures (spec 2.4): their own registers, or on a card before 2.4, whose links
 * are all alike, the x links' (LINK_GBPS and HOP_NS lie as far apart as the y registers).
 */
static ssize_t tpu_ici_y_show(struct device *dev, u32 reg, char *buf)
{
	struct tpu_device *tdev = tpu_ici_dev(dev);
	u64 v;
	int ret;

	if (!(tdev->caps & TPU_CAP_COMPL_LINK))
		reg -= TPU_REG_ICI_Y_LINK_GBPS - TPU_REG_ICI_LINK_GBPS;
	ret = tpu_ici_read(tdev, reg, false, &v);
	return ret ? ret : sysfs_emit(buf, "%llu\n", v);
}

static ssize_t y_link_gbps_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return tpu_ici_y_show(dev, TPU_REG_ICI_Y_LINK_GBPS, buf);
}
static DEVICE_ATTR_RO(y_link_gbps);

static ssize_t y_hop_ns_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return tpu_ici_y_show(dev, TPU_REG_ICI_Y_HOP_NS, buf);
}
static DEVICE_ATTR_RO(y_hop_ns);

/* A plain register of the ici directory; the attribute's var is its offset. */
static ssize_t tpu_ici_reg_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	u32 reg = (uintptr_t)container_of(attr, struct dev_ext_attribute, attr)->var;
	bool wide = reg >= TPU_REG_CNT_LINK_CYCLES && reg <= TPU_REG_CNT_LINK_RX;
	u64 v;
	int ret = tpu_ici_read(tpu_ici_dev(dev), reg, wide, &v);

	return ret ? ret : sysfs_emit(buf, "%llu\n", v);
}

#define TPU_ICI_REG_ATTR(name, reg)							\
static struct dev_ext_attribute dev_attr_ici_##name = {					\
	__ATTR(name, 0444, tpu_ici_reg_show, NULL), (void *)(reg)			\
}

TPU_ICI_REG_ATTR(link_gbps, TPU_REG_ICI_LINK_GBPS);
TPU_ICI_REG_ATTR(hop_ns, TPU_REG_ICI_HOP_NS);
TPU_ICI_REG_ATTR(credits, TPU_REG_ICI_CREDITS);
TPU_ICI_REG_ATTR(link_cycles, TPU_REG_CNT_LINK_CYCLES);
TPU_ICI_REG_ATTR(link_tx_bytes, TPU_REG_CNT_LINK_TX);
TPU_ICI_REG_ATTR(link_rx_bytes, TPU_REG_CNT_LINK_RX);

static struct attribute *tpu_ici_attrs[] = {
	&dev_attr_topology.attr,
	&dev_attr_ports.attr,
	&dev_attr_coord.attr,
	&dev_attr_dims.attr,
	&dev_attr_ici_link_gbps.attr.attr,
	&dev_attr_ici_hop_ns.attr.attr,
	&dev_attr_ici_credits.attr.attr,
	&dev_attr_y_link_gbps.attr,
	&dev_attr_y_hop_ns.attr,
	&dev_attr_ici_link_cycles.attr.attr,
	&dev_attr_ici_link_tx_bytes.attr.attr,
	&dev_attr_ici_link_rx_bytes.attr.attr,
	NULL
};

/* The directory exists on a card that is on a fabric. */
static bool tpu_ici_group_visible(struct kobject *kobj)
{
	return tpu_ici_ports(tpu_ici_dev(kobj_to_dev(kobj)));
}

DEFINE_SIMPLE_SYSFS_GROUP_VISIBLE(tpu_ici);

const struct attribute_group tpu_ici_sysfs_group = {
	.name = "ici",
	.attrs = tpu_ici_attrs,
	.is_visible = SYSFS_GROUP_VISIBLE(tpu_ici),
};

/* ---- ici_port<p>: the attribute's var is (port << 8) | register of the port's block ---- */

enum { TPU_ICI_PORT_STATE = 0xf0, TPU_ICI_PORT_ERROR, TPU_ICI_PORT_PEER_PORT };

static ssize_t tpu_ici_port_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct tpu_device *tdev = tpu_ici_dev(dev);
	uintptr_t var = (uintptr_t)container_of(attr, struct dev_ext_attribute, attr)->var;
	u32 port = var >> 8, field = var & 0xff;
	u32 reg = field >= TPU_ICI_PORT_STATE ? TPU_PREG_STATUS : field;
	bool wide = reg >= TPU_PREG_TX_BYTES && reg <= TPU_PREG_ERRORS;
	u64 v;
	int ret = tpu_ici_read(tdev, TPU_REG_PORT(port, reg), wide, &v);

	if (ret)
		return ret;
	switch (field) {
	case TPU_ICI_PORT_STATE:
		return sysfs_emit(buf, "%s\n", v & TPU_PORT_UP ? "up" : "down");
	case TPU_ICI_PORT_ERROR:
		return sysfs_emit(buf, "%u\n", !!(v & TPU_PORT_ERROR));
	case TPU_ICI_PORT_PEER_PORT:
		return sysfs_emit(buf, "%llu\n", (v >> TPU_PORT_PEER_PORT_SHIFT) & 0xff);
	case TPU_PREG_PEER:
		return tpu_ici_emit_coord(tdev, buf, v);
	default:
		return sysfs_emit(buf, "%llu\n", v);
	}
}

/* Port numbers by name, for the macros below (which paste their argument only). */
enum { TPU_ICI_port0, TPU_ICI_port1, TPU_ICI_port2, TPU_ICI_port3 };

#define TPU_ICI_PORT_ATTR(id, name, field)						\
static struct dev_ext_attribute dev_attr_ici_##id##_##name = {				\
	__ATTR(name, 0444, tpu_ici_port_show, NULL),					\
	(void *)(((uintptr_t)TPU_ICI_##id << 8) | (field))				\
}

#define TPU_ICI_PORT(p)									\
TPU_ICI_PORT_ATTR(port##p, state, TPU_ICI_PORT_STATE);					\
TPU_ICI_PORT_ATTR(port##p, error, TPU_ICI_PORT_ERROR);					\
TPU_ICI_PORT_ATTR(port##p, peer, TPU_PREG_PEER);					\
TPU_ICI_PORT_ATTR(port##p, peer_port, TPU_ICI_PORT_PEER_PORT);				\
TPU_ICI_PORT_ATTR(port##p, tx_bytes, TPU_PREG_TX_BYTES);				\
TPU_ICI_PORT_ATTR(port##p, rx_bytes, TPU_PREG_RX_BYTES);				\
TPU_ICI_PORT_ATTR(port##p, tx_packets, TPU_PREG_TX_PACKETS);				\
TPU_ICI_PORT_ATTR(port##p, rx_packets, TPU_PREG_RX_PACKETS);				\
TPU_ICI_PORT_ATTR(port##p, errors, TPU_PREG_ERRORS);					\
TPU_ICI_PORT_ATTR(port##p, rx_queued, TPU_PREG_RX_QUEUED);				\
static struct attribute *tpu_ici_port##p##_attrs[] = {					\
	&dev_attr_ici_port##p##_state.attr.attr,					\
	&dev_attr_ici_port##p##_error.attr.attr,					\
	&dev_attr_ici_port##p##_peer.attr.attr,						\
	&dev_attr_ici_port##p##_peer_port.attr.attr,					\
	&dev_attr_ici_port##p##_tx_bytes.attr.attr,					\
	&dev_attr_ici_port##p##_rx_bytes.attr.attr,					\
	&dev_attr_ici_port##p##_tx_packets.attr.attr,					\
	&dev_attr_ici_port##p##_rx_packets.attr.attr,					\
	&dev_attr_ici_port##p##_errors.attr.attr,					\
	&dev_attr_ici_port##p##_rx_queued.attr.attr,					\
	NULL										\
};											\
static bool tpu_ici_port##p##_group_visible(struct kobject *kobj)			\
{											\
	return TPU_ICI_port##p < tpu_ici_ports(tpu_ici_dev(kobj_to_dev(kobj)));		\
}											\
											\
DEFINE_SIMPLE_SYSFS_GROUP_VISIBLE(tpu_ici_port##p);					\
const struct attribute_group tpu_ici_port##p##_group = {				\
	.name = "ici_port" #p,								\
	.attrs = tpu_ici_port##p##_attrs,						\
	.is_visible = SYSFS_GROUP_VISIBLE(tpu_ici_port##p),				\
}

TPU_ICI_PORT(0);
TPU_ICI_PORT(1);
TPU_ICI_PORT(2);
TPU_ICI_PORT(3);
