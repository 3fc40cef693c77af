"""TFLM + CMSIS-NN reference figures that `make bench` (bench_emulator.py) sets ours beside.

Not our measurement: the instructions per inference below were measured by the filer of issue
11 and are copied from the issue; they are not reproduced here (TFLM's and CMSIS-NN's sources
are not built in this repository). Per the issue: TFLM with CMSIS-NN kernels, built with
arm-none-eabi-gcc 12.2 and TFLM's release flags, run in QEMU and counted the same way as ours
(guest instructions under -icount). On the M0+ CMSIS-NN runs its portable C paths.
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCE = "issue 11, measured by the filer; not reproduced here"
METHOD = (
    "TFLM + CMSIS-NN, arm-none-eabi-gcc 12.2, TFLM release flags, instructions per inference "
    "in QEMU counted as ours (M0+: CMSIS-NN's C paths)"
)
TARGET = 0.67  # issue 11's goal: at most 0.67x TFLM + CMSIS-NN's instructions per inference


@dataclass(frozen=True)
class Reference:
    """One model's figures from issue 11: its name there, MACs, instructions per core."""

    name: str
    macs: float
    instructions: dict[str, float]  # core ("M7", "M4", "M0+") -> instructions per inference


REFERENCE: dict[str, Reference] = {
    "kws_dscnn": Reference("DS-CNN 49x10x1", 2.66e6, {"M7": 7.60e6, "M4": 7.58e6, "M0+": 29.0e6}),
    "vww_mobilenet": Reference(
        "MobileNetV1-0.25 VWW 96x96x3", 7.49e6, {"M7": 23.9e6, "M4": 23.8e6, "M0+": 86.9e6}
    ),
    "ic_resnet8": Reference("ResNet-8 CIFAR", 12.5e6, {"M7": 30.0e6, "M4": 29.8e6, "M0+": 97.6e6}),
    "ad_autoencoder": Reference(
        "FC autoencoder 640", 0.264e6, {"M7": 0.583e6, "M4": 0.583e6, "M0+": 1.76e6}
    ),
}
