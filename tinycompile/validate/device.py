"""A board answering the validation protocol, over a serial port (tinycompile.serialport).

Every exchange is bounded: a request waits `timeout_s` plus twice the time its frame and the
longest reply take on the link (`byte_s` seconds a byte: 10 bits at the baud rate), all times
`factor` (`validate --timeout-factor`, for loaded machines and slow links), for its reply (an
inference `invoke_timeout_s`); requests that can be repeated safely are re-sent a few times (after a
reply with a bad CRC, a lost reply, or a device that was mid-frame), and then a DeviceError
names the command and what came back. An invoke is never re-sent after its request got
through: it would run one more inference (and move a stateful model's state on).
"""

from __future__ import annotations

import struct
import time

from ..errors import DeviceError
from ..serialport import Port
from . import protocol as pr


class NoReply(DeviceError):
    """A request that got no (intact) reply after its attempts."""


ATTEMPTS = 3
# Enough zero bytes to complete any frame the device may be in the middle of receiving (its
# CRC then fails, and its error reply is ignored): zeros never form a sync marker.
FLUSH = bytes(pr.HEADER + pr.MAX_PAYLOAD + pr.TRAILER)


class Device:
    """The protocol's commands over an open Port."""

    def __init__(
        self,
        port: Port,
        *,
        timeout_s: float = 1.0,
        invoke_timeout_s: float = 60.0,
        byte_s: float = 0.0,
        factor: float = 1.0,
    ) -> None:
        self.port = port
        self.factor = factor
        # a port that takes no bytes is an error
        port.ser.write_timeout = max(5.0, timeout_s) * factor
        self.timeout_s = timeout_s
        self.invoke_timeout_s = invoke_timeout_s * factor
        self.byte_s = byte_s
        self.reader = pr.FrameReader()
        self.seq = 0
        self.max_payload = pr.MAX_PAYLOAD

    # -- frames ------------------------------------------------------------------------------
    def resync(self) -> None:
        """Complete any half-received frame on the device and drop what is waiting here."""
        self.port.write(FLUSH)
        deadline = time.monotonic() + (0.2 + len(FLUSH) * self.byte_s) * self.factor
        while time.monotonic() < deadline:
            self.port.read_some(4096, 0.05)
        self.port.drain_input()
        self.reader = pr.FrameReader()

    def send_raw(self, data: bytes) -> None:
        """Write bytes as they are (garbage, hand-made frames: for tests)."""
        self.port.write(data)

    def wait_reply(self, cmd: int, seq: int, timeout_s: float) -> pr.Frame | None:
        """The reply to (cmd, seq) within `timeout_s`, or None; other frames are dropped."""
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            for f in self.reader.feed(self.port.read_some(4096, min(left, 0.1))):
                if f.seq == seq and f.cmd == cmd | pr.REPLY:
                    return f

    def request(
        self, cmd: int, payload: bytes = b"", *, repeatable: bool = True, timeout_s: float = 0
    ) -> bytes:
        """Send a request and return its reply's data (status OK), or raise DeviceError."""
        name = pr.COMMAND_NAMES.get(cmd, f"command 0x{cmd:02x}")
        frame_bytes = pr.HEADER + len(payload) + pr.TRAILER
        reply_bytes = pr.HEADER + self.max_payload + pr.TRAILER
        wire = (frame_bytes + reply_bytes) * self.byte_s
        timeout = timeout_s or (self.timeout_s + 2 * wire) * self.factor
        last = "no reply"
        sent = 0
        while sent < ATTEMPTS:
            sent += 1
            self.seq = (self.seq + 1) & 0xFF
            self.port.write(pr.encode(cmd, self.seq, payload))
            reply = self.wait_reply(cmd, self.seq, timeout)
            if reply is None:
                last = f"no reply within {timeout:g} s"
                if not repeatable:
                    break
                self.resync()
                continue
            if reply.status == pr.BAD_CRC:  # our request was damaged on the way: send it again
                last = "the device received a damaged request (bad CRC)"
                continue
            if reply.status != pr.OK:
                reason = pr.STATUS_NAMES.get(reply.status, f"status {reply.status}")
                raise DeviceError(f"{self.port.path}: {name} refused: {reason}")
            return reply.data
        tries = f" ({sent} attempt{'s' if sent > 1 else ''})"
        raise NoReply(f"{self.port.path}: {name}: {last}{tries}")

    # -- commands ----------------------------------------------------------------------------
    def hello(self, connect_s: float = 0.0) -> pr.Hello:
        """The handshake (also what a port with nothing behind it fails first). A board may
        still be busy after reset (its start-up report runs one inference first): the handshake
        is asked again until ``connect_s`` seconds have passed, then fails as any request."""
        deadline = time.monotonic() + connect_s * self.factor
        while True:
            try:
                data = self.request(pr.HELLO)
                break
            except NoReply:
                if time.monotonic() >= deadline:
                    raise
        try:
            h = pr.parse_hello(data)
        except (ValueError, struct.error) as e:
            raise DeviceError(f"{self.port.path}: malformed hello reply: {e}") from None
        if h.version != pr.VERSION:
            raise DeviceError(
                f"{self.port.path}: the firmware speaks protocol version {h.version}, this "
                f"tinycompile {pr.VERSION}: rebuild and flash it"
            )
        self.max_payload = min(h.max_payload, pr.MAX_PAYLOAD)
        return h

    def set_input(self, index: int, data: bytes) -> None:
        """Write one input tensor's bytes, in chunks that fit the device's buffer."""
        step = self.max_payload - 5
        for off in range(0, len(data), step):
            chunk = data[off : off + step]
            self.request(pr.SET_INPUT, struct.pack("<BI", index, off) + chunk)

    def invoke(self) -> tuple[int, int]:
        """Run one inference: (tc_invoke's status, cycles)."""
        data = self.request(pr.INVOKE, repeatable=False, timeout_s=self.invoke_timeout_s)
        status, cycles = struct.unpack("<iI", self._sized(data, 8, "invoke"))
        return status, cycles

    def get_output(self, index: int, nbytes: int) -> bytes:
        """One output tensor's bytes, in chunks."""
        step = self.max_payload - 1
        parts = []
        for off in range(0, nbytes, step):
            n = min(step, nbytes - off)
            data = self.request(pr.GET_OUTPUT, struct.pack("<BIH", index, off, n))
            parts.append(self._sized(data, n, f"output {index}"))
        return b"".join(parts)

    def get_layers(self, count: int) -> list[int]:
        """The last inference's cycles per layer (profile builds)."""
        step = (self.max_payload - 1) // 4
        out: list[int] = []
        for first in range(0, count, step):
            n = min(step, count - first)
            data = self.request(pr.GET_LAYERS, struct.pack("<HH", first, n))
            out += struct.unpack(f"<{n}I", self._sized(data, 4 * n, "layer cycles"))
        return out

    def _sized(self, data: bytes, n: int, what: str) -> bytes:
        if len(data) != n:
            raise DeviceError(f"{self.port.path}: {what}: {len(data)} bytes in the reply, not {n}")
        return data

    def reset_state(self) -> None:
        """tc_reset_state(): the model's state back to its start-up value."""
        self.request(pr.RESET_STATE)
