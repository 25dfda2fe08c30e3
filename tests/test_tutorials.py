"""The tutorials' commands (and the README's train, tune, decode), run as a reader runs them (issue 50:
"the tutorials' commands are run by tests on small data, so the docs cannot drift from the code").

Every ```bash block of a tutorial page runs, in the page's order, as one ``bash -euo pipefail`` script in a
fresh folder (a reader's shell: a block's ``cd`` and variables hold for the next), with ``DATA`` set to
``../shared/data`` (``PORT``: a free port, for a page that serves) and this environment's ``pysmt`` first on
``PATH``; so every command must exit 0. A
```text block after a ```bash block (before the next) is what the page says its commands print: each of its lines must
appear in their output. A block after a ``<!-- tutorial-test: skip (why) -->`` line is not run: the set-up
(the test runs inside a set-up checkout) and examples that need other systems or hours. The pages build on
each other (tuning, serving and the neural features use the first system), so a page runs after the pages
before it.
"""

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SKIP = "<!-- tutorial-test: skip"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    """A ```bash block of a page, and the lines the page says its commands print (the ```text blocks after it)."""

    commands: str
    prints: tuple[str, ...]


def page_blocks(page: str) -> list[Block]:
    """The blocks of ``docs/tutorials/PAGE`` that a reader runs, in the page's order."""
    text = (DOCS / "tutorials" / page).read_text(encoding="utf-8")
    blocks: list[Block] = []
    skipped = False
    for fence in FENCE.finditer(text):
        language, body = fence.group(1), fence.group(2)
        if language == "bash":
            skipped = text[: fence.start()].rstrip().rsplit("\n", 1)[-1].startswith(SKIP)
            if not skipped:
                blocks.append(Block(body, ()))
        elif language == "text" and blocks and not skipped:
            said = tuple(line for line in body.splitlines() if line.strip())
            blocks[-1] = Block(blocks[-1].commands, blocks[-1].prints + said)
    return blocks


def run_pages(pages: list[str], folder: Path, shared: Path, **env: str) -> str:
    """Run the pages' blocks as one script in ``folder``; returns stdout and stderr together. Fails the test,
    with the output, when a command fails or a promised line is not printed."""
    blocks = [block for page in pages for block in page_blocks(page)]
    assert blocks, f"no ```bash blocks in {pages}"
    return run_blocks(blocks, folder, shared, str(pages), **env)


def run_blocks(blocks: list[Block], folder: Path, shared: Path, where: str, **env: str) -> str:
    """Run the blocks as one script in ``folder``, with ``env`` added to the environment (see :func:`run_pages`).
    The script runs in a process group of its own, killed at the end whatever happened, so a server that a page
    starts in the background never outlives the test."""
    script = "\n".join(block.commands for block in blocks)
    env = {
        **os.environ,
        "DATA": str(shared),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        **env,
    }
    # The output goes to a file, not a pipe: a server left running would hold a pipe open, and reading it wait.
    with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
        process = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=folder,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            process.wait(timeout=600)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        log.seek(0)
        output = log.read()
    assert process.returncode == 0, f"the commands of {where} failed (exit status {process.returncode}):\n{output}"
    for block in blocks:
        for line in block.prints:
            assert line in output, f"the page says the commands print {line!r}; they printed:\n{output}"
    return output


def free_port() -> int:
    """A port that nothing listens on at 127.0.0.1 now, for a page's server."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_the_pages_have_their_blocks():
    """The parser finds what a reader runs: the set-up is skipped, the commands are not."""
    first = page_blocks("first-system.md")
    assert not any("setup.sh" in block.commands for block in first)
    assert any("pysmt train" in block.commands for block in first)
    train = next(block for block in first if "pysmt train" in block.commands)
    assert train.prints == ("pysmt train: system in system (decode with: pysmt decode -c system/pysmt.toml)",)
    tuning = page_blocks("tuning.md")
    assert [block.commands.split()[:2] for block in tuning] == [["pysmt", "tune"]]


def test_first_system(tmp_path, shared_data):
    """Your first system: a system trained from 2,000 pairs of Multi30k, the test set translated and scored."""
    output = run_pages(["first-system.md"], tmp_path, shared_data())
    work = tmp_path / "first-system"
    assert (work / "system" / "pysmt.toml").is_file()
    assert (work / "system" / "phrase-table.bin").is_dir()
    assert (work / "system" / "reordering-table.wbe-msd-bidirectional-fe.bin").is_dir()
    translated = lines(work / "test.out.fr")
    assert len(translated) == len(lines(work / "test.en")) == 100
    assert all(line.strip() for line in translated)
    assert re.search(r"^test\.out\.fr\tBLEU \d+\.\d+\tchrF \d+\.\d+$", output, re.MULTILINE)


def test_tuning(tmp_path, shared_data):
    """Tuning: the first system tuned on 100 dev sentences, the tuned system decoded and compared."""
    output = run_pages(["first-system.md", "tuning.md"], tmp_path, shared_data())
    work = tmp_path / "first-system"
    assert (work / "tune" / "pysmt.toml").is_file()
    summary = lines(work / "tune" / "summary.tsv")
    assert 2 <= len(summary) <= 4  # a header, then a row per iteration (at most 3)
    assert len(lines(work / "test.tuned.fr")) == 100
    assert re.search(r"^test\.tuned\.fr\tBLEU \d+\.\d+\tchrF \d+\.\d+\tp\(BLEU\) ", output, re.MULTILINE)


def test_the_readmes_shortest_path(tmp_path, shared_data):
    """The README's train, tune, decode: run where the README runs it, a checkout with ``../shared/data`` beside
    it (here a link to the data), with the defaults it shows (up to 25 tuning iterations: about 1.5 min)."""
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(shared_data(), target_is_directory=True)
    checkout = tmp_path / "pysmt"
    checkout.mkdir()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    path = [body for language, body in FENCE.findall(readme) if language == "bash" and "pysmt train" in body]
    assert len(path) == 1, "the README shows one train-tune-decode block"
    output = run_blocks([Block(path[0], ())], checkout, shared_data(), "the README")
    work = checkout / "first-system"
    assert (work / "tune" / "pysmt.toml").is_file()
    assert len(lines(work / "test.out.fr")) == 100
    assert re.search(r"^test\.out\.fr\tBLEU \d+\.\d+\tchrF \d+\.\d+$", output, re.MULTILINE)


def test_moses_users(tmp_path, shared_data):
    """For Moses users: Moses' regression-test system decoded with pysmt's and Moses' options, binarized, and
    decoded again to the same translations."""
    run_pages(["moses-users.md"], tmp_path, shared_data())
    work = tmp_path / "moses-users"
    inputs = lines(shared_data() / "fixtures" / "moses" / "lexicalized-reordering" / "to-translate.txt")
    assert len(lines(work / "output.tok")) == len(inputs) == 5
    assert {line.split(" ||| ")[0] for line in lines(work / "nbest.txt")} == {str(n) for n in range(5)}
    assert (work / "system-bin" / "pysmt.toml").is_file()


def test_serving(tmp_path, shared_data):
    """Serving: the first system served on 127.0.0.1 (a free port), asked through XML-RPC and JSON, and
    stopped; whatever happens, the test kills the page's process group, the server's included."""
    port = free_port()
    output = run_pages(["first-system.md", "serving.md"], tmp_path, shared_data(), PORT=str(port))
    log = (tmp_path / "first-system" / "serve.log").read_text(encoding="utf-8")
    assert f"listening on http://127.0.0.1:{port}:" in log
    assert re.search(r"^\{'text': '\S", output, re.MULTILINE)  # XML-RPC: a translation
    assert "'word-align': [{'source-word': " in output and "'nbest': [{'hyp': '" in output  # with its details
    assert '[[{"src": "A man is sleeping.", "tgt": "' in output  # JSON
    assert '"model_id": 0' in output


def test_neural_features(tmp_path, shared_data):
    """Neural features, the quick try: the RNN, CSLM and sentence models trained for 20 updates on the first
    system, tuned in one iteration each, the test set decoded and compared (about two minutes)."""
    output = run_pages(["first-system.md", "neural-features.md"], tmp_path, shared_data())
    work = tmp_path / "first-system"
    for model in ("system/rnn", "system/cslm", "tune-neural/sentence"):
        assert any((work / model).iterdir()), model
    assert (work / "rerank" / "pysmt.toml").is_file()
    assert len(lines(work / "test.neural.fr")) == 100
    assert re.search(r"^test\.neural\.fr\tBLEU \d+\.\d+\tchrF \d+\.\d+\tp\(BLEU\) ", output, re.MULTILINE)


def test_cluster(tmp_path, shared_data):
    """On a cluster, on one machine: the first system decoded on a throw-away Ray instance (--cluster local) gives
    the local run's translations, line for line."""
    run_pages(["first-system.md", "cluster.md"], tmp_path, shared_data())
    work = tmp_path / "first-system"
    assert lines(work / "test.cluster.fr") == lines(work / "test.out.fr") and len(lines(work / "test.out.fr")) == 100


@pytest.mark.parametrize(
    "page", ["first-system.md", "tuning.md", "moses-users.md", "serving.md", "neural-features.md", "cluster.md"]
)
def test_no_block_is_left_unmarked(page):
    """Every ```bash block runs or says why not: a block meant as an example is marked, never silently run."""
    text = (DOCS / "tutorials" / page).read_text(encoding="utf-8")
    bash = text.count("```bash\n")
    assert bash == len(page_blocks(page)) + text.count(SKIP)
