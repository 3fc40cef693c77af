"""Issue 19: no ONNX test may depend on which integer kernels the host's onnxruntime picks.

onnxruntime chooses its u8 x s8 GEMM by CPU feature: on x86-64 CPUs with AVX2 but no VNNI
(`vpmaddubsw`) it adds pairs of products in int16 with saturation, so "equal to onnxruntime" is
a property of the machine. This test runs Python and onnxruntime on such a CPU, an emulated
Haswell (Debian's qemu-user; `make test` installs it; the C compiler and the host programs the
run starts still run natively), and checks there that the probe sees the saturating kernel,
that a uint8 model is still bit-exact with the ONNX reference, and that the second opinion
names the kernel instead of calling it a mismatch. Natively (this suite's other tests) the
same model agrees with onnxruntime on a VNNI machine.
"""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

pytest.importorskip("onnxruntime")

HASWELL = "Haswell,-pcid,-x2apic,-tsc-deadline,-hle,-invpcid,-rtm"  # the flags: no warnings
SCRIPT = """
import json, sys
import numpy as np
from tinycompile import api
from tinycompile.run.reference import ort_saturates_u8s8
from tests.test_onnx_models import calibrated_inputs

path = sys.argv[1]
xs = calibrated_inputs(api.plan(path).graph, 6)
r = api.compare(path, inputs=xs)
print(json.dumps({"probe": ort_saturates_u8s8(), "ok": r.ok, "report": str(r),
                  "second": r.second_opinion}))
"""


@pytest.mark.skipif(platform.machine() != "x86_64", reason="emulates an x86-64 CPU")
def test_uint8_model_on_an_avx2_cpu_without_vnni(tmp_path: Path) -> None:
    qemu = shutil.which("qemu-x86_64")
    assert qemu, "qemu-x86_64 is missing: apt-get install qemu-user (make test does)"
    from tests.onnxgen.models import build_all

    model = build_all(tmp_path, ["cnn"])["cnn_u8"]
    r = subprocess.run(
        [qemu, "-cpu", HASWELL, sys.executable, "-c", SCRIPT, str(model)],
        capture_output=True, text=True, timeout=900, cwd=ROOT,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    d = json.loads(r.stdout.strip().splitlines()[-1])
    assert d["probe"], "the emulated Haswell's onnxruntime did not take its saturating kernel"
    assert d["ok"], d["report"]
    second = d["second"]
    assert second["mismatches"] > 0 and "saturating u8 x s8 kernel" in second["explanation"], d
