#!/usr/bin/env python3
# One-way TCP bulk transfer across the emulated fabric, checked end to end.
#   tcp_bulk.py server ADDR PORT [COUNT]   accept COUNT connections (default 1)
#   tcp_bulk.py client ADDR PORT BYTES
# The client sends a header (length + SHA-256 of the payload) and then the
# payload; the server prints what arrived, its rate, and exits 1 on any
# mismatch, so a byte the fabric damaged or lost cannot go unnoticed.
import hashlib, os, socket, struct, sys, time

HDR = struct.Struct("!Q32s")

def recv_exact(c, n):
    buf = bytearray()
    while len(buf) < n:
        d = c.recv(n - len(buf))
        if not d:
            break
        buf += d
    return bytes(buf)

def server(addr, port, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(count)
    s.settimeout(30)
    print("listening", flush=True)
    ok = True
    for _ in range(count):
        c, peer = s.accept()
        c.settimeout(30)
        n, want = HDR.unpack(recv_exact(c, HDR.size))
        h, got, t0 = hashlib.sha256(), 0, time.monotonic()
        while got < n:
            d = c.recv(min(1 << 20, n - got))
            if not d:
                break
            h.update(d)
            got += len(d)
        dt = time.monotonic() - t0
        good = got == n and h.digest() == want
        ok &= good
        print(f"tcp: {got} of {n} bytes from {peer[0]} in {dt * 1e3:.1f} ms "
              f"({got * 8 / dt / 1e9 if dt else 0:.2f} Gbit/s), content {'intact' if good else 'DAMAGED'}",
              flush=True)
        c.close()
    sys.exit(0 if ok else 1)

def client(addr, port, n):
    payload = os.urandom(n)
    c = socket.create_connection((addr, port), timeout=30)
    c.sendall(HDR.pack(n, hashlib.sha256(payload).digest()))
    c.sendall(payload)
    c.close()

if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "server":
        server(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    elif len(sys.argv) == 5 and sys.argv[1] == "client":
        client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit("usage: tcp_bulk.py server ADDR PORT [COUNT] | client ADDR PORT BYTES")
