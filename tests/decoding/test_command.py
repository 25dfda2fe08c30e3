"""`pysmt decode` callable from Python (pysmt.decoding.command), told by a DecodeOptions, and the one mapping of a
command's system options to a SystemRecipe."""

import pytest

from pysmt.config import SearchOverrides
from pysmt.decoding.command import decode
from pysmt.decoding.options import DecodeOptions, SystemOptions, system_recipe
from pysmt.testing import run_pysmt


def test_decode_from_python_writes_what_the_command_writes(tiny_system, dev, tmp_path):
    source, _ = dev
    ours, theirs = tmp_path / "ours.nbest", tmp_path / "theirs.nbest"
    decode(
        DecodeOptions(
            system=SystemOptions(config=tiny_system), input_path=str(source), nbest_path=str(ours), nbest_size=3
        )
    )
    run_pysmt("decode", "-c", tiny_system, "-i", source, "--nbest", theirs, "--nbest-size", "3", "-q")
    assert ours.read_text() == theirs.read_text() and ours.read_text()


def test_a_commands_search_and_xml_input_become_the_recipes_own():
    recipe = system_recipe(
        "moses.ini", ["wp"], ["wp.x=1"], None, search="cube", overrides=SearchOverrides(), xml_input="exclusive"
    )
    assert (recipe.algorithm, recipe.xml_input, recipe.features, recipe.params) == (
        "cube",
        "exclusive",
        ("wp",),
        ("wp.x=1",),
    )
    with pytest.raises(ValueError, match="none of the option's choices"):
        system_recipe("moses.ini", [], [], None, search="beam", overrides=SearchOverrides(), xml_input=None)
