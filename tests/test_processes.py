"""What real machines do to runs: two runs into one folder, kill -9, SIGTERM, dead workers, full disks.

Every case runs real processes and sends real signals (issue 23); the README's *Safety* section
says what each one guarantees.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pysmt.folder_lock import LOCK_FILE, lock_folder
from pysmt.jobs import Job, fingerprint
from pysmt.textio import TEMP_MARK
from tests.conftest import error_line, fails, long_input, pysmt, tune_command

PYSMT = [sys.executable, "-m", "pysmt.cli"]


def children_of(pid: int) -> list[int]:
    """The PIDs whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent to collect it counts as dead)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_until(condition, seconds: float = 20.0) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def start_decode(system: Path, source: Path, *extra: str, **popen) -> subprocess.Popen:
    """A decoder in a session of its own (so that signals to its group reach only it and its workers)."""
    proc = subprocess.Popen([*PYSMT, "decode", "-c", str(system), "-i", str(source), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, **popen)
    assert proc.stdout.readline()  # it is translating
    return proc


def hold_lock(folder: Path) -> subprocess.Popen:
    """Another process holding ``folder``'s lock, as a running pysmt command would."""
    code = f"from pysmt.folder_lock import lock_folder; lock_folder({str(folder)!r}); print('held', flush=True); " \
           "import time; time.sleep(120)"
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert holder.stdout.readline() == b"held\n"
    return holder


# -- 1. one owner per output folder -------------------------------------------------------------

def test_a_second_tune_into_a_busy_folder_is_refused_naming_the_holder(tiny_system, dev, tmp_path):
    src, ref = dev
    out = tmp_path / "tune"
    holder = hold_lock(out)
    try:
        fails(pysmt(*tune_command(tiny_system, src, ref, out)), 1, f"{out.resolve()} is in use by another run",
              f"PID {holder.pid}")
        assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE]  # nothing written
    finally:
        holder.kill()
        holder.wait()
    # the kernel released the lock with the process: no stale lock to clean up
    assert pysmt(*tune_command(tiny_system, src, ref, out)).returncode == 0


@pytest.mark.parametrize("command", ["binarize", "train", "rnn train"])
def test_every_command_writing_an_out_folder_takes_its_lock(tiny_system, tmp_path, command):
    out = tmp_path / "out"
    holder = hold_lock(out)
    corpus = tmp_path / "c"
    for lang in ("en", "fr"):
        (tmp_path / f"c.{lang}").write_text("a house\nthe cat\n")
    args = {"binarize": ["binarize", "-c", str(tiny_system), "-o", str(out)],
            "train": ["train", "--corpus", str(corpus), "--out", str(out)],
            "rnn train": ["rnn", "train", "--phrase-table", str(tiny_system.parent / "phrases.txt"),
                          "--out", str(out)]}[command]
    try:
        proc = pysmt(*args)
        assert proc.returncode == 1 and "is in use by another run" in proc.stderr.decode(), proc.stderr.decode()
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_is_not_part_of_a_folders_content(tmp_path):
    folder = tmp_path / "system"
    folder.mkdir()
    (folder / "table").write_text("x\n")
    before = fingerprint(folder, "--system")
    lock_folder(folder)  # (this test process holds it until it exits)
    assert fingerprint(folder, "--system") == before
    job = Job(tmp_path / "empty", "tune", {}, {})
    lock_folder(job.out)
    assert not job.holds_other_work() and job.start() is False  # a locked empty folder is still empty


def test_taking_a_lock_removes_what_a_killed_run_left_but_not_other_runs_files(tmp_path):
    out = tmp_path / "run"
    (out / "sub").mkdir(parents=True)
    (out / "child").mkdir()
    left = [out / f".nbest.txt.x1{TEMP_MARK}", out / "sub" / f".model.pt.x2{TEMP_MARK}.pt", out / f".lm.x3{TEMP_MARK}"]
    for path in left[:2]:
        path.write_text("partial")
    left[2].mkdir()
    (left[2] / "lm.arpa").write_text("partial")
    theirs = out / "child" / f".log.tsv.x4{TEMP_MARK}"  # a folder with its own owner
    (out / "child" / LOCK_FILE).touch()
    theirs.write_text("being written")
    (out / "keep.txt").write_text("mine")
    lock_folder(out)
    assert not any(path.exists() for path in left)
    assert theirs.exists() and (out / "keep.txt").exists()


# -- 2. children die with their parents; a dead worker is an error, not a hang ------------------

def test_kill_9_of_decode_leaves_no_worker(tiny_system, tmp_path):
    proc = start_decode(tiny_system, long_input(tmp_path / "in.txt"), "--threads", "2")
    workers = children_of(proc.pid)
    assert len(workers) >= 2
    proc.kill()
    proc.wait()
    assert wait_until(lambda: not any(alive(pid) for pid in workers)), "orphaned workers"


@pytest.mark.parametrize("library", [False, True])
def test_kill_9_leaves_no_child_command(tmp_path, library):
    """The tools pysmt runs (lmplz, an `rnn train` of the experiment) and those a library runs (eflomal)."""
    start = ("with library_children_die_with_us(): subprocess.run(['sleep', '60'])" if library
             else "ChildProcess(['sleep', '60']).wait()")
    code = textwrap.dedent(f"""
        import subprocess
        from pysmt.processes import ChildProcess, library_children_die_with_us
        {start}
    """)
    parent = subprocess.Popen([sys.executable, "-c", code])
    assert wait_until(lambda: children_of(parent.pid))
    child = children_of(parent.pid)[0]
    parent.kill()
    parent.wait()
    assert wait_until(lambda: not alive(child)), "orphaned child"


def test_eflomal_runs_its_aligner_as_a_child_that_dies_with_us(monkeypatch, tmp_path):
    """library_children_die_with_us reaches eflomal's aligner (started through subprocess.Popen), and
    eflomal's own temporary files go into our temporary folder, which a rerun removes after kill -9."""
    import tempfile

    from pysmt import processes
    from pysmt.training.alignment import align

    started = []
    original = processes.ChildProcess.__init__

    def recording(self, command, *args, **kwargs):
        started.append((command, tempfile.gettempdir()))
        original(self, command, *args, **kwargs)

    monkeypatch.setattr(processes.ChildProcess, "__init__", recording)
    src, tgt = tmp_path / "c.en", tmp_path / "c.fr"
    src.write_text("a house\nthe house\n")
    tgt.write_text("une maison\nla maison\n")
    align(src, tgt, tmp_path / "aligned")
    assert [Path(command[0]).name for command, _ in started] == ["eflomal"]
    assert TEMP_MARK in started[0][1] and Path(started[0][1]).parent == tmp_path
    assert (tmp_path / "aligned").read_text().count("\n") == 2


def test_a_killed_decoding_worker_stops_decode_with_one_line(tiny_system, tmp_path):
    proc = start_decode(tiny_system, long_input(tmp_path / "in.txt"), "--threads", "2")
    os.kill(children_of(proc.pid)[0], signal.SIGKILL)
    try:
        out, err = proc.communicate(timeout=60)  # before the fix: a hang at 0% CPU
    finally:
        proc.kill()
    assert proc.returncode == 1, err.decode()
    assert "Traceback" not in err.decode() and "a decoding worker process died" in error_line(
        subprocess.CompletedProcess([], 1, out, err))


# -- 3. outputs: SIGTERM, full disks, failures, links and devices ------------------------------

STOPS = {"ctrl-c": (signal.SIGINT, 130, b"interrupted"), "sigterm": (signal.SIGTERM, 143, b"terminated")}


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("stop", list(STOPS))
def test_a_stopped_decode_keeps_the_nbest_under_its_name_quietly(tiny_system, tmp_path, threads, stop):
    """Ctrl-C (the terminal signals the whole group) and SIGTERM (as `timeout` does) alike."""
    signum, status, word = STOPS[stop]
    nbest = tmp_path / "nbest.txt"
    # a shell that starts a job in the background ignores SIGINT for it (and so would the test's
    # decoder, inheriting that): give it the default, as a terminal does
    proc = start_decode(tiny_system, long_input(tmp_path / "in.txt"), "--threads", threads, "--nbest", str(nbest),
                        "--nbest-size", "2", preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(0.5)
    os.killpg(proc.pid, signum)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == status, err.decode()
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err and b"BrokenPipe" not in err and word in err
    kept = {line.split(" ||| ")[0] for line in nbest.read_text().splitlines()}
    assert "0" in kept and len(kept) < 3000  # what was done is kept, under the final name
    assert not list(tmp_path.glob(f".*{TEMP_MARK}*"))  # no hidden temporary file left behind


def limited_file_size(size: int):
    """For preexec_fn: files may grow to ``size`` bytes; a write beyond fails (EFBIG), as on a full disk."""
    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return limit


def test_a_full_disk_keeps_the_earlier_nbest_and_names_the_file(tiny_system, tmp_path):
    nbest = tmp_path / "nbest.txt"
    nbest.write_text("an earlier, complete n-best list\n")
    source = long_input(tmp_path / "in.txt", lines=300)
    proc = subprocess.run([*PYSMT, "decode", "-c", str(tiny_system), "-i", str(source), "--nbest", str(nbest)],
                          capture_output=True, preexec_fn=limited_file_size(20_000))
    fails(proc, 1, f"writing {nbest}", "File too large", "incomplete file was removed")
    assert nbest.read_text() == "an earlier, complete n-best list\n"
    assert not list(tmp_path.glob(f".*{TEMP_MARK}*"))


def test_a_full_disk_while_saving_a_torch_checkpoint_is_one_line(tmp_path):
    pytest.importorskip("torch")
    code = textwrap.dedent(f"""
        import torch
        from pysmt.errors import PysmtError
        from pysmt.textio import atomic_path
        try:
            with atomic_path({str(tmp_path / 'last.pt')!r}) as tmp:
                torch.save(torch.zeros(100_000), tmp)
        except PysmtError as err:
            print(err)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          preexec_fn=limited_file_size(50_000))
    assert proc.stdout.startswith(f"writing {tmp_path / 'last.pt'}: the write failed (is the disk full?)"), proc
    assert list(tmp_path.iterdir()) == []


def test_a_run_that_fails_keeps_an_earlier_complete_nbest(tiny_system, tmp_path):
    nbest = tmp_path / "nbest.txt"
    source = tmp_path / "in.txt"
    source.write_bytes(b"a b c\n" * 9 + b"\xff\n")  # line 10 is not UTF-8
    proc = pysmt("decode", "-c", str(tiny_system), "-i", str(source), "--nbest", str(nbest))
    fails(proc, 1, "line 10")
    partial = nbest.read_text()  # no earlier file: the 9 lines translated are kept
    assert {line.split(" ||| ")[0] for line in partial.splitlines()} == {str(i) for i in range(9)}
    nbest.write_text("complete\n")
    fails(pysmt("decode", "-c", str(tiny_system), "-i", str(source), "--nbest", str(nbest)), 1, "line 10")
    assert nbest.read_text() == "complete\n"


def test_a_symlinked_nbest_writes_its_target_and_keeps_the_link(tiny_system, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a b c\n")
    target, link = tmp_path / "lists" / "target.txt", tmp_path / "link.txt"
    target.parent.mkdir()
    target.write_text("old\n")
    link.symlink_to(target)
    assert pysmt("decode", "-c", str(tiny_system), "-i", str(source), "--nbest", str(link)).returncode == 0
    assert link.is_symlink() and target.read_text().startswith("0 ||| ")


def test_a_fifo_nbest_is_written_as_a_stream_not_replaced(tiny_system, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a b c\nc b a\n")
    fifo = tmp_path / "nbest.fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen([*PYSMT, "decode", "-c", str(tiny_system), "-i", str(source), "--nbest", str(fifo)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with open(fifo, encoding="utf-8") as reader:
        lines = reader.read().splitlines()
    assert proc.wait(timeout=60) == 0, proc.stderr.read().decode()
    assert {line.split(" ||| ")[0] for line in lines} == {"0", "1"}
    assert fifo.is_fifo()


# -- tune iterations, relocation --------------------------------------------------------------------

def test_a_tune_folder_with_a_damaged_times_file_resumes(tiny_system, dev, tmp_path):
    src, ref = dev
    out = tmp_path / "tune"
    assert pysmt(*tune_command(tiny_system, src, ref, out)).returncode == 0
    (out / "run1" / "times.json").write_text('{"deco')  # cut off (by hand: pysmt writes it atomically)
    again = pysmt(*tune_command(tiny_system, src, ref, out))
    assert again.returncode == 0 and b"Traceback" not in again.stderr and b"decode dev" not in again.stderr
    row = (out / "log.tsv").read_text().splitlines()[1].split("\t")
    assert row[5] == "nan" and row[6] == "nan"  # the steps' times are unknown, said so


def test_a_moved_tune_folder_with_its_inputs_resumes(tmp_path):
    """A folder moved together with its inputs is the same job (records hold paths relative to it too)."""
    from tests.conftest import write_moses_system

    project = tmp_path / "project"
    ini = write_moses_system(project / "system")
    src, ref = project / "dev.src", project / "dev.ref"
    src.write_text("a b c\nc b a\nb c\n")
    ref.write_text("x y z\nz y x\ny z\n")
    assert pysmt(*tune_command(ini, src, ref, project / "tune")).returncode == 0
    moved = project.rename(tmp_path / "moved")
    again = pysmt(*tune_command(moved / "system" / "moses.ini", moved / "dev.src", moved / "dev.ref", moved / "tune"))
    assert again.returncode == 0 and b"decode dev" not in again.stderr, again.stderr.decode()


def test_tune_says_when_tuning_did_not_move_the_weights(tiny_system, dev, tmp_path):
    """The warning comes exactly when the start decoded best, or an added feature's tuned weight is 0."""
    src, ref = dev
    out = tmp_path / "tune"
    proc = pysmt(*tune_command(tiny_system, src, ref, out, "--max-iterations", "3", "--features", "repeated-word"))
    assert proc.returncode == 0, proc.stderr.decode()
    rows = [line.split("\t") for line in (out / "log.tsv").read_text().splitlines()[1:]]
    best = max(rows, key=lambda row: float(row[1]))[0]
    said = proc.stderr.decode()
    assert ("warning: the starting weights decoded best" in said) == (best == "1" and len(rows) > 1)
    weight = [line for line in (out / "weights.txt").read_text().splitlines() if line.startswith("RepeatedWord0=")]
    assert ("warning: tuned weight 0 for RepeatedWord0" in said) == (float(weight[0].split()[1]) == 0)


def test_a_second_experiment_into_a_busy_folder_is_refused(tmp_path):
    from tests.conftest import SHARED, shared_data

    shared_data("news", "newstest2013.en")
    out = tmp_path / "run"
    holder = hold_lock(out)
    try:
        fails(pysmt("experiment", "--data", str(SHARED), "--out", str(out), "--scale", "tiny"), 1,
              "is in use by another run", f"PID {holder.pid}")
    finally:
        holder.kill()
        holder.wait()
