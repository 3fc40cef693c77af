"""Generate the AVERAGE_POOL_2D and MAX_POOL_2D test models into tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.ops_pool``. Each model is a small
tf.function converted with full-integer quantization; the converter fuses a following
relu / relu6 / clip(-1, 1) into the pool's fused activation. Shapes are chosen so that SAME
padding clips windows differently at every border (odd totals, asymmetric strides).
"""

from __future__ import annotations

from collections.abc import Callable

from .common import MODELS_DIR, random_rep, save, to_int8_tflite

OUT = MODELS_DIR / "ops"


def build() -> list[str]:
    import tensorflow as tf

    made: list[str] = []

    def emit(name: str, shape: tuple[int, ...], body: Callable) -> None:
        fn = tf.function(body, input_signature=[tf.TensorSpec((1, *shape), tf.float32)])
        data = to_int8_tflite(fn, random_rep([shape], n=48, seed=len(made)))
        save(name, data, OUT)
        made.append(name)

    def n1to1(y):
        return tf.clip_by_value(y, -1.0, 1.0)

    mx, avg = tf.nn.max_pool2d, tf.nn.avg_pool2d
    emit("pool_max_2x2_s2", (8, 8, 6), lambda x: mx(x, 2, 2, "VALID"))
    emit("pool_max_3x3_s2_same_relu", (9, 10, 5), lambda x: tf.nn.relu(mx(x, 3, 2, "SAME")))
    emit("pool_max_n1to1", (7, 7, 4), lambda x: n1to1(mx(x, 2, 1, "SAME")))
    emit("pool_max_asym_relu6", (9, 8, 3), lambda x: tf.nn.relu6(mx(x, (3, 2), (2, 1), "SAME")))
    emit("pool_avg_2x2_s2", (8, 8, 6), lambda x: avg(x, 2, 2, "VALID"))
    emit("pool_avg_3x3_s1_same", (7, 9, 5), lambda x: avg(x, 3, 1, "SAME"))
    emit("pool_avg_asym_relu6", (9, 8, 3), lambda x: tf.nn.relu6(avg(x, (3, 2), (2, 1), "SAME")))
    emit("pool_avg_4x4_s3_same_relu", (10, 11, 4), lambda x: tf.nn.relu(avg(x, 4, 3, "SAME")))
    emit("pool_avg_n1to1", (6, 6, 7), lambda x: n1to1(avg(x, 2, 2, "SAME")))
    emit("pool_avg_global", (5, 6, 8), lambda x: avg(x, (5, 6), 1, "VALID"))
    return made


def main() -> None:
    for n in build():
        p = OUT / f"{n}.tflite"
        print(f"{p.relative_to(MODELS_DIR.parent.parent)}  {p.stat().st_size} bytes")


if __name__ == "__main__":
    main()
