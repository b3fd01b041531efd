"""The agreement matrix: every scenario under scenarios/agreement/ as an ensemble on the
simulator and on the real kernel (testbed), each metric judged by cubiclab.testbed.ensemble,
printed as a table and written with one picture per scenario under docs/agreement/.

    python scripts/agreement.py                    # simulator now vs the kernel runs on file
    python scripts/agreement.py --testbed          # (root) run the kernel side where missing
    python scripts/agreement.py --baseline DIR     # also an older build (a cubiclab package
                                                   # folder with its _core extension) as "before"
    python scripts/agreement.py --merge A.toml ... # only these scenarios; the other rows of
                                                   # docs/agreement/verdicts.json (and the
                                                   # "before" table) are kept

The kernel side does not change with the simulator, so its runs are kept in
docs/agreement/kernel/<scenario>.json (metrics of every run and the first run's cwnd on a
50 ms grid) and reused; --rerun-testbed replaces them.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from cubiclab.testbed.ensemble import FIRST_RUNS, MAX_RUNS

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios" / "agreement"
OUT = ROOT / "docs" / "agreement"
ENSEMBLE_PY = ROOT / "python" / "cubiclab" / "testbed" / "ensemble.py"
STATS_PY = ROOT / "python" / "cubiclab" / "stats.py"
GRID_S = 0.05
# Table columns: (header, metric prefix); per-flow metrics show the flow that differs most.
COLUMNS = [("util", "utilization"), ("share", "share"), ("loss ev", "loss_events"), ("retx", "retransmits"),
           ("ss peak", "ss_peak"), ("mean cwnd", "cwnd_mean"), ("CE marks", "ce_marks"),
           ("ECN red", "ecn_reductions")]

# Run by the baseline build in a subprocess: the same metrics with this tree's ensemble.py.
# (An older build may lack cubiclab.stats, which ensemble.py imports: this tree's is used.)
_BASELINE_CODE = r"""
import importlib.util, json, sys
import cubiclab
from cubiclab.scenario import Scenario
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec); sys.modules[name] = mod; spec.loader.exec_module(mod)
    return mod
load("cubiclab.stats", sys.argv[4])
ens = load("ensemble", sys.argv[1])
sc = Scenario.load(sys.argv[2]); sc.record.cwnd = "changes"
out = [ens.run_metrics(cubiclab.simulate(sc.replace(seed=int(s)))) for s in sys.argv[3].split(",")]
print(json.dumps(out))
"""


def cwnd_grid(res, duration: float) -> dict:
    from cubiclab.testbed.ensemble import cwnd_on_grid

    grid = np.arange(GRID_S, duration, GRID_S)
    flows = sorted(int(f) for f in res.totals.flow)
    return {"t": [round(float(x), 3) for x in grid],
            "flows": {str(f): [None if not np.isfinite(v) else float(v) for v in cwnd_on_grid(res, f, grid)]
                      for f in flows}}


def kernel_side(sc, path: Path, runs: int, run_testbed: bool, rerun: bool, quiet: bool,
                lock: Path | None = None) -> dict | None:
    """The kernel's runs of `sc`: from file, or run now (root) up to `runs` seeds, each
    appended to the file as it finishes (an interrupted batch keeps its runs). `lock`: a
    file held (flock) around each kernel run, so that other kernel work interleaves."""
    data = json.loads(path.read_text()) if path.exists() and not rerun else None
    if data is not None and (len(data["metrics"]) >= runs or not run_testbed):
        return data
    if not run_testbed:
        return None
    from cubiclab.io import atomic_write_text
    from cubiclab.testbed.compare import seeds
    from cubiclab.testbed.ensemble import run_metrics
    from cubiclab.testbed.run import plan, testbed

    if data is not None and data["kernel"] != platform.release():
        raise SystemExit(f"{path}: runs of kernel {data['kernel']}, this is {platform.release()}; --rerun-testbed")
    tsc = sc.replace()
    tsc.record.cwnd = "changes"
    plan(tsc)
    data = data or {"scenario": sc.name, "seeds": [], "kernel": platform.release(),
                    "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "emulator_late_p99_us": [],
                    "metrics": [], "cwnd_grid": None}
    data.setdefault("runs", [{} for _ in data["metrics"]])  # per run: when, and the machine's load
    for seed in seeds(tsc, runs)[len(data["metrics"]):]:
        if not quiet:
            print(f"  testbed {sc.name} seed {seed}", file=sys.stderr)
        with _held(lock):
            load = os.getloadavg()[0]
            res = _testbed_with_retries(testbed, tsc.replace(seed=seed))
        data["seeds"].append(seed)
        data["metrics"].append(run_metrics(res))
        data["emulator_late_p99_us"].append(res.summary["emulator"].get("late_p99_us"))
        data["runs"].append({"measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                             "load1": round(load, 2), "start_late_us": res.summary.get("flow_start_late_us")})
        data["cwnd_grid"] = data["cwnd_grid"] or cwnd_grid(res, res.summary["duration_s"])
        atomic_write_text(path, json.dumps(data, indent=1) + "\n")
    return data


@contextlib.contextmanager
def _held(lock: Path | None):
    """`lock` held with flock for the block (nothing without one)."""
    if lock is None:
        yield
        return
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _testbed_with_retries(testbed, sc, tries: int = 3):
    """The emulator sometimes fails to attach on a loaded machine: try again after a pause."""
    for k in range(tries):
        try:
            return testbed(sc, progress=False)
        except RuntimeError as e:
            if k == tries - 1:
                raise
            print(f"  testbed failed ({e}); again in 10 s", file=sys.stderr)
            time.sleep(10)


def baseline_side(build: Path, scenario_file: Path, seeds: list[int]) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=str(build))
    out = subprocess.run([sys.executable, "-c", _BASELINE_CODE, str(ENSEMBLE_PY), str(scenario_file),
                          ",".join(map(str, seeds)), str(STATS_PY)], capture_output=True, text=True, env=env,
                         check=False)
    if out.returncode != 0:
        raise RuntimeError(f"baseline build at {build} failed on {scenario_file.name}: {out.stderr[-800:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


#: How bad a verdict is, for the cell that shows a scenario's worst flow.
_RANK = {"agrees": 0, "undecided": 1, "differs": 2}


def worst(verdicts: list[dict], prefix: str) -> dict | None:
    """The verdict of `prefix` (or of its flow that differs most)."""
    rows = [v for v in verdicts if v["metric"].split("[")[0] == prefix]
    if not rows:
        return None

    def badness(v):
        d = abs(v["diff"]) / v["band"] if v["band"] else 0.0
        return (_RANK[v["verdict"]], d if np.isfinite(d) else 0.0)

    return max(rows, key=badness)


def cell(v: dict | None) -> str:
    if v is None:
        return "-"
    fmt = "{:.3f}" if v["kind"] == "abs" else "{:.0f}"
    mark = {"agrees": "ok", "undecided": "?", "differs": "**X**"}[v["verdict"]]
    ratio = "-" if not np.isfinite(v["sd_ratio"]) else f"{v['sd_ratio']:.2g}"
    spread = {"agrees": "", "undecided": "?", "differs": "**X**"}[v["spread"]]
    return f"{fmt.format(v['sim_mean'])} / {fmt.format(v['kernel_mean'])} {mark} · sd {ratio}{spread}"


def table(rows: list[tuple[str, list[dict]]], title: str) -> str:
    head = "| scenario | runs | " + " | ".join(h for h, _ in COLUMNS) + " |"
    lines = [f"### {title}", "",
             "Each cell: simulator mean / kernel mean and the verdict on their difference (its Welch 95% interval "
             "against ± the tolerance): ok agrees (inside), **X** differs (wholly outside), ? undecided; then "
             "`sd`, the ratio of the standard deviations simulator / kernel, marked **X** where its F 95% interval "
             "lies wholly outside [1/2, 2] and ? where it straddles an edge. Per-flow metrics show the flow that "
             "differs most; runs: simulator / kernel.",
             "", head, "|" + "---|" * (len(COLUMNS) + 2)]
    for name, verdicts in rows:
        n = f"{verdicts[0]['n_sim']} / {verdicts[0]['n_kernel']}" if verdicts else "-"
        lines.append(f"| {name} | {n} | " + " | ".join(cell(worst(verdicts, p)) for _, p in COLUMNS) + " |")
    cells = [c for _, vs in rows for c in (worst(vs, p) for _, p in COLUMNS) if c is not None]
    count = {w: sum(c["verdict"] == w for c in cells) for w in _RANK}
    spread = {w: sum(c["spread"] == w for c in cells) for w in _RANK}
    n_ok = sum(all(v["verdict"] == "agrees" for v in vs) for _, vs in rows)
    lines += ["", f"{n_ok} of {len(rows)} scenarios agree on every metric. Means, of {len(cells)} cells: "
                  f"{count['agrees']} agree, {count['differs']} differ, {count['undecided']} undecided. Spreads "
                  f"(within a factor 2): {spread['agrees']} agree, {spread['differs']} differ, "
                  f"{spread['undecided']} undecided."]
    return "\n".join(lines)


def picture(name: str, sim_res, kernel: dict, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from cubiclab.plots import save

    g = kernel["cwnd_grid"]
    t = np.asarray(g["t"])
    sim_grid = cwnd_grid(sim_res, sim_res.summary["duration_s"])
    fig, ax = plt.subplots(figsize=(8, 3.2))
    for f, ys in g["flows"].items():
        col = f"C{int(f) % 10}"
        ax.plot(t, np.asarray(ys, dtype=float), color=col, lw=0.8, label=f"flow {f} kernel")
        ax.plot(np.asarray(sim_grid["t"]), np.asarray(sim_grid["flows"].get(f, []), dtype=float), color=col, lw=0.8,
                ls="--", label=f"flow {f} sim")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cwnd (packets)")
    ax.set_title(f"{name}: kernel {kernel.get('kernel', '')} (solid) vs simulator (dashed), seed {kernel['seeds'][0]}",
                 fontsize="small")
    ax.legend(fontsize="x-small", ncol=2, loc="upper right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return save(fig, path)


def merged(out: Path, rows: list) -> tuple[list, list, str]:
    """`rows` merged into the rows on file in `out`, and the "before" table on file with its
    title (from table.md)."""
    on_file = out / "verdicts.json"
    now = json.loads(on_file.read_text()) if on_file.exists() else {}
    now.update(dict(rows))
    before_file = out / "verdicts_before.json"
    before = sorted(json.loads(before_file.read_text()).items()) if before_file.exists() else []
    md = out / "table.md"
    titles = [x[4:] for x in md.read_text().splitlines() if x.startswith("### Before:")] if md.exists() else []
    return sorted(now.items()), before, titles[0] if titles else "Before: an older build against the same kernel runs"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="*", help="TOML files (default: scenarios/agreement/*.toml)")
    ap.add_argument("--runs", type=int, default=FIRST_RUNS, help="runs per side (seeds seed, seed+1, ...)")
    ap.add_argument("--max-runs", type=int, default=MAX_RUNS,
                    help="with --testbed: while a metric is undecided, more kernel runs up to this many")
    ap.add_argument("--testbed", action="store_true", help="run the kernel side where it is not on file (root)")
    ap.add_argument("--rerun-testbed", action="store_true", help="run the kernel side again even if on file")
    ap.add_argument("--lock", type=Path, help="hold this file (flock) around each kernel run, e.g. /tmp/kernel.lock")
    ap.add_argument("--baseline", type=Path, help="folder holding an older cubiclab package: its simulator too")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--merge", action="store_true",
                    help="update the given scenarios' rows and keep the others on file")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    if args.merge and (not args.scenarios or args.baseline):
        ap.error("--merge takes scenario files and no --baseline (the 'before' table on file is kept)")

    from cubiclab.io import atomic_write_text
    from cubiclab.scenario import Scenario, as_on_testbed
    from cubiclab.simulate import simulate
    from cubiclab.testbed.compare import seeds
    from cubiclab.testbed.ensemble import compare_runs, run_metrics, runs_wanted

    files = [Path(f) for f in args.scenarios] or sorted(SCENARIOS.glob("*.toml"))
    now_rows, before_rows, missing = [], [], []
    for f in files:
        sc = Scenario.load(f)
        ssc = as_on_testbed(sc)
        ssc.record.cwnd = "changes"
        run_testbed, rerun, runs = args.testbed or args.rerun_testbed, args.rerun_testbed, args.runs
        sims = []
        while True:  # the sequential design: more runs while a mean is undecided (kernel runs allowed)
            kernel = kernel_side(sc, args.out / "kernel" / f"{f.stem}.json", runs, run_testbed, rerun, args.quiet,
                                 args.lock)
            if kernel is None:
                break
            ss = seeds(sc, len(kernel["metrics"]))
            sims += [simulate(ssc.replace(seed=s)) for s in ss[len(sims):]]
            verdicts = compare_runs([run_metrics(r) for r in sims], kernel["metrics"])
            more = runs_wanted(verdicts, len(ss), args.max_runs)
            if not run_testbed or more == len(ss):
                break
            runs, rerun = more, False
        if kernel is None:
            missing.append(sc.name)
            continue
        now_rows.append((sc.name, verdicts))
        picture(sc.name, sims[0], kernel, args.out / f"{f.stem}.png")
        if args.baseline:
            before_rows.append((sc.name, compare_runs(baseline_side(args.baseline, f, ss), kernel["metrics"])))
        if not args.quiet:
            print(f"  {sc.name}: done", file=sys.stderr)
    if not now_rows:
        print("no kernel runs on file; run with --testbed (as root)", file=sys.stderr)
        return 2
    before_title = f"Before: simulator of {args.baseline} against the same kernel runs"
    if args.merge:
        now_rows, before_rows, before_title = merged(args.out, now_rows)
    parts = [table(now_rows, "Simulator (this build) against the kernel")]
    if before_rows:
        parts.append(table(before_rows, before_title))
    if missing:
        parts.append("Not run on the kernel yet: " + ", ".join(missing))
    text = "\n\n".join(parts)
    print(text)
    detail = {name: vs for name, vs in now_rows}
    atomic_write_text(args.out / "verdicts.json", json.dumps(detail, indent=1, default=float) + "\n")
    if before_rows and not args.merge:
        atomic_write_text(args.out / "verdicts_before.json",
                          json.dumps(dict(before_rows), indent=1, default=float) + "\n")
    atomic_write_text(args.out / "table.md", text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
