"""Host side of the validation protocol, without a device: frames built by hand (struct, with
binascii's CRC-32) against the encoder, the stream decoder and the hello parser."""

from __future__ import annotations

import binascii
import struct

import pytest

from tinycompile.validate import protocol as pr


def hand_frame(cmd: int, seq: int, payload: bytes, *, bad_crc: bool = False) -> bytes:
    body = bytes([cmd, seq]) + len(payload).to_bytes(2, "little") + payload
    crc = binascii.crc32(body) ^ (0xFFFFFFFF if bad_crc else 0)
    return b"\xa5\x5a" + body + crc.to_bytes(4, "little")


def test_crc_is_zlibs_crc32() -> None:
    assert pr.crc32(b"123456789") == 0xCBF43926  # the CRC-32 catalogue's check value
    assert pr.crc32(b"") == 0


def test_encoder_matches_hand_built_frames() -> None:
    assert pr.encode(pr.HELLO, 7) == hand_frame(1, 7, b"")
    payload = bytes(range(256))
    assert pr.encode(pr.SET_INPUT, 255, payload) == hand_frame(2, 255, payload)
    assert pr.encode(0x83, 0, b"\x00" * 9)[2:6] == b"\x83\x00\x09\x00"


def test_decoder_skips_garbage_and_bad_frames_and_joins_pieces() -> None:
    good1 = hand_frame(0x81, 1, b"\x00abc")
    good2 = hand_frame(0x84, 2, b"\x00" + bytes(200))
    bad = hand_frame(0x81, 3, b"\x00xyz", bad_crc=True)
    too_long = b"\xa5\x5a\x81\x04" + (300).to_bytes(2, "little")
    stream = b"noise\xa5\x00\xa5" + good1 + bad + too_long + b"\xa5" + good2 + b"\xff"
    r = pr.FrameReader()
    frames = []
    for i in range(0, len(stream), 7):  # arbitrary pieces, frames split across them
        frames += r.feed(stream[i : i + 7])
    assert [(f.cmd, f.seq, f.status, f.data) for f in frames] == [
        (0x81, 1, 0, b"abc"),
        (0x84, 2, 0, bytes(200)),
    ]
    assert r.dropped == 2  # the bad CRC and the over-long length


def test_sync_run_and_frame_at_once() -> None:
    r = pr.FrameReader()
    got = r.feed(b"\xa5\xa5" + hand_frame(0x86, 9, b"\x00"))
    assert [(f.cmd, f.seq, f.payload) for f in got] == [(0x86, 9, b"\x00")]


def test_hello_parser_reads_a_hand_packed_reply() -> None:
    sha = bytes(range(32))
    data = (
        struct.pack("<BBBHIBBHI", 1, 1, 3, 256, 16_000_000, 2, 1, 7, 1088)
        + sha
        + struct.pack("<3I", 490, 4, 12)
        + bytes([9])
        + b"stm32f407"
    )
    h = pr.parse_hello(data)
    assert (h.version, h.timer, h.layer_cycles, h.stateful) == (1, "dwt", True, True)
    assert (h.max_payload, h.clock_hz, h.layers, h.state_bytes) == (256, 16_000_000, 7, 1088)
    assert h.model_sha256 == sha.hex() and h.board == "stm32f407"
    assert h.input_bytes == (490, 4) and h.output_bytes == (12,)
    for cut in (10, len(data) - 1):
        try:
            pr.parse_hello(data[:cut])
        except (ValueError, struct.error):
            continue
        raise AssertionError(f"a hello cut at {cut} bytes was accepted")


def test_hello_v2_names_the_clock_source_and_milliseconds_follow_it() -> None:
    """Issue 22: milliseconds only from a clock the firmware knows (a crystal, an RC
    oscillator at its data sheet's accuracy, the RP2040's ring oscillator once measured against
    the host's bits, with the measurement's bound); none for an unmeasured ring oscillator or an
    emulated board, which say why."""
    from tinycompile.validate.session import ValidateReport, clock_basis

    sha = bytes(range(32))
    fixed = struct.pack("<BBBHIBBHI", 2, 1, 0, 256, 125_000_000, 1, 1, 3, 0) + sha
    base = fixed + struct.pack("<2I", 490, 12) + bytes([6]) + b"rp2040"
    for source, known, words in [
        (b"pll", True, "crystal"),
        (b"pll_hsi", True, "+-1%"),
        (b"rosc", False, "ring oscillator"),
        (b"rosc_baud", True, "+-0.1% (one 6-cycle poll in 9 bits"),  # 125 MHz: 6 * 115200 / 9
        (b"", False, "no known clock source"),
    ]:
        h = pr.parse_hello(base + bytes([len(source)]) + source)
        assert h.clock_source == source.decode()
        assert clock_basis(h, emulated=False)[0] is known
        assert words in clock_basis(h, emulated=False)[1]
        rep = ValidateReport("m", "p", h, [])
        assert (rep.ms(125_000) == 1.0) if known else rep.ms(125_000) is None
        assert not clock_basis(h, emulated=True)[0]
    with pytest.raises(ValueError):
        pr.parse_hello(base + bytes([5]) + b"pll")  # the source cut short


def test_validate_usage_mistakes_exit_2(capsys) -> None:
    from pathlib import Path

    from tinycompile import cli

    digits = str(Path(__file__).resolve().parent.parent / "examples" / "digits.tflite")
    base = ["validate", digits, "--port", "/dev/null"]
    cases = [
        ([*base, "--board", "host"], "has no console UART"),
        ([*base, "--board", "stm32f407", "-n", "2", "--inputs", "x.npy"], "does not go with"),
        ([*base, "--board", "stm32f407", "--timeout", "0"], "--timeout must be positive"),
        (["validate", digits, "--board", "stm32f407"], "--port"),
    ]
    for args, words in cases:
        assert cli.main(args) == 2, args
        assert words in capsys.readouterr().err
