#!/usr/bin/env python3
"""Real clients for examples/chat.c (scripts/chat-check.sh runs it): Python's socket
module, the way a program that is not stvm's talks to the server.

  chat-client.py PORT IDLE_MS

Checks, each on its own connection(s): a line goes to every client, the sender too;
a client that half-closes right after its lines (shutdown(SHUT_WR), as `nc -N` and
HTTP/1.0 clients do) still gets every answer, then the end of the stream; twenty
clients at once each get every other's line; an idle client is told so after IDLE_MS
and its connection ends. Prints one line per check; exits 1 on the first failure."""
import socket
import sys
import time

PORT, IDLE_MS = int(sys.argv[1]), int(sys.argv[2])


def connect():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    return s, s.makefile("r", encoding="utf-8", newline="\n")


def lines(f):
    """The lines of f, without ticks, until the end of the stream."""
    for line in f:
        if not line.startswith("*"):
            yield line.rstrip("\n")


def fail(what):
    print("chat-client: FAIL:", what)
    sys.exit(1)


def expect(got, want, what):
    if got != want:
        fail(f"{what}: read {got!r}, expected {want!r}")


def welcome(f):
    line = next(lines(f))
    if not line.startswith("welcome c"):
        fail(f"no welcome: {line!r}")
    return line.split()[1]


# 1. Half-close: two lines, SHUT_WR at once, then read everything the server says.
s, f = connect()
me = welcome(f)
s.sendall(b"first line\nsecond line\n")
s.shutdown(socket.SHUT_WR)
rest = list(lines(f))
expect(rest, [f"{me}: first line", f"{me}: second line", f"bye {me}"], "half-close")
s.close()
print("chat-client: half-close: both lines and the bye arrived after our FIN, then EOF")

# 2. Many clients at once: each says one line; each hears all of them.
N = 20
clients = [connect() for _ in range(N)]
names = [welcome(f) for _, f in clients]
for (s, _), name in zip(clients, names):
    s.sendall(f"hello from {name}\n".encode())
want = {f"{n}: hello from {n}" for n in names}
for (s, f), name in zip(clients, names):
    got = set()
    it = lines(f)
    while not want <= got:
        line = next(it)
        if ": hello from " in line:
            got.add(line)
for s, f in clients:
    s.sendall(b"/quit\n")
    tail = list(lines(f))
    if not tail or not tail[-1].startswith("bye c"):
        fail(f"a /quit ended without its bye: {tail[-3:]!r}")
    s.close()
print(f"chat-client: {N} clients at once: each heard all {N} lines, then its bye")

# 3. Idle: say nothing; the server says so after IDLE_MS and ends the connection.
s, f = connect()
me = welcome(f)
t0 = time.monotonic()
rest = list(lines(f))
waited = (time.monotonic() - t0) * 1000
expect(rest, [f"idle for {IDLE_MS} ms", f"bye {me}"], "idle")
if waited < IDLE_MS * 0.9:
    fail(f"told idle after {waited:.0f} ms, before {IDLE_MS} ms")
print(f"chat-client: idle: told after {waited:.0f} ms (limit {IDLE_MS} ms), then EOF")
