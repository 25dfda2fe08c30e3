"""Local pools under every start method (fork; forkserver, Python 3.14's default; spawn): same results.

A pool's shared value reaches its workers inherited (fork) or pickled (the others: a decoder as the
paths and weights it was built from), and each worker runs torch on one thread.
"""

from __future__ import annotations

import os
from functools import partial

import numpy as np
import pytest

from pysmt.errors import PysmtError
from pysmt.running.parallel import (
    START_METHOD_VARIABLE,
    map_with_shared,
    ordered_map,
    shared,
    start_method,
    worker_pool,
)
from pysmt.testing import run_pysmt
from pysmt.training.extraction import extract_corpus
from tests.helpers import slow_cases
from tuning.optimizer import optimize

METHODS = ["fork", "forkserver", "spawn"]


def _worker_facts(offset: int) -> tuple[int, str | None, int]:
    return shared() + offset, os.environ.get("OMP_NUM_THREADS"), os.getpid()


@pytest.mark.parametrize("method", ["fork", "forkserver", *slow_cases("spawn")])
def test_a_map_gives_its_shared_value_to_every_worker(monkeypatch, method):
    monkeypatch.setenv(START_METHOD_VARIABLE, method)
    assert start_method() == method
    results = ordered_map(_worker_facts, list(range(6)), processes=2, shared=100)
    assert [value for value, _, _ in results] == list(range(100, 106))
    assert {threads for _, threads, _ in results} == {"1"}
    assert os.getpid() not in {pid for _, _, pid in results}


def test_an_unknown_start_method_is_one_line(monkeypatch):
    monkeypatch.setenv(START_METHOD_VARIABLE, "teleport")
    with pytest.raises(PysmtError, match=f"{START_METHOD_VARIABLE}=teleport: not a start method here"):
        with worker_pool(2):
            pass


@pytest.mark.parametrize("method", ["forkserver", *slow_cases("spawn")])
def test_decoding_threads_give_the_same_translations_and_nbest(tiny_system, tmp_path, method):
    source = tmp_path / "in.txt"
    source.write_text("".join(" ".join("abcq"[(i * k) % 4] for k in range(1, 2 + i % 6)) + "\n" for i in range(20)))
    outputs = []
    for threads, start in (("1", "fork"), ("2", method)):
        nbest = tmp_path / f"nbest.{threads}"
        proc = run_pysmt(
            "decode",
            "-c",
            tiny_system,
            "-i",
            source,
            "--threads",
            threads,
            "--nbest",
            nbest,
            "--nbest-size",
            "3",
            env={**os.environ, START_METHOD_VARIABLE: start},
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        outputs.append((proc.stdout, nbest.read_bytes()))
    assert outputs[0] == outputs[1] and len(outputs[0][0].splitlines()) == 20


@pytest.mark.slow  # 2,500 sentences in pools
@pytest.mark.parametrize("method", METHODS[1:])
def test_extraction_and_mert_restarts_give_the_same_results(monkeypatch, method):
    rng = np.random.default_rng(0)
    sources = [tuple(rng.integers(0, 9, 3).tolist()) for _ in range(2500)]  # two ranges of 2,000 sentences
    alignments = ["0-0 1-1 2-2"] * len(sources)
    features = [rng.normal(size=(4, 3)) for _ in range(5)]
    stats = [np.abs(rng.integers(0, 5, size=(4, 9))).astype(float) + 1 for _ in range(5)]
    alone = (
        extract_corpus(sources, sources, alignments, processes=1),
        optimize(features, stats, [1.0, 0.5, 0.2], restarts=3),
    )
    monkeypatch.setenv(START_METHOD_VARIABLE, method)
    pooled = (
        extract_corpus(sources, sources, alignments, processes=2),
        optimize(features, stats, [1.0, 0.5, 0.2], restarts=3, mapper=partial(map_with_shared, processes=2)),
    )
    for name in alone[0].__dataclass_fields__:
        assert np.array_equal(getattr(alone[0], name), getattr(pooled[0], name)), name
    assert np.array_equal(alone[1][0], pooled[1][0]) and alone[1][1] == pooled[1][1]
