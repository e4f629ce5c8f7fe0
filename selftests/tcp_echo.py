#!/usr/bin/env python3
# TCP echo check for the selftests: `server ADDR PORT` echoes one connection;
# `client ADDR PORT BYTES` sends random bytes and exits 0 only if all come back.
import os, socket, sys

def server(addr, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(1)
    s.settimeout(20)
    print("listening", flush=True)
    c, _ = s.accept()
    c.settimeout(20)
    while True:
        d = c.recv(65536)
        if not d:
            break
        c.sendall(d)
    c.close()

def client(addr, port, n):
    data = os.urandom(n)
    c = socket.create_connection((addr, port), timeout=10)
    c.sendall(data)
    c.shutdown(socket.SHUT_WR)
    got = bytearray()
    while len(got) < n:
        d = c.recv(65536)
        if not d:
            break
        got += d
    if bytes(got) != data:
        print(f"tcp: echoed {len(got)} of {n} bytes, content {'ok' if data.startswith(bytes(got)) else 'differs'}")
        sys.exit(1)
    print(f"tcp: {n} bytes echoed intact")

if __name__ == "__main__":
    if sys.argv[1] == "server":
        server(sys.argv[2], int(sys.argv[3]))
    else:
        client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
