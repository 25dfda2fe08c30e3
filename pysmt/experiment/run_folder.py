"""Where an experiment keeps its data, tunings and test outputs in its run folder (``RUN_DIR``).

The chain's stages write these paths and the scores read them (:mod:`pysmt.experiment.scoring`):
the layout is a module of its own so that scoring needs nothing of the chain that runs the stages.
"""

from __future__ import annotations

from pathlib import Path

from pysmt.experiment.data import Bitext
from pysmt.experiment.settings import SRC, TGT, Configuration


class RunFolder:
    """The paths of one run folder: its dev and test sets under ``data/``, and per configuration (the rows it
    builds) and optimizer seed, its tuning under ``tune/`` and its test outputs under ``decode/``."""

    def __init__(
        self, run_dir: Path, tests: dict[str, Bitext], seeds: int, configurations: tuple[Configuration, ...]
    ) -> None:
        self.run_dir = run_dir
        self.configurations = configurations
        self.data_dir = run_dir / "data"
        #: The test sets by name, as given (the data stages copy them to :meth:`test_files`).
        self.tests = tests
        self.seeds = range(seeds)
        self.dev = Bitext(self.data_dir / f"dev.{SRC}", self.data_dir / f"dev.{TGT}")

    def test_files(self, name: str) -> Bitext:
        return Bitext(self.data_dir / f"{name}.{SRC}", self.data_dir / f"{name}.{TGT}")

    def tune_dir(self, configuration: Configuration, seed: int) -> Path:
        return self.run_dir / "tune" / configuration.key / f"seed{seed}"

    def tuned_weights(self, configuration: Configuration, seed: int) -> Path:
        """The weights its tuning kept: a re-ranking row's are rescoring weights (``pysmt tune --rerank`` writes
        ``rescoring-weights.txt``, no ``weights.txt``)."""
        name = "weights.txt" if configuration.reranks is None else "rescoring-weights.txt"
        return self.tune_dir(configuration, seed) / name

    def output(self, test: str, configuration: Configuration, seed: int) -> Path:
        return self.run_dir / "decode" / test / f"{configuration.key}.seed{seed}.{TGT}"
