#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# build-image.sh's last step on the root: makes it a server. Root file system /dev/vda
# (ext4), hostname tpu-server (boot-server.sh --hostname overrides it per VM through the kernel's
# systemd.hostname=), systemd-networkd with DHCP on every Ethernet NIC (QEMU's slirp answers it),
# user "tpu" (no password, groups tpu and sudo, sudo without a password, the host's key in
# ~/.ssh/authorized_keys), SSH by key only, root logged in automatically on the serial console
# ttyS0, no timers that would run apt or scrubs in a VM that lives minutes, no first-boot prompts.
#   configure-root.sh ROOT PUBLIC_KEY_FILE
set -euo pipefail
root=${1:?usage: configure-root.sh ROOT PUBLIC_KEY_FILE}
pubkey=${2:?usage: configure-root.sh ROOT PUBLIC_KEY_FILE}
in_root() { chroot "$root" "$@"; }

echo tpu-server > "$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\ttpu-server\n::1\tlocalhost ip6-localhost ip6-loopback\n' \
	> "$root/etc/hosts"
echo '/dev/vda / ext4 rw,errors=remount-ro 0 1' > "$root/etc/fstab"

# Network: DHCP on the NICs that no earlier file configures (90-: after the 70-<nic>.network
# systemd-network-generator writes from ip= on the kernel command line, a VM's address on a
# network between VMs); slirp's DNS is 10.0.2.3 (no resolver daemon in the image).
cat > "$root/etc/systemd/network/90-ethernet.network" <<'EOF'
[Match]
Type=ether

[Network]
DHCP=yes
EOF
rm -f "$root/etc/resolv.conf"
echo 'nameserver 10.0.2.3' > "$root/etc/resolv.conf"
systemctl --root="$root" enable systemd-networkd.service
systemctl --root="$root" mask systemd-firstboot.service apt-daily.timer apt-daily-upgrade.timer \
	e2scrub_all.timer e2scrub_reap.service fstrim.timer

# The user: group tpu (made by the stack's udev package when it is installed) and sudo.
in_root sh -c 'getent group tpu >/dev/null || groupadd --system tpu'
in_root useradd --create-home --shell /bin/bash --gid tpu --groups sudo tpu
in_root passwd --quiet --delete tpu
echo 'tpu ALL=(ALL) NOPASSWD: ALL' > "$root/etc/sudoers.d/tpu"
chmod 0440 "$root/etc/sudoers.d/tpu"
install -d -m 0700 "$root/home/tpu/.ssh"
install -m 0600 "$pubkey" "$root/home/tpu/.ssh/authorized_keys"
in_root chown -R tpu:tpu /home/tpu/.ssh
cat > "$root/etc/ssh/sshd_config.d/tpu-server.conf" <<'EOF'
# tpu-server: log in with a key only; no reverse DNS look-up of clients (slirp has none).
PasswordAuthentication no
KbdInteractiveAuthentication no
UseDNS no
EOF

# The serial console: root logged in automatically.
dropin=$root/etc/systemd/system/serial-getty@ttyS0.service.d
mkdir -p "$dropin"
cat > "$dropin/autologin.conf" <<'EOF'
[Service]
ExecStart=
ExecStart=-/sbin/agetty --autologin root --keep-baud 115200,57600,38400,9600 %I $TERM
EOF
