"""Where the data folders are: the one place that knows the on-disk layout.

templates/ (Jinja templates), firmware/ (the C runtime copied into projects), boards/ (built-in
board files) and examples/ (the bundled model). The repository keeps them at its top level; a
wheel carries them as package data in ``tinycompile/_data/`` (setup.py maps the top-level
folders there). An installed package finds them there; a source checkout (including an editable
install, ``pip install -e .``) has no ``_data/`` and finds them beside the package.

Everything else reads these folders through the names below, never relative to ``__file__``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

DATA_FOLDERS = ("templates", "firmware", "boards", "examples")


def _package_dir() -> Path:
    """The installed package's folder, as a real path (the C build copies whole folders)."""
    pkg = resources.files(__package__ or "tinycompile")
    if not isinstance(pkg, Path):  # e.g. imported from a zip file
        raise RuntimeError(f"tinycompile must be installed as files on disk, not in {pkg}")
    return pkg.resolve()


def _data_root() -> tuple[Path, Path | None]:
    """(folder holding templates/, firmware/, boards/, examples/; the checkout or None)."""
    pkg = _package_dir()
    bundled = pkg / "_data"
    if (bundled / "templates").is_dir():  # installed from a wheel
        return bundled, None
    repo = pkg.parent
    if all((repo / d).is_dir() for d in DATA_FOLDERS):  # source checkout / editable install
        return repo, repo
    raise RuntimeError(
        f"tinycompile's data folders ({', '.join(DATA_FOLDERS)}) are neither in {bundled} nor "
        f"in {repo}: reinstall the package (pip install tinycompile-*.whl, or pip install -e .)"
    )


DATA_ROOT, REPO = _data_root()
"""DATA_ROOT holds the data folders; REPO is the source checkout, None for an installed wheel."""
TEMPLATES_DIR: Path = DATA_ROOT / "templates"
BOARD_TEMPLATES_DIR: Path = TEMPLATES_DIR / "board"
FIRMWARE_DIR: Path = DATA_ROOT / "firmware"
BOARDS_DIR: Path = DATA_ROOT / "boards"
EXAMPLES_DIR: Path = DATA_ROOT / "examples"
EXAMPLE_MODEL: Path = EXAMPLES_DIR / "digits.tflite"
