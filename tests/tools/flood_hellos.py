#!/usr/bin/env python3
"""Floods a Lanyard server on this machine with padded hellos (protocol 8).

    python3 tests/tools/flood_hellos.py PORT RATE SECONDS

Sends to 127.0.0.1:PORT only, from 64 sockets bound to 127.0.0.1, at RATE hellos a second
for SECONDS, and prints what it sent and what came back. The trial in BENCHMARKS.md ("A
flood of hellos") runs it beside a server and two bots.
"""
import os, socket, struct, sys, time
port, rate, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(64)]
for s in socks:
    s.bind(("127.0.0.1", 0))
    s.setblocking(False)
hello = b"LY" + struct.pack("<H", 8) + b"\x01" + os.urandom(40)
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
