"""The kernels at every optimization level: users who take the generated C and firmware/ into
their own project build it with their IDE's flags, STM32CubeIDE's Debug default being -O0.

- every firmware/kernels/*.c compiles warning-free (the recipe's flags less the board's:
  -mthumb -std=c99 -Wall -Wextra -Werror -ffunction-sections -fdata-sections) for Cortex-M0+,
  M3, M4 and M7 (the last two hard float) at -O0, -Og, -O1, -O2, -O3 and -Os, and for the
  M33 (hard float) at -O0 (its optimized builds compile the M4's DSP code; they would add 20 s
  to this file). At -O0 GCC could not give the DSP loops' inline assembly its registers
  ("'asm' operand has impossible constraints"); there they take C loops (TC_ASM_LOOPS,
  firmware/kernels/tc_kernel_util.h);
- built at -O0, a chain whose layers reach each of those C loops (tc_dot_dsp.h's tc_dot22_s8 /
  tc_dot22_x8_s8 / tc_dot22r_s8 / tc_dot14_s8 / tc_dot14v_s8, tc_depthwise_dsp.c's six-output
  line steps at strides 1 and 2, tc_conv2d_few_dsp.c's window rows) is bit-exact with TFLM in
  every layer in QEMU on the Cortex-M4 (qemu-m4), and on the Cortex-M0+ (samd21: its naked
  Thumb-1 routines at -O0). The emulator build takes no optimization flag, so the test wraps
  the build_firmware that run_board calls.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from modelgen.few_channel import Net

import tinycompile.run.board as run_board
from tinycompile import api
from tinycompile.build import FirmwareBuild, build_firmware

KERNELS = sorted((ROOT / "firmware" / "kernels").glob("*.c"))
CORES = {
    "m0plus": ["-mcpu=cortex-m0plus"],
    "m3": ["-mcpu=cortex-m3"],
    "m4": ["-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
    "m7": ["-mcpu=cortex-m7", "-mfloat-abi=hard", "-mfpu=fpv5-d16"],
    "m33": ["-mcpu=cortex-m33", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16"],
    "m55": ["-mcpu=cortex-m55", "-mfloat-abi=hard", "-mfpu=auto"],
}
LEVELS = ["-O0", "-Og", "-O1", "-O2", "-O3", "-Os"]
CASES = [(c, o) for c in CORES if c not in ("m33", "m55") for o in LEVELS]
CASES += [("m33", "-O0"), ("m55", "-O0"), ("m55", "-O2")]
FLAGS = ["-mthumb", "-std=c99", "-Wall", "-Wextra", "-Werror", "-ffunction-sections",
         "-fdata-sections"]  # fmt: skip


@pytest.mark.parametrize(("core", "level"), CASES)
def test_kernels_compile_at_every_level(core: str, level: str, tmp_path: Path) -> None:
    cmd = ["arm-none-eabi-gcc", *CORES[core], *FLAGS, level]
    cmd += ["-I", str(ROOT / "firmware" / "include"), "-I", str(ROOT / "firmware" / "kernels")]
    # two compiler drivers, each over half of the files (each file its own object in tmp_path)
    procs = [
        subprocess.Popen(
            [*cmd, "-c", *map(str, KERNELS[i::2])],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(2)
    ]
    outs = [(p.communicate()[0], p.returncode) for p in procs]
    errors = "".join(out for out, _ in outs)
    assert all(rc == 0 for _, rc in outs) and not errors, f"{core} {level}:\n{errors}"
    assert len(list(tmp_path.glob("*.o"))) == len(KERNELS)


def _chain() -> Net:
    """Layers reaching the C loops of the DSP kernels at -O0 (the M4's kernel per layer):
    a 3x3 stride-2 first layer over one channel (tc_conv_few_s8's window rows), 3x3 depthwise
    at strides 1 and 2 with lines of at least six outputs (tc_dwconv3x3_dsp's line steps),
    pointwise 8 -> 16 over 35 pixels (tc_dot22_x8_s8 in pairs, tc_dot14_s8 for the lone last
    pixel), 16 -> 13 (the int16 column), 3x3 over 13 channels (tc_dot22r_s8 inside,
    tc_dot14v_s8 on the borders), 10 -> 14 (tc_conv_pw_s8), 14 -> 9 (tc_dot22_s8 over 14
    values: the assembly loop's 8 and a tail), FULLY_CONNECTED."""
    return (
        Net((1, 27, 19, 1), 6)
        .conv(8, 3, 2, "SAME", "RELU6", per_channel=True)
        .dw(1, 3, 1, "SAME", "RELU")
        .dw(1, 3, 2, "SAME")
        .conv(16, 1, act="RELU")
        .conv(13, 1)
        .conv(10, 3)
        .conv(14, 1)
        .conv(9, 1)
        .fc(7)
    )


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["qemu-m4", "samd21"])  # Cortex-M4 (FPU), Cortex-M0+
def test_o0_firmware_bit_exact(board: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[FirmwareBuild] = []

    def at_o0(*args, **kwargs) -> FirmwareBuild:
        built.append(build_firmware(*args, **{**kwargs, "opt": "-O0"}))
        return built[-1]

    monkeypatch.setattr(run_board, "build_firmware", at_o0)
    model = _chain().save(tmp_path / "chain.tflite")
    r = api.compare(model, board=board, n=4, layers=True, workdir=tmp_path / "w")
    assert r.ok, str(r)
    assert len(built) == 1 and r.result.firmware is built[0]
    makefile = (tmp_path / "w" / "project" / "board" / board / "Makefile").read_text()
    assert "# emulator: -O0," in makefile  # the objects' flags, as the build ran them
