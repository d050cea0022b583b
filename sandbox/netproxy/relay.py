# The relay of a build's network (sandbox/netproxy). It runs in a container on the build's
# internal network, accepts the build's connections on the port given, and carries each over
# its standard streams to Tender as frames: kind (1 byte), connection id (4), length (4), data.
# Kinds: R ready (listening; the data is the port), O a new connection, D data, E end of data
# (half close), C closed. Arguments: the port (0: any) and the address to listen on.
# It decides nothing: Tender's proxy answers every connection.
import os
import socket
import struct
import sys
import threading

HDR = struct.Struct(">BII")
READY, OPEN, DATA, EOF, CLOSE = (ord(k) for k in "RODEC")
out = sys.stdout.buffer
lock = threading.Lock()
socks = {}


def send(kind, cid, data=b""):
    with lock:
        try:
            out.write(HDR.pack(kind, cid, len(data)) + data)
            out.flush()
        except (BrokenPipeError, ValueError):
            os._exit(0)


def pump(cid, s):
    try:
        while True:
            data = s.recv(32768)
            if not data:
                send(EOF, cid)
                return
            send(DATA, cid, data)
    except OSError:
        send(CLOSE, cid)


def accept(srv):
    n = 0
    while True:
        s, _ = srv.accept()
        n += 1
        socks[n] = s
        send(OPEN, n)
        threading.Thread(target=pump, args=(n, s), daemon=True).start()


def readn(n):
    buf = b""
    while len(buf) < n:
        chunk = os.read(0, n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def deliver(kind, cid, data):
    s = socks.get(cid)
    if s is None:
        return
    try:
        if kind == DATA:
            s.sendall(data)
        elif kind == EOF:
            s.shutdown(socket.SHUT_WR)
        elif kind == CLOSE:
            socks.pop(cid, None)
            s.close()
    except OSError:
        socks.pop(cid, None)
        s.close()
        send(CLOSE, cid)


def main():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((sys.argv[2], int(sys.argv[1])))
    srv.listen(128)
    threading.Thread(target=accept, args=(srv,), daemon=True).start()
    send(READY, 0, str(srv.getsockname()[1]).encode())
    while True:
        hdr = readn(HDR.size)
        if hdr is None:
            break
        kind, cid, n = HDR.unpack(hdr)
        data = readn(n) if n else b""
        if data is None:
            break
        deliver(kind, cid, data)
    os._exit(0)


main()
