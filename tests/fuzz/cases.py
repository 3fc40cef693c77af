"""The seed corpus and the cases drawn from it: case i of seed S is always the same mutant."""

from __future__ import annotations

import random
import re
import tomllib
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus"


def corpus_models(corpus: Path = CORPUS) -> list[Path]:
    return sorted((corpus / "models").glob("*.tflite"))


def corpus_onnx(corpus: Path = CORPUS) -> list[Path]:
    return sorted((corpus / "onnx").glob("*.onnx"))


def corpus_boards(corpus: Path = CORPUS) -> list[Path]:
    return sorted((corpus / "boards").glob("*.toml"))


class ModelCases:
    """Deterministic mutants of the seed models: case i depends only on (seed, i)."""

    def __init__(self, seeds: list[Path], seed: int) -> None:
        from .flatmap import build_map
        from .tflite_objects import unpack

        self.seed = seed
        self.data = [p.read_bytes() for p in seeds]
        self.names = [p.name for p in seeds]
        self.maps = [build_map(d) for d in self.data]
        self.trees = [unpack(d) for d in self.data]

    def case(self, i: int) -> tuple[bytes, str, str]:
        data, desc = self._case(i)
        return data, desc, "case"

    def _case(self, i: int) -> tuple[bytes, str]:
        from .byte_mutators import mutate_bytes, safe_map, splice
        from .model_mutators import mutate_model

        rng = random.Random(f"{self.seed}:{i}")
        k = rng.randrange(len(self.data))
        name = self.names[k]
        r = rng.random()
        if r < 0.02:
            return self.data[k], f"{name}: unmodified"
        if r < 0.38:
            out, d = mutate_bytes(self.data[k], self.maps[k], rng)
        elif r < 0.85:
            out, d = mutate_model(self.trees[k], rng)
        elif r < 0.97:
            mid, d1 = mutate_model(self.trees[k], rng)
            fm = safe_map(mid)
            if fm is None:
                out, d = mid, d1
            else:
                out, d2 = mutate_bytes(mid, fm, rng)
                d = f"{d1} | {d2}"
        else:
            other = self.data[rng.randrange(len(self.data))]
            out, d = splice(self.data[k], other, rng)
        return out, f"{name}: {d}"


class OnnxCases:
    """Deterministic mutants of the seed ONNX models: wire-level (protobuf fields found by
    parsing, lengths kept consistent) and byte-level mutations, structural ones through the
    ``onnx`` API, both in turn, and splices."""

    def __init__(self, seeds: list[Path], seed: int) -> None:
        import onnx

        self.seed = seed
        self.data = [p.read_bytes() for p in seeds]
        self.names = [p.name for p in seeds]
        self.models = [onnx.load_model_from_string(d) for d in self.data]

    def case(self, i: int) -> tuple[bytes, str, str]:
        from .onnx_mutators import mutate_onnx
        from .onnx_wire import mutate_wire, splice

        rng = random.Random(f"onnx:{self.seed}:{i}")
        k = rng.randrange(len(self.data))
        r = rng.random()
        if r < 0.02:
            out, d = self.data[k], "unmodified"
        elif r < 0.35:
            out, d = mutate_wire(self.data[k], rng)
        elif r < 0.85:
            out, d = mutate_onnx(self.models[k], rng)
        elif r < 0.97:
            mid, d1 = mutate_onnx(self.models[k], rng)
            out, d2 = mutate_wire(mid, rng)
            d = f"{d1} | {d2}"
        else:
            out, d = splice(self.data[k], self.data[rng.randrange(len(self.data))], rng)
        return out, f"{self.names[k]}: {d}", "case"


class BoardCases:
    """Deterministic mutants of the seed board files; the case file is named after the board
    (the reader wants ``name`` to match the file name), often after the mutated name."""

    def __init__(self, seeds: list[Path], seed: int) -> None:
        self.seed = seed
        self.texts = [p.read_text() for p in seeds]
        self.names = [p.name for p in seeds]

    def case(self, i: int) -> tuple[bytes, str, str]:
        from .board_mutators import mutate_toml

        rng = random.Random(f"{self.seed}:{i}")
        k = rng.randrange(len(self.texts))
        stem = Path(self.names[k]).stem
        if rng.random() < 0.03:
            return self.texts[k].encode(), f"{self.names[k]}: unmodified", stem
        out, d = mutate_toml(self.texts[k], rng)
        try:
            name = tomllib.loads(out.decode()).get("name")
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            name = None
        # a file name is the user's own choice: no control characters or '/' (a name with
        # quotes, '$' or '*' is still a valid file name, and the reader must cope with it)
        if (
            isinstance(name, str)
            and name != stem
            and rng.random() < 0.7
            and 0 < len(name) < 200
            and not re.search(r"[/\x00-\x1f\x7f]", name)
            and name not in (".", "..")
        ):
            stem = name
        return out, f"{self.names[k]}: {d}", stem
