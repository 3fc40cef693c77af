"""Package layout that pyproject.toml cannot express alone: the code packages are found, and the
repository's top-level data folders are mapped into the package as ``tinycompile/_data/<name>``
so that a wheel carries them (tinycompile/paths.py finds them there, or beside the package in a
checkout or an editable install). Everything else is in pyproject.toml."""

import os

from setuptools import find_packages, setup

DATA_FOLDERS = ("templates", "firmware", "boards", "examples")  # as in tinycompile/paths.py


def data_packages() -> list[str]:
    """Every folder under the data folders, as a package name under tinycompile._data."""
    found = []
    for top in DATA_FOLDERS:
        for dirpath, dirnames, _ in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            found.append("tinycompile._data." + dirpath.replace(os.sep, "."))
    return found


DATA_PACKAGES = data_packages()

setup(
    packages=find_packages(include=["tinycompile", "tinycompile.*"]) + DATA_PACKAGES,
    package_dir={f"tinycompile._data.{d}": d for d in DATA_FOLDERS},
    package_data={p: ["*"] for p in DATA_PACKAGES},
    exclude_package_data={p: ["*.o", "*~"] for p in DATA_PACKAGES},
)
