"""Binarized (memory-mapped) phrase and reordering tables (pysmt/models/binary_table.py, binary_writer.py):
same entries, same scores, same translations; damaged ones are refused naming the array."""

import json
import random
import subprocess
import sys
import time
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from pysmt._core import StringIndex
from pysmt.binarize import binarize_system
from pysmt.config_files import load_config, write_toml
from pysmt.decoder import Decoder
from pysmt.errors import PysmtError
from pysmt.models import binary_checks, binary_writer
from pysmt.models.binary_checks import HEADER_CHECKSUM, header_checksum
from pysmt.models.binary_table import ARRAYS, HEADER, PHRASE_TABLE, REORDERING_TABLE, stored_scores
from pysmt.models.binary_writer import ScoreWriter, binarize_table, hash_slots, stored_strings, write_strings
from pysmt.models.phrase_table import PhraseTable
from pysmt.models.reordering_table import ReorderingTable
from pysmt.running.folder_lock import LOCK_FILE
from pysmt.testing import TOY_PHRASES as TINY_PHRASES
from pysmt.testing import one_line_error, run_pysmt, write_toy_system
from tests.helpers import slow_cases, write_moses_system

#: Sources whose UTF-8 byte order differs from naive expectations (accents, CJK, a prefix of another).
UNICODE_PHRASES = (
    TINY_PHRASES
    + """é ||| y ||| 0.5 0.5 ||| 0-0
zèbre ||| z ||| 0.5 0.5 ||| 0-0
日本 ||| x ||| 0.5 0.5 ||| 0-0
a  ||| z ||| 0.125 0.75 ||| 0-0
ab ||| x x ||| 0.5 0.5
"""
)


def tables(config):
    """The phrase table and reordering table of a config, as the features load them."""
    phrase = config.feature("PhraseDictionaryMemory0").params
    reordering = config.feature("LexicalReordering0").params
    return (
        PhraseTable(phrase["path"], log_scores=phrase.get("log-scores", False)),
        ReorderingTable(reordering["path"], num_scores=6),
    )


def entries(table, source):
    return [(e.target, e.scores.dtype, e.scores.tobytes(), e.alignment) for e in table.lookup(source)]


def assert_same_tables(text, binary):
    text_phrases, text_reordering = text
    binary_phrases, binary_reordering = binary
    assert sorted(binary_phrases.sources) == sorted(text_phrases.sources)
    assert len(binary_phrases) == len(text_phrases) and binary_phrases.num_scores == text_phrases.num_scores
    assert binary_phrases.max_source_length == text_phrases.max_source_length
    for source in text_phrases.sources:
        assert source in binary_phrases.sources
        assert entries(binary_phrases, source) == entries(text_phrases, source), source
    assert sorted(binary_reordering.rows) == sorted(text_reordering.rows)
    keys = list(text_reordering.rows)
    random.Random(1).shuffle(keys)  # the binary table keeps the last source's pairs: mix the sources up
    for key in keys + sorted(keys):
        source, _, target = key.partition(" ||| ")
        for query in (target, target + " x", target.rpartition(" ")[0]):
            assert binary_reordering.lookup(source, query) == text_reordering.lookup(source, query), (source, query)
    assert binary_phrases.lookup("no such phrase") == [] and binary_phrases.lookup("") == []
    assert binary_reordering.lookup("no such", "phrase") is None


def nbest(decoder, lines):
    return [
        [
            (c.words, c.scores.tolist(), c.total, c.alignment)
            for c in decoder.translate(line, k, nbest_size=20).hypotheses
        ]
        for k, line in enumerate(lines)
    ]


@pytest.fixture
def tiny(tmp_path):
    ini = write_moses_system(tmp_path / "system", phrases=UNICODE_PHRASES)
    return load_config(ini), binarize_system(load_config(ini), tmp_path / "binary")


def test_tiny_tables_round_trip(tiny):
    text, out = tiny
    binary = load_config(out)
    assert_same_tables(tables(text), tables(binary))
    phrases, _ = tables(binary)
    assert [e.target for e in phrases.lookup("a")] == [("x",), ("y",), ("z",)]  # file order within a source
    assert "zèbre" in phrases.sources and "zè" not in phrases.sources and "日本" in phrases.sources
    # Memory-mapped: the arrays are views of the files, not private copies.
    assert isinstance(phrases.scores.base, np.memmap) and isinstance(phrases.target_ids.base, np.memmap)


def test_tiny_binarized_system_decodes_identically(tiny):
    text, out = tiny
    lines = ["a b c", "c b a", "b c a b", "日本 é zèbre a", "d a b"]
    assert nbest(Decoder(load_config(out)), lines) == nbest(Decoder(text), lines)


@pytest.fixture(scope="module")
def fixture_systems(tmp_path_factory, shared_data):
    ini = shared_data("fixtures", "moses", "lexicalized-reordering", "moses.ini")
    out = binarize_system(load_config(ini), tmp_path_factory.mktemp("fixture") / "binary")
    return ini, out


def test_moses_fixture_tables_round_trip(fixture_systems):
    ini, out = fixture_systems
    config = load_config(out)
    start = time.perf_counter()
    binary = tables(config)
    assert time.perf_counter() - start < 1.0  # mapped, not parsed (milliseconds in practice)
    text = tables(load_config(ini))
    assert len(binary[0]) == 41915
    assert_same_tables(text, binary)


def test_moses_fixture_decodes_identically(fixture_systems):
    ini, out = fixture_systems
    lines = (ini.parent / "to-translate.txt").read_text(encoding="utf-8").splitlines()
    assert nbest(Decoder(load_config(out)), lines) == nbest(Decoder(load_config(ini)), lines)


def test_rebinarizing_replaces_and_binary_tables_in_place_are_kept(tiny, tmp_path):
    text, out = tiny
    mapped, _ = tables(load_config(out))
    before = entries(mapped, "a b")
    again = binarize_system(text, out.parent)  # an earlier binary table of the same name is replaced
    assert again == out and entries(mapped, "a b") == before  # a table mapped meanwhile still reads its pages
    hidden = [p.name for p in out.parent.iterdir() if p.name.startswith(".") and p.name != LOCK_FILE]
    assert hidden == []  # no temporary folders left behind
    elsewhere = replace(load_config(out), path=tmp_path / "elsewhere.toml")  # its tables in out's folder
    table = Path(load_config(out).feature("PhraseDictionaryMemory0").params["path"])
    inode = (table / HEADER).stat().st_ino
    again_here = binarize_system(elsewhere, out.parent)  # already binary, and where it belongs: kept as it is
    assert load_config(again_here).feature("PhraseDictionaryMemory0").params["path"] == str(table)
    assert (table / HEADER).stat().st_ino == inode


def test_binary_tables_binarized_elsewhere_are_linked_into_a_system_of_its_own(tiny, tmp_path):
    """As `pysmt experiment` binarizes a system `pysmt train` wrote binary: hard links, no table written again;
    scores stored with the new system's table stay out of the first system's."""
    _, out = tiny
    original = Path(load_config(out).feature("PhraseDictionaryMemory0").params["path"])
    twice = binarize_system(load_config(out), tmp_path / "twice")
    linked = Path(load_config(twice).feature("PhraseDictionaryMemory0").params["path"])
    assert linked == (tmp_path / "twice" / original.name).resolve() and linked != original
    assert sorted(p.name for p in linked.iterdir()) == sorted(p.name for p in original.iterdir())
    assert all((linked / p.name).stat().st_ino == p.stat().st_ino for p in original.iterdir())
    lines = ["a b c", "日本 é zèbre a"]
    assert nbest(Decoder(load_config(twice)), lines) == nbest(Decoder(load_config(out)), lines)
    writer = ScoreWriter(linked, "mine", 1, {"model": "a"})
    writer.write(np.zeros((writer.entries, 1), dtype=np.float32))
    writer.finish()
    assert stored_scores(original) == {} and list(stored_scores(linked)) == ["mine"]


def one_line_refusal(match, function, *args, **kwargs):
    """The one-line PysmtError that ``function(*args, **kwargs)`` raises, matching ``match``."""
    with pytest.raises(PysmtError, match=match) as err:
        function(*args, **kwargs)
    assert "\n" not in str(err.value)
    return str(err.value)


def test_corrupt_binary_tables_are_one_line_errors(tiny):
    _, out = tiny
    config = load_config(out)
    folder = Path(config.feature("PhraseDictionaryMemory0").params["path"])
    reordering = Path(config.feature("LexicalReordering0").params["path"])

    header = json.loads((folder / HEADER).read_text(encoding="utf-8"))
    (folder / HEADER).write_text(json.dumps({**header, "version": 99}), encoding="utf-8")
    assert str(folder) in one_line_refusal("format version 99", PhraseTable, folder)
    (folder / HEADER).write_text(json.dumps(header), encoding="utf-8")
    assert len(PhraseTable(folder)) == len(PhraseTable(text_path(tiny)))  # restored

    scores = folder / "scores.npy"
    scores.write_bytes(scores.read_bytes()[:-4])
    assert str(folder) in one_line_refusal("scores.npy is unreadable or truncated", PhraseTable, folder)
    scores.unlink()
    assert str(folder) in one_line_refusal("scores.npy is missing", PhraseTable, folder)
    (folder / HEADER).write_text("{not json", encoding="utf-8")
    assert str(folder) in one_line_refusal("header.json is unreadable", PhraseTable, folder)
    (folder / HEADER).unlink()
    assert str(folder) in one_line_refusal("not a binary table", PhraseTable, folder)

    assert str(reordering) in one_line_refusal("holds a 'reordering-table'", PhraseTable, reordering)
    assert str(reordering) in one_line_refusal("needs 4 scores", ReorderingTable, reordering, num_scores=4)
    assert str(reordering) in one_line_refusal(
        "keyed by source phrase", ReorderingTable, reordering, num_scores=6, source_only=True
    )
    with pytest.raises(PysmtError, match="not a binary table") as err:  # as the decoder reports it
        Decoder(config)
    assert "\n" not in str(err.value)


def text_path(tiny):
    text, _ = tiny
    return text.feature("PhraseDictionaryMemory0").params["path"]


def test_log_scores_must_match(tmp_path):
    text = tmp_path / "pt"
    text.write_text("a ||| x ||| -1.5 0\n", encoding="utf-8")
    binarize_table(text, tmp_path / "pt.bin", PHRASE_TABLE, log_scores=True)
    (entry,) = PhraseTable(tmp_path / "pt.bin", log_scores=True).lookup("a")
    assert entry.scores.tolist() == [-1.5, 0.0]
    one_line_refusal("binarized with log-scores = true", PhraseTable, tmp_path / "pt.bin")


def test_empty_tables_and_duplicate_reordering_keys(tmp_path):
    (tmp_path / "empty").write_text("\n", encoding="utf-8")
    binarize_table(tmp_path / "empty", tmp_path / "empty.bin", PHRASE_TABLE)
    table = PhraseTable(tmp_path / "empty.bin")
    assert len(table) == 0 and table.lookup("a") == [] and list(table.sources) == []
    # A key given twice keeps its last scores (Moses' map), in the text and the binary table alike.
    (tmp_path / "ro").write_text(
        "a ||| x ||| 0.5 0.5\nb ||| y ||| 0.25 0.25\na ||| x ||| 1 1\nc ||| z ||| 0.125 1\n", encoding="utf-8"
    )
    binarize_table(tmp_path / "ro", tmp_path / "ro.bin", REORDERING_TABLE, num_scores=2)
    for path in (tmp_path / "ro", tmp_path / "ro.bin"):
        table = ReorderingTable(path, num_scores=2)
        assert table.lookup("a", "x") == (0.0, 0.0) and table.lookup("c", "z") == (pytest.approx(np.log(0.125)), 0.0)
        assert len(table) == 3


def test_text_errors_name_file_and_line(tmp_path):
    (tmp_path / "pt").write_text("a ||| x ||| 0.5\nb ||| y ||| oops\n", encoding="utf-8")
    one_line_refusal(
        f"{tmp_path / 'pt'}, line 2: scores must be numbers",
        binarize_table,
        tmp_path / "pt",
        tmp_path / "pt.bin",
        PHRASE_TABLE,
    )
    assert not (tmp_path / "pt.bin").exists() and [p.name for p in tmp_path.iterdir()] == ["pt"]


def test_outputs_may_not_overwrite_inputs(tmp_path):
    ini = write_moses_system(tmp_path / "system")
    toml = tmp_path / "system" / "pysmt.toml"
    write_toml(load_config(ini), toml)
    config = load_config(toml)
    one_line_refusal("may not overwrite an input", binarize_system, config, tmp_path / "system")
    assert sorted(p.name for p in (tmp_path / "system").iterdir()) == [
        "lm.arpa",
        "moses.ini",
        "phrases.txt",
        "pysmt.toml",
        "reordering.txt",
    ]
    # A folder of an output's name that is not a binary table is not replaced (and nothing is written).
    out = tmp_path / "out"
    k = next(k for k, spec in enumerate(config.features) if spec.type == "phrase-table")
    mine = out / f"{k}.phrase-table.phrases.txt.bin"
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("mine\n", encoding="utf-8")
    one_line_refusal("is not a binary table", binarize_system, config, out)
    assert sorted(p.name for p in out.iterdir()) == [mine.name] and [p.name for p in mine.iterdir()] == ["notes.txt"]


def test_stored_strings_found_by_hash_index_and_binary_search_and_strings_built_alike(tmp_path):
    words = sorted({f"w{k * 7919 % 100003}" for k in range(3000)} | {"", "é", "日本", "a", "a b", "ab"})
    encoded = [w.encode("utf-8") for w in words]
    assert write_strings(tmp_path, "words", encoded) == len(words)
    assert list(stored_strings(tmp_path, "words")) == encoded
    blob, offsets = (np.load(tmp_path / f"words_{name}.npy") for name in ("blob", "offsets"))
    built = StringIndex()
    shuffled = words[1::2] + words[::2]
    assert built.add_all(shuffled) == list(range(len(words))) and built.add_all(shuffled) == list(range(len(words)))
    for strings, order in (
        (StringIndex(blob=blob, offsets=offsets, slots=hash_slots(encoded, len(encoded))), words),
        (StringIndex(blob=blob, offsets=offsets, slots=np.zeros(0, np.uint32)), words),
        (built, shuffled),
    ):
        assert list(strings) == order and len(strings) == len(words) and strings[-1] == order[-1]
        assert all(strings.get(w) == k and strings.find(w) == k for k, w in enumerate(order))  # collisions, wrapping
        assert all(strings.get(w + "x") is None and strings.find(w + "x") == -1 for w in words)
        assert "\ud800" not in strings and 3 not in strings and strings.get("\ud800", "no") == "no"
    assert built.add("x\ud800y") == len(words) and built[len(words)] == "x\ud800y"  # any str, as it went in


def test_strings_that_are_not_utf8_are_found_as_python_reads_them():
    """StringIndex.first_not_utf8 agrees with Python's decoding ("surrogatepass", as strings are read) on
    random bytes near UTF-8: overlong forms, surrogates, sequences cut short, code points past U+10FFFF."""
    rng = random.Random(5)
    pieces = [
        b"a",
        b"\x7f",
        b"\xc3\xa9",
        b"\xc0\xaf",
        b"\xc2",
        b"\xe2\x82\xac",
        b"\xe0\x80\xaf",
        b"\xed\xa0\x80",
        b"\xf0\x9f\x98\x80",
        b"\xf0\x8f\xbf\xbf",
        b"\xf4\x90\x80\x80",
        b"\xf5\x80\x80\x80",
        b"\x80",
        b"\xff",
    ]

    def readable(data):
        try:
            data.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return False
        return True

    for _ in range(300):
        strings = [b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(rng.randint(1, 6))]
        blob = np.frombuffer(b"".join(strings), dtype=np.uint8)
        offsets = np.cumsum([0] + [len(x) for x in strings], dtype=np.int64)
        index = StringIndex(blob=blob, offsets=offsets, slots=np.zeros(0, np.uint32))
        expected = next((k for k, data in enumerate(strings) if not readable(data)), -1)
        assert index.first_not_utf8() == expected, strings


def test_binarizing_in_many_sorted_runs_writes_the_same_table(tmp_path, monkeypatch):
    """A tiny --memory (runs of a few records, merged; arrays written 7 values at a time) gives byte for
    byte the arrays one run gives, and the entries the text table gives; a reordering key repeated
    across runs keeps its last scores."""
    rng = random.Random(3)
    words = ["a", "ab", "b", "é", "zèbre", "日本", "a b"]
    phrases = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 3))) for _ in range(400)]
    lines = [
        f"{src} ||| {rng.choice(words)} ||| {rng.random():.4f} {rng.choice([0, 0.5, 1])} ||| 0-0" for src in phrases
    ]
    (tmp_path / "pt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "ro").write_text("".join(line.rsplit(" ||| ", 1)[0] + "\n" for line in lines), encoding="utf-8")
    scratch = tmp_path / "scratch"
    for kind, text, options in ((PHRASE_TABLE, "pt", {}), (REORDERING_TABLE, "ro", {"num_scores": 2})):
        whole = binarize_table(tmp_path / text, tmp_path / f"{text}.whole", kind, **options)
        monkeypatch.setattr(binary_writer, "BUFFER", 7)
        runs = binarize_table(
            tmp_path / text, tmp_path / f"{text}.runs", kind, memory=4000, temp_dir=scratch, **options
        )
        monkeypatch.undo()
        assert whole["counts"] == runs["counts"] and not any(scratch.iterdir())
        for array in (tmp_path / f"{text}.whole").glob("*.npy"):
            assert array.read_bytes() == (tmp_path / f"{text}.runs" / array.name).read_bytes(), array.name
    text, binary = PhraseTable(tmp_path / "pt"), PhraseTable(tmp_path / "pt.runs")
    entries = lambda table, p: [(e.target, e.scores.tolist(), e.alignment) for e in table.lookup(p)]  # noqa: E731
    assert all(entries(text, p) == entries(binary, p) for p in set(phrases))
    text_ro = ReorderingTable(tmp_path / "ro", num_scores=2)
    binary_ro = ReorderingTable(tmp_path / "ro.runs", num_scores=2)
    assert len(text_ro) == len(binary_ro) < len(lines)  # keys repeat
    for line in lines:
        src, tgt = line.split(" ||| ")[:2]
        assert text_ro.lookup(src, tgt) == binary_ro.lookup(src, tgt)


# -- damaged binary tables ------------------------------------------------------------------------


@pytest.fixture
def source(tmp_path):
    """One line (conftest's source has two): these cases were written with one."""
    path = tmp_path / "in.txt"
    path.write_text("a b c\n")
    return path


@pytest.fixture
def binary(tmp_path):
    ini = write_toy_system(tmp_path / "system")
    return binarize_system(load_config(ini), tmp_path / "binary")


def table_folder(config_path: Path, table: str) -> Path:
    return next(p for p in config_path.parent.iterdir() if p.is_dir() and table in p.name)


def recompute_checksum(folder: Path, array: str) -> None:
    """Write the checksum of ``array`` as it now is into the table's header (if it has checksums): a crafted
    table, not a damaged one."""
    header = json.loads((folder / HEADER).read_text(encoding="utf-8"))
    if "crc32" in header["arrays"][array]:
        header["arrays"][array]["crc32"] = f"{zlib.crc32((folder / f'{array}.npy').read_bytes()):08x}"
    if HEADER_CHECKSUM in header:
        header[HEADER_CHECKSUM] = header_checksum(header)
    (folder / HEADER).write_text(json.dumps(header), encoding="utf-8")


def damage(config_path, table: str, array: str, change) -> None:
    """Rewrite one array of a binary table in place, keeping its shape and dtype, and its checksum with it (a
    table written so by a buggy or hostile program: the checks of its ids and offsets must refuse it)."""
    folder = table_folder(config_path, table)
    values = np.load(folder / f"{array}.npy").copy()
    change(values)
    np.save(folder / f"{array}.npy", values)
    recompute_checksum(folder, array)


def overwrite_middle(path: Path, size: int = 256) -> None:
    """Flip every bit of ``size`` bytes in the middle of an ``.npy`` file's data (all of it if smaller), in place."""
    with open(path, "r+b") as handle:
        np.lib.format.read_magic(handle)
        np.lib.format.read_array_header_1_0(handle)
        start, end = handle.tell(), path.stat().st_size
        size = min(size, end - start)
        handle.seek(start + (end - start - size) // 2)
        data = handle.read(size)
        handle.seek(-size, 1)
        handle.write(bytes(b ^ 0xFF for b in data))


@pytest.fixture(autouse=True)
def check_records(tmp_path, monkeypatch):
    """Checks of binary tables are recorded in this test's own cache (also by the commands it runs)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "pysmt" / "checked-tables"


@pytest.mark.parametrize(
    "table, array, change, words",
    [
        ("phrase-table", "scores", lambda a: a.__setitem__((1, 0), np.nan), "scores.npy holds nan or infinite"),
        ("reordering", "scores", lambda a: a.__setitem__((0, 2), np.inf), "scores.npy holds nan or infinite"),
        *slow_cases(  # each decodes a damaged table in a command of its own: --slow runs every kind of damage
            ("phrase-table", "target_ids", lambda a: a.__setitem__(0, 99), "target_ids.npy holds ids from 0 to 99"),
            ("phrase-table", "alignment_id", lambda a: a.__setitem__(0, -1), "alignment_id.npy holds ids from -1"),
            ("phrase-table", "target_len", lambda a: a.__setitem__(0, 50), "points outside target_ids.npy"),
            # Issue 36: offsets that decrease, hash slots past the count, sums that overflow, each with a valid
            # checksum.
            ("reordering", "key_offsets", lambda a: a.__setitem__(2, a[3] + 1), "key_offsets.npy decreases"),
            ("reordering", "key_offsets", lambda a: a.__setitem__(2, -5), "key_offsets.npy decreases"),
            ("phrase-table", "source_offsets", lambda a: a.__setitem__(1, 1 << 40), "source_offsets.npy decreases"),
            ("phrase-table", "vocab_offsets", lambda a: a.__setitem__(1, a[2] + 1), "vocab_offsets.npy decreases"),
            ("phrase-table", "alignment_offsets", lambda a: a.__setitem__(1, -1), "alignment_offsets.npy decreases"),
            (
                "phrase-table",
                "source_slots",
                lambda a: a.__setitem__(np.flatnonzero(a)[0], 6),
                "source_slots.npy holds 6, past the 5 strings",
            ),
            ("phrase-table", "source_slots", lambda a: a.__setitem__(slice(None), 0xFFFFFFFF), "past the 5 strings"),
            (
                "phrase-table",
                "block_start",
                lambda a: a.__setitem__(1, 6),
                "block_start.npy does not run from 0 to the 6 ",
            ),
            (
                "phrase-table",
                "block_start",
                lambda a: a.__setitem__(0, -1),
                "block_start.npy does not run from 0 to the 6 ",
            ),
            (
                "phrase-table",
                "target_start",
                lambda a: a.__setitem__(0, (1 << 63) - 1),
                "points outside target_ids.npy",
            ),
            ("phrase-table", "target_len", lambda a: a.__setitem__(0, -1), "points outside target_ids.npy"),
            # Strings Python could not read, alignments the decoder could not: one line, not a traceback while decoding.
            ("phrase-table", "vocab_blob", lambda a: a.__setitem__(0, 0xFF), "string 0 of vocab_blob.npy is not UTF-8"),
            ("reordering", "key_blob", lambda a: a.__setitem__(-1, 0xC3), "string 3 of key_blob.npy is not UTF-8"),
            (
                "phrase-table",
                "alignment_blob",
                lambda a: a.__setitem__(1, ord("x")),
                "alignment 0 of alignment_blob.npy is not a list of word pairs",
            ),
        ),
    ],
)
def test_a_crafted_binary_table_is_refused_naming_the_array(binary, source, table, array, change, words):
    damage(binary, table, array, change)
    one_line_error(run_pysmt("decode", "-c", binary, "-i", source), words)


@pytest.mark.parametrize(
    "descr, shape, words",
    [
        ("'|V0'", "(-1,)", "scores.npy has dtype |V0 and shape [-1]"),  # numpy's mapping died of a SIGFPE
        ("'<f8'", "(99999999999999999999, 6)", "scores.npy has dtype float64 and shape [99999999999999999999, 6]"),
        ("'<f8'", "(4, 6", "scores.npy is unreadable"),
    ],
)
def test_a_crafted_npy_header_is_refused_before_numpy_maps_it(binary, source, descr, shape, words):
    """numpy trusts an .npy header's dtype and shape when it maps the file: a negative shape of an empty dtype
    killed the decoder (SIGFPE), a huge one was an OverflowError's traceback, a cut one a SyntaxError's."""
    folder = table_folder(binary, "reordering")
    text = "{'descr': %s, 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    text = text.ljust(117) + "\n"
    (folder / "scores.npy").write_bytes(
        b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode() + bytes(192)
    )
    recompute_checksum(folder, "scores")
    one_line_error(run_pysmt("decode", "-c", binary, "-i", source), words)


def edit_header(folder: Path, checksum: bool = False, **fields: object) -> None:
    """Set ``fields`` in a binary table's header.json, as a hand would (``checksum``: and recompute the header's
    checksum, as a hostile writer would)."""
    header = {**json.loads((folder / HEADER).read_text(encoding="utf-8")), **fields}
    if checksum:
        header[HEADER_CHECKSUM] = header_checksum(header)
    (folder / HEADER).write_text(json.dumps(header), encoding="utf-8")


@pytest.mark.parametrize("value, checksum", [(0, False), (1, False), (-1, False), (3, True), ("2", True)])
def test_a_max_source_length_that_is_not_the_tables_is_refused(binary, source, value, checksum):
    """The decoder looks up no source phrase longer than max_source_length: 1 (or 0, -1) silently dropped every
    two-word phrase of the toy table. It must be the longest of the arrays' source phrases (two words), also
    under a header checksum that matches."""
    folder = table_folder(binary, "phrase-table")
    edit_header(folder, checksum, max_source_length=value)
    line = one_line_error(run_pysmt("decode", "-c", binary, "-i", source))
    assert line == (
        f"Error: {folder}: not a usable binary phrase-table (header.json gives max_source_length "
        f"{json.dumps(value)}, but its longest source phrase has 2 words); rebuild it with `pysmt binarize`"
    )


@pytest.mark.parametrize("table, field, value", [("phrase-table", "log_scores", True), ("reordering", "source", {})])
def test_a_header_field_changed_by_hand_is_refused_by_its_checksum(binary, source, table, field, value):
    """What the arrays cannot confirm (a setting, what the table was made from) is covered by the header's own
    checksum; the feature is told to read log-scores too, so that only the checksum can refuse it."""
    folder = table_folder(binary, table)
    edit_header(folder, **{field: value})
    params = ["--param", "PhraseDictionaryMemory0.log-scores=true"] if field == "log_scores" else []
    kind = "phrase-table" if table == "phrase-table" else "reordering-table"
    line = one_line_error(run_pysmt("decode", "-c", binary, "-i", source, *params))
    assert line == (
        f"Error: {folder}: not a usable binary {kind} (header.json does not match its checksum); "
        "rebuild it with `pysmt binarize`"
    )


def test_a_header_nested_thousands_deep_is_one_line(binary, source):
    folder = table_folder(binary, "phrase-table")
    (folder / HEADER).write_text("[" * 100_000, encoding="utf-8")
    line = one_line_error(run_pysmt("decode", "-c", binary, "-i", source))
    assert line == (
        f"Error: {binary}: feature PhraseDictionaryMemory0: {folder}: not a usable binary table (header.json is "
        "unreadable: nested too deeply: line 1 column 1 (char 0)); rebuild it with `pysmt binarize`"
    )


def test_a_header_whose_counts_fit_crafted_arrays_is_refused(binary):
    """Counts of -1 strings beside an empty offsets array (both as the header says) are one line, not an
    IndexError."""
    folder = table_folder(binary, "reordering")
    np.save(folder / "key_offsets.npy", np.zeros(0, np.int64))
    header = json.loads((folder / HEADER).read_text(encoding="utf-8"))
    header["counts"]["keys"] = -1
    header["arrays"]["key_offsets"]["shape"] = [0]
    (folder / HEADER).write_text(json.dumps(header), encoding="utf-8")
    recompute_checksum(folder, "key_offsets")
    one_line_refusal("key_offsets.npy does not run from 0", ReorderingTable, folder, num_scores=6)


@pytest.mark.parametrize(
    "table, array",
    [("reordering", "key_offsets"), *slow_cases(("phrase-table", "source_slots"), ("phrase-table", "vocab_blob"))],
)
def test_a_damaged_binary_table_is_refused_by_its_checksum(binary, source, table, array):
    """Issue 36: 256 bytes overwritten in key_offsets.npy or source_slots.npy crashed the decoder (exit 139);
    in vocab_blob.npy they changed its translations. Now: exit 1, one line naming the array."""
    folder = table_folder(binary, table)
    overwrite_middle(folder / f"{array}.npy")
    proc = run_pysmt("decode", "-c", binary, "-i", source)
    one_line_error(proc, str(folder), f"{array}.npy does not match its checksum")  # one line, no traceback
    assert proc.stdout == ""


@pytest.mark.parametrize("kind", ["phrase-table", "reordering"])
def test_every_array_is_checksummed(binary, kind):
    folder = table_folder(binary, kind)
    names = ARRAYS[PHRASE_TABLE if kind == "phrase-table" else REORDERING_TABLE]
    header = json.loads((folder / HEADER).read_text(encoding="utf-8"))
    assert {name: entry["crc32"] for name, entry in header["arrays"].items()} == {
        name: f"{zlib.crc32((folder / f'{name}.npy').read_bytes()):08x}" for name in names
    }
    load = (lambda: PhraseTable(folder)) if kind == "phrase-table" else (lambda: ReorderingTable(folder, num_scores=6))
    for name in names:
        original = (folder / f"{name}.npy").read_bytes()
        overwrite_middle(folder / f"{name}.npy", size=1)
        one_line_refusal(f"{name}.npy does not match its checksum", load)
        (folder / f"{name}.npy").write_bytes(original)
    load()


def test_a_table_without_checksums_loads_with_one_warning(binary, source, capsys, monkeypatch):
    """Tables binarized before checksums (format version 1 without "crc32") are read, their ids and offsets
    checked, with a warning once per table (and process)."""
    folders = [table_folder(binary, "phrase-table"), table_folder(binary, "reordering")]
    for folder in folders:
        header = json.loads((folder / HEADER).read_text(encoding="utf-8"))
        for entry in header["arrays"].values():
            del entry["crc32"]
        del header[HEADER_CHECKSUM]  # nor had their headers one
        (folder / HEADER).write_text(json.dumps(header), encoding="utf-8")
    decoded = run_pysmt("decode", "-c", binary, "-i", source)
    assert decoded.returncode == 0 and decoded.stdout.strip()
    warnings = [line for line in decoded.stderr.splitlines() if line.startswith("pysmt: warning: ")]
    assert len(warnings) == 2 and all("binarized without checksums" in line for line in warnings), warnings
    assert [any(str(folder) in line for line in warnings) for folder in folders] == [True, True]
    capsys.readouterr()
    # the decode's pass may be recorded in the checked-tables cache (when it finished 2 s after the tables were
    # written: a loaded machine), which would skip the checks, the warning among them: this process checks afresh
    monkeypatch.setattr(binary_checks, "record_path", lambda folder: None)
    for _ in range(2):
        PhraseTable(folders[0])
    assert capsys.readouterr().err.count("binarized without checksums") == 1
    damage(binary, "phrase-table", "target_ids", lambda a: a.__setitem__(0, 99))  # still checked
    one_line_refusal("target_ids.npy holds ids from 0 to 99", PhraseTable, folders[0])


def test_a_check_is_recorded_and_made_again_when_a_file_changes(binary, check_records, monkeypatch):
    """The first load reads every array (checksums, ids); later loads of the same files do not; a table
    written to since (damaged) is checked again. The record is in the user's cache, not the table's folder."""
    folder = table_folder(binary, "phrase-table")
    before = sorted(folder.iterdir())
    checksummed, real = [], binary_checks.file_checksum
    monkeypatch.setattr(binary_checks, "file_checksum", lambda path: checksummed.append(path.name) or real(path))
    PhraseTable(folder)
    assert len(checksummed) == len(ARRAYS[PHRASE_TABLE]) and not check_records.exists()  # just written: not recorded
    monkeypatch.setattr(binary_checks, "RECENT_NS", 0)
    PhraseTable(folder)
    assert len(checksummed) == 2 * len(ARRAYS[PHRASE_TABLE]) and len(list(check_records.iterdir())) == 1
    checksummed.clear()
    for _ in range(2):
        assert PhraseTable(folder).lookup("a b")[0].target == ("x", "y")
    assert checksummed == [] and sorted(folder.iterdir()) == before  # recorded; nothing written beside the table
    overwrite_middle(folder / "vocab_blob.npy")
    one_line_refusal("vocab_blob.npy does not match its checksum", PhraseTable, folder)
    one_line_refusal("vocab_blob.npy does not match its checksum", PhraseTable, folder)


def test_tables_load_where_no_check_can_be_recorded(binary, monkeypatch, tmp_path):
    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "not-a-folder"))
    monkeypatch.setattr(binary_checks, "RECENT_NS", 0)
    folder = table_folder(binary, "phrase-table")
    for _ in range(2):
        assert len(PhraseTable(folder)) == 6
    overwrite_middle(folder / "scores.npy")
    one_line_refusal("scores.npy does not match its checksum", PhraseTable, folder)


#: Run in its own process by the test below, so that a crash fails the test instead of ending pytest: damages
#: one array of a binary system's tables per trial (its .npy header's text, random bytes of its values, or one
#: value set to an edge: -1, the count, the dtype's extremes, nan...), writes its checksum to match, and loads
#: and decodes (every third trial with the Python engine too).
FUZZ = r"""
import json, random, sys, zlib
from pathlib import Path
import numpy as np
from pysmt.config_files import load_config
from pysmt.decoder import Decoder
from pysmt.errors import PysmtError
from pysmt.models.binary_checks import HEADER_CHECKSUM, header_checksum

config, trials = Path(sys.argv[1]), int(sys.argv[2])
folders = [p for p in config.parent.iterdir() if p.is_dir()]
original = {p: p.read_bytes() for folder in folders for p in folder.iterdir()}
arrays = sorted(p for p in original if p.suffix == ".npy")
refused = decoded = 0
for trial in range(trials):
    rng = random.Random(trial)
    path = rng.choice(arrays)
    values = np.load(path).copy()
    way = rng.random()
    if way < 0.2:  # the .npy header's text: its dtype, shape, order
        data = bytearray(path.read_bytes())
        for _ in range(rng.randint(1, 4)):
            byte = rng.choice(b"0123456789(),'<>|uifbVOTF -") if rng.random() < 0.7 else rng.randrange(256)
            data[rng.randrange(10, 128)] = byte
        path.write_bytes(bytes(data))
    elif way < 0.6 and values.size:  # random bytes of the values
        flat = values.reshape(-1).view(np.uint8)
        for _ in range(rng.randint(1, 8)):
            flat[rng.randrange(flat.size)] = rng.randrange(256)
    elif values.size:  # one value at an edge
        info = np.finfo(values.dtype) if values.dtype.kind == "f" else np.iinfo(values.dtype)
        n = values.size
        edges = [-1, 0, 1, n - 1, n, n + 1, 2 * n, int(info.max), int(info.min), rng.randrange(-n, 3 * n)]
        if values.dtype.kind == "f":
            edges += [np.nan, np.inf, -np.inf]
        edge = rng.choice(edges)
        values.reshape(-1)[rng.randrange(n)] = np.array(edge).astype(values.dtype)
    if way >= 0.2:
        np.save(path, values)
    header = json.loads((path.parent / "header.json").read_text())
    header["arrays"][path.stem]["crc32"] = f"{zlib.crc32(path.read_bytes()):08x}"
    header[HEADER_CHECKSUM] = header_checksum(header)
    (path.parent / "header.json").write_text(json.dumps(header))
    print(trial, path.parent.name, path.name, flush=True)
    try:
        for engine in ("auto", "python") if trial % 3 == 0 else ("auto",):
            decoder = Decoder(load_config(config), engine=engine)
            for k, line in enumerate(["a b c", "c b a", "b c a b", "日本 é zèbre a", "ab a b zèbre"]):
                decoder.translate(line, k, nbest_size=5)
        decoded += 1
    except PysmtError as err:
        assert "\n" not in str(err), err
        refused += 1
    for p, data in original.items():
        p.write_bytes(data)
print(json.dumps({"refused": refused, "decoded": decoded}))
"""


@pytest.mark.slow  # 150 trials
def test_random_damage_with_matching_checksums_never_crashes_the_decoder(tiny, tmp_path):
    """Any bytes in any array of a table whose header is valid: refused in one line or decoded, never a crash."""
    _, out = tiny
    script = tmp_path / "fuzz.py"
    script.write_text(FUZZ, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(out), "150"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )
    last = done.stdout.splitlines()[-1] if done.stdout else ""
    assert done.returncode == 0, f"exit {done.returncode} in trial {last}: {done.stderr[-2000:]}"
    counts = json.loads(last)
    assert counts["refused"] > 40 and counts["decoded"] > 10, counts  # both ways out were taken


def test_stored_scores_are_written_resumably_and_read_back(tiny):
    """A feature's scores of a binary phrase table: written chunk by chunk, resumed after a stop when made
    by the same, started again when made by something else, read back memory-mapped; a stored file that
    does not fit the table is refused naming it."""
    _, out = tiny
    folder = next(Path(out).parent.glob("*phrase-table*"))
    entries = len(PhraseTable(folder, log_scores=False))
    values = np.arange(entries * 2, dtype=np.float32).reshape(entries, 2)
    assert stored_scores(folder) == {}
    writer = ScoreWriter(folder, "mine", 2, {"model": "a"})
    writer.write(values[:3])
    assert stored_scores(folder) == {}  # nothing before finish
    again = ScoreWriter(folder, "mine", 2, {"model": "a"})
    assert again.done == 3
    assert ScoreWriter(folder, "mine", 2, {"model": "b"}).done == 0  # made otherwise: from the start
    resumed = ScoreWriter(folder, "mine", 2, {"model": "a"})
    assert resumed.done == 0  # the "b" writer took the partial file over
    for first in range(0, entries, 4):
        resumed.write(values[first : first + 4])
    path = resumed.finish()
    ((found, record),) = stored_scores(folder).values()
    assert path == folder / "stored" / "mine.npy" and np.array_equal(found, values)
    assert record == {"entries": entries, "scores": 2, "made_by": {"model": "a"}}
    assert sorted(p.name for p in (folder / "stored").iterdir()) == ["mine.json", "mine.npy"]
    np.save(folder / "stored" / "mine.npy", values[:-1])
    with pytest.raises(PysmtError, match=r"mine.npy: stored scores of shape .* store them again"):
        stored_scores(folder)


def test_a_binary_table_of_the_wrong_kind_is_refused_before_any_table_loads(tiny, tmp_path):
    """A binary table's kind and settings are in its header: checked in milliseconds, before any table loads
    (here a text phrase table that would fail to load)."""
    _, binary = tiny
    ini = write_moses_system(tmp_path / "other", phrases="a ||| x ||| nan 0.5 ||| 0-0\n")
    phrases = Path(load_config(binary).feature("PhraseDictionaryMemory0").params["path"])
    config = load_config(ini).with_table_paths({2: phrases})  # the reordering model's path: a phrase table
    with pytest.raises(PysmtError, match=f"{phrases}: not a usable binary reordering-table .it holds a 'phrase-table'"):
        Decoder(config)
