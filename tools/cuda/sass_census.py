#!/usr/bin/env python3
"""Census of the SASS opcodes of each kernel in a cubin, without nvdisasm (the CPU machine has none).

Usage: sass_census.py FILE.cubin [KERNEL_SUBSTRING ...] [--seq]

Make the cubin from the compile command of one file (build/compile_commands.json) with
`-arch=sm_90 -cubin -o F.cubin` in place of `--generate-code ... -c -o ...`.

For each kernel (`.text.<mangled name>` section): the instruction count (16 bytes each on sm_90) and the
most frequent opcode fields (the low 12 bits of the first 64-bit word). Names are not decoded: the two
that matter for tensor-core loops were identified by their counts in attn_flash_kernel<256, 4> (one tile
body holds 256 mma.m16n8k16 and 144 ldmatrix.x4 by construction, and exactly one opcode occurred 256 and
one 144 times): 0x23c = HMMA.16816, 0x83b = LDSM. `--seq` prints their order as a string of H and L,
which shows whether ptxas issues fragment loads ahead of the mma that consume them.
"""
import collections
import struct
import sys

NAMES = {0x23C: "HMMA", 0x83B: "LDSM"}


def sections(data):
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise SystemExit("expected a 64-bit ELF cubin")
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    stroff = heads[shstrndx][4]
    for name, _typ, _flags, _addr, off, size in heads:
        end = data.index(b"\0", stroff + name)
        yield data[stroff + name:end].decode(), data[off:off + size]


def main(argv):
    args = [a for a in argv[1:] if a != "--seq"]
    if not args:
        raise SystemExit(__doc__)
    data = open(args[0], "rb").read()
    for name, body in sections(data):
        if not name.startswith(".text.") or (args[1:] and not any(k in name for k in args[1:])):
            continue
        ops = [struct.unpack_from("<Q", body, i)[0] & 0xFFF for i in range(0, len(body), 16)]
        top = collections.Counter(ops).most_common(12)
        print(f"{name[6:]}: {len(ops)} instructions")
        print("  " + " ".join(f"{NAMES.get(o, hex(o))}:{n}" for o, n in top))
        if "--seq" in argv:
            print("  " + "".join(NAMES[o][0] for o in ops if o in NAMES))


if __name__ == "__main__":
    main(sys.argv)
