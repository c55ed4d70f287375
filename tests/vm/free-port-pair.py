#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Prints a port P of the host's loopback such that P and P + 1 are both free: a pod's two VMs'
# SSH ports (tools/pod/pod.sh --ssh-port P; check-pod.sh, check-pod-train.sh).
import socket

while True:
    a = socket.socket()
    a.bind(("127.0.0.1", 0))
    p = a.getsockname()[1]
    b = socket.socket()
    try:
        b.bind(("127.0.0.1", p + 1))
        print(p)
        break
    except OSError:
        pass
