#!/usr/bin/env python3
"""Write the seed inputs of the libFuzzer targets (tests/fuzz/README.md).

    python3 tests/fuzz/make_seeds.py OUTDIR

writes OUTDIR/fuzz_primitives/seed-* and OUTDIR/fuzz_api/seed-*: directed inputs that
call every primitive (and every API operation) from the host thread and from a green
process, in 31- and 61-bit VMs with both Delay schedulers, plus pseudo-random ones
(fixed PRNG seed, so the output is the same every time). The checked-in corpus is
these, grown by fuzzing and minimised with -merge=1; the seeds are not needed again
unless the input format changes. The byte layouts are those of the targets' decoders
(fuzz_primitives.c: build_pool, op_prim, exec_op; fuzz_api.c: LLVMFuzzerTestOneInput,
exec_op).
"""
import os
import random
import sys

# ---- fuzz_primitives ------------------------------------------------------------------
# config byte: bit0 31-bit, bit1 ms Delays, bit2 no preemption yield, bit3 mprotect,
# bits 4-6 simulated start (index into fz_sim_starts); then the ms clock start byte.
# The pool for pool byte 0 (one semaphore, one mutex, one driver):
P = dict(nil=0, true=1, false=2, w4=3, w8=4, w16=5, stray_word=6, high=7, tmax=8, tmin=9,
         t61=10, tneg=11, zero=12, one=13, m1=14, two=15, m2=16, max=17, min=18, max_1=19,
         min1=20, max1=21, min_1=22, e30m=23, e30n=24, e30=25, e60m=26, e60n=27, e60=28,
         msmask=29, ms1=30, k1=31, M1=32, stray=33, fsem=34, fmut=35, fproc=36, fbox=37,
         fsem31=38, fmut31=39, fproc31=40, fbox31=41, bmax1=42, bmin1=43, bu64=44,
         bi64min=45, bi64max=46, b62=47, b62p=48, bsim=49, bneg=50, stale=51, stale16=52,
         sem=53, mut=54, sem16=55, sem8=56, mut32=57, susp=58, ready=59, driver=60)
PRIMS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 21, 22, 23, 24, 25, 26, 27, 28, 29, 85, 86, 87, 88, 135,
         136, 167, 185, 186, 187, 230, 240, 242]
NARGS = {n: 1 for n in PRIMS}
NARGS.update({85: 0, 86: 0, 87: 0, 88: 0, 135: 0, 136: 2, 167: 0, 185: 0, 186: 0, 187: 0,
              240: 0, 242: 2})
RUN, SPAWN, MAKE_INT, RELEASE, SEM_NEW, SEM_FREE, MUT_NEW, MUT_FREE, TERMINATE, \
    SET_PRIO, RESUME, TAGGED = range(176, 188)
END = 0xFF
W_DRIVER, W_WAIT, W_CRITICAL, W_DELAY, W_YIELD, W_RETURN, W_SELF_WAIT, W_SUSPEND_SELF, \
    W_TIMED_WAIT = range(9)


def prim(number, rcv, *args, mode=0):
    """A call of primitive `number`: op 0, selector, receiver, nargs mode, arguments."""
    out = [0, PRIMS.index(number), rcv, mode]
    n = NARGS[number]
    return out + list(args[:n]) + [P['zero']] * (n - len(args))


def header(cfg=0, ms=0, pool=0, prios=(40,)):
    return [cfg, ms, pool] + list(prios)


def spawn(kind, prio, held=True, suspended=False, a=0, b=0, dsel=0):
    return [SPAWN, kind, prio - 1, (1 if held else 0) | (2 if suspended else 0) | (b << 4), a,
            dsel]


RECEIVERS = ['zero', 'one', 'max', 'min', 'max1', 'min_1', 'e30', 'e60', 'tmax', 'bmax1',
             'bu64', 'bneg', 'bi64min', 'sem', 'mut', 'susp', 'nil', 'stray', 'fsem',
             'stale', 'stale16', 'sem16']


def prims_directed():
    seeds = {}
    for cfg in (0x00, 0x01, 0x03, 0x59):
        for number in PRIMS:
            body = []
            for i, r in enumerate(RECEIVERS):
                a = [P[RECEIVERS[(i * 7 + k) % len(RECEIVERS)]] for k in range(2)]
                if number in (136, 242):
                    a = [P['sem'] if i % 3 else P['nil'], a[1]]
                body += prim(number, P[r], *a)
            body += prim(number, P['sem'], mode=0x3C)            # wrong count
            body += prim(number, P['sem'], mode=0x7C)            # NULL args
            seeds['p%03d-c%02x' % (number, cfg)] = header(cfg) + body + [RUN] + body
    # process scenarios
    s = header(0x00, prios=(40,))
    s += spawn(W_WAIT, 50, a=0) + spawn(W_CRITICAL, 45, a=0, b=0) + [RUN]
    s += prim(88, P['driver']) + prim(85, P['sem']) + prim(186, P['mut']) + prim(187, P['mut'])
    s += prim(185, P['mut']) + prim(87, P['susp']) + prim(167, P['nil']) + prim(86, P['sem'])
    seeds['scenario-sem-mutex'] = s
    s = header(0x01, prios=(30, 60)) + spawn(W_SELF_WAIT, 20, held=False, a=0)
    s += spawn(W_DELAY, 35, dsel=4) + spawn(W_TIMED_WAIT, 36, dsel=3) + [RUN]
    s += [TERMINATE, 62] + prim(88, 61) + prim(87, 61) + [SET_PRIO, 61, 5, SEM_FREE, 0]
    s += prim(240, 0) + prim(135, 0) + prim(242, 0, P['sem'], P['bsim']) + [RUN]
    seeds['scenario-procs'] = s
    s = header(0x02, prios=(70,)) + spawn(W_SUSPEND_SELF, 10) + spawn(W_YIELD, 70, a=3)
    s += [RUN] + prim(136, 0, P['sem'], P['k1']) + prim(230, 0, P['k1']) + prim(86, P['sem'])
    s += [MAKE_INT, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, RELEASE, 0]
    s += [TAGGED] + [0x55] * 8 + [SEM_NEW, MUT_NEW, MUT_FREE, 1, RESUME, 0, END]
    seeds['scenario-misc'] = s
    return seeds


# ---- fuzz_api -------------------------------------------------------------------------
# config byte and ms byte as above, then the external table size byte, the drivers byte;
# then operations: op byte % 16 selects (fuzz_api.c exec_op), the bytes after it are read
# by the operation.
(A_FROM, A_TO, A_ARITH, A_MISC, A_NAMES, A_CONFIG, A_DELAY, A_SEMT, A_MUTT, A_SPAWN,
 A_PROC, A_SEM, A_MUT, A_EXT, A_REPORT, A_MISC2) = range(16)


def api_directed():
    seeds = {}
    run = [A_MISC2, 4]   # stvm_run from the host (op_misc case 4)
    for cfg in (0x00, 0x01, 0x02, 0x53):
        body = []
        for k in range(0, 256, 37):
            body += [A_FROM, k, k % 31]
            body += [A_TO, k, k % 200]
            body += [A_ARITH, k, k % 200, (k * 3) % 200]
            body += [A_MISC, k, k % 200]
            body += [A_NAMES, k % 31, k, k]
        for k in range(12):
            body += [A_DELAY, k % 4, k * 9 % 256] + [0] * 8
            body += [A_SEMT, k % 2, k % 3, k * 11 % 128]
            body += [A_MUTT, 0, k * 13 % 128]
            body += [A_PROC, k, 0, k % 5]
            body += [A_SEM, k, k % 3]
            body += [A_MUT, k, 0]
            body += [A_EXT, k * 37 % 256, k % 8, 2]
            body += [A_REPORT, k * 21 % 256]
            body += [A_MISC2, k]
        for k in range(6):
            body += [A_SPAWN, k, 40 + k, k * 41 % 256, k % 5, k, k, k, k]
        seeds['api-c%02x' % cfg] = [cfg, 0, 1, 0] + body + run + body
    cfgs = []
    for mask in (0x0001, 0x0004, 0x0010, 0x0040, 0x0100, 0x0200, 0x0400, 0x0800, 0x0FFF):
        for sel in (0, 3, 6, 9, 12, 14):
            cfgs += [A_CONFIG, mask & 0xFF, mask >> 8] + [sel] * 12 + [0x10 | (sel & 7)]
    seeds['api-config'] = [0, 0, 0, 0] + cfgs
    return seeds


# Queue and Delay object operations: op_misc's op bytes from 0x80 on (fuzz_api.c
# exec_op): 0x8F, 0xAF, 0xCF, 0xEF are op_queue, 0x9F, 0xBF, 0xDF op_delay_obj; then a
# selector byte k (k % 12, k % 9 the case; its high bits the variants) and a pool pick.
A_QUEUE, A_DELAYO = 0x8F, 0x9F
(Q_NEW, Q_FREE, Q_PUT, Q_PUT_T, Q_TAKE, Q_TAKE_T, Q_TRY, Q_PEEK, Q_SIZE, Q_FLUSH, Q_OPEN,
 Q_PUT_EXT) = range(12)
(D_NEW, D_FREE, D_WAIT, D_SCHED, D_UNSCHED, D_ASK, D_TOGO, D_SEM, D_TIMEOUT) = range(9)


def sel(mod, case, bits=0, mask=0):
    """The first selector byte with k % mod == case and k & mask == bits."""
    return next(k for k in range(256) if k % mod == case and (k & mask) == bits)


def qop(case, pick=0, bits=0, mask=0, extra=()):
    return [A_QUEUE, sel(12, case, bits, mask), pick] + list(extra)


def dop(case, pick=0, bits=0, mask=0, extra=()):
    return [A_DELAYO, sel(9, case, bits, mask), pick] + list(extra)


def api_queue_delay():
    seeds = {}
    run = [A_MISC2, 4]
    caps = [qop(Q_NEW, bits=c << 4, mask=0xF0) for c in (0, 2, 1)]   # unbounded, 2, 1
    host = sum(caps, [])
    host += qop(Q_PUT, 0) + qop(Q_PUT, 0) + qop(Q_PUT, 1) + qop(Q_PUT, 1) + qop(Q_PUT, 1)
    host += qop(Q_PEEK, 0) + qop(Q_SIZE, 1) + qop(Q_TAKE, 0) + qop(Q_TRY, 1)
    host += qop(Q_OPEN, 2) + qop(Q_PUT_EXT, 2) + qop(Q_SIZE, 2) + qop(Q_FLUSH, 1)
    host += qop(Q_PUT, 210) + qop(Q_PEEK, 220) + qop(Q_SIZE, 232) + qop(Q_FREE, 250)
    green = qop(Q_TAKE, 0) + qop(Q_TAKE, 0) + qop(Q_TAKE_T, 0, extra=[67])
    green += qop(Q_PUT, 1) + qop(Q_PUT_T, 1, extra=[5]) + qop(Q_PUT_T, 1, extra=[0])
    green += qop(Q_TRY, 1) + qop(Q_TAKE, 1) + qop(Q_TAKE_T, 2, extra=[0])
    green += qop(Q_PUT_EXT, 2) + qop(Q_PUT_EXT, 2, bits=0x10, mask=0x70)
    green += qop(Q_TAKE, 2) + qop(Q_PEEK, 2) + qop(Q_FLUSH, 0) + qop(Q_FREE, 0)
    green += qop(Q_TAKE, 0) + qop(Q_PUT, 0) + qop(Q_TAKE_T, 0, extra=[10])
    for cfg in (0x00, 0x03):
        for drivers in (0, 1):
            seeds['queue-c%02x-d%d' % (cfg, drivers)] = \
                [cfg, 0, 2, drivers] + host + run + green + run + green + run
    d = dop(D_NEW, 0, bits=0x10, mask=0xD0, extra=[3]) + dop(D_NEW, 0, extra=[64 + 2])
    d += dop(D_ASK, 0) + dop(D_TOGO, 0) + dop(D_SEM, 0, bits=0x40, mask=0x40)
    d += dop(D_SEM, 220) + dop(D_FREE, 1) + dop(D_WAIT, 0) + dop(D_ASK, 250)
    g = dop(D_SCHED, 0) + dop(D_TOGO, 0) + dop(D_SCHED, 0) + dop(D_WAIT, 0) + dop(D_UNSCHED, 0)
    g += dop(D_WAIT, 0) + dop(D_ASK, 0) + dop(D_WAIT, 1) + dop(D_TIMEOUT, 0, extra=[0, 4])
    g += dop(D_TOGO, 2) + dop(D_FREE, 2) + dop(D_UNSCHED, 2) + dop(D_FREE, 2)
    g += [A_SEM, 2, 2] + dop(D_ASK, 0) + dop(D_FREE, 0) + dop(D_FREE, 1)
    g += dop(D_TIMEOUT, 0, extra=[1, 64 + 3]) + [A_SEMT, 0, 1, 64 + 5]
    for cfg in (0x00, 0x02, 0x01):
        seeds['delay-c%02x' % cfg] = [cfg, 0, 1, 1] + d + run + g + run + g + run
    mixed = caps[0] + d[:4] + run + g[:6] + green[:12] + g[6:] + green[12:]
    seeds['queue-delay-mixed'] = [0x02, 0, 0, 1] + mixed + run + mixed
    return seeds


def rand_prims(rng, n):
    out = header(rng.randrange(256), rng.choice([0, 1, 2, 3]), rng.randrange(256),
                 [rng.randrange(80) + 1 for _ in range(3)])
    for _ in range(n):
        r = rng.random()
        if r < 0.7:
            out += [rng.randrange(176), rng.randrange(42), rng.randrange(64),
                    rng.choice([0, 0, 0, 0x3C, 0x7C, 0xF0]), rng.randrange(64), rng.randrange(64)]
        elif r < 0.8:
            out += [RUN]
        elif r < 0.9:
            out += spawn(rng.randrange(9), rng.randrange(80) + 1, rng.random() < 0.7,
                         rng.random() < 0.3, rng.randrange(4), rng.randrange(4),
                         rng.randrange(5))
        else:
            out += [rng.randrange(176, 188)] + [rng.randrange(256) for _ in range(3)]
    return out


def rand_api(rng, n):
    out = [rng.randrange(256), rng.choice([0, 1, 2, 3]), rng.randrange(4), rng.randrange(256)]
    for _ in range(n):
        op = rng.randrange(16)
        out += [op] + [rng.randrange(256) for _ in range(rng.randrange(2, 10))]
        if rng.random() < 0.08:
            out += [A_MISC2, 4]
    return out


def main():
    outdir = sys.argv[1]
    rng = random.Random(20251130)
    sets = {'fuzz_primitives': prims_directed(), 'fuzz_api': api_directed()}
    sets['fuzz_api'].update(api_queue_delay())
    for i in range(40):
        sets['fuzz_primitives']['random-%02d' % i] = rand_prims(rng, rng.randrange(10, 120))
        sets['fuzz_api']['random-%02d' % i] = rand_api(rng, rng.randrange(10, 120))
    for target, seeds in sets.items():
        d = os.path.join(outdir, target)
        os.makedirs(d, exist_ok=True)
        for name, data in seeds.items():
            assert all(0 <= b < 256 for b in data), name
            with open(os.path.join(d, 'seed-' + name), 'wb') as f:
                f.write(bytes(data[:4096]))


if __name__ == '__main__':
    main()
