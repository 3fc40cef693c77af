"""The validation protocol's frames (docs/validate_protocol.md; firmware/boards/common/tc_proto.c).

A frame, in both directions: ``A5 5A | cmd | seq | len (u16 LE) | payload | CRC-32 (u32 LE)``,
the CRC (zlib's) covering cmd, seq, len and payload. A reply has ``cmd | 0x80``, the request's
seq, and a status byte first in its payload. `FrameReader` finds frames in a byte stream,
skipping garbage and frames whose CRC or length is wrong.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

SYNC = b"\xa5\x5a"
HEADER = 6  # sync, cmd, seq, len
TRAILER = 4  # CRC-32
MAX_PAYLOAD = 256  # TC_PROTO_MAX_PAYLOAD: the device's receive buffer
VERSION = 2  # 2: HELLO also names the clock source
REPLY = 0x80

HELLO, SET_INPUT, INVOKE, GET_OUTPUT, GET_LAYERS, RESET_STATE = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
COMMAND_NAMES = {
    HELLO: "hello",
    SET_INPUT: "set-input",
    INVOKE: "invoke",
    GET_OUTPUT: "get-output",
    GET_LAYERS: "get-layers",
    RESET_STATE: "reset-state",
}

OK, BAD_CRC, UNKNOWN_CMD, BAD_LENGTH, BAD_ARG, UNSUPPORTED = 0, 1, 2, 3, 4, 5
STATUS_NAMES = {
    OK: "ok",
    BAD_CRC: "bad CRC",
    UNKNOWN_CMD: "unknown command",
    BAD_LENGTH: "bad length",
    BAD_ARG: "argument out of range",
    UNSUPPORTED: "not supported by this build",
}
TIMERS = {0: "systick", 1: "dwt"}


def crc32(data: bytes) -> int:
    """zlib's CRC-32 (reflected 0xEDB88320, init and final XOR 0xFFFFFFFF)."""
    return zlib.crc32(data) & 0xFFFFFFFF


def encode(cmd: int, seq: int, payload: bytes = b"") -> bytes:
    """One frame (request or reply)."""
    if not 0 <= cmd <= 0xFF or not 0 <= seq <= 0xFF:
        raise ValueError(f"cmd {cmd} / seq {seq} out of range")
    if len(payload) > 0xFFFF:
        raise ValueError(f"payload of {len(payload)} bytes does not fit a frame")
    body = struct.pack("<BBH", cmd, seq, len(payload)) + bytes(payload)
    return SYNC + body + struct.pack("<I", crc32(body))


@dataclass(frozen=True)
class Frame:
    """A decoded frame; for a reply, `status` and `data` split its payload."""

    cmd: int
    seq: int
    payload: bytes

    @property
    def status(self) -> int:
        return self.payload[0] if self.payload else -1

    @property
    def data(self) -> bytes:
        return self.payload[1:]


class FrameReader:
    """Frames out of a byte stream: feed bytes, take the complete frames found.

    Bytes before a sync marker are skipped (counted in `skipped`); a candidate frame with a
    length over `max_payload` or a bad CRC is dropped and the search goes on from the byte
    after its marker (counted in `dropped`)."""

    def __init__(self, max_payload: int = MAX_PAYLOAD) -> None:
        self.max_payload = max_payload
        self.buf = bytearray()
        self.skipped = 0
        self.dropped = 0

    def feed(self, data: bytes) -> list[Frame]:
        """Add received bytes; return the frames completed by them, in order."""
        self.buf += data
        frames = []
        while True:
            at = self.buf.find(SYNC)
            if at < 0:
                keep = 1 if self.buf[-1:] == SYNC[:1] else 0
                self.skipped += len(self.buf) - keep
                del self.buf[: len(self.buf) - keep]
                return frames
            self.skipped += at
            del self.buf[:at]
            if len(self.buf) < HEADER:
                return frames
            cmd, seq, n = struct.unpack_from("<BBH", self.buf, 2)
            if n > self.max_payload:
                self._drop()
                continue
            end = HEADER + n + TRAILER
            if len(self.buf) < end:
                return frames
            (crc,) = struct.unpack_from("<I", self.buf, HEADER + n)
            if crc != crc32(bytes(self.buf[2 : HEADER + n])):
                self._drop()
                continue
            frames.append(Frame(cmd, seq, bytes(self.buf[HEADER : HEADER + n])))
            del self.buf[:end]

    def _drop(self) -> None:
        self.dropped += 1
        self.skipped += 1
        del self.buf[:1]


@dataclass(frozen=True)
class Hello:
    """The handshake: what the firmware runs and how it counts."""

    version: int
    timer: str
    layer_cycles: bool  # a profile build: per-layer cycles on request
    stateful: bool
    max_payload: int
    clock_hz: int
    layers: int
    state_bytes: int
    model_sha256: str
    input_bytes: tuple[int, ...]
    output_bytes: tuple[int, ...]
    board: str
    clock_source: str = ""  # what the clock runs from ("pll_hse", "hsi", "rosc", ...): v2


def parse_hello(data: bytes) -> Hello:
    """The hello reply's data (after the status byte); ValueError when malformed."""
    fixed = struct.Struct("<BBBHIBBHI32s")
    if len(data) < fixed.size:
        raise ValueError(f"hello reply of {len(data)} bytes is too short")
    ver, timer, flags, maxp, clock, nin, nout, layers, state, sha = fixed.unpack_from(data)
    at = fixed.size
    sizes = struct.unpack_from(f"<{nin + nout}I", data, at)
    at += 4 * (nin + nout)
    name_len = data[at]
    name = data[at + 1 : at + 1 + name_len]
    at += 1 + name_len
    source = b""
    if ver >= 2 and at < len(data):  # version 2: the clock source's name
        source = data[at + 1 : at + 1 + data[at]]
        at += 1 + data[at]
    if len(name) != name_len or at != len(data):
        raise ValueError("hello reply length does not match its contents")
    return Hello(
        version=ver,
        timer=TIMERS.get(timer, f"timer {timer}"),
        layer_cycles=bool(flags & 1),
        stateful=bool(flags & 2),
        max_payload=maxp,
        clock_hz=clock,
        layers=layers,
        state_bytes=state,
        model_sha256=sha.hex(),
        input_bytes=tuple(sizes[:nin]),
        output_bytes=tuple(sizes[nin:]),
        board=name.decode("ascii", "replace"),
        clock_source=source.decode("ascii", "replace"),
    )
