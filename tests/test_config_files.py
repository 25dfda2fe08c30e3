"""Reading system configs (pysmt/config_files.py): moses.ini and pysmt.toml produce the same SystemConfig;
errors name the file and line, and nothing a user wrote is silently ignored."""

import pytest

from pysmt.config import SearchConfig
from pysmt.config_files import load_config, read_weights_file, write_toml
from pysmt.errors import PysmtError
from pysmt.testing import one_line_error, run_pysmt, write_toy_system
from tests.helpers import write_moses_system


def test_moses_ini_features_weights_and_defaults(tiny_system):
    config = load_config(tiny_system)
    assert [(s.type, s.name) for s in config.features] == [
        ("kenlm", "KENLM0"),
        ("distortion", "Distortion0"),
        ("lexical-reordering", "LexicalReordering0"),
        ("word-penalty", "WordPenalty0"),
        ("unknown-word-penalty", "UnknownWordPenalty0"),
        ("phrase-table", "PhraseDictionaryMemory0"),
    ]
    assert config.feature("WordPenalty0").weights == [-1.0]
    assert config.feature("UnknownWordPenalty0").weights is None  # Moses: not tuned, default weight 1
    assert config.feature("KENLM0").params["path"] == str(tiny_system.parent / "lm.arpa")
    assert config.search == SearchConfig()  # Moses' defaults: normal search, stack 200, 1e-5, limit 6


def test_moses_ini_search_sections_and_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("MODELS", str(tmp_path / "system"))
    ini = write_moses_system(
        tmp_path / "system",
        extra="[stack]\n50\n[beam-threshold]\n0.01\n"
        "[search-algorithm]\n1\n[cube-pruning-pop-limit]\n300\n[distortion-limit]\n-1\n",
    )
    ini.write_text(ini.read_text().replace("path=lm.arpa", "path=${MODELS}/lm.arpa"))
    config = load_config(ini)
    assert config.search == SearchConfig("cube", 50, 0.01, 300, -1, 20, 32)
    assert config.feature("KENLM0").params["path"] == str(tmp_path / "system" / "lm.arpa")


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda t: t.replace("Distortion\n", "Distortion\nPhraseDictionaryCompact path=x\n"),
            "line 4: feature PhraseDictionaryCompact is not supported",
        ),
        (
            lambda t: t.replace("KENLM order=2", "KENLM order=2 path=${NO_SUCH_VARIABLE}"),
            "line 2: environment variable",
        ),
        (lambda t: t.replace("WordPenalty0= -1", "WordPenalty0 -1"), "expected 'FeatureName= w1 w2 ...'"),
        (lambda t: t.replace("WordPenalty0= -1", "WordPenalty7= -1"), "unknown feature.*WordPenalty7"),
        (lambda t: t + "[stack]\nlots\n", r"\[stack\] must be a number"),
    ],
)
def test_moses_ini_errors(tiny_system, edit, message):
    tiny_system.write_text(edit(tiny_system.read_text()))
    with pytest.raises(PysmtError, match=message) as err:
        load_config(tiny_system)
    assert str(tiny_system) in str(err.value)


def test_toml_round_trip_keeps_everything(tiny_system, tmp_path):
    config = load_config(tiny_system)
    out = tmp_path / "elsewhere" / "pysmt.toml"
    write_toml(config, out)
    again = load_config(out)
    assert again.search == config.search
    assert [(s.type, s.name, s.params, s.weights) for s in again.features] == [
        (s.type, s.name, s.params, s.weights) for s in config.features
    ]
    assert "../system/lm.arpa" in out.read_text()  # paths stay relative to the config


def test_toml_default_names_and_errors(tmp_path):
    path = tmp_path / "pysmt.toml"
    for name in ("lm.arpa", "lm2.arpa"):
        (tmp_path / name).write_text("")
    path.write_text(
        '[search]\nalgorithm = "cube"\n[[feature]]\ntype = "kenlm"\npath = "lm.arpa"\n'
        '[[feature]]\ntype = "kenlm"\npath = "lm2.arpa"\n[[feature]]\ntype = "word-penalty"\n'
    )
    config = load_config(path)
    assert [s.name for s in config.features] == ["LM0", "LM1", "WordPenalty0"]
    path.write_text('[search]\nstack_size = 3\n[[feature]]\ntype = "kenlm"\n')
    with pytest.raises(PysmtError, match="unknown \\[search\\] key"):
        load_config(path)
    path.write_text("[[feature]\n")
    with pytest.raises(PysmtError, match="not valid TOML"):
        load_config(path)
    with pytest.raises(PysmtError, match="no such file"):
        load_config(tmp_path / "missing.toml")


def test_weights_file_overrides(tiny_system, tmp_path):
    weights = tmp_path / "weights.txt"
    weights.write_text("[weight]\nWordPenalty0= 0.25\nKENLM0= 1 # comment\n")
    config = load_config(tiny_system).with_weights(read_weights_file(weights), str(weights))
    assert config.feature("WordPenalty0").weights == [0.25] and config.feature("KENLM0").weights == [1.0]
    weights.write_text("Nope0= 1\n")
    with pytest.raises(PysmtError, match="unknown feature.*Nope0"):
        load_config(tiny_system).with_weights(read_weights_file(weights), str(weights))


# -- nothing a user wrote is silently ignored ---------------------------------------------------


@pytest.fixture
def source(tmp_path):
    """One line (conftest's source has two): these cases were written with one."""
    path = tmp_path / "in.txt"
    path.write_text("a b c\n")
    return path


def test_a_weights_file_naming_a_feature_twice_is_refused(tmp_path, source):
    ini = write_toy_system(tmp_path / "system")
    weights = tmp_path / "weights.txt"
    weights.write_text("WordPenalty0= -1\nKENLM0= 0.5\nWordPenalty0= 2\n")
    one_line_error(
        run_pysmt("decode", "-c", ini, "-i", source, "--weights", weights),
        f"{weights}, line 3: WordPenalty0 has weights already (line 1)",
    )


def test_a_moses_ini_naming_a_weight_twice_is_refused(tmp_path, source):
    ini = write_toy_system(tmp_path / "system", extra="WordPenalty0= 3\n")
    one_line_error(run_pysmt("decode", "-c", ini, "-i", source), "WordPenalty0 has weights already")


@pytest.mark.parametrize(
    "section, advice", [("threads", "--threads N"), ("n-best-list", "--nbest FILE")]
)  # [xml-input] is read: tests/test_xml_input.py
def test_moses_run_sections_are_not_read_and_say_so(tmp_path, source, section, advice):
    ini = write_toy_system(tmp_path / "system", extra=f"\n[{section}]\n4\n")
    proc = run_pysmt("decode", "-c", ini, "-i", source)
    assert proc.returncode == 0
    assert f"[{section}] is not read: give `pysmt decode {advice}" in proc.stderr


def test_an_old_style_weight_section_in_a_new_style_ini_is_refused(tmp_path, source):
    ini = write_toy_system(tmp_path / "system", extra="\n[weight-l]\n0.5\n")
    one_line_error(
        run_pysmt("decode", "-c", ini, "-i", source), "[weight-l] is an old-style weight section", "[weight]"
    )


# -- every section and key of a pysmt.toml is checked, none ignored ------------------------------------

WORD_PENALTY = '[[feature]]\ntype = "word-penalty"\n'
SEARCH_KEYS = (
    "algorithm, beam-threshold, distortion-limit, max-phrase-length, max-sentence-length, pop-limit, pops-per-round, "
    "rescore-size, stack-size"
)


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "[serach]\nstack-size = 3\n" + WORD_PENALTY,
            "unknown section [serach] (did you mean [search]?); a pysmt.toml has [search], [processing], [[feature]]",
        ),
        (
            '[[feeture]]\ntype = "word-penalty"\n',
            "unknown section [[feeture]] (did you mean [[feature]]?); a pysmt.toml has [search], [processing], "
            "[[feature]]",
        ),
        ("stack-size = 3\n" + WORD_PENALTY, "key 'stack-size' is outside every section (it belongs in [search])"),
        (
            "[search]\nstak-size = 3\n" + WORD_PENALTY,
            f"unknown [search] key 'stak-size' (did you mean 'stack-size'?); known: {SEARCH_KEYS}",
        ),
        (
            '[processing]\nsource-langage = "en"\n' + WORD_PENALTY,
            "unknown [processing] key 'source-langage' (did you mean 'source-language'?); known: source-language, "
            "target-language, tokenize, truecase-source, truecase-target",
        ),
        ('[feature]\ntype = "word-penalty"\n', "[feature] must be written [[feature]], one such section per feature"),
        ("search = 3\n" + WORD_PENALTY, "[search] must be a table of settings"),
    ],
)
def test_a_misspelt_section_or_key_in_pysmt_toml_is_one_line_with_a_suggestion(tmp_path, source, text, message):
    """A setting under a misspelt name used to be dropped without a word (exit 0, the default used)."""
    path = tmp_path / "pysmt.toml"
    path.write_text(text)
    line = one_line_error(run_pysmt("decode", "-c", path, "-i", source))
    assert line == f"Error: {path}: {message}"


def test_a_misspelt_feature_type_names_the_file_and_the_nearest_type(tmp_path):
    path = tmp_path / "pysmt.toml"
    path.write_text('[[feature]]\ntype = "word-penalti"\n')
    with pytest.raises(PysmtError) as err:
        load_config(path)
    assert str(err.value).startswith(
        f"{path}: [[feature]] number 1: unknown feature 'word-penalti' (did you mean 'word-penalty'?); available: "
    )


@pytest.mark.parametrize("nested", ["x = " + "[" * 5000 + "]" * 5000, "x = " + "{a = " * 5000 + "1" + "}" * 5000])
def test_a_pysmt_toml_nested_thousands_deep_is_one_line(tmp_path, source, nested):
    """tomllib recurses once per level: a RecursionError with thousands of lines of traceback before."""
    path = tmp_path / "pysmt.toml"
    path.write_text(nested + "\n" + WORD_PENALTY)
    line = one_line_error(run_pysmt("decode", "-c", path, "-i", source))
    assert line == f"Error: {path}: not valid TOML (nested too deeply for pysmt to read)"


def test_an_unknown_moses_ini_section_is_named_with_the_nearest_section_pysmt_reads(tmp_path, source):
    """Moses' own sections that pysmt does not read stay a warning (a Moses system must load), but a misspelt one
    that pysmt reads says which it may be: its setting is not applied."""
    ini = write_toy_system(tmp_path / "system", extra="\n[distortion-limt]\n3\n")
    proc = run_pysmt("decode", "-c", ini, "-i", source)
    assert proc.returncode == 0
    assert f"pysmt: {ini}: ignoring section [distortion-limt] (did you mean [distortion-limit]?)" in proc.stderr
