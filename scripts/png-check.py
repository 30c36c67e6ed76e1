#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Is FILE a valid PNG of WIDTH x HEIGHT that is not blank?

Parses the chunks (signature, IHDR first, CRCs, IEND), inflates IDAT and
undoes the scanline filters (8-bit greyscale, RGB, palette, grey+alpha or
RGBA, not interlaced: what gnuplot's pngcairo and Chromium write), then
takes the most common pixel as the background and requires at least
MIN_INK (default 0.5 %) of the pixels to differ from it.  Prints one
line; exit 0 when it holds.

Usage: png-check.py FILE WIDTH HEIGHT [MIN_INK]
"""
import struct
import sys
import zlib
from collections import Counter

CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def fail(why):
    print(f"png-check: {sys.argv[1]}: {why}")
    sys.exit(1)


def unfilter(raw, w, h, bpp):
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        ftype, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        if len(line) != stride:
            fail("image data too short")
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ftype == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[x] = (line[x] + pred) & 255
            elif ftype != 0:
                fail(f"bad filter type {ftype}")
        rows.append(bytes(line))
        prev = line
    return rows


def main():
    path, want_w, want_h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    min_ink = float(sys.argv[4]) if len(sys.argv) > 4 else 0.005
    try:
        data = open(path, "rb").read()
    except OSError as e:
        fail(e.strerror)
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("not a PNG (bad signature)")
    pos, chunks = 8, []
    while pos < len(data):
        if pos + 12 > len(data):
            fail("truncated chunk")
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        crc = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]
        if zlib.crc32(kind + body) != crc:
            fail(f"bad CRC in {kind.decode(errors='replace')}")
        chunks.append((kind, body))
        pos += 12 + length
        if kind == b"IEND":
            break
    if not chunks or chunks[0][0] != b"IHDR" or chunks[-1][0] != b"IEND":
        fail("IHDR not first or IEND not last")
    w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    if (w, h) != (want_w, want_h):
        fail(f"{w}x{h}, not {want_w}x{want_h}")
    if depth != 8 or ctype not in CHANNELS or interlace:
        fail(f"unsupported depth {depth}, colour type {ctype}, interlace {interlace}")
    raw = zlib.decompress(b"".join(b for k, b in chunks if k == b"IDAT"))
    bpp = CHANNELS[ctype]
    rows = unfilter(raw, w, h, bpp)
    pixels = Counter(r[x:x + bpp] for r in rows for x in range(0, w * bpp, bpp))
    bg, n_bg = pixels.most_common(1)[0]
    ink = 1 - n_bg / (w * h)
    if ink < min_ink:
        fail(f"blank: {ink:.2%} of the pixels differ from the background")
    print(f"png-check: {path}: {w}x{h} PNG, {len(pixels)} colours, "
          f"{ink:.1%} of the pixels off the background")
    return 0


if __name__ == "__main__":
    sys.exit(main())
