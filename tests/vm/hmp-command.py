# SPDX-License-Identifier: MIT
# Sends one command on a QEMU human monitor (HMP) socket and checks QEMU accepted it: HMP echoes
# the command as typed (with cursor moves) and answers an accepted device_del or qom-set with
# nothing but its prompt, a refused one with an error. Prints the reply; exits 1 if refused or
# unseen.
#   python3 hmp-command.py MONITOR_SOCKET COMMAND...
import socket
import sys
import time

path = sys.argv[1]
command = " ".join(sys.argv[2:]).encode()
s = socket.socket(socket.AF_UNIX)
s.connect(path)
s.settimeout(10)
s.sendall(command + b"\n")
out = b""
deadline = time.monotonic() + 10
while time.monotonic() < deadline and command not in out:
    out += s.recv(65536)
time.sleep(1)
s.setblocking(False)
try:
    out += s.recv(65536)
except BlockingIOError:
    pass
text = out.decode(errors="replace")
if command.decode() not in text:
    print(f"no echo of {command.decode()}:", repr(text))
    sys.exit(1)
reply = text.rsplit(command.decode(), 1)[1].replace("\x1b[K", "").strip()
print(f"{command.decode()} ->", repr(reply))
sys.exit(1 if "rror" in reply else 0)
