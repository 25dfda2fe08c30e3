"""Reading the ``.npz`` array files pysmt and its plugins keep (encoded training data, extraction parts).

They are written atomically, so a damaged one comes from outside (a partial copy, a bad disk): it is
one line naming the file and what is wrong, not numpy's traceback.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from pysmt.errors import PysmtError


def damaged(path: Path, reason: str) -> PysmtError:
    return PysmtError(f"{path}: damaged array file ({reason}); delete it and rerun the command that made it")


def read_arrays(path: str | Path, names: Iterable[str], optional: Iterable[str] = ()) -> dict[str, np.ndarray]:
    """The arrays ``names`` (and those of ``optional`` that are there) of the ``.npz`` file ``path``, read in full."""
    path = Path(path)
    wanted = list(names)
    try:
        with np.load(path, allow_pickle=False) as data:
            missing = [name for name in wanted if name not in data.files]
            if missing:
                raise damaged(path, f"no {', '.join(missing)}")
            arrays = {name: data[name] for name in [*wanted, *(n for n in optional if n in data.files)]}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as err:
        raise damaged(path, str(err)) from None
    bad = [name for name, value in arrays.items() if not isinstance(value, np.ndarray)]  # numpy gives raw bytes
    if bad:
        raise damaged(path, f"{', '.join(bad)} not an array")
    return arrays
