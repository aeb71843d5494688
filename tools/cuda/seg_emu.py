#!/usr/bin/env python3
# A CPU emulation of kernels/gemv_block_seg.cu's index arithmetic (lane l -> chunk l >> 1 of a window, half
# l & 1; the scale/min decode from the header words shifted by the lane's byte; the activation offsets), in
# doubles against ggml's dequantize_row_q4_K / q5_K (ggml-quants.c) on random blocks with h activations of
# scale 1: prints "True" where the emulated row sum equals the exact dot to 1e-9. A check of the mapping, not
# of the compiled kernel (its tests: tests/gpu/test_backend_kquant.cpp). Run: python3 tools/cuda/seg_emu.py
import random, struct
random.seed(5)
def f16(b): return struct.unpack('<e', bytes(b))[0]
def gsm(j, q):
    if j < 4: return q[j] & 63, q[j+4] & 63
    return (q[j+4] & 0xF) | ((q[j-4] >> 6) << 4), (q[j+4] >> 4) | ((q[j] >> 6) << 4)
def deq(blk, q5):
    d, dmin, sc = f16(blk[0:2]), f16(blk[2:4]), blk[4:16]
    qh = blk[16:48] if q5 else None
    qs = blk[48:176] if q5 else blk[16:144]
    y = []; u1, u2 = 1, 2
    for j in range(4):
        s1, m1 = gsm(2*j, sc); s2, m2 = gsm(2*j+1, sc)
        q = qs[32*j:32*j+32]
        for l in range(32): y.append(d*s1*((q[l] & 0xF) + (16 if q5 and qh[l] & u1 else 0)) - dmin*m1)
        for l in range(32): y.append(d*s2*((q[l] >> 4) + (16 if q5 and qh[l] & u2 else 0)) - dmin*m2)
        u1 <<= 2; u2 <<= 2
    return y
def word(b, i): return struct.unpack('<I', bytes(b[4*i:4*i+4]))[0]
def bytes_of(w): return [(w >> (8*k)) & 0xff for k in range(4)]
def kernel_row(row, K, x, q5):
    BB = 176 if q5 else 144
    chunks = K // 64; windows = (chunks + 15) // 16
    total = 0.0
    for lane in range(32):
        cw, half = lane >> 1, lane & 1; c = cw & 3
        for wi in range(windows):
            g = wi*16 + cw
            if g >= chunks: continue
            blk = row[(g >> 2)*BB:(g >> 2)*BB + BB]
            h = blk[0:16]
            q = blk[48 + c*32 + half*16: 48 + c*32 + half*16 + 16] if q5 else blk[16 + c*32 + half*16: 16 + c*32 + half*16 + 16]
            qh = blk[16 + half*16: 32 + half*16] if q5 else None
            hx, hy, hz, hw = (word(h, i) for i in range(4))
            d, dmin = f16(h[0:2]), f16(h[2:4])
            hi = c >= 2; sh0 = 16*(c & 1)
            def smd(sh):
                w0, w1, w2 = hy >> sh, hz >> sh, hw >> sh
                if hi: return (w2 & 0xF) | ((w0 >> 2) & 0x30), ((w2 >> 4) & 0xF) | ((w1 >> 2) & 0x30)
                return w0 & 63, w1 & 63
            sa, ma = smd(sh0); sb, mb = smd(sh0 + 8)
            da, mA, db, mB = d*sa, dmin*ma, d*sb, dmin*mb
            qa, qb = [], []
            for i in range(4):
                w = word(q, i); a = w & 0x0F0F0F0F; b = (w >> 4) & 0x0F0F0F0F
                if q5:
                    hh = word(qh, i) >> (2*c)
                    a |= (hh & 0x01010101) << 4; b |= ((hh >> 1) & 0x01010101) << 4
                qa += bytes_of(a); qb += bytes_of(b)
            xa = x[64*g + 16*half: 64*g + 16*half + 16]; xb = x[64*g + 32 + 16*half: 64*g + 32 + 16*half + 16]
            Da = sum(p*v for p, v in zip(qa, xa)); Db = sum(p*v for p, v in zip(qb, xb))
            total += (da*Da - mA*sum(xa)) + (db*Db - mB*sum(xb))
    return total
for q5 in (False, True):
    for K in (256, 1280, 2304, 5120):
        BB = 176 if q5 else 144
        row = [random.randrange(256) for _ in range(K // 256 * BB)]
        for b in range(K // 256):  # small finite d, dmin
            row[b*BB:b*BB+4] = list(struct.pack('<ee', random.uniform(1e-3, 2e-3), random.uniform(1e-3, 2e-3)))
        w = []
        for b in range(K // 256): w += deq(row[b*BB:(b+1)*BB], q5)
        x = [random.randrange(-127, 128) for _ in range(K)]
        exact = sum(a*b for a, b in zip(w, x))
        got = kernel_row(row, K, x, q5)
        print("Q5_K" if q5 else "Q4_K", K, exact, got, abs(exact-got) <= 1e-9*sum(abs(a*b) for a, b in zip(w, x)))
