"""``--cluster``: the same results as a local run, on a real multi-node Ray cluster on this machine.

The cluster (a head and a worker node on 127.0.0.1, one CPU each) is started once for the module
with ``ray start --block``, each node in a session of its own, and stopped at its end by ending the
processes of those sessions (never ``ray stop``, which would stop every Ray process of the user); the
tests that lose their head start a cluster of their own. Ray's files in ``~`` (its token) are those
of a folder of the tests'. Every command is bounded in time.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from pysmt.decoder import SystemRecipe
from pysmt.decoding.cluster import shards
from pysmt.testing import one_line_error, run_pysmt, start_pysmt
from tests.helpers import long_input, tune_command, wait_until

ray = pytest.importorskip("ray")
#: Under pytest-xdist (.ci/run), the module's tests run on one worker, one after another: its cluster is
#: started once, and no two clusters of these tests compete for the ports Ray takes by default.
pytestmark = pytest.mark.xdist_group("ray")
RAY = str(Path(sys.executable).with_name("ray"))
NODE = ["--num-cpus", "1", "--node-ip-address", "127.0.0.1", "--object-store-memory", str(80 * 1024 * 1024)]
#: The longest a client may take to stop after its head is killed: pysmt.decoding.cluster.HEAD_TIMEOUT, Ray's
#: goodbye (about 5 s without a head) and a busy machine's slack.
HEAD_LOSS_S = 20


@pytest.fixture(scope="module", autouse=True)
def ray_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """HOME in a folder of the tests': a token in the user's ~/.ray neither changes these tests nor is
    made by them, and no RAY_AUTH_* of the user's environment reaches them."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.setenv("RAY_USAGE_STATS_ENABLED", "0")
        for name in [name for name in os.environ if name.startswith("RAY_AUTH")]:
            patch.delenv(name)
        yield home


def environment(**changes: str) -> dict[str, str]:
    return {**os.environ, **changes}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def nodes_alive(address: str, env: dict[str, str]) -> int:
    code = (
        f"import ray; ray.init(address={address!r}, logging_level='ERROR', log_to_driver=False); "
        "print('alive', sum(n['Alive'] for n in ray.nodes()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    found = re.findall(r"^alive (\d+)$", out.stdout, re.MULTILINE)  # (Ray may print warnings there too)
    return int(found[-1]) if found else 0


def in_session(sid: int) -> list[int]:
    """The processes of session ``sid`` (a node's, started in a session of its own: its workers too)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and os.getsid(int(entry.name)) == sid:
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def end_session(sid: int, signum: int = signal.SIGKILL) -> None:
    for pid in in_session(sid):
        try:
            os.kill(pid, signum)
        except OSError:
            pass


def actors_in(*sids: int) -> list[str]:
    """The decoder actors among the processes of sessions ``sids`` (Ray names an actor's process ray::CLASS)."""
    found = []
    for sid in sids:
        for pid in in_session(sid):
            try:
                command = (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if command.startswith("ray::DecoderActor"):
                found.append(f"{pid}: {command}")
    return found


def start_node(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [RAY, "start", "--block", *args, *NODE],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop_node(node: subprocess.Popen) -> None:
    """The node ended by ``ray start`` itself (SIGTERM), then whatever is left of its session killed."""
    node.terminate()
    try:
        node.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
    end_session(node.pid)
    node.wait(timeout=30)


def start_worker(address: str, nodes: int, env: dict[str, str] | None = None) -> subprocess.Popen:
    """A worker node that lives as long as the returned process (``ray start --block``), once the
    cluster has ``nodes`` nodes alive with it."""
    env = env or environment()
    worker = start_node(["--address", address], env)
    deadline = time.time() + 60
    while nodes_alive(address, env) < nodes:
        if time.time() > deadline:
            stop_node(worker)
            pytest.fail("the worker node did not join")
        time.sleep(1)
    return worker


@dataclass
class Nodes:
    address: str
    head: subprocess.Popen
    worker: subprocess.Popen


@contextmanager
def ray_cluster(head_env: dict[str, str] | None = None, worker_env: dict[str, str] | None = None) -> Iterator[Nodes]:
    """A head and a worker node on 127.0.0.1 as docs/tutorials/cluster.md starts them (``ray start --head``, ``ray start
    --address``), Ray's files in a short folder of their own; every process of both is ended at the end."""
    head_env = head_env or environment()
    port = free_port()
    address = f"127.0.0.1:{port}"
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # (short: Ray's socket paths must fit in 107 bytes)
    head = start_node(
        ["--head", "--port", str(port), "--include-dashboard=false", "--disable-usage-stats", "--temp-dir", temp],
        head_env,
    )
    worker = None
    try:
        worker = start_worker(address, nodes=2, env=worker_env or head_env)
        yield Nodes(address, head, worker)
    finally:
        for node in (worker, head):
            if node is not None:
                stop_node(node)
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster(ray_home: Path) -> Iterator[str]:
    """The module's cluster, without token authentication (no token in its HOME)."""
    with ray_cluster() as nodes:
        yield nodes.address


def test_shards_are_consecutive_and_balanced_by_words():
    items = list(enumerate(["a b c d", "a", "a", "a", "a b c d", "a b c d e f g h"]))
    parts = shards(items, 3)
    assert [item for part in parts for item in part] == items  # every line once, in order
    # cuts nearest to 19/3 and 38/3 words
    assert [sum(len(line.split()) for _, line in part) for part in parts] == [6, 5, 8]
    assert shards([], 4) == [] and shards(items[:1], 4) == [items[:1]]


@pytest.mark.slow
def test_decode_on_the_cluster_gives_the_local_outputs(tiny_system, tmp_path, cluster):
    source = long_input(tmp_path / "in.txt", lines=200)
    here = run_pysmt(
        "decode",
        "-c",
        tiny_system,
        "-i",
        source,
        "--nbest",
        tmp_path / "local.nbest",
        "--alignment",
        tmp_path / "local.align",
    )
    there = run_pysmt(
        "decode",
        "-c",
        tiny_system,
        "-i",
        source,
        "--nbest",
        tmp_path / "cluster.nbest",
        "--alignment",
        tmp_path / "cluster.align",
        "--cluster",
        cluster,
    )
    assert here.returncode == 0 and there.returncode == 0, there.stderr
    assert there.stdout == here.stdout
    for name in ("nbest", "align"):
        assert (tmp_path / f"cluster.{name}").read_bytes() == (tmp_path / f"local.{name}").read_bytes()
    assert "2 actor(s) on 2 node(s)" in there.stderr and "done: node" in there.stderr


@pytest.mark.slow
def test_xml_input_travels_to_the_actors(tiny_system, tmp_path, cluster):
    source = tmp_path / "in.txt"
    source.write_text('a b c\na <n translation="chat||dog" prob="0.5||0.1">b</n> c\n<zone>c b</zone> <wall/> a\n' * 20)
    runs = [
        run_pysmt(
            "decode", "-c", tiny_system, "-i", source, "--xml-input", "exclusive", "--nbest", tmp_path / name, *extra
        )
        for name, extra in (("local.nbest", ()), ("cluster.nbest", ("--cluster", cluster)))
    ]
    assert all(run.returncode == 0 for run in runs), runs[1].stderr
    assert runs[1].stdout == runs[0].stdout and runs[0].stdout.splitlines()[1] == "x chat z"
    assert (tmp_path / "cluster.nbest").read_bytes() == (tmp_path / "local.nbest").read_bytes()


@pytest.mark.slow
def test_tune_on_the_cluster_gives_the_local_weights(tiny_system, tmp_path, cluster):
    src, ref = tmp_path / "dev.src", tmp_path / "dev.ref"
    src.write_text("a b c\nc b a\nb c\na b\nc a b\n")
    ref.write_text("x y z\nz y x\ny z\nx y\nz x y\n")
    local = run_pysmt(*tune_command(tiny_system, src, ref, tmp_path / "local", "--max-iterations", "3"))
    remote = run_pysmt(
        *tune_command(tiny_system, src, ref, tmp_path / "remote", "--max-iterations", "3", "--cluster", cluster)
    )
    assert local.returncode == 0 and remote.returncode == 0, remote.stderr
    assert (tmp_path / "remote" / "weights.txt").read_text() == (tmp_path / "local" / "weights.txt").read_text()
    runs = sorted(p.name for p in (tmp_path / "local").glob("run*"))
    assert runs == sorted(p.name for p in (tmp_path / "remote").glob("run*"))
    for run in runs:
        assert (tmp_path / "remote" / run / "nbest.txt").read_bytes() == (
            tmp_path / "local" / run / "nbest.txt"
        ).read_bytes()
    assert remote.stderr.count("loading the system") == 1  # the actors kept it across iterations


@pytest.mark.slow
def test_rescore_on_the_cluster_gives_the_local_list(tiny_system, tmp_path, cluster):
    pytest.importorskip("pysmt_example_features")  # a stateful plugin the actors find by its entry point
    source = long_input(tmp_path / "in.txt", lines=60)
    nbest = tmp_path / "nbest.txt"
    assert run_pysmt("decode", "-c", tiny_system, "-i", source, "--nbest", nbest, "--nbest-size", "5").returncode == 0
    outs = {}
    for where in ("local", "cluster"):
        outs[where] = tmp_path / f"{where}.rescored"
        proc = run_pysmt(
            "rescore",
            "-c",
            tiny_system,
            "--nbest",
            nbest,
            "--out",
            outs[where],
            "--features",
            "repeated-word-batched",
            *(["--cluster", cluster] if where == "cluster" else []),
        )
        assert proc.returncode == 0, proc.stderr
    assert outs["cluster"].read_bytes() == outs["local"].read_bytes()
    assert "RepeatedWord0= " in outs["local"].read_text() and "done: node" in proc.stderr


@pytest.mark.slow
def test_a_worker_node_killed_mid_decode_changes_nothing(tiny_system, tmp_path, cluster):
    source = long_input(tmp_path / "in.txt", lines=1500)
    here = run_pysmt("decode", "-c", tiny_system, "-i", source)
    doomed = start_worker(cluster, nodes=3)
    try:
        with open(tmp_path / "err.txt", "w") as err_file:  # (a file: the stdout pipe is read to its end first)
            run = start_pysmt(
                "decode",
                "-c",
                tiny_system,
                "-i",
                source,
                "--cluster",
                cluster,
                stdout=subprocess.PIPE,
                stderr=err_file,
                text=True,
            )
            first = run.stdout.readline()  # translating: every actor has a shard
            end_session(doomed.pid)  # the node's raylet and workers, at once
            out = run.stdout.read()  # (not communicate(): it would skip what readline buffered)
            run.wait(timeout=300)
        err = (tmp_path / "err.txt").read_text()
    finally:
        stop_node(doomed)
    assert run.returncode == 0, err
    got, want = (first + out).splitlines(), here.stdout.splitlines()
    wrong = [k for k, (a, b) in enumerate(zip(got, want)) if a != b]
    assert len(got) == len(want) and not wrong, (len(got), len(want), wrong[:5], err[-2000:])
    assert "runs again on another" in err  # the lost node's shard was redone


@pytest.mark.slow
def test_a_worker_node_killed_mid_iteration_leaves_the_tuned_weights_as_they_were(tiny_system, tmp_path, cluster):
    src = long_input(tmp_path / "dev.src", lines=600)
    ref = tmp_path / "dev.ref"
    ref.write_text(src.read_text().replace("a", "x").replace("b", "y").replace("c", "z"))
    tune = ("--max-iterations", "2", "--nbest-size", "20")
    local = run_pysmt(*tune_command(tiny_system, src, ref, tmp_path / "local", *tune))
    assert local.returncode == 0, local.stderr
    doomed = start_worker(cluster, nodes=3)
    out = tmp_path / "remote"
    try:
        with open(tmp_path / "err.txt", "w") as err_file:
            run = start_pysmt(
                *tune_command(tiny_system, src, ref, out, *tune, "--cluster", cluster),
                stdout=subprocess.DEVNULL,
                stderr=err_file,
            )
            deadline = time.time() + 300
            while not (out / "run2" / "weights.txt").exists() and run.poll() is None and time.time() < deadline:
                time.sleep(0.05)
            end_session(doomed.pid)  # the second iteration is decoding, on every node
            run.wait(timeout=300)
        err = (tmp_path / "err.txt").read_text()
    finally:
        stop_node(doomed)
    assert run.returncode == 0, err[-3000:]
    assert "runs again on another" in err and "iteration 2:" in err
    for name in ("weights.txt", "run2/nbest.txt"):
        assert (out / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name


def test_the_clusters_messages_never_reach_stdout(capsys):
    import ray._private.worker as driver

    from pysmt.decoding.cluster import cluster_messages_to_stderr

    cluster_messages_to_stderr()
    cluster_messages_to_stderr()  # (once is enough)
    driver.print_to_stdstream(
        {"lines": ["node 1 has been marked dead"], "pid": "raylet", "is_err": False}, ignore_prefix=False
    )
    out, err = capsys.readouterr()
    assert out == "" and "node 1 has been marked dead" in err


def test_an_unreachable_head_is_one_line(tiny_system, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a b c\n")
    one_line_error(
        run_pysmt("decode", "-c", tiny_system, "-i", source, "--cluster", "127.0.0.1:1"),
        "--cluster 127.0.0.1:1: no Ray head reachable there",
    )


def test_threads_and_cluster_are_one_question(tiny_system, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a b c\n")
    one_line_error(
        run_pysmt("decode", "-c", tiny_system, "-i", source, "--cluster", "local", "--threads", "2"),
        "--threads and --cluster: give one",
        status=2,
    )


def test_without_ray_installed_cluster_says_how_to_get_it(tmp_path):
    code = (
        "import sys; sys.modules['ray'] = None\n"
        "from pysmt.decoding.cluster import ray_module\n"
        "from pysmt.errors import PysmtError\n"
        "try:\n    ray_module()\nexcept PysmtError as err:\n    print(err)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    # pysmt-mt is on no index: the message names the extra's packages with pyproject.toml's versions
    assert out.stdout.strip() == (
        "--cluster (Ray is not installed) needs pysmt-mt's optional extra 'cluster': pip install 'ray>=2.9'"
    )
    lazy = "import sys, pysmt.cli, pysmt.decoding.cluster, tuning.loop; print('ray' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", lazy], capture_output=True, text=True).stdout.strip() == "False"


def cpus_busy(cluster: str) -> str:
    """The CPUs that tasks or actors still hold on the cluster, once it settles (within a minute)."""
    code = (
        f"import ray, time; ray.init(address={cluster!r}, logging_level='ERROR', log_to_driver=False)\n"
        "for _ in range(120):\n"
        "    busy = ray.cluster_resources()['CPU'] - ray.available_resources().get('CPU', 0)\n"
        "    if not busy: break\n"
        "    time.sleep(0.5)\n"
        "print('busy', busy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment(), timeout=120)
    found = re.findall(r"^busy (\S+)$", out.stdout, re.MULTILINE)  # (Ray may print warnings there too)
    return found[-1] if found else out.stdout + out.stderr


def stopped_run(command: list, log: Path, when: str, signum: int) -> subprocess.Popen:
    """``pysmt COMMAND`` in a session of its own, given ``signum`` once its stderr (in ``log``) says ``when``."""
    with open(log, "w") as err:
        run = start_pysmt(
            *command,
            stderr=err,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        deadline = time.time() + 600
        while when not in log.read_text() and time.time() < deadline:
            assert run.poll() is None, log.read_text()[-3000:]
            time.sleep(0.1)
        os.killpg(run.pid, signum)
        run.wait(timeout=120)
    return run


@pytest.mark.slow
def test_ctrl_c_on_the_client_exits_130_and_leaves_no_actor(tiny_system, tmp_path, cluster):
    source = long_input(tmp_path / "in.txt", lines=3000)
    run = start_pysmt(
        "decode",
        "-c",
        tiny_system,
        "-i",
        source,
        "--cluster",
        cluster,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert run.stdout.readline()
    os.killpg(run.pid, signal.SIGINT)
    _, err = run.communicate(timeout=120)
    assert run.returncode == 130, err.decode()
    assert b"Traceback" not in err
    assert cpus_busy(cluster) == "0.0"  # every CPU free again: no actor of the run holds one


@pytest.mark.slow
def test_a_system_a_node_cannot_load_is_one_line_naming_the_node(cluster):
    from pysmt.decoder import SystemRecipe
    from pysmt.decoding.cluster import Cluster
    from pysmt.errors import PysmtError

    with pytest.raises(PysmtError, match=r"^on node [0-9a-f]{8}: /nowhere/moses.ini: no such file$"):
        Cluster(cluster, SystemRecipe("/nowhere/moses.ini"), actors=1)
    assert not ray.is_initialized()  # the failed start left this process off the cluster


@pytest.mark.slow
def test_a_tiny_experiment_on_the_cluster_gives_the_local_results(tmp_path, cluster, shared_data):
    shared_data("news", "newstest2013.en")
    # --budget: the networks stop at the scale's 20 updates, never at a time limit that a busy machine reaches
    local = run_pysmt(
        "experiment",
        "--data",
        shared_data(),
        "--out",
        tmp_path / "local",
        "--scale",
        "tiny",
        "--budget",
        "30",
        timeout=900,
    )
    assert local.returncode == 0, local.stderr[-3000:]
    # the same system for both (eflomal's alignments vary from run to run: it has no seed)
    command = [
        "experiment",
        "--data",
        shared_data(),
        "--out",
        tmp_path / "remote",
        "--scale",
        "tiny",
        "--budget",
        "30",
        "--cluster",
        cluster,
        "--system",
        tmp_path / "local" / "system",
    ]
    stopped = stopped_run(command, tmp_path / "stopped.txt", "tune-baseline-seed0: done in", signal.SIGINT)
    assert stopped.returncode == 130 and "Traceback" not in (tmp_path / "stopped.txt").read_text()
    assert cpus_busy(cluster) == "0.0"  # Ctrl-C left no stage's task running
    # the client dies, as with its head node
    stopped_run(command, tmp_path / "killed.txt", "ran on node", signal.SIGKILL)  # once it did some work
    remote = run_pysmt(*command, timeout=900)  # the same command resumes
    assert remote.returncode == 0, remote.stderr[-3000:]
    assert "tune-baseline-seed0: done before" in remote.stderr
    first = (tmp_path / "stopped.txt").read_text()
    assert len(set(re.findall(r"ran on node ([0-9a-f]{8})", first + remote.stderr))) == 2, remote.stderr[-3000:]
    assert first.index("rnn: running") < first.index("binarize: done in")  # side by side
    evaluations = [json.loads((tmp_path / run / "evaluation.json").read_text()) for run in ("local", "remote")]
    assert evaluations[0] == evaluations[1]  # BLEU, chrF, p-values and tuned weights of every configuration


# -- paths as the command was typed; token authentication; losing the head ---------------------------


def test_a_recipe_names_its_paths_as_they_were_where_the_command_was_typed(tmp_path, monkeypatch):
    for name in ("moses.ini", "weights.txt"):
        (tmp_path / name).write_text("")
    monkeypatch.chdir(tmp_path)
    params = ("cslm.model=nets", "lm.order=3")
    recipe = SystemRecipe("moses.ini", params=params, weights="weights.txt")
    assert recipe.config == str(tmp_path / "moses.ini") and recipe.weights == str(tmp_path / "weights.txt")
    assert recipe.params == params and recipe.base == str(tmp_path)  # --param values resolved when configured
    monkeypatch.chdir(tmp_path.parent)
    assert pickle.loads(pickle.dumps(recipe)) == recipe  # as an actor gets it, in another folder


def test_a_param_is_a_path_when_its_feature_declares_it_one_not_when_a_file_has_its_name(
    tiny_system, tmp_path, monkeypatch
):
    """A file named ``column`` where the command was typed made ``--param RNN0.mode=column`` an absolute path."""
    from pysmt.testing import TargetWordsFeature, registered
    from tests.features.test_registry import Slow

    (tmp_path / "column").write_text("")
    (tmp_path / "nets").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HERE", str(tmp_path))
    recipe = SystemRecipe(
        str(tiny_system),
        ("target-words", "slow"),
        ("TargetWords0.words=column", "Slow0.model=$HERE/nets", "slow.size=2"),
        weights=None,
        missing_weight=0.0,
    )
    monkeypatch.chdir(tiny_system.parent)  # an actor's working folder
    with registered(target_words=TargetWordsFeature, slow=Slow):
        config = recipe.configure()
    assert config.feature("TargetWords0").params["words"] == "column"
    assert config.feature("Slow0").params == {"model": str(tmp_path / "nets"), "size": 2}
    relative = SystemRecipe(str(tiny_system), ("slow",), ("Slow0.model=nets", "slow.size=2"), base=str(tmp_path))
    with registered(slow=Slow):
        assert relative.configure().feature("Slow0").params["model"] == str(tmp_path / "nets")


@pytest.mark.slow
def test_a_relative_config_typed_in_the_systems_folder_decodes_as_locally(tiny_system, cluster):
    folder = tiny_system.parent  # where Moses systems are run from
    long_input(folder / "in.txt", lines=100)
    (folder / "weights.txt").write_text("KENLM0= 0.4\n")
    command = (
        "decode",
        "-c",
        "moses.ini",
        "-i",
        "in.txt",
        "--weights",
        "weights.txt",
        "--param",
        "KENLM0.path=lm.arpa",
    )
    here = run_pysmt(*command, cwd=folder)
    there = run_pysmt(*command, "--cluster", cluster, cwd=folder)
    assert here.returncode == 0 and there.returncode == 0, there.stderr
    # decoded on the cluster (the shared cluster may still list a node an earlier test killed: no count here)
    assert there.stdout == here.stdout and "done: node" in there.stderr


@pytest.mark.slow
def test_token_authentication_set_up_as_the_readme_says(tiny_system, tmp_path, cluster):
    """The head finds a token in its ~/.ray and asks for it; the other node is given it with RAY_AUTH_MODE=token;
    the client finds it in its ~/.ray too. The module's cluster is the same recipe without a token: a client
    with one works there as well."""
    home, stranger = tmp_path / "home", tmp_path / "stranger"
    home.mkdir()
    stranger.mkdir()
    with_token = environment(HOME=str(home))
    subprocess.run([RAY, "get-auth-token", "--generate"], env=with_token, check=True, capture_output=True, timeout=60)
    source = long_input(tmp_path / "in.txt", lines=100)
    local = run_pysmt("decode", "-c", tiny_system, "-i", source)
    with ray_cluster(with_token, environment(HOME=str(home), RAY_AUTH_MODE="token")) as nodes:
        there = run_pysmt("decode", "-c", tiny_system, "-i", source, "--cluster", nodes.address, env=with_token)
        assert there.returncode == 0, there.stderr
        assert there.stdout == local.stdout and "2 actor(s) on 2 node(s)" in there.stderr
        assert "Unauthenticated" not in there.stderr  # (the question whether the head wants a token is not shown)
        refused = run_pysmt(
            "decode",
            "-c",
            tiny_system,
            "-i",
            source,
            "--cluster",
            nodes.address,
            env=environment(HOME=str(stranger)),
            timeout=60,
        )
        one_line_error(
            refused,
            f"--cluster {nodes.address}: the Ray cluster there asks for its token, and this client has none or another",
            "~/.ray/auth_token",
        )
    without = run_pysmt("decode", "-c", tiny_system, "-i", source, "--cluster", cluster, env=with_token)
    assert without.returncode == 0 and without.stdout == local.stdout, without.stderr


def decode_losing_the_head(system: Path, tmp_path: Path, source: Path, loading: bool = False) -> dict:
    """Decode ``source`` on a cluster of its own whose head (every process of its node) is killed once the
    client has written a translation, or (``loading``) once it says the actors load the system (they take
    seconds to start: the client is then waiting for them); what came of it."""
    err_path = tmp_path / "err.txt"
    with ray_cluster() as nodes, open(err_path, "w") as err:
        run = start_pysmt(
            "decode",
            "-c",
            system,
            "-i",
            source,
            "--nbest",
            tmp_path / "cluster.nbest",
            "--nbest-size",
            "3",
            "--cluster",
            nodes.address,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        try:
            if loading:
                wait_until(lambda: run.poll() is not None or "loading the system" in err_path.read_text(), 120)
                first = ""
            else:
                first = run.stdout.readline()
                assert len(actors_in(nodes.head.pid, nodes.worker.pid)) == 2  # (what is looked for below)
            assert run.poll() is None, err_path.read_text()
            end_session(nodes.head.pid)
            killed = time.monotonic()
            out = first + run.stdout.read()  # (to its end: the client has exited)
            run.wait(timeout=60)
            seconds = time.monotonic() - killed
        finally:
            if run.poll() is None:
                run.kill()
        actors_end = wait_until(lambda: not actors_in(nodes.head.pid, nodes.worker.pid), 10)
        end_session(nodes.worker.pid)  # (headless, it would take its time over a polite end)
        said = subprocess.CompletedProcess(run.args, run.returncode, out, err_path.read_bytes())
        error = one_line_error(said, status=run.returncode)
        return {
            "status": run.returncode,
            "seconds": seconds,
            "out": out,
            "error": error,
            "address": nodes.address,
            "actors_end": actors_end,
        }


@pytest.mark.slow
def test_the_head_killed_mid_decode_stops_the_client_with_one_line_keeping_what_it_wrote(tiny_system, tmp_path):
    source = long_input(tmp_path / "in.txt", lines=1500)
    lost = decode_losing_the_head(tiny_system, tmp_path, source)
    assert lost["status"] == 1 and lost["seconds"] < HEAD_LOSS_S, lost
    assert lost["actors_end"], lost  # none outlives the client by more than 10 s
    written = lost["out"].splitlines()
    assert lost["error"] == (
        f"Error: lost the cluster's head at {lost['address']}: it stopped answering; the first "
        f"{len(written):,} of 1,500 line(s) had been translated"
    )
    # what was written is the local run's start: the translations, and the n-best list (no earlier file)
    start = tmp_path / "start.txt"
    start.write_text("".join(source.read_text().splitlines(keepends=True)[: len(written)]))
    local = run_pysmt(
        "decode", "-c", tiny_system, "-i", start, "--nbest", tmp_path / "local.nbest", "--nbest-size", "3"
    )
    assert 0 < len(written) < 1500 and lost["out"] == local.stdout
    assert (tmp_path / "cluster.nbest").read_text() == (tmp_path / "local.nbest").read_text()


@pytest.mark.slow
def test_the_head_killed_while_the_actors_load_stops_the_client_with_one_line(tiny_system, tmp_path):
    lost = decode_losing_the_head(tiny_system, tmp_path, long_input(tmp_path / "in.txt", lines=1500), loading=True)
    assert lost["status"] == 1 and lost["seconds"] < HEAD_LOSS_S and lost["out"] == "", lost
    assert lost["actors_end"], lost
    # (no count of lines written: the client was still waiting for its actors)
    assert lost["error"] == f"Error: lost the cluster's head at {lost['address']}: it stopped answering"


@pytest.mark.slow
def test_the_rescoring_pass_on_the_cluster_gives_the_local_outputs(tmp_path):
    """A feature of complete translations (pysmt.testing's, found by the actors as an installed plugin: on a throw-away
    cluster of this machine, started by the command, whose processes inherit its environment): decode's rescored
    translations and n-best lists, and rescore --src's list, as on this machine."""
    from pysmt.testing import TargetWordsFeature, registered_for_commands, write_toy_system

    system = write_toy_system(tmp_path / "system", features=["target-words"], weights={"TargetWords0": "2"})
    env = registered_for_commands(tmp_path / "plugins", target_words=TargetWordsFeature)
    source, plain = tmp_path / "in.txt", tmp_path / "plain.nbest"
    source.write_text("a b c\nc b a\nb c\n" * 20)
    without = write_toy_system(tmp_path / "without")  # the list of the system without the feature, to rescore
    assert run_pysmt("decode", "-c", without, "-i", source, "--nbest", plain, "--nbest-size", "5").returncode == 0
    outs = {}
    for where in ("local", "cluster"):
        nbest, rescored = tmp_path / f"{where}.nbest", tmp_path / f"{where}.rescored"
        cluster = ["--cluster", "local"] if where == "cluster" else []
        decode = run_pysmt(
            "decode", "-c", system, "-i", source, "--nbest", nbest, "--nbest-size", "3", *cluster, env=env
        )
        assert decode.returncode == 0, decode.stderr
        rescore = ["rescore", "-c", system, "--features", "target-words", "--nbest", plain, "--out", rescored]
        proc = run_pysmt(*rescore, "--src", source, *cluster, env=env)
        assert proc.returncode == 0, proc.stderr
        assert ("done: node" in decode.stderr + proc.stderr) == bool(cluster), decode.stderr + proc.stderr
        outs[where] = (decode.stdout, nbest.read_bytes(), rescored.read_bytes())
    assert outs["cluster"] == outs["local"]
    assert outs["local"][0] == "y y z\nz y y\ny z\n" * 20 and b" TargetWords0= 2 ||| 2.711009\n" in outs["local"][1]
    assert outs["local"][2].startswith(b"0 ||| y y z ||| ") and b" TargetWords0= 2 ||| 2.711009\n" in outs["local"][2]
