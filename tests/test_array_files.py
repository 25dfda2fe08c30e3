"""Damaged models are refused when loaded, and nothing a user wrote is silently ignored (issue 23).

Each case is one line naming the file (and line, array or section), exit status 1, or a warning
on stderr where the setting is harmless to skip.
"""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from pysmt.array_files import read_arrays
from pysmt.binarize import binarize_system
from pysmt.config_files import load_config
from pysmt.errors import PysmtError
from pysmt.rescoring import rescore
from pysmt.testing import TOY_PHRASES, TOY_REORDERING, write_toy_system
from tests.conftest import fails, pysmt


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("a b c\n")
    return path


# -- 4. models checked when loaded ---------------------------------------------------------------

@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
@pytest.mark.parametrize("table", ["phrases", "reordering"])
def test_a_text_table_with_a_non_finite_score_names_file_and_line(tmp_path, source, value, table):
    phrases, reordering = TOY_PHRASES, TOY_REORDERING
    if table == "phrases":
        phrases = phrases.replace("b ||| y ||| 0.5 0.4", f"b ||| y ||| 0.5 {value}")
    else:
        reordering = reordering.replace("0.4 0.4 0.2 0.5", f"0.4 {value} 0.2 0.5")
    ini = write_toy_system(tmp_path / "system", phrases=phrases, reordering=reordering)
    name = "phrases.txt" if table == "phrases" else "reordering.txt"
    position = 2 if table == "phrases" else 2
    fails(pysmt("decode", "-c", str(ini), "-i", str(source)), 1, f"{name}, line", f"score {position} is {value}",
          "finite")


@pytest.fixture
def binary(tmp_path):
    ini = write_toy_system(tmp_path / "system")
    return binarize_system(load_config(ini), tmp_path / "binary")


def damage(config_path, table: str, array: str, change) -> None:
    """Rewrite one array of a binary table in place, keeping its shape and dtype (a bad disk, a bad copy)."""
    folder = next(p for p in config_path.parent.iterdir() if p.is_dir() and table in p.name)
    values = np.load(folder / f"{array}.npy").copy()
    change(values)
    np.save(folder / f"{array}.npy", values)


@pytest.mark.parametrize("table, array, change, words", [
    ("phrase-table", "scores", lambda a: a.__setitem__((1, 0), np.nan), "scores.npy holds nan or infinite"),
    ("reordering", "scores", lambda a: a.__setitem__((0, 2), np.inf), "scores.npy holds nan or infinite"),
    ("phrase-table", "target_ids", lambda a: a.__setitem__(0, 99), "target_ids.npy holds ids from 0 to 99"),
    ("phrase-table", "alignment_id", lambda a: a.__setitem__(0, -1), "alignment_id.npy holds ids from -1"),
    ("phrase-table", "target_len", lambda a: a.__setitem__(0, 50), "points outside target_ids.npy"),
])
def test_a_damaged_binary_table_is_refused_naming_the_array(binary, source, table, array, change, words):
    damage(binary, table, array, change)
    fails(pysmt("decode", "-c", str(binary), "-i", str(source)), 1, words)


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


# -- 5. nothing silently ignored -------------------------------------------------------------------

def test_a_weights_file_naming_a_feature_twice_is_refused(tmp_path, source):
    ini = write_toy_system(tmp_path / "system")
    weights = tmp_path / "weights.txt"
    weights.write_text("WordPenalty0= -1\nKENLM0= 0.5\nWordPenalty0= 2\n")
    fails(pysmt("decode", "-c", str(ini), "-i", str(source), "--weights", str(weights)), 1,
          f"{weights}, line 3: WordPenalty0 has weights already (line 1)")


def test_a_moses_ini_naming_a_weight_twice_is_refused(tmp_path, source):
    ini = write_toy_system(tmp_path / "system", extra="WordPenalty0= 3\n")
    fails(pysmt("decode", "-c", str(ini), "-i", str(source)), 1, "WordPenalty0 has weights already")


@pytest.mark.parametrize("section, advice", [("threads", "--threads N"), ("n-best-list", "--nbest FILE")])
def test_moses_run_sections_are_not_read_and_say_so(tmp_path, source, section, advice):
    ini = write_toy_system(tmp_path / "system", extra=f"\n[{section}]\n4\n")
    proc = pysmt("decode", "-c", str(ini), "-i", str(source))
    assert proc.returncode == 0
    assert f"[{section}] is not read: give `pysmt decode {advice}" in proc.stderr.decode()


def test_an_old_style_weight_section_in_a_new_style_ini_is_refused(tmp_path, source):
    ini = write_toy_system(tmp_path / "system", extra="\n[weight-l]\n0.5\n")
    fails(pysmt("decode", "-c", str(ini), "-i", str(source)), 1, "[weight-l] is an old-style weight section",
          "[weight]")


def test_rescoring_a_list_of_another_system_is_refused(tmp_path):
    ini = write_toy_system(tmp_path / "system")
    nbest = tmp_path / "nbest.txt"
    nbest.write_text("0 ||| x ||| LM0= -1 WordPenalty0= -1 ||| -2\n")
    with pytest.raises(PysmtError, match=r"its features \(LM0 WordPenalty0\) are not the system.s "
                                         r".*it lacks Distortion0.*it has LM0: was it decoded with this -c config"):
        rescore(load_config(ini), ["kenlm"], nbest, tmp_path / "out.txt")
    assert not (tmp_path / "out.txt").exists()


def test_a_lock_and_the_records_stay_json(tmp_path):
    """The lock file says who holds the folder, in JSON (what the refusal quotes)."""
    from pysmt.folder_lock import LOCK_FILE, lock_folder

    lock_folder(tmp_path / "out")
    record = json.loads((tmp_path / "out" / LOCK_FILE).read_text())
    assert set(record) == {"pid", "command", "started"}
