#!/usr/bin/env python3
"""Floods a Lanyard server on this machine with padded hellos.

    python3 tests/tools/flood_hellos.py PORT RATE SECONDS [VERSION] [SOURCE]

VERSION is the protocol version the hellos claim (by default this tree's, read from
net/src/config.rs), so the server answers them as real hellos. SOURCE is the loopback
address the hellos come from (127.0.0.1 by default; the soak tool floods from another one,
so its bots on 127.0.0.1 keep their own per-address allowance).

Sends to 127.0.0.1:PORT only, from 64 sockets bound to SOURCE, at RATE hellos a second
for SECONDS, and prints what it sent and what came back. The trial in BENCHMARKS.md ("A
flood of hellos") runs it beside a server and two bots.
"""
import os, re, socket, struct, sys, time
port, rate, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
source = sys.argv[5] if len(sys.argv) > 5 else "127.0.0.1"
if not source.startswith("127."):
    sys.exit("the flood stays on 127.0.0.0/8")
if len(sys.argv) > 4 and sys.argv[4] != "-":
    version = int(sys.argv[4])
else:
    config = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../net/src/config.rs")
    with open(config) as f:
        version = int(re.search(r"PROTOCOL_VERSION: u16 = (\d+);", f.read()).group(1))
socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(64)]
for s in socks:
    s.bind((source, 0))
    s.setblocking(False)
hello = b"LY" + struct.pack("<H", version) + b"\x01" + os.urandom(40)
hello += b"\x00" * (256 - len(hello))
dest = ("127.0.0.1", port)
sent, received, t0 = 0, 0, time.time()
while time.time() - t0 < secs:
    target = int((time.time() - t0) * rate)
    while sent < target:
        try:
            socks[sent % 64].sendto(hello, dest)
        except BlockingIOError:
            pass
        sent += 1
    for s in socks:
        try:
            while True:
                received += len(s.recv(2048))
        except BlockingIOError:
            pass
print(f"flood: sent {sent} hellos ({sent * 256} bytes) in {secs:.0f} s, got back {received} bytes")
