"""The experiment's wall time on 1, 4 and 12 machines, modelled from its measured stage times.

    python bench/experiment_schedule.py                              # the full run's times (docs/results.md)
    python bench/experiment_schedule.py --run RUN_DIR                # a run folder's stages/*/done.json
    python bench/experiment_schedule.py --machines 1 2 4 12 --cpus 16 --seeds 3

The stages and what each needs come from ``pysmt experiment`` itself (:meth:`Experiment.plan`);
each stage asks for ``--threads`` CPUs (2, as measured) on one machine of ``--cpus`` CPUs, and is
started, in the single-machine order, as soon as the stages it needs are done and a machine has
the CPUs free: what ``--cluster`` does, with Ray as the queue. A stage's time is the one measured
on 2 cores; a seed the run did not measure takes the mean of the seeds it did (said in the output).
Evaluate runs on the client. Printed: the modelled wall time per machine count, the critical path
(the wall time no number of machines goes below), and the single-machine sequential total.
"""

from __future__ import annotations

import argparse
import heapq
import json
from pathlib import Path

from pysmt.experiment.chain import Experiment, ExperimentOptions, tune_stage
from pysmt.experiment.settings import CONFIGURATIONS, SCALES, chosen
from pysmt.experiment.stages import Step, duration

ROOT = Path(__file__).resolve().parents[1]

TIMES = Path(__file__).with_name("experiment-full-times.json")
CLIENT = {"evaluate"}  # in-process stages: they run on the client, not on a machine's CPUs


def measured(run: Path | None) -> dict[str, float]:
    if run is None:
        return json.loads(TIMES.read_text())["seconds"]
    return {done.parent.name: json.loads(done.read_text())["seconds"] for done in (run / "stages").glob("*/done.json")}


def stage_seconds(steps: list[Step], times: dict[str, float]) -> tuple[dict[str, float], list[str]]:
    """Each step's seconds; a seed not measured takes the mean of the measured seeds of its stage."""
    seconds, guessed = {}, []
    for step in steps:
        if step.name in times:
            seconds[step.name] = times[step.name]
            continue
        stem = step.name.rsplit("-seed", 1)[0]
        others = [value for name, value in times.items() if name.rsplit("-seed", 1)[0] == stem and "-seed" in name]
        if not others:
            raise SystemExit(f"no measured time for stage {step.name}")
        seconds[step.name] = sum(others) / len(others)
        guessed.append(step.name)
    return seconds, guessed


def schedule(steps: list[Step], seconds: dict[str, float], machines: int, cpus: int, threads: int) -> float:
    """The wall time of list scheduling: stages in plan order, each when its needs are done and CPUs free."""
    need = min(threads, cpus)
    free = [cpus] * machines
    finish: dict[str, float] = {}
    running: list[tuple[float, str, int]] = []  # (end, stage, machine)
    pending, now = list(steps), 0.0
    while pending or running:
        for step in list(pending):
            if not all(name in finish and finish[name] <= now for name in step.after):
                continue
            if step.name in CLIENT:
                pending.remove(step)
                heapq.heappush(running, (now + seconds[step.name], step.name, -1))
                continue
            machine = next((m for m in range(machines) if free[m] >= need), None)
            if machine is None:
                continue
            free[machine] -= need
            pending.remove(step)
            heapq.heappush(running, (now + seconds[step.name], step.name, machine))
        now, name, machine = heapq.heappop(running)
        finish[name] = now
        if machine >= 0:
            free[machine] += need
    return max(finish.values())


def critical_path(steps: list[Step], seconds: dict[str, float]) -> tuple[float, list[str]]:
    ends: dict[str, tuple[float, list[str]]] = {}
    for step in steps:  # plan order: every stage after those it needs
        before = max((ends[name] for name in step.after), default=(0.0, []))
        ends[step.name] = (before[0] + seconds[step.name], [*before[1], step.name])
    return max(ends.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", type=Path, help="a run folder (default: the full run's times, docs/results.md)")
    parser.add_argument("--machines", type=int, nargs="+", default=[1, 4, 12])
    parser.add_argument("--cpus", type=int, default=2, help="CPUs per machine (default: 2, as measured)")
    parser.add_argument("--threads", type=int, default=2, help="the experiment's --threads: CPUs per stage")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    times = measured(args.run)
    options = ExperimentOptions(
        data=ROOT.parent / "shared" / "data",
        out=Path("/nonexistent"),
        configurations=chosen(c.key for c in CONFIGURATIONS if tune_stage(c, 0) in times),  # those measured
        scale=SCALES["full"],
        seeds=args.seeds,
        dev_size=None,
        budget=60.0,
        threads=args.threads,
    )
    steps = Experiment(options).plan()
    seconds, guessed = stage_seconds(steps, times)
    if guessed:
        print(f"not measured, the mean of the measured seeds: {', '.join(guessed)}")
    print(
        f"{args.seeds} seed(s), {len(steps)} stages after the data's; machines of {args.cpus} CPUs, "
        f"{min(args.threads, args.cpus)} per stage"
    )
    print(f"one machine, one stage at a time (today's order): {duration(sum(seconds.values()))}")
    for machines in args.machines:
        wall = schedule(steps, seconds, machines, args.cpus, args.threads)
        print(f"{machines:>3} machine(s): {duration(wall)}")
    length, path = critical_path(steps, seconds)
    print(f"critical path: {duration(length)}: {' -> '.join(path)}")


if __name__ == "__main__":
    main()
