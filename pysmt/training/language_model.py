"""N-gram language models with KenLM's ``lmplz`` (modified Kneser-Ney) and ``build_binary``.

The tools are built by ``scripts/build-kenlm-tools.sh`` (run by ``setup.sh``) into
``third_party/kenlm/bin``; ``PYSMT_KENLM_BIN`` or the PATH can point elsewhere.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import IO, cast

from pysmt.errors import PysmtError
from pysmt.files.outputs import check_outputs
from pysmt.files.textio import atomic_path, require_file, scratch_folder
from pysmt.running.processes import ChildProcess

ROOT = Path(__file__).resolve().parents[2]


def kenlm_tool(name: str) -> str:
    """The path of ``lmplz`` or ``build_binary``, or an error that says how to build it."""
    for folder in (os.environ.get("PYSMT_KENLM_BIN"), ROOT / "third_party" / "kenlm" / "bin"):
        if folder and (Path(folder) / name).is_file():
            return str(Path(folder) / name)
    found = shutil.which(name)
    if found:
        return found
    raise PysmtError(
        f"KenLM's {name} was not found; build it with `bash scripts/build-kenlm-tools.sh` "
        "(needs cmake and Boost: libboost-program-options-dev libboost-system-dev "
        "libboost-thread-dev libboost-test-dev), or set PYSMT_KENLM_BIN to its folder"
    )


def tool_message(stderr: str) -> str:
    """The line of a KenLM tool's messages that says what went wrong (its exception's explanation)."""
    lines = [line.strip() for line in stderr.replace("\r", "\n").splitlines()]
    lines = [line for line in lines if line and line != "ERROR" and set(line) - set("-*0123456789")]
    for k, line in enumerate(lines):
        if " threw " in line and k + 1 < len(lines):
            return lines[k + 1]
    return lines[-1] if lines else "no message"


def has_words(texts: list[Path]) -> bool:
    """Whether any of the texts holds a word (read only up to the first one)."""
    for path in texts:
        with open(path, "rb") as handle:
            if any(line.strip() for line in handle):
                return True
    return False


def run_forwarding_stderr(command: list[str], stdin: IO[bytes] | None, stdout: IO[bytes]) -> tuple[int, str]:
    """Run a tool whose progress goes to our stderr as it comes; return its exit status and its last messages."""
    process = ChildProcess(command, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE)
    stderr = cast(io.BufferedReader, process.stderr)  # a pipe: read1 takes what is there, up to 4096 bytes
    tail = b""
    terminal = getattr(sys.stderr, "buffer", None)
    while chunk := stderr.read1(4096):
        tail = (tail + chunk)[-8192:]
        if terminal is not None:
            terminal.write(chunk)
            terminal.flush()
    return process.wait(), tail.decode(errors="replace")


def build_language_model(
    texts: list[Path], out: Path, order: int = 5, memory: str = "20%", temp_dir: Path | None = None
) -> None:
    """Estimate an ``order``-gram modified Kneser-Ney LM on ``texts`` and write it as a KenLM binary;
    lmplz's sorted runs and the ARPA file go in a hidden folder in ``temp_dir`` (default: beside ``out``)."""
    texts = [require_file(t, "--text") for t in texts]
    check_outputs({"--out": out}, {"--text": texts}, create=True)
    if order < 2:
        raise PysmtError(f"--order {order}: KenLM's binary models need an order of at least 2")
    if not has_words(texts):
        raise PysmtError(f"--text {', '.join(map(str, texts))}: no words to estimate a language model from")
    lmplz, build_binary = kenlm_tool("lmplz"), kenlm_tool("build_binary")
    out.parent.mkdir(parents=True, exist_ok=True)
    with scratch_folder(out, temp_dir) as tmp:
        arpa = tmp / "lm.arpa"
        with open(arpa, "wb") as arpa_out:
            cat = ChildProcess(["cat", *map(str, texts)], stdout=subprocess.PIPE)
            # lmplz's progress bars go on to the terminal as they come; its last message explains a failure
            status, messages = run_forwarding_stderr(
                [lmplz, "-o", str(order), "-S", memory, "-T", str(tmp), "--discount_fallback"], cat.stdout, arpa_out
            )
            assert cat.stdout is not None
            cat.stdout.close()  # so that cat stops (SIGPIPE) rather than blocks when lmplz has died
            cat.wait()
        if status != 0:
            how = f"killed by signal {-status}" if status < 0 else f"exit status {status}"
            raise PysmtError(f"lmplz failed ({how}): {tool_message(messages)}")
        with atomic_path(out) as binary:
            run = ChildProcess([build_binary, str(arpa), str(binary)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            _, errors = run.communicate()
            if run.returncode != 0:
                raise PysmtError(
                    f"build_binary failed (exit status {run.returncode}): "
                    f"{tool_message(errors.decode(errors='replace'))}"
                )
