# SPDX-License-Identifier: MIT
# A fake peer for a card port on a socket chardev (docs/hardware.md section 10, "Links to other
# processes"), playing the card at x = 1, port 1 of a ring of two (v5e links, 256 credits,
# 700 MHz): first a hello of wire version 3, which QEMU must refuse by closing the connection;
# then a good hello (the link comes up), and once the guest prints TPU-ICI-WAITING in LOG, 100
# bytes of garbage, after which QEMU must close the connection again. Exits 1 if it does not.
#   python3 ici-fake-peer.py SOCKET LOG
import socket
import struct
import sys
import time

path, log = sys.argv[1], sys.argv[2]


def hello(version):
    # header: magic, version, type 1, flags, body length, tag, seq 1, time; body: ring (1), 2 x 1,
    # 400 Gbit/s, 1000 ns, 256 credits, 700 MHz, x 1, y 0, port 1, the y links' figures (a ring's
    # are the x links')
    head = struct.pack("<IHBBIIQQ", 0x49434954, version, 1, 0, 48, 0, 1, 0)
    return head + struct.pack("<12I", 1, 2, 1, 400, 1000, 256, 700, 1, 0, 1, 400, 1000)


def connect():
    deadline = time.monotonic() + 240
    while True:
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(path)
            return s
        except OSError:
            s.close()
            if time.monotonic() > deadline:
                sys.exit("ici-fake-peer: no socket at " + path)
            time.sleep(0.5)


def closed_by_qemu(s):
    """True once QEMU closes the connection (its hello and anything else read on the way)."""
    s.settimeout(60)
    try:
        while s.recv(65536):
            pass
    except socket.timeout:
        return False
    return True


s = connect()
s.sendall(hello(3))
if not closed_by_qemu(s):
    sys.exit("ici-fake-peer: QEMU kept a peer of wire version 3")
print("ici-fake-peer: a hello of version 3 was refused")
s.close()

s = connect()
s.sendall(hello(2))
deadline = time.monotonic() + 240
while "TPU-ICI-WAITING" not in open(log, errors="replace").read():
    if time.monotonic() > deadline:
        sys.exit("ici-fake-peer: the guest never waited")
    time.sleep(0.5)
time.sleep(1)
s.sendall(b"\x5a" * 100)
if not closed_by_qemu(s):
    sys.exit("ici-fake-peer: QEMU kept a peer that sent garbage")
print("ici-fake-peer: garbage was refused")
