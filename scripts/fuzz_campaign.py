"""The long fuzzing campaign of issue 18: the generators of the test suite
(tests/fuzz_inputs.py) at length, every input checked against the contract: refused with a
ValueError naming its key, file, line or argument, or run to completion with a utilisation
in [0, 1] and packet conservation; none may take longer than --limit seconds (a hang) and the
process's peak memory must stay within the run memory budget.

    python scripts/fuzz_campaign.py --seed 0

prints, per kind of input, how many were refused, ran, or broke the contract (with the first
few broken inputs), and exits 1 if any did. "named file" names a file of every kind (FIFO,
device, folder, symlink, missing, empty, huge, non-UTF-8, a path out of the folder, a long
trace) where a run reads or writes one (tests/fuzz_inputs.py's file_cases); "schedule trace"
runs a bottleneck following a drawn Mahimahi trace. A scenario whose run raises the
process's peak memory by more than its estimate (`_core.memory_needs`) counts as "over
estimate". Kinds that run the simulator cost about 0.1-0.5 s
an input, traces and command lines much less, hence different default counts (11,100 in all).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import fuzz_inputs as fi  # noqa: E402
from cubiclab import Scenario, _core  # noqa: E402


#: Inputs of each kind by default, and the option that sets it.
DEFAULT_SIZES = {"scenario (valid)": 300, "scenario (malformed)": 2000, "TOML file": 700, "replay trace": 3500,
                 "cubiclab model": 1000, "cubiclab replay": 3000, "named file": 600, "schedule trace": 500}
OPTIONS = {"scenario (valid)": "--valid", "scenario (malformed)": "--malformed", "TOML file": "--toml",
           "replay trace": "--trace", "cubiclab model": "--model-cli", "cubiclab replay": "--replay-cli",
           "named file": "--files", "schedule trace": "--schedule-trace"}

#: Python's own temporaries beside what the estimate counts (frames' indexes, the summary).
_SLACK_BYTES = 64 << 20


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def within_estimate(sc, run) -> str:
    """`run(sc)`, with its memory checked against the estimate: when the process's peak rises
    during the run, it may rise at most the estimate (`_core.memory_needs`) above the memory
    held before (a run under an earlier peak stays unseen: a bound from below)."""
    try:
        scenario = sc if isinstance(sc, Scenario) else Scenario.from_dict(sc)
        estimate = sum(b for _, b, _ in _core.memory_needs(scenario.to_json()))
    except ValueError:
        estimate = 0  # refused by the run as well
    before, peak_before = _resident_bytes(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    outcome = run(sc)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if peak > peak_before and peak - before > estimate + _SLACK_BYTES:
        return "over estimate"
    return outcome


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def campaign(sizes: dict[str, int], rng_seed: int, limit_s: int) -> tuple[dict, list]:
    counts: dict[str, Counter] = {}
    broken: list = []
    workdir = Path(tempfile.mkdtemp(prefix="cubiclab-fuzz-"))
    signal.signal(signal.SIGALRM, _alarm)

    def check(kind: str, fn, shown) -> None:
        signal.alarm(limit_s)
        try:
            outcome = fn()
        except Hang:
            outcome = "hang"
        except AssertionError as e:  # the contract's checks: a message, a write, a result
            outcome = "broken"
            broken.append((kind, shown, f"{type(e).__name__}: {e}"[:400]))
        except BaseException as e:  # noqa: BLE001 -- anything escaping the command: a traceback
            outcome = "traceback"
            broken.append((kind, shown, f"{type(e).__name__}: {e}"[:400]))
        finally:
            signal.alarm(0)
        if outcome == "hang":
            broken.append((kind, shown, f"took more than {limit_s} s"))
        if outcome == "over estimate":
            broken.append((kind, shown, "its peak memory rose above its estimate"))
        counts.setdefault(kind, Counter())[outcome] += 1

    def toml(data):
        path = workdir / "fuzz.toml"
        path.write_bytes(data)
        return fi.check_toml(path)

    def replay_cli(argv, trace):
        path = workdir / "trace.csv"
        path.write_text(trace)
        return fi.check_cli(argv[:2] + [str(path)] + argv[2:])

    def named_file(case):
        folder = Path(tempfile.mkdtemp(dir=workdir))
        try:
            return fi.check_file_case(folder, *case)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def schedule_trace(data):
        folder = Path(tempfile.mkdtemp(dir=workdir))
        try:
            return fi.check_schedule_trace(folder, data)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    kinds = {
        "scenario (valid)": (fi.scenario(), lambda sc: within_estimate(sc, fi.check_run)),
        "scenario (malformed)": (fi.malformed_scenario(), lambda sc: within_estimate(sc, fi.check_run)),
        "TOML file": (fi.toml_bytes(), toml),
        "replay trace": (st.tuples(st.sampled_from(fi.ALGORITHMS), fi.trace_text()),
                         lambda a: fi.check_trace(*a)),
        "cubiclab model": (fi.model_argv(), lambda argv: fi.check_cli(argv)),
        "cubiclab replay": (st.tuples(fi.replay_argv(), fi.trace_text()), lambda a: replay_cli(*a)),
        "named file": (fi.file_cases(), named_file),
        "schedule trace": (fi.mahimahi_text(), schedule_trace),
    }
    def all_of(kind, strategy, run):
        @seed(rng_seed)
        @settings(max_examples=sizes[kind], deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(strategy)
        def one(value):
            check(kind, lambda: run(value), repr(value)[:300])

        return one

    for kind, (strategy, run) in kinds.items():
        t0 = time.perf_counter()
        try:
            all_of(kind, strategy, run)()
        except Exception as e:  # noqa: BLE001 -- a generator's own fault: reported, not fatal
            broken.append((kind, "(the generator)", f"{type(e).__name__}: {e}"[:400]))
            counts.setdefault(kind, Counter())["broken"] += 1
        c = counts[kind]
        print(f"{kind:22s} {sum(c.values()):6d} inputs in {time.perf_counter() - t0:6.1f} s: refused {c['refused']}, "
              f"ran {c['ran']}, traceback {c['traceback']}, broken {c['broken']}, hang {c['hang']}, "
              f"over estimate {c['over estimate']}", file=sys.stderr,
              flush=True)
    return counts, broken


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for kind, n in DEFAULT_SIZES.items():
        p.add_argument(OPTIONS[kind], dest=kind, type=int, default=n, help=f"inputs of kind '{kind}'")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=60, help="seconds an input may take before it counts as a hang")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    counts, broken = campaign({k: getattr(args, k) for k in DEFAULT_SIZES}, args.seed, args.limit)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    budget = _core.MEMORY_BUDGET_BYTES
    print(f"{'kind':22s} {'inputs':>7s} {'refused':>8s} {'ran':>6s} {'traceback':>9s} {'broken':>7s} {'hang':>5s} "
          f"{'over estimate':>13s}")
    for kind, c in counts.items():
        print(f"{kind:22s} {sum(c.values()):7d} {c['refused']:8d} {c['ran']:6d} {c['traceback']:9d} {c['broken']:7d} "
              f"{c['hang']:5d} {c['over estimate']:13d}")
    total = Counter()
    for c in counts.values():
        total.update(c)
    print(f"{'all':22s} {sum(total.values()):7d} {total['refused']:8d} {total['ran']:6d} {total['traceback']:9d} "
          f"{total['broken']:7d} {total['hang']:5d} {total['over estimate']:13d}")
    print(f"peak memory {peak / 2**20:.0f} MiB (budget {budget / 2**30:.0f} GiB); {time.perf_counter() - t0:.0f} s")
    for kind, shown, why in broken[:20]:
        print(f"BROKEN [{kind}] {why}\n    input: {shown}")
    return 1 if broken or peak > budget else 0


if __name__ == "__main__":
    sys.exit(main())
