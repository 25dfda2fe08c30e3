"""The helpers for plugin tests (pysmt/testing.py): a plugin decodes without being installed.

(``toy_decoder``'s ``params`` are tested with the registry's, in features/test_registry.py.)
"""

from __future__ import annotations

import pytest

from pysmt.errors import PysmtError
from pysmt.testing import registered, toy_decoder, toy_options


def test_testing_helpers_decode_a_plugin_without_installing_it(tmp_path):
    from pysmt.testing import write_toy_system
    from pysmt_example_features import RepeatedWordFeature

    system = write_toy_system(tmp_path)
    # a name of its own: the example plugin may be installed too, under "repeated-word"
    with registered(unlisted_repeated_word=RepeatedWordFeature):
        decoder = toy_decoder(system, ["unlisted-repeated-word"], weights={"RepeatedWord0": [2.0]}, search="normal")
        options = toy_options(decoder, "a b c")
        assert {(o.start, o.end, o.target) for o in options.options} >= {(0, 1, ("x",)), (1, 3, ("z", "x"))}
        best = decoder.translate("a a", nbest_size=5).hypotheses
        labels = {name: lo for name, lo, _ in decoder.nbest_labels()}
        assert [c.scores[labels["RepeatedWord0"]] for c in best if c.words == ["x", "x"]] == [-1.0]
    with pytest.raises(PysmtError, match="unknown feature 'unlisted-repeated-word'"):
        toy_decoder(system, ["unlisted-repeated-word"])  # registered only inside the with block


def test_registered_for_commands_writes_an_entry_point_record_and_refuses_a_class_no_process_can_import(tmp_path):
    from pysmt.testing import TargetWordsFeature, registered_for_commands

    env = registered_for_commands(tmp_path / "plugins", target_words=TargetWordsFeature)
    assert env["PYTHONPATH"].split(":")[0] == str((tmp_path / "plugins").resolve())
    record = tmp_path / "plugins" / "pysmt_test_plugins-0.dist-info" / "entry_points.txt"
    assert record.read_text() == "[pysmt.features]\ntarget-words = pysmt.testing:TargetWordsFeature\n"

    class Local(TargetWordsFeature):
        pass

    with pytest.raises(ValueError, match="cannot be imported by another process: define it in a module"):
        registered_for_commands(tmp_path / "other", local=Local)
