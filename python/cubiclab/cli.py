"""The `cubiclab` command line. Bad input exits with status 2 and one line naming the
problem; a run's results are written to a temporary folder that replaces the output folder
in one step, so an interrupted run leaves the earlier results as they were."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cubiclab.io import atomic_dir, atomic_write_text, check_file_target, writable_folder
from cubiclab.suggest import did_you_mean, suggestion

#: Longest output folder name, in bytes: file systems allow 255, and the temporary name
#: beside it adds a dot, the process id and a random part.
MAX_NAME_BYTES = 200


def _parse_set(items: list[str]) -> dict[str, float | str]:
    """name=value pairs: a number, else a name (`hystart=hystart++`), which the library
    checks against the parameter's choices."""
    out: dict[str, float | str] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--set '{item}': expected name=value")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            out[name.strip()] = value.strip()
    return out


def cmd_algorithms(args) -> int:
    from cubiclab.algorithms import algorithms
    from cubiclab.testbed.bpf import BpfUnavailable, port_line

    listed = algorithms()
    width = max(len(a.name) for a in listed)
    no_loader = None
    for a in listed:
        print(f"{a.name:{width}s} {a.reference}")
        try:
            port = port_line(a.name)
        except BpfUnavailable as e:
            port, no_loader = None, str(e)
        if port:
            print(f"    kernel: {port}")
        kept = "no decrease" if a.beta_kept is None else f"keeps {a.beta_kept:.4g} of the window"
        if a.beta_kept_bounds and a.beta_kept_bounds[0] != a.beta_kept_bounds[1]:
            kept += f" at first ({a.beta_kept_bounds[0]:.4g} to {a.beta_kept_bounds[1]:.4g})"
        constants = "".join(f", {k} {v:g}" for k, v in a.growth_constants.items())
        print(f"    at a loss: {kept}; grows: {a.growth}{constants}")
        for p in a.params:
            if p.choices:
                default, allowed = p.choices[int(p.default)], f"one of {', '.join(p.choices)}"
            else:
                kind = "int" if p.integer else "real"
                default, allowed = f"{p.default:g} {p.unit}", f"{kind} in [{p.min:g}, {p.max:g}]"
            print(f"    {p.name:22s} default {default:30s} {allowed}  {p.help}")
    if no_loader:
        print(f"(not shown: {no_loader})")
    return 0


def cmd_replay(args) -> int:
    from cubiclab.replay import MAX_REPLAY_TRACE_BYTES, read_trace_file, replay

    if args.output is not None:
        check_file_target(args.output, "--output")
    try:
        if args.trace == "-":
            text = sys.stdin.buffer.read(MAX_REPLAY_TRACE_BYTES + 1)
            if len(text) > MAX_REPLAY_TRACE_BYTES:
                raise ValueError(f"trace: standard input is more than {MAX_REPLAY_TRACE_BYTES:,} bytes; "
                                 f"allowed: at most {MAX_REPLAY_TRACE_BYTES:,}")
            text = text.decode("utf-8-sig")
        else:
            text = read_trace_file(args.trace)
    except UnicodeDecodeError as e:
        raise ValueError(f"trace: standard input is not UTF-8 text (byte {e.start})") from None
    if not text.strip():
        raise ValueError(f"trace '{args.trace}' is empty; expected a header line 'time_us,event,acked,rtt_us'")
    text += "\n"  # text, never a path: replay() takes a line without a newline or comma for a path
    df = replay(args.algorithm, text, _parse_set(args.set), args.initial_cwnd, args.initial_ssthresh,
                mss=args.mss, seed=args.seed)
    out = df.to_json(orient="records") if args.format == "json" else df.to_csv(index=False)
    if args.output is not None:
        atomic_write_text(check_file_target(args.output, "--output"), out)
    else:
        sys.stdout.write(out if out.endswith("\n") else out + "\n")
    return 0


def cmd_demo(args) -> int:
    """Replay the built-in trace through CUBIC and Reno and plot their windows."""
    from cubiclab.plots import plot_replay
    from cubiclab.replay import builtin_trace, replay

    outdir = writable_folder(args.out, "--out")
    trace = builtin_trace()
    frames = {name: replay(name, trace) for name in args.algorithms}
    png = plot_replay(frames, outdir / "demo_cwnd.png", title="Built-in trace: 100 Mbps, 40 ms, loss every 8 s")
    summary = {
        name: {"final_cwnd": int(df.cwnd.iloc[-1]), "max_cwnd": int(df.cwnd.max()), "events": len(df)}
        for name, df in frames.items()
    }
    atomic_write_text(outdir / "demo_summary.json", json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    print(f"wrote {png}")
    return 0


def output_folder(out: str, name) -> Path:
    """The folder of a run named `name` inside `out`: the name must stay inside it."""
    allowed = (f"allowed: 1 to {MAX_NAME_BYTES} bytes of text without '/', '\\' or control characters, "
               "not starting with '.'")
    if not isinstance(name, str):
        raise ValueError(f"name is {name!r}; {allowed}")
    shown = name if len(name) <= 60 else name[:57] + "..."
    if not name or name.startswith(".") or any(c in "/\\" or ord(c) < 32 or ord(c) == 127 for c in name):
        raise ValueError(f"name '{shown}' cannot be a folder inside --out; {allowed}")
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise ValueError(f"name is {len(name.encode('utf-8', 'surrogatepass'))} bytes long; {allowed}")
    return Path(out) / name


def cmd_run(args) -> int:
    """Simulate a scenario file (or the built-in default) and write tables, plots, summary."""
    from cubiclab.plots import check_memory as check_plot_memory, plot_run
    from cubiclab import traces
    from cubiclab.scenario import Scenario, default_scenario
    from cubiclab.simulate import simulate

    traces.progress = not args.quiet and not args.json
    sc = Scenario.load(args.scenario) if args.scenario is not None else default_scenario()
    changes = {}
    if args.seed is not None:
        changes["seed"] = args.seed
    if args.duration is not None:
        changes["duration"] = args.duration
    if changes:
        sc = sc.replace(**changes)
    if args.cwnd_changes:
        sc.record.cwnd = "changes"
    # The capture: --pcap's file (checked here), else the scenario's name inside the run's folder.
    pcap_name = None
    if args.pcap is not None:
        sc.record.pcap = str(check_file_target(args.pcap, "--pcap"))
    elif sc.record.pcap is not None:
        pcap_name = sc.record.pcap
    sc.validate()  # before printing anything
    if not args.no_plots:
        check_plot_memory(sc)
    outdir = output_folder(args.out, sc.name)
    writable_folder(args.out, "--out")
    if outdir.exists() and not outdir.is_dir():
        raise ValueError(f"--out: '{outdir}', the folder of run '{sc.name}', is a file; remove it or choose "
                         f"another --out")
    if not args.json:
        print(f"cubiclab: running '{sc.name}' -> {outdir}", file=sys.stderr)
    try:
        with atomic_dir(outdir, replace=True) as tmp:
            if pcap_name is not None:
                sc.record.pcap = str(tmp / pcap_name)
            res = simulate(sc, progress=not args.quiet and not args.json)
            res.write(tmp, args.format)
            if not args.no_plots:
                plot_run(res, tmp)
    except KeyboardInterrupt:
        before = "as it was" if outdir.exists() else "not created"
        print(f"cubiclab: interrupted; nothing of this run was written ({outdir} is {before})", file=sys.stderr)
        return 130
    if args.json:
        print(json.dumps(res.summary, indent=2))
    else:
        s = res.summary
        print(f"utilisation {s['utilization']:.3f} (goodput {s['goodput_utilization']:.3f}), "
              f"loss events {s['loss_events']}, {s['events'] / 1e6:.1f} M events in {s['wall_s']:.2f} s")
        for g, share in s["group_shares"].items():
            print(f"  {g:12s} share {share:.3f} (of what the flows delivered)")
        print(f"wrote {outdir}")
    if sc.record.pcap is not None and not args.json:
        where = outdir / pcap_name if pcap_name is not None else sc.record.pcap
        print(f"wrote capture {where}")
    return 0


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line and exit status 2, like every other bad input (subcommands'
    parsers are of the same class)."""

    def parse_args(self, args=None, namespace=None):
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_args(args, namespace)

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {did_you_mean(message)}{self._nearest_option(message)}\n")

    def _nearest_option(self, message: str) -> str:
        """For an unknown option ("unrecognized arguments: --seeed 3", which lists nothing
        allowed), the nearest option of the subcommand it was given to."""
        if not message.startswith("unrecognized arguments: "):
            return ""
        unknown = next((w.split("=")[0] for w in message.split()[2:] if w.startswith("-")), None)
        parser = self
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                command = next((a for a in getattr(self, "_argv", []) if a in action.choices), None)
                parser = action.choices.get(command, self)
        return suggestion(unknown, list(parser._option_string_actions)) if unknown else ""


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="cubiclab", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    a = sub.add_parser("algorithms", help="list algorithms and their parameters")
    a.set_defaults(func=cmd_algorithms)

    r = sub.add_parser("replay", help="replay a trace CSV through an algorithm")
    r.add_argument("algorithm")
    r.add_argument("trace", help="CSV file (time_us,event,acked,rtt_us,...), or - for stdin")
    r.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="algorithm parameter")
    r.add_argument("--initial-cwnd", type=int)
    r.add_argument("--initial-ssthresh", type=int)
    r.add_argument("--mss", type=int, help="segment payload in bytes for pacing rates (default 1448)")
    r.add_argument("--seed", type=int, help="seed of the algorithm's random numbers (bbr's PROBE_BW phase)")
    r.add_argument("--format", choices=["csv", "json"], default="csv")
    r.add_argument("--output", "-o", help="write here instead of stdout")
    r.set_defaults(func=cmd_replay)

    run = sub.add_parser("run", help="simulate a scenario (default: seed 000 Fig. 6)")
    run.add_argument("scenario", nargs="?", help="TOML scenario file; omitted: the built-in default")
    run.add_argument("--out", default="cubiclab-out", help="output folder (a subfolder per scenario)")
    run.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    run.add_argument("--json", action="store_true", help="print the summary as JSON")
    run.add_argument("--seed", type=int)
    run.add_argument("--duration", help="override the duration, e.g. 30s")
    run.add_argument("--cwnd-changes", action="store_true", help="record every cwnd change")
    run.add_argument("--pcap", metavar="FILE", help="capture every packet leaving the bottleneck to this pcap file")
    run.add_argument("--no-plots", action="store_true")
    run.add_argument("--quiet", action="store_true", help="no progress line")
    run.set_defaults(func=cmd_run)

    d = sub.add_parser("demo", help="replay the built-in trace and plot cwnd")
    d.add_argument("--out", default="cubiclab-out")
    d.add_argument("--algorithms", nargs="+", default=["cubic", "reno"])
    d.set_defaults(func=cmd_demo)
    from cubiclab.models.cli import add_parsers as _add_model
    _add_model(sub)
    from cubiclab.testbed.cli import add_parsers as _add_testbed
    _add_testbed(sub)
    from cubiclab.experiments.cli import add_parsers as _add_reproduce
    _add_reproduce(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)  # (imports the subcommands' modules: Ctrl-C may come)
        return args.func(args)
    except ValueError as e:
        print(f"cubiclab: error: {did_you_mean(str(e))}", file=sys.stderr)
        return 2
    except OSError as e:  # the system refused (a full disk, a lost mount): what happened, in one line
        print(f"cubiclab: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("cubiclab: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
