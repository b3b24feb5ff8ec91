#!/usr/bin/env python3
"""Holds idle TCP connections open against a server, as a hostile client.

    hold.py PORT N SOURCES STATUSFILE [LATER]

opens N connections to 127.0.0.1:PORT, spread round-robin over SOURCES
(comma-separated local addresses: 127.0.0.2,127.0.1.1-20 are any of
127/8, all loopback on Linux), sends nothing, and writes to STATUSFILE
"held H closed C failed F": connections still open after a second, those
the server closed (refused by a limit), and connects that failed.  Then it
sleeps until killed, holding what is open; with LATER, it first waits
LATER seconds more and writes STATUSFILE.later: "open O" (how many of the
held connections the server has not closed by then).
"""
import os
import resource
import select
import socket
import sys
import time


def sources(spec):
    out = []
    for part in spec.split(","):
        if "-" in part.rsplit(".", 1)[1]:
            base, last = part.rsplit(".", 1)
            lo, hi = last.split("-")
            out += ["%s.%d" % (base, i) for i in range(int(lo), int(hi) + 1)]
        else:
            out.append(part)
    return out


def closed_by_server(s):
    p = select.poll()
    p.register(s, select.POLLIN)
    if not p.poll(0):
        return False
    try:
        return not s.recv(1, socket.MSG_PEEK)
    except OSError:
        return True


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def main():
    port, n, srcs, status = int(sys.argv[1]), int(sys.argv[2]), sources(sys.argv[3]), sys.argv[4]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    socks, failed = [], 0
    for i in range(n):
        s = socket.socket()
        s.settimeout(2)
        try:
            s.bind((srcs[i % len(srcs)], 0))
            s.connect(("127.0.0.1", port))
            socks.append(s)
        except OSError:
            failed += 1
            s.close()
    time.sleep(1)
    held, closed = [], 0
    for s in socks:
        if closed_by_server(s):
            closed += 1
            s.close()
        else:
            held.append(s)
    write(status, "held %d closed %d failed %d\n" % (len(held), closed, failed))
    if len(sys.argv) > 5:
        time.sleep(float(sys.argv[5]))
        write(status + ".later", "open %d\n" % sum(not closed_by_server(s) for s in held))
    while True:
        time.sleep(3600)


main()
