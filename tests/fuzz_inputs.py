"""Generated inputs for the fuzzing suite (tests/test_fuzz.py) and the longer campaign
(scripts/fuzz_campaign.py): scenarios in the file's layout, TOML text, replay traces and
command lines, valid and malformed, and the contract every one of them must meet.

The contract (issue 18): an input is either refused with a ValueError whose message starts
with the key path, file or argument at fault, or it runs to completion with a bottleneck
utilisation in [0, 1] and no flow delivering more than arrived.

Valid scenarios are kept small (at most 1 s at 20 Mbps) so that each runs in milliseconds;
malformed ones replace one value by a value from `JUNK`, drop or add a key.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import re

from hypothesis import strategies as st

import cubiclab
from cubiclab import _core, cli

ALGORITHMS = [a[0] for a in _core.algorithms()]


def _simulated(name: str) -> bool:
    try:
        cubiclab.Scenario(flows=[cubiclab.FlowGroup(name)]).validate()
        return True
    except ValueError:
        return False


#: The algorithms the simulator runs (every one the registry holds, BBR included since the
#: sender paces and samples delivery rates; kept as a check), drawn by the generators of
#: valid scenarios.
SIMULATED = [a for a in ALGORITHMS if _simulated(a)]

#: Values that are wrong almost everywhere: overflowing, negative, of the wrong type, nested.
JUNK = [
    None, True, False, -1, 0, 2**64, 2**64 + 1, 10**400, -(2**63), 1e300, -1e300, 5e-324, math.nan, math.inf,
    "", " ", "false", "true", "1e300s", "1e300Tbps", "1e306packets", "18446744074s", "2e19bps", "1e30%BDP",
    "-5ms", "nan", "inf", "40", "40 parsecs", "exp:", "exp:-1s", "100%", "0x10", "\x00", "é" * 40, "../x",
    [], [1], ["cubic"], {}, {"a": 1}, {"model": ["bernoulli"]}, [[[[[]]]]], 3.5, "beta=717",
]

# The key names of a scenario: every refusal must start with one of them (or a file name).
_KEY_PATH = re.compile(
    r"^(?:[^:]*\.toml: )?(scenario|name|seed|duration|mss|start_jitter|min_rto|flows|web|bottleneck|record)\b"
)


def names_a_key(message: str) -> bool:
    """Whether a refusal starts with the key path at fault (after a file name, if any)."""
    return bool(_KEY_PATH.match(message))


def _time(lo_ms: int, hi_ms: int):
    return st.integers(lo_ms, hi_ms).map(lambda ms: f"{ms}ms")


@st.composite
def flow_group(draw) -> dict:
    g = {"algorithm": draw(st.sampled_from(SIMULATED)), "rtt": draw(_time(20, 120))}
    if draw(st.booleans()):
        g["count"] = draw(st.integers(1, 3))
    if draw(st.booleans()):
        g["start"] = draw(_time(0, 300))
        g["start_spacing"] = draw(_time(0, 100))
    if draw(st.booleans()):
        g["recovery"] = draw(st.sampled_from(["sack", "newreno"]))
    if draw(st.booleans()):
        g["delayed_ack"] = draw(st.booleans())
        g["ack_every"] = draw(st.integers(1, 4))
    if draw(st.booleans()):
        g["initial_cwnd"] = draw(st.integers(1, 100))
    if draw(st.booleans()):
        g["bytes"] = draw(st.sampled_from(["10KB", "100KB", "20packets"]))
    if draw(st.booleans()):
        g["rwnd"] = draw(st.sampled_from(["64KB", "1MB"]))
    return g


@st.composite
def loss_model(draw) -> dict:
    return draw(st.sampled_from([
        {"model": "none"},
        {"model": "bernoulli", "p": draw(st.floats(0, 0.05))},
        {"model": "poisson", "rate": draw(st.floats(0, 50))},
        {"model": "gilbert", "p_gb": 0.01, "p_bg": 0.2, "loss_good": 0.0, "loss_bad": draw(st.floats(0, 1))},
    ]))


@st.composite
def scenario(draw) -> dict:
    """A valid scenario in the file's layout, small enough to run in milliseconds."""
    b = {
        "rate": draw(st.sampled_from(["2Mbps", "5Mbps", "10Mbps", "20Mbps"])),
        "buffer": draw(st.sampled_from(["100%BDP", "50%BDP", "20packets", "64KB", "2xBDP"])),
        "queue": draw(st.sampled_from(["droptail", "red", "codel"])),
    }
    if draw(st.booleans()):
        b["loss"] = draw(loss_model())
    if draw(st.booleans()):
        b["codel"] = {"target": "5ms", "interval": draw(_time(10, 200))}
    sc = {
        "duration": draw(st.sampled_from(["200ms", "500ms", "1s"])),
        "seed": draw(st.integers(0, 2**32)),
        "bottleneck": b,
        "flows": draw(st.lists(flow_group(), min_size=1, max_size=3)),
    }
    if draw(st.integers(0, 3)) == 0:
        web = {"sessions": draw(st.sampled_from([2, 4, 10])), "think": draw(_time(50, 1000))}
        if draw(st.booleans()):
            web = {"load": draw(st.floats(0.05, 0.3)), "think": draw(_time(200, 2000))}
        sc["web"] = [web]
    if draw(st.booleans()):
        sc["record"] = {"interval": draw(_time(10, 200)), "cwnd": draw(st.sampled_from(["interval", "changes"])),
                        "rtt_samples": draw(st.booleans())}
    return sc


def _paths(d, prefix=()):
    """Every (path, value) in a nested scenario dict, tables and lists included."""
    if isinstance(d, dict):
        for k, v in d.items():
            yield prefix + (k,), v
            yield from _paths(v, prefix + (k,))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            yield prefix + (i,), v
            yield from _paths(v, prefix + (i,))


def _set(d, path, value):
    for k in path[:-1]:
        d = d[k]
    if value is _DELETE:
        del d[path[-1]]
    else:
        d[path[-1]] = value


_DELETE = object()


@st.composite
def malformed_scenario(draw) -> dict:
    """A valid scenario with one value replaced by junk, one key dropped or an unknown key
    added (the result may still be valid: the contract covers both outcomes)."""
    import copy

    sc = copy.deepcopy(draw(scenario()))
    paths = [p for p, _ in _paths(sc)]
    path = draw(st.sampled_from(paths))
    how = draw(st.sampled_from(["junk", "junk", "junk", "drop", "unknown"]))
    if how == "junk":
        _set(sc, path, draw(st.sampled_from(JUNK)))
    elif how == "drop" and not isinstance(path[-1], int):
        _set(sc, path, _DELETE)
    else:
        target = sc
        for k in path[:-1]:
            target = target[k]
        if isinstance(target, dict):
            target[draw(st.sampled_from(["colour", "rtt_ms", "Rate", ""]))] = 1
    return sc


# ---- TOML -------------------------------------------------------------------------------
def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return repr(v)  # beyond 64 bits TOML refuses it, naming the file
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("nan" if v != v else ("inf" if v > 0 else "-inf"))
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\x00", "\\u0000") + '"'
    # TOML has no null: a None inside a list or an inline table is left out, like a None key.
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v if x is not None) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f'"{k}" = {_toml_value(x)}' for k, x in v.items() if x is not None) + "}"
    raise TypeError(v)


def to_toml(sc: dict) -> str:
    """A scenario dict as TOML (top-level scalars, [tables], [[arrays of tables]])."""
    lines, tables, arrays = [], [], []
    for k, v in sc.items():
        if v is None:
            continue
        if isinstance(v, dict):
            tables.append((k, v))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            arrays.append((k, v))
        else:
            lines.append(f'"{k}" = {_toml_value(v)}')
    for k, v in tables:
        lines.append(f'["{k}"]')
        lines.extend(f'"{kk}" = {_toml_value(vv)}' for kk, vv in v.items() if vv is not None)
    for k, groups in arrays:
        for g in groups:
            lines.append(f'[["{k}"]]')
            lines.extend(f'"{kk}" = {_toml_value(vv)}' for kk, vv in g.items() if vv is not None)
    return "\n".join(lines) + "\n"


@st.composite
def toml_bytes(draw) -> bytes:
    """TOML text of a (possibly malformed) scenario, then possibly damaged as bytes."""
    sc = draw(st.one_of(scenario(), malformed_scenario()))
    data = to_toml(sc).encode()
    damage = draw(st.sampled_from(["none", "none", "bom", "byte", "cut", "nest", "dup"]))
    if damage == "bom":
        data = b"\xef\xbb\xbf" + data
    elif damage == "byte":
        i = draw(st.integers(0, len(data)))
        data = data[:i] + bytes([draw(st.integers(0, 255))]) + data[i:]
    elif damage == "cut":
        data = data[: draw(st.integers(0, len(data)))]
    elif damage == "nest":
        depth = draw(st.integers(100, 3000))
        data += b"deep = " + b"[" * depth + b"]" * depth + b"\n"
    elif damage == "dup":
        data += data
    return data


# ---- replay traces ----------------------------------------------------------------------
EVENTS = ["ack", "ack", "ack", "loss", "rto", "tx_start", "undo"]
_TRACE_JUNK = ["", "-1", "x", "1e3", "18446744073709551616", "4294967296", "nan", " 7 ", "ack", "0"]


@st.composite
def trace_text(draw) -> str:
    """A replay trace: a header and rows, valid or with junk fields, missing or extra ones."""
    cols = ["time_us", "event", "acked", "rtt_us"] + draw(
        st.lists(st.sampled_from(["cwnd_limited", "idle_us", "snd_una", "snd_nxt"]), unique=True, max_size=2))
    rows, t = [], 0
    for _ in range(draw(st.integers(0, 60))):
        t += draw(st.integers(0, 50_000))
        ev = draw(st.sampled_from(EVENTS))
        extra = {"cwnd_limited": str(draw(st.integers(0, 1))), "idle_us": str(draw(st.integers(0, 10**6))),
                 "snd_una": "", "snd_nxt": ""}
        row = [str(t), ev, str(draw(st.integers(0, 40))), str(draw(st.integers(-1, 200_000)))]
        row += [extra[c] for c in cols[4:]]
        rows.append(row)
    if rows and draw(st.booleans()):
        i = draw(st.integers(0, len(rows) - 1))
        kind = draw(st.sampled_from(["junk", "short", "long", "back"]))
        if kind == "junk":
            rows[i][draw(st.integers(0, len(cols) - 1))] = draw(st.sampled_from(_TRACE_JUNK))
        elif kind == "short":
            rows[i] = rows[i][:-1]
        elif kind == "long":
            rows[i] = rows[i] + ["1"]
        elif i > 0:
            rows[i][0] = str(max(int(rows[i - 1][0]) - 1, 0) - 1)
    header = ",".join(cols)
    if draw(st.integers(0, 10)) == 0:
        header = draw(st.sampled_from(["", "time_us", "time_us,event,event", "a,b,c"]))
    return "\n".join([header] + [",".join(r) for r in rows]) + "\n"


# ---- command lines ----------------------------------------------------------------------
_ARG_JUNK = ["-1", "0", "1e300", "1e300bps", "nan", "inf", "", "4294967296", "1e-308", "abc", "100000", "1e19bps",
             "40ms", "1Gbps", "2", "0.5", "1.5", "-0"]


#: Values each option accepts, so that command lines with one bad option are common.
_ARG_VALID = {"--capacity": ["10Mbps", "1Gbps", "1e6"], "--rtt": ["10ms", "0.3s"], "--alpha": ["1e6", "1Mbps", "1e3"],
              "--beta": ["0.5", "0.8"], "--loss-rate": ["0", "1", "20"], "--states": ["2", "30"]}


@st.composite
def model_argv(draw) -> list[str]:
    argv = ["model", draw(st.sampled_from(["markov", "validate"]))]
    for opt, valid in _ARG_VALID.items():
        if draw(st.booleans()):
            argv += [f"{opt}={draw(st.sampled_from(valid + _ARG_JUNK if draw(st.booleans()) else valid))}"]
    if argv[1] == "validate":
        argv += ["--events", draw(st.sampled_from(["100", "0", "-5", "x"]))]
        if not any(a.startswith("--states") for a in argv):
            argv += ["--states", "20"]
    return argv


@st.composite
def replay_argv(draw) -> list[str]:
    argv = ["replay", draw(st.sampled_from(ALGORITHMS + ["nope", ""]))]
    for opt in ["--initial-cwnd", "--initial-ssthresh"]:
        if draw(st.booleans()):
            argv += [f"{opt}={draw(st.sampled_from(_ARG_JUNK))}"]
    if draw(st.booleans()):
        argv += ["--set", draw(st.sampled_from(["beta=717", "beta=-1", "=", "x", "beta=nan", "nope=1"]))]
    return argv


# ---- the contract -----------------------------------------------------------------------
def check_run(sc) -> str:
    """Run `sc`; a refusal must name its key, a run must conserve packets. Returns
    "refused" or "ran"."""
    try:
        res = cubiclab.simulate(sc)
    except ValueError as e:
        assert names_a_key(str(e)), str(e)
        return "refused"
    s = res.summary
    assert 0.0 <= s["utilization"] <= 1.0, s["utilization"]
    assert 0.0 <= s["goodput_utilization"] <= 1.0, s["goodput_utilization"]
    mss = res.scenario.mss
    t = res.totals
    # Delivered payload came from segments that arrived: sent minus dropped and lost ones.
    arrived = (t.segments_sent - t.drops - t.random_losses) * mss
    assert (t.delivered_bytes <= arrived).all(), t[["segments_sent", "drops", "random_losses", "delivered_bytes"]]
    assert (t.drops >= 0).all() and (t.random_losses >= 0).all()
    return "ran"


def check_toml(path) -> str:
    """Load and run a scenario file; a refusal of the file itself names the file."""
    try:
        sc = cubiclab.Scenario.load(path)
    except ValueError as e:
        assert str(e).startswith(str(path)), str(e)
        return "refused"
    return check_run(sc)


def check_trace(algorithm: str, trace: str) -> str:
    """Replay a trace; a refusal names the line or the trace, a replay has a row per event."""
    try:
        df = cubiclab.replay(algorithm, trace)
    except ValueError as e:
        assert str(e).startswith(("line ", "trace")), str(e)
        return "refused"
    rows = [r for r in trace.splitlines()[1:] if r.strip() and not r.startswith("#")]
    assert len(df) == len(rows)
    assert (df.cwnd >= 1).all()
    return "ran"


def run_cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = cli.main(argv)
        except SystemExit as e:  # argparse's usage errors
            rc = e.code
    return rc, err.getvalue()


def check_cli(argv: list[str]) -> str:
    """Exit 0, or exit 2 with one line naming the problem."""
    rc, err = run_cli(argv)
    assert rc in (0, 2), (argv, rc, err)
    if rc == 2:
        assert len(err.strip().splitlines()) == 1 and "error: " in err, (argv, err)
        return "refused"
    return "ran"


# ---- Mahimahi traces a schedule names ------------------------------------------------------
@st.composite
def mahimahi_text(draw) -> bytes:
    """A Mahimahi trace: times in ms, non-decreasing, with maybe junk lines, a time that goes
    back, CRLF ends, a byte-order mark, a last line at 0 or bytes that are not UTF-8."""
    lines = [str(t) for t in itertools.accumulate(draw(st.lists(st.integers(0, 5), max_size=400)))]
    junk = st.sampled_from(["", " ", "-1", "2.5", "x", "\u00b2", "9" * 30, "1e3", "0x10", "4294967296", " 7 ",
                            "\t", "3 4", "\ufeff1", "x" * 300])
    for _ in range(draw(st.integers(0, 2))):
        lines.insert(draw(st.integers(0, len(lines))), draw(junk))
    if len(lines) > 2 and draw(st.integers(0, 9)) == 0:  # a time that goes back
        i = draw(st.integers(0, len(lines) - 2))
        lines[i], lines[i + 1] = lines[i + 1] + "1", lines[i]
    end = draw(st.sampled_from(["\n", "\r\n"]))
    text = ("\ufeff" if draw(st.booleans()) else "") + end.join(lines) + draw(st.sampled_from(["", end]))
    return text.encode() + (b"\xff\xfe" if draw(st.integers(0, 19)) == 0 else b"")


def check_schedule_trace(folder, data: bytes) -> str:
    """Run a short scenario whose bottleneck follows the trace `data`: refused naming the
    key and the file, or run (and conserving packets)."""
    (folder / "link.trace").write_bytes(data)
    path = folder / "sc.toml"
    path.write_text(_SCENARIO.replace('rate = "20Mbps"', 'rate = "20Mbps"\nschedule = { trace = "link.trace" }'))
    try:
        sc = cubiclab.Scenario.load(path)
        sc.validate()
    except ValueError as e:
        assert str(e).startswith(f"bottleneck.schedule.trace: {folder / 'link.trace'} "), str(e)
        return "refused"
    return check_run(sc)


# ---- files a scenario or the command line names (issue 34) --------------------------------
#: Kinds of name a run may be given for a file.
FILE_KINDS = ["regular", "missing", "empty", "folder", "FIFO", "device", "symlink", "huge", "non-UTF-8",
              "missing folder", "escape", "long trace"]
#: Where a file is named: inputs read, outputs written.
FILE_ROLES = {"schedule trace": "input", "scenario file": "input", "replay trace": "input",
              "record.pcap": "output", "--pcap": "output", "replay -o": "output"}
_CONTENT = {
    "schedule trace": b"1\n2\n3\n",
    "scenario file": b'duration = "200ms"\n[[flows]]\nalgorithm = "reno"\nrtt = "40ms"\n',
    "replay trace": b"time_us,event,acked,rtt_us\n0,ack,1,40000\n1000,ack,1,40000\n",
}
_SCENARIO = 'duration = "200ms"\n[bottleneck]\nrate = "20Mbps"\n[[flows]]\nalgorithm = "reno"\nrtt = "40ms"\n'
#: Larger than every input's size cap (sparse: no disk is used).
_HUGE_BYTES = 1 << 30
#: A long Mahimahi trace, streamed by the reader: 2 million lines (15 MB), 12 Mbit/s with a
#: second opportunity every 7th ms (runs of equal opportunities per ms break there).
_LONG_TRACE_LINES = 2_000_000


def _long_trace() -> bytes:
    lines, ms = [], 0
    while len(lines) < _LONG_TRACE_LINES:
        ms += 1
        lines += [f"{ms}\n"] * (2 if ms % 7 == 0 else 1)
    return "".join(lines[:_LONG_TRACE_LINES]).encode()


def file_cases():
    """(kind, role, device): a kind of file named where a run reads or writes one. Devices
    are drawn for inputs only: a broken output check would replace one (as root)."""
    device = st.sampled_from(["/dev/null", "/dev/zero", "/dev/urandom"])
    return st.tuples(st.sampled_from(FILE_KINDS), st.sampled_from(sorted(FILE_ROLES)), device).filter(
        lambda c: drawable(c[0], c[1]))


def drawable(kind: str, role: str) -> bool:
    """Devices are named as inputs only (a broken output check would replace one, as root);
    path escapes only where a scenario names a file (the command line may name any file)."""
    if kind == "device":
        return FILE_ROLES[role] == "input"
    if kind == "escape":
        return role in ("record.pcap", "schedule trace")
    return True


def _make(folder, kind: str, role: str, device: str) -> str:
    """The name of a file of `kind` in `folder` (the run's folder), made as it says."""
    import os

    content = _CONTENT.get(role, b"old\n")
    path = folder / f"named-{kind.replace(' ', '-')}"
    if kind == "regular":
        path.write_bytes(content)
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "folder":
        path.mkdir()
    elif kind == "FIFO":
        os.mkfifo(path)
    elif kind == "device":
        return device
    elif kind == "symlink":
        (folder / "link-target").write_bytes(content)
        path.symlink_to(folder / "link-target")
    elif kind == "huge":
        with open(path, "wb") as f:
            f.truncate(_HUGE_BYTES)
    elif kind == "long trace":
        path.write_bytes(_long_trace())
    elif kind == "non-UTF-8":
        path.write_bytes(b"\xff\xfe\x00" + content)
    elif kind == "missing folder":
        return str(folder / "no-such-folder" / "x")
    elif kind == "escape":
        return "../" * 12 + "tmp/cubiclab-fuzz-escape"
    return str(path)


def _state(folder) -> dict:
    """Every name under `folder` with its kind and, for regular files, size and mtime."""
    import os

    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = os.path.join(root, name)
            st_ = os.lstat(p)
            out[p] = (st_.st_mode >> 12, st_.st_size if st_.st_mode >> 12 == 8 else 0, st_.st_mtime_ns)
    return out


def check_file_case(folder, kind: str, role: str, device: str) -> str:
    """Name a file of `kind` as `role` in a run in `folder`: the command is refused in one
    line, or runs; nothing but the run's --out (and an output a user names on the command
    line, if a regular or new file) changes, and what is not a regular file stays as it was."""
    import os
    import stat

    name = _make(folder, kind, role, device)
    sc = folder / "sc.toml"
    if role == "schedule trace":
        sc.write_text(_SCENARIO.replace('rate = "20Mbps"', "schedule = { trace = %s }" % _toml_str(name)))
    elif role == "record.pcap":  # a name from the scenario's folder: inside the run's folder
        pcap = os.path.relpath(name, folder) if name.startswith(str(folder)) else name
        sc.write_text(_SCENARIO + "[record]\npcap = %s\n" % _toml_str(pcap))
    else:
        sc.write_text(_SCENARIO)
    trace = folder / "trace.csv"
    trace.write_bytes(_CONTENT["replay trace"])
    out = folder / "out"
    run = ["run", "--out", str(out), "--quiet", "--no-plots"]
    argv = {
        "schedule trace": run + [str(sc)],
        "scenario file": run + [name],
        "record.pcap": run + [str(sc)],
        "--pcap": run + [str(sc), "--pcap", name],
        "replay trace": ["replay", "reno", name],
        "replay -o": ["replay", "reno", str(trace), "-o", name],
    }[role]
    before = _state(folder)
    device_before = os.stat(device).st_rdev if kind == "device" else None
    outcome = check_cli(argv)
    after = _state(folder)
    allowed = {str(out)}
    if role in ("--pcap", "replay -o") and kind in ("regular", "missing", "empty", "huge", "non-UTF-8", "long trace"):
        allowed.add(name)
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    outside = {p for p in changed if not any(p == a or p.startswith(a + os.sep) for a in allowed)}
    assert not outside, (kind, role, sorted(outside))
    if kind == "device":
        assert stat.S_ISCHR(os.stat(device).st_mode) and os.stat(device).st_rdev == device_before
    assert not os.path.lexists("/tmp/cubiclab-fuzz-escape")
    return outcome


def _toml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
