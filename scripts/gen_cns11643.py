#!/usr/bin/env python3
"""Writes src/detect/cns11643.bin: CNS 11643 planes 1 and 2 as EUC-TW decodes them.

EUC-TW (CNS 11643 in EUC form) is no WHATWG encoding, so encoding_rs has no decoder and
Python no codec; glibc's iconv has one. This asks it for every code point of planes 1
and 2 (94 x 94 each: bytes A1-FE A1-FE for plane 1, 8E A2 A1-FE A1-FE for plane 2) and
writes 2 x 8,836 little-endian u16 values, row by row: the Unicode scalar, or 0 where the
plane has no character. Every character of both planes is in the BMP (checked below).

Run on a machine with glibc: python3 scripts/gen_cns11643.py
"""
import ctypes
import ctypes.util
import os
import struct

libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.iconv_open.restype = ctypes.c_void_p
libc.iconv_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.iconv.restype = ctypes.c_size_t
libc.iconv.argtypes = [ctypes.c_void_p] + [ctypes.c_void_p] * 4
cd = libc.iconv_open(b"UTF-32LE", b"EUC-TW")
assert cd != ctypes.c_void_p(-1).value, "this libc has no EUC-TW converter"


def convert(code: bytes):
    """One character's bytes to its text, or None when iconv refuses them."""
    libc.iconv(cd, None, None, None, None)
    src = ctypes.create_string_buffer(code, len(code))
    dst = ctypes.create_string_buffer(16)
    inp, outp = ctypes.c_char_p(ctypes.addressof(src)), ctypes.c_char_p(ctypes.addressof(dst))
    inl, outl = ctypes.c_size_t(len(code)), ctypes.c_size_t(16)
    r = libc.iconv(cd, ctypes.byref(inp), ctypes.byref(inl), ctypes.byref(outp), ctypes.byref(outl))
    if r == ctypes.c_size_t(-1).value or inl.value:
        return None
    return dst.raw[: 16 - outl.value].decode("utf-32-le")


out = bytearray()
for plane in (1, 2):
    found = 0
    for row in range(0x21, 0x7F):
        for col in range(0x21, 0x7F):
            code = bytes([row | 0x80, col | 0x80])
            text = convert(code if plane == 1 else b"\x8e\xa2" + code)
            value = 0
            if text:
                assert len(text) == 1 and ord(text) <= 0xFFFF, (plane, hex(row), hex(col), text)
                value, found = ord(text), found + 1
            out += struct.pack("<H", value)
    print(f"plane {plane}: {found} characters")
path = os.path.join(os.path.dirname(__file__), "..", "src", "detect", "cns11643.bin")
with open(path, "wb") as f:
    f.write(out)
print(f"wrote {len(out)} bytes to src/detect/cns11643.bin")
