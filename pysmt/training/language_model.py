"""N-gram language models with KenLM's ``lmplz`` (modified Kneser-Ney) and ``build_binary``.

The tools are built by ``scripts/build-kenlm-tools.sh`` (run by ``setup.sh``) into
``third_party/kenlm/bin``; ``PYSMT_KENLM_BIN`` or the PATH can point elsewhere.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from pysmt.errors import PysmtError
from pysmt.textio import atomic_path

ROOT = Path(__file__).resolve().parents[2]


def kenlm_tool(name: str) -> str:
    """The path of ``lmplz`` or ``build_binary``, or an error that says how to build it."""
    for folder in (os.environ.get("PYSMT_KENLM_BIN"), ROOT / "third_party" / "kenlm" / "bin"):
        if folder and (Path(folder) / name).is_file():
            return str(Path(folder) / name)
    found = shutil.which(name)
    if found:
        return found
    raise PysmtError(f"KenLM's {name} was not found; build it with `bash scripts/build-kenlm-tools.sh` "
                     "(needs cmake and Boost: libboost-program-options-dev libboost-system-dev "
                     "libboost-thread-dev libboost-test-dev), or set PYSMT_KENLM_BIN to its folder")


def build_language_model(texts: list[Path], out: Path, order: int = 5, memory: str = "20%") -> None:
    """Estimate an ``order``-gram modified Kneser-Ney LM on ``texts`` and write it as a KenLM binary."""
    lmplz, build_binary = kenlm_tool("lmplz"), kenlm_tool("build_binary")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        arpa = Path(tmp) / "lm.arpa"
        with open(arpa, "wb") as arpa_out:
            cat = subprocess.Popen(["cat", *map(str, texts)], stdout=subprocess.PIPE)
            # lmplz's own progress bars go to the terminal (stderr is inherited), and so do its errors
            run = subprocess.run([lmplz, "-o", str(order), "-S", memory, "-T", tmp, "--discount_fallback"],
                                 stdin=cat.stdout, stdout=arpa_out)
            cat.wait()
        if run.returncode != 0:
            raise PysmtError(f"lmplz failed (exit status {run.returncode}); its messages are above")
        with atomic_path(out) as binary:
            run = subprocess.run([build_binary, str(arpa), str(binary)], capture_output=True)
            if run.returncode != 0:
                raise PysmtError(f"build_binary failed: {run.stderr.decode(errors='replace')[-2000:]}")
