"""`tinycompile validate` end to end: the stm32f407 board build (the image `build` makes) on
QEMU's netduinoplus2, its console USART on a real pty, the real protocol, outputs compared with
TFLM. Also the device's answers to damaged traffic, a dead port and the `emulate` command."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tinycompile import api, cli
from tinycompile.run.reference import run_tflm
from tinycompile.serialport import Port
from tinycompile.validate import Device, emulated_board, validate_on_emulator
from tinycompile.validate import protocol as pr
from tinycompile.validate.emulate import EMULATED_CONNECT_S

ROOT = Path(__file__).resolve().parent.parent
DIGITS = ROOT / "examples" / "digits.tflite"
MODELS = ROOT / "tests" / "models"
BOARD = "stm32f407"
# An emulated board runs its start-up inference before it answers (slow on a loaded machine).
BOOTING = ["--connect-timeout", str(EMULATED_CONNECT_S)]

pytestmark = pytest.mark.skipif(
    subprocess.run(["which", "qemu-system-arm"], capture_output=True).returncode != 0,
    reason="needs qemu-system-arm",
)


@pytest.fixture(scope="module")
def digits_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("val") / "digits-stm32f407"
    api.build_board(api.plan(str(DIGITS)), BOARD, out)
    return out


def elf_of(build_dir: Path) -> Path:
    return build_dir / "build" / f"{BOARD}-board" / "firmware.elf"


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_example_in_qemu(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["validate", str(DIGITS), "--board", BOARD, "--port", "qemu", "-n", "4"]
    code, out, err = run_cli([*args, "--layers", "--json"], capsys)
    assert code == 0, err
    d = json.loads(out)
    assert d["bit_exact"] and d["board"] == BOARD and d["emulated"] and len(d["inputs"]) == 4
    assert d["timer"] == "systick"  # QEMU has no DWT: the firmware fell back to SysTick
    # ... and no RCC: the clock set-up fell back to HSI, and the handshake says so (the board
    # file's target is 168 MHz)
    assert d["clock_hz"] == 16_000_000 and d["clock_source"] == "hsi"
    assert "emulated" in d["ms_basis"]  # no milliseconds from emulated time (issue 22)
    for r in d["inputs"]:
        assert r["ok"] and r["mismatches"] == [] and r["cycles"] > 100_000
        assert r["ms"] is None
        assert len(r["layer_cycles"]) == 5 and 0 < sum(r["layer_cycles"]) <= r["cycles"]
    assert any("not the part's cycles" in n for n in d["notes"])


def test_validate_builds_and_names_layers_with_the_planner_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--stream (and --speed-sram) as the firmware was built: with --port qemu the firmware is
    built so, and its layers are named from the same plan."""
    args = ["validate", str(DIGITS), "--board", BOARD, "--port", "qemu", "-n", "2", "--layers"]
    code, out, err = run_cli([*args, "--stream", "min", "--json"], capsys)
    assert code == 0, err
    d = json.loads(out)
    p = api.plan(DIGITS, board=BOARD, stream="min")
    kinds = [p.lowering.ops[i].op.kind for i in p.order]
    assert d["bit_exact"] and d["layer_kinds"] == kinds and kinds[0] == "STREAM"
    assert all(len(r["layer_cycles"]) == len(kinds) for r in d["inputs"])


def test_cmsdk_uart_answers_too() -> None:
    """The qemu-m3 board build's console (CMSDK UART on mps2-an385): another receive path."""
    rep = validate_on_emulator(str(DIGITS), "qemu-m3", n=2)
    assert rep.ok and rep.hello.board == "qemu-m3" and rep.hello.timer == "systick"
    assert all(r.cycles > 100_000 for r in rep.results)


@pytest.mark.parametrize("name", ["onnx_conv", "onnx_add_gap"])
def test_onnx_model_is_validated_against_the_onnx_reference(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ONNX model's firmware is compared with the ONNX reference, as `run` compares it
    (TFLM cannot read the model); a reference that disagrees is reported as a mismatch."""
    from tinycompile.validate import session

    ref_name = session.ONNX_REFERENCE
    model = str(MODELS / "ops" / f"{name}.onnx")
    rep = validate_on_emulator(model, BOARD, n=3)
    assert rep.ok and len(rep.results) == 3 and rep.reference == ref_name, rep.summary()
    assert rep.summary().startswith(f"bit-exact with {ref_name}: 3 inputs")
    assert rep.as_dict()["reference"] == ref_name
    real = session.run_onnx_reference

    def off_by_one(*args, **kw):  # the same reference, every output one step off
        ref = real(*args, **kw)
        ref.outputs = [np.where(y < 127, y + 1, y - 1).astype(y.dtype) for y in ref.outputs]
        return ref

    monkeypatch.setattr(session, "run_onnx_reference", off_by_one)
    rep = validate_on_emulator(model, BOARD, n=2)
    assert not rep.ok and all(r.mismatches for r in rep.results)
    assert rep.summary().startswith(f"MISMATCH with {ref_name}")


def test_validate_whole_dscnn_in_qemu() -> None:
    rep = validate_on_emulator(str(MODELS / "kws_dscnn.tflite"), BOARD, n=2)
    assert rep.ok and len(rep.results) == 2 and rep.hello.input_bytes == (490,)
    assert all(r.cycles > 10_000_000 for r in rep.results)  # ~13 M instructions emulated


@pytest.mark.parametrize("model", ["kws_svdf", "lstm_classifier"])
def test_stateful_model_carries_state_like_tflm(model: str) -> None:
    path = MODELS / "real" / f"{model}.tflite"
    g = api.plan(str(path)).graph
    xs = api.make_inputs(g, 6, seed=3)
    carried = run_tflm(path, xs).outputs[0]
    fresh = run_tflm(path, xs, reset_between=True).outputs[0]
    assert not np.array_equal(carried[1:], fresh[1:])  # the state matters for these inputs
    rep = validate_on_emulator(str(path), BOARD, inputs=xs)
    assert rep.hello.stateful and rep.hello.state_bytes > 0
    assert rep.ok, rep.summary()


def test_firmware_of_another_model_is_refused(
    digits_build: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = MODELS / "real" / "kws_svdf.tflite"
    with emulated_board(BOARD, elf_of(digits_build)) as emu:
        code, out, err = run_cli(
            ["validate", str(other), "--board", BOARD, "--port", emu.pty, "-n", "1", *BOOTING],
            capsys,
        )
    assert code == 3
    digits_sha = hashlib.sha256(DIGITS.read_bytes()).hexdigest()[:16]
    other_sha = hashlib.sha256(other.read_bytes()).hexdigest()[:16]
    want = f"the board runs model {digits_sha}, not {other} {other_sha}: flash its build first"
    assert want in err


def test_device_survives_garbage_bad_crc_and_broken_frames(digits_build: Path) -> None:
    with emulated_board(BOARD, elf_of(digits_build)) as emu, Port(emu.pty, 115200) as port:
        dev = Device(port)
        dev.resync()
        h = dev.hello(EMULATED_CONNECT_S)

        def exchange(raw: bytes, cmd: int, seq: int) -> pr.Frame:
            dev.send_raw(raw)
            f = dev.wait_reply(cmd, seq, 3.0)
            assert f is not None, f"no reply to {raw.hex()}"
            return f

        hello = pr.encode(pr.HELLO, 40)
        assert exchange(b"\x00junk\xff\xa5\x13\xa5\xa5" + hello, 1, 40).status == pr.OK
        bad = bytearray(pr.encode(pr.HELLO, 41))
        bad[-1] ^= 0x55
        assert exchange(bytes(bad), 1, 41).status == pr.BAD_CRC
        assert exchange(pr.encode(0x42, 42), 0x42, 42).status == pr.UNKNOWN_CMD
        too_long = b"\xa5\x5a\x02\x2b" + (300).to_bytes(2, "little")
        assert exchange(too_long, pr.SET_INPUT, 43).status == pr.BAD_LENGTH
        far = pr.encode(pr.SET_INPUT, 44, bytes([0]) + (60).to_bytes(4, "little") + bytes(5))
        assert exchange(far, pr.SET_INPUT, 44).status == pr.BAD_ARG  # 60 + 5 > 64 bytes
        assert exchange(pr.encode(pr.INVOKE, 45, b"x"), pr.INVOKE, 45).status == pr.BAD_LENGTH
        # A frame cut short: the next request completes it (bad CRC, ignored), the host times
        # out once, resynchronises and repeats.
        dev.send_raw(pr.encode(pr.SET_INPUT, 46, bytes(40))[:20])
        assert dev.hello() == h
        dev.set_input(0, bytes(64))
        status, cycles = dev.invoke()
        assert status == 0 and cycles > 0


def test_dead_port_fails_with_exit_3_within_seconds(capsys: pytest.CaptureFixture[str]) -> None:
    master, slave = os.openpty()  # a pty with nothing behind it
    try:
        start = time.monotonic()
        args = ["validate", str(DIGITS), "--board", BOARD, "--port", os.ttyname(slave)]
        code, out, err = run_cli([*args, "-n", "1"], capsys)
        took = time.monotonic() - start
    finally:
        os.close(master)
        os.close(slave)
    assert code == 3 and "hello: no reply within" in err
    assert took < 20
    code, out, err = run_cli([*args[:-1], "/dev/tc-no-such-port", "-n", "1"], capsys)
    assert code == 3 and "cannot open serial port /dev/tc-no-such-port" in err


def test_miscompiled_firmware_is_a_mismatch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A firmware with the right fingerprint whose weights were altered: exit 1, and the
    mismatching outputs are named."""
    from tinycompile.build import build_firmware

    project = api.generate(api.plan(str(DIGITS)), tmp_path / "proj")
    weights = project / "model" / "tc_weights.c"
    text = weights.read_text()
    # FULLY_CONNECTED weights, in the kernel's layout (w + 128, quads of four channels)
    head = "const uint8_t tc_op3_weights[2560] TC_WEIGHTS_ATTR = {\n"
    start = text.index(head) + len(head)
    lines = text[start:].split("\n")
    lines[:8] = ["    " + "1, " * 24] * 8  # outputs 0-3 (-127 weights): their logits saturate
    weights.write_text(text[:start] + "\n".join(lines))
    fw = build_firmware(project, BOARD, variant="board")
    with emulated_board(BOARD, fw.elf) as emu:
        args = ["validate", str(DIGITS), "--board", BOARD, "--port", emu.pty, "-n", "5", *BOOTING]
        code, out, err = run_cli(args, capsys)
    assert code == 1, err
    assert "MISMATCH with TFLM" in out and "output 0 'Identity':" in out


def test_emulate_prints_a_pty_and_stops_on_ctrl_c(digits_build: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "tinycompile.cli", "emulate", str(digits_build)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        line = proc.stdout.readline().decode()  # type: ignore[union-attr]
        assert "console on /dev/pts/" in line, line
        pty = line.split("console on ")[1].split()[0]
        with Port(pty, 115200) as port:
            dev = Device(port)
            dev.resync()
            assert dev.hello(EMULATED_CONNECT_S).board == BOARD
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=15) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
