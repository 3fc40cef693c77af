"""Edge values the mutators write: integers, dimensions, floats and hostile text.

Shared by the byte-level, object-level and board-file mutators; the order of each list is part of
what a seed means (mutants are drawn from them by index).
"""

from __future__ import annotations

I32_EDGES = [
    0,
    1,
    -1,
    2,
    3,
    7,
    8,
    16,
    127,
    128,
    255,
    256,
    -128,
    -129,
    0x7FFF,
    0x8000,
    0xFFFF,
    0x10000,
    1 << 20,
    1 << 24,
    0x3FFFFFFF,
    0x40000000,
    0x7FFFFFFE,
    0x7FFFFFFF,
    -0x80000000,
    -2,
    -65536,
]
DIM_EDGES = [0, -1, -2, -0x80000000, 0x7FFFFFFF, 65536, 1 << 20, 46341, 3, 1000, 1 << 16, 1 << 30]
FLOAT_EDGES = [
    float("nan"),
    float("inf"),
    -float("inf"),
    0.0,
    -0.0,
    -1.0,
    1e-45,
    1e-38,
    1e38,
    3.4e38,
    1e-10,
    65536.0,
    1.0,
    0.5,
]
HOSTILE_TEXT = [
    b'*/ system("rm -rf /"); /*',
    b"\n#include <stdio.h>\n",
    b"a\\\n",
    b"??/",
    b"\x00",
    b"\xff\xfe",
    b"\r\n",
    b"%s%n%x",
    b"../../etc/passwd",
    b"/abs/path",
    b"\"'`$(x)",
    b"\xe2\x80\xae",
]
