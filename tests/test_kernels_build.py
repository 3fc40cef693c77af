"""Every kernel file compiles warning-free (-Wall -Wextra -Werror -pedantic, C99) on its own for
the host, ARMv6-M (Cortex-M0+), a DSP core (Cortex-M7) and Helium (Cortex-M55, TC_MVE): each file
is self-contained. (Their size limit, 600 lines: tests/test_layering.py.)"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KERNELS = sorted((ROOT / "firmware" / "kernels").glob("*.c"))
TOOLCHAINS = {
    "host": ["cc"],
    "m0plus": ["arm-none-eabi-gcc", "-mcpu=cortex-m0plus", "-mthumb"],
    "m7": ["arm-none-eabi-gcc", "-mcpu=cortex-m7", "-mthumb", "-mfpu=fpv5-d16", "-mfloat-abi=hard"],
    "m55": ["arm-none-eabi-gcc", "-mcpu=cortex-m55", "-mthumb", "-mfpu=auto", "-mfloat-abi=hard"],
}


@pytest.mark.parametrize("target", sorted(TOOLCHAINS))
@pytest.mark.parametrize("src", KERNELS, ids=lambda p: p.name)
def test_kernel_compiles_without_warnings(src: Path, target: str, tmp_path: Path) -> None:
    cmd = [*TOOLCHAINS[target], "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2"]
    cmd += ["-I", str(ROOT / "firmware" / "include"), "-c", str(src), "-o", str(tmp_path / "k.o")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
