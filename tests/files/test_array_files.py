"""The ``.npz`` array files (pysmt/files/array_files.py): a damaged one is one line naming it."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from pysmt.errors import PysmtError
from pysmt.files.array_files import read_arrays


def test_a_damaged_array_file_is_one_line(tmp_path):
    good = tmp_path / "pairs.npz"
    np.savez(good, ids=np.arange(3))
    assert read_arrays(good, ["ids"])["ids"].tolist() == [0, 1, 2]
    with pytest.raises(PysmtError, match=r"pairs.npz: damaged array file \(no pos\)"):
        read_arrays(good, ["ids", "pos"])
    cut = tmp_path / "cut.npz"
    cut.write_bytes(good.read_bytes()[:100])
    with pytest.raises(PysmtError, match="cut.npz: damaged array file"):
        read_arrays(cut, ["ids"])
    with zipfile.ZipFile(tmp_path / "other.npz", "w") as archive:
        archive.writestr("ids.npy", b"not an array")
    with pytest.raises(PysmtError, match="other.npz: damaged array file"):
        read_arrays(tmp_path / "other.npz", ["ids"])
