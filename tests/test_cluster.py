"""``--cluster``: the same results as a local run, on a real multi-node Ray cluster on this machine.

The cluster (a head and a worker node on 127.0.0.1, one CPU each) is started once for the module
with ``ray start`` and stopped at its end; every command is bounded in time.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pysmt.cluster import shards
from tests.helpers import fails, long_input, tune_command
from tests.helpers import pysmt as pysmt_bytes

ray = pytest.importorskip("ray")
RAY = str(Path(sys.executable).with_name("ray"))
ENV = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
NODE = ["--num-cpus", "1", "--node-ip-address", "127.0.0.1", "--object-store-memory", str(80 * 1024 * 1024)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def nodes_alive(address: str) -> int:
    code = (f"import ray; ray.init(address={address!r}, logging_level='ERROR', log_to_driver=False); "
            "print('alive', sum(n['Alive'] for n in ray.nodes()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=60)
    found = re.findall(r"^alive (\d+)$", out.stdout, re.MULTILINE)  # (Ray may print warnings there too)
    return int(found[-1]) if found else 0


def start_worker(address: str, nodes: int) -> subprocess.Popen:
    """A worker node that lives as long as the returned process (``ray start --block``), once the
    cluster has ``nodes`` nodes alive with it."""
    worker = subprocess.Popen([RAY, "start", "--address", address, "--block", *NODE], env=ENV,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 60
    while nodes_alive(address) < nodes:
        if time.time() > deadline:
            os.killpg(worker.pid, signal.SIGKILL)
            pytest.fail("the worker node did not join")
        time.sleep(1)
    return worker


@pytest.fixture(scope="module")
def cluster():
    address = f"127.0.0.1:{free_port()}"
    subprocess.run([RAY, "start", "--head", "--port", address.split(":")[1], "--include-dashboard=false",
                    "--disable-usage-stats", *NODE], env=ENV, check=True, capture_output=True, timeout=120)
    worker = None
    try:
        worker = start_worker(address, nodes=2)
        yield address
    finally:
        if worker is not None:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=60)
        subprocess.run([RAY, "stop", "--force"], env=ENV, capture_output=True, timeout=120)


def pysmt(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pysmt.cli", *map(str, args)], capture_output=True, text=True,
                          env=ENV, timeout=timeout)


def test_shards_are_consecutive_and_balanced_by_words():
    items = list(enumerate(["a b c d", "a", "a", "a", "a b c d", "a b c d e f g h"]))
    parts = shards(items, 3)
    assert [item for part in parts for item in part] == items  # every line once, in order
    # cuts nearest to 19/3 and 38/3 words
    assert [sum(len(line.split()) for _, line in part) for part in parts] == [6, 5, 8]
    assert shards([], 4) == [] and shards(items[:1], 4) == [items[:1]]


def test_decode_on_the_cluster_gives_the_local_outputs(tiny_system, tmp_path, cluster):
    source = long_input(tmp_path / "in.txt", lines=200)
    here = pysmt("decode", "-c", tiny_system, "-i", source, "--nbest", tmp_path / "local.nbest",
                 "--alignment", tmp_path / "local.align")
    there = pysmt("decode", "-c", tiny_system, "-i", source, "--nbest", tmp_path / "cluster.nbest",
                  "--alignment", tmp_path / "cluster.align", "--cluster", cluster)
    assert here.returncode == 0 and there.returncode == 0, there.stderr
    assert there.stdout == here.stdout
    for name in ("nbest", "align"):
        assert (tmp_path / f"cluster.{name}").read_bytes() == (tmp_path / f"local.{name}").read_bytes()
    assert "2 actor(s) on 2 node(s)" in there.stderr and "done: node" in there.stderr


def test_tune_on_the_cluster_gives_the_local_weights(tiny_system, tmp_path, cluster):
    src, ref = tmp_path / "dev.src", tmp_path / "dev.ref"
    src.write_text("a b c\nc b a\nb c\na b\nc a b\n")
    ref.write_text("x y z\nz y x\ny z\nx y\nz x y\n")
    local = pysmt(*tune_command(tiny_system, src, ref, tmp_path / "local", "--max-iterations", "3"))
    remote = pysmt(*tune_command(tiny_system, src, ref, tmp_path / "remote", "--max-iterations", "3",
                                 "--cluster", cluster))
    assert local.returncode == 0 and remote.returncode == 0, remote.stderr
    assert (tmp_path / "remote" / "weights.txt").read_text() == (tmp_path / "local" / "weights.txt").read_text()
    runs = sorted(p.name for p in (tmp_path / "local").glob("run*"))
    assert runs == sorted(p.name for p in (tmp_path / "remote").glob("run*"))
    for run in runs:
        assert (tmp_path / "remote" / run / "nbest.txt").read_bytes() == \
            (tmp_path / "local" / run / "nbest.txt").read_bytes()
    assert remote.stderr.count("loading the system") == 1  # the actors kept it across iterations


def test_rescore_on_the_cluster_gives_the_local_list(tiny_system, tmp_path, cluster):
    pytest.importorskip("pysmt_example_features")  # a stateful plugin the actors find by its entry point
    source = long_input(tmp_path / "in.txt", lines=60)
    nbest = tmp_path / "nbest.txt"
    assert pysmt("decode", "-c", tiny_system, "-i", source, "--nbest", nbest, "--nbest-size", "5").returncode == 0
    outs = {}
    for where in ("local", "cluster"):
        outs[where] = tmp_path / f"{where}.rescored"
        proc = pysmt("rescore", "-c", tiny_system, "--nbest", nbest, "--out", outs[where], "--features",
                     "repeated-word-batched", *(["--cluster", cluster] if where == "cluster" else []))
        assert proc.returncode == 0, proc.stderr
    assert outs["cluster"].read_bytes() == outs["local"].read_bytes()
    assert "RepeatedWord0= " in outs["local"].read_text() and "done: node" in proc.stderr


def test_a_worker_node_killed_mid_decode_changes_nothing(tiny_system, tmp_path, cluster):
    source = long_input(tmp_path / "in.txt", lines=1500)
    here = pysmt("decode", "-c", tiny_system, "-i", source)
    doomed = start_worker(cluster, nodes=3)
    try:
        with open(tmp_path / "err.txt", "w") as err_file:  # (a file: the stdout pipe is read to its end first)
            run = subprocess.Popen([sys.executable, "-m", "pysmt.cli", "decode", "-c", str(tiny_system), "-i",
                                    str(source), "--cluster", cluster], stdout=subprocess.PIPE, stderr=err_file,
                                   text=True, env=ENV)
            first = run.stdout.readline()  # translating: every actor has a shard
            os.killpg(doomed.pid, signal.SIGKILL)  # the node's raylet and workers, at once
            out = run.stdout.read()  # (not communicate(): it would skip what readline buffered)
            run.wait(timeout=300)
        err = (tmp_path / "err.txt").read_text()
    finally:
        if doomed.poll() is None:
            os.killpg(doomed.pid, signal.SIGKILL)
    assert run.returncode == 0, err
    got, want = (first + out).splitlines(), here.stdout.splitlines()
    wrong = [k for k, (a, b) in enumerate(zip(got, want)) if a != b]
    assert len(got) == len(want) and not wrong, (len(got), len(want), wrong[:5], err[-2000:])
    assert "runs again on another" in err  # the lost node's shard was redone


def test_a_worker_node_killed_mid_iteration_leaves_the_tuned_weights_as_they_were(tiny_system, tmp_path, cluster):
    src = long_input(tmp_path / "dev.src", lines=600)
    ref = tmp_path / "dev.ref"
    ref.write_text(src.read_text().replace("a", "x").replace("b", "y").replace("c", "z"))
    tune = ("--max-iterations", "2", "--nbest-size", "20")
    local = pysmt(*tune_command(tiny_system, src, ref, tmp_path / "local", *tune))
    assert local.returncode == 0, local.stderr
    doomed = start_worker(cluster, nodes=3)
    out = tmp_path / "remote"
    try:
        with open(tmp_path / "err.txt", "w") as err_file:
            run = subprocess.Popen([sys.executable, "-m", "pysmt.cli", *tune_command(tiny_system, src, ref, out, *tune,
                                                                                      "--cluster", cluster)],
                                   stdout=subprocess.DEVNULL, stderr=err_file, env=ENV)
            deadline = time.time() + 300
            while not (out / "run2" / "weights.txt").exists() and run.poll() is None and time.time() < deadline:
                time.sleep(0.05)
            os.killpg(doomed.pid, signal.SIGKILL)  # the second iteration is decoding, on every node
            run.wait(timeout=300)
        err = (tmp_path / "err.txt").read_text()
    finally:
        if doomed.poll() is None:
            os.killpg(doomed.pid, signal.SIGKILL)
    assert run.returncode == 0, err[-3000:]
    assert "runs again on another" in err and "iteration 2:" in err
    for name in ("weights.txt", "run2/nbest.txt"):
        assert (out / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name


def test_the_clusters_messages_never_reach_stdout(capsys):
    import ray._private.worker as driver

    from pysmt.cluster import cluster_messages_to_stderr

    cluster_messages_to_stderr()
    cluster_messages_to_stderr()  # (once is enough)
    driver.print_to_stdstream({"lines": ["node 1 has been marked dead"], "pid": "raylet", "is_err": False},
                              ignore_prefix=False)
    out, err = capsys.readouterr()
    assert out == "" and "node 1 has been marked dead" in err


def test_an_unreachable_head_is_one_line(tiny_system, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a b c\n")
    fails(pysmt_bytes("decode", "-c", str(tiny_system), "-i", str(source), "--cluster", "127.0.0.1:1"), 1,
          "--cluster 127.0.0.1:1: no Ray head reachable there")


def test_threads_and_cluster_are_one_question(tiny_system, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a b c\n")
    proc = pysmt("decode", "-c", tiny_system, "-i", source, "--cluster", "local", "--threads", "2")
    assert proc.returncode == 2 and "--threads and --cluster: give one" in proc.stderr


def test_without_ray_installed_cluster_says_how_to_get_it(tmp_path):
    code = ("import sys; sys.modules['ray'] = None\n"
            "from pysmt.cluster import ray_module\n"
            "from pysmt.errors import PysmtError\n"
            "try:\n    ray_module()\nexcept PysmtError as err:\n    print(err)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "--cluster needs Ray: pip install 'pysmt-mt[cluster]'"
    lazy = "import sys, pysmt.cli, pysmt.cluster, tuning.loop; print('ray' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", lazy], capture_output=True, text=True).stdout.strip() == "False"


def cpus_busy(cluster: str) -> str:
    """The CPUs that tasks or actors still hold on the cluster, once it settles (within a minute)."""
    code = (f"import ray, time; ray.init(address={cluster!r}, logging_level='ERROR', log_to_driver=False)\n"
            "for _ in range(120):\n"
            "    busy = ray.cluster_resources()['CPU'] - ray.available_resources().get('CPU', 0)\n"
            "    if not busy: break\n"
            "    time.sleep(0.5)\n"
            "print('busy', busy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=120)
    found = re.findall(r"^busy (\S+)$", out.stdout, re.MULTILINE)  # (Ray may print warnings there too)
    return found[-1] if found else out.stdout + out.stderr


def stopped_run(command: list, log: Path, when: str, signum: int) -> subprocess.Popen:
    """``pysmt COMMAND`` in a session of its own, given ``signum`` once its stderr (in ``log``) says ``when``."""
    with open(log, "w") as err:
        run = subprocess.Popen([sys.executable, "-m", "pysmt.cli", *map(str, command)], stderr=err, env=ENV,
                               start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.time() + 600
        while when not in log.read_text() and time.time() < deadline:
            assert run.poll() is None, log.read_text()[-3000:]
            time.sleep(0.1)
        os.killpg(run.pid, signum)
        run.wait(timeout=120)
    return run


def test_ctrl_c_on_the_client_exits_130_and_leaves_no_actor(tiny_system, tmp_path, cluster):
    source = long_input(tmp_path / "in.txt", lines=3000)
    run = subprocess.Popen([sys.executable, "-m", "pysmt.cli", "decode", "-c", str(tiny_system), "-i", str(source),
                            "--cluster", cluster], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
                           start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert run.stdout.readline()
    os.killpg(run.pid, signal.SIGINT)
    _, err = run.communicate(timeout=120)
    assert run.returncode == 130, err.decode()
    assert b"Traceback" not in err
    assert cpus_busy(cluster) == "0.0"  # every CPU free again: no actor of the run holds one


def test_a_system_a_node_cannot_load_is_one_line_naming_the_node(cluster):
    from pysmt.cluster import Cluster, SystemRecipe
    from pysmt.errors import PysmtError

    with pytest.raises(PysmtError, match=r"^on node [0-9a-f]{8}: /nowhere/moses.ini: no such file$"):
        Cluster(cluster, SystemRecipe("/nowhere/moses.ini"), actors=1)
    assert not ray.is_initialized()  # the failed start left this process off the cluster


def test_a_tiny_experiment_on_the_cluster_gives_the_local_results(tmp_path, cluster):
    from tests.helpers import SHARED, shared_data

    shared_data("news", "newstest2013.en")
    # --budget: the networks stop at the scale's 20 updates, never at a time limit that a busy machine reaches
    local = pysmt("experiment", "--data", SHARED, "--out", tmp_path / "local", "--scale", "tiny", "--budget", "30",
                  timeout=900)
    assert local.returncode == 0, local.stderr[-3000:]
    # the same system for both (eflomal's alignments vary from run to run: it has no seed)
    command = ["experiment", "--data", SHARED, "--out", tmp_path / "remote", "--scale", "tiny", "--budget", "30",
               "--cluster", cluster,
               "--system", tmp_path / "local" / "system"]
    stopped = stopped_run(command, tmp_path / "stopped.txt", "tune-baseline-seed0: done in", signal.SIGINT)
    assert stopped.returncode == 130 and "Traceback" not in (tmp_path / "stopped.txt").read_text()
    assert cpus_busy(cluster) == "0.0"  # Ctrl-C left no stage's task running
    # the client dies, as with its head node
    stopped_run(command, tmp_path / "killed.txt", "ran on node", signal.SIGKILL)  # once it did some work
    remote = pysmt(*command, timeout=900)  # the same command resumes
    assert remote.returncode == 0, remote.stderr[-3000:]
    assert "tune-baseline-seed0: done before" in remote.stderr
    first = (tmp_path / "stopped.txt").read_text()
    assert len(set(re.findall(r"ran on node ([0-9a-f]{8})", first + remote.stderr))) == 2, remote.stderr[-3000:]
    assert first.index("rnn: running") < first.index("binarize: done in")  # side by side
    evaluations = [json.loads((tmp_path / run / "evaluation.json").read_text()) for run in ("local", "remote")]
    assert evaluations[0] == evaluations[1]  # BLEU, chrF, p-values and tuned weights of every configuration
