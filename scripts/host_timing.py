"""The hosts' timing on the testbed, as the simulator would see it: how long after a packet
was due at a host (the emulator's delivery time) the host's answer entered the emulated
path (the emulator's read), per packet, from one kernel run of bulk flows (one at a time:
`--flow N` where a run has several).

    sudo python scripts/host_timing.py SCENARIO.toml [--seconds 10] [--seed 1] [--keep DIR]
    python scripts/host_timing.py --dir DIR          # a run kept before (testbed(keep_dir=DIR, io_trace=N))
    python scripts/host_timing.py --dir D1 D2 ...    # kept runs of one scenario: what differs per run
    python scripts/host_timing.py --dir D --flow 1   # a run of several flows: the second flow's

    # the runs of one scenario, each under the kernel lock, then their per-run part:
    for s in $(seq 1 10); do flock /tmp/kernel.lock python scripts/host_timing.py SC.toml --seed $s \
        --seconds 15 --keep runs/s$s; done; python scripts/host_timing.py --dir runs/s*

Two delays, both from the emulator's `io.csv` (CLOCK_MONOTONIC; every read with its first
sequence and acknowledgment numbers, every write with how late it left) and the trace's
`tcp_probe` rows (`trace.csv`, the same clock: one row per ACK the sender's TCP handled,
with its `snd_nxt` and `snd_una` before it):

- receiver: an ACK that acknowledges new data, read at `t`, up to the end of the last data
  write before it, which was due at `d` (written at `d + late`): `t - d`. Other ACKs (the
  delayed-ACK timer's, those sent when the sink reads, those after a loss) are left out:
  the simulator's receiver has rules of its own for them. Delays over `--cut` are counted
  apart.
- sender: a `tcp_probe` row (the sender handles an ACK) with `snd_nxt` N; the ACK write it
  handled (the last before the row, with acknowledgment number `snd_una` of the next row),
  due at `d`;
  the first read of new data starting at N after the row, at `t`: `t - d`. ACKs that
  release nothing before the next ACK is handled are left out (their data waits for a
  later ACK: `tcp_tso_should_defer` holds small sends back at high rates).

The simulator delivers a packet at `d` and the host answers at once, so these are the
delays its host-timing noise model draws (`[host] jitter`, crates/cubiclab-sim/src/sim/host.rs).

With several runs (`--dir D1 D2 ...`), each run's quantiles less the pooled runs' (a run
whose delays are all shifted by x reads x at every quantile; one scaled by s, s - 1 times
the pooled value), and per side the two components of the delays' variance: within a run
(the mean of the runs' variances) and between runs (the variance of the runs' means less
the within part's share of it, the within variance over a run's count), with the
correlation of the sender's and the receiver's run means: the model's per-run part.
A run kept by this script also holds its metrics (`metrics.json`, as the agreement matrix
computes them) and the load before it, printed beside its offsets.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from cubiclab.scenario import HEADER_BYTES

QUANTILES = (0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999)
WRAP = 1 << 32


def unwrap(seq: np.ndarray, ref: int) -> np.ndarray:
    """32-bit sequence numbers as offsets from `ref`, within ±2 GB of it (one run's span)."""
    return ((seq.astype(np.int64) - ref + WRAP // 2) % WRAP) - WRAP // 2


def receiver_delays(io: pd.DataFrame, mss: int) -> np.ndarray:
    """Per ACK that acknowledges new data up to the last data written before it (an answer
    to the newest arrival): its read time less that write's due time (us)."""
    wr = io[(io.dir == 0) & (io.kind == "write")]
    acks = io[(io.dir == 1) & (io.kind == "read")]
    ref = int(wr.seq.iloc[0])
    w_lo = unwrap(wr.seq.to_numpy(), ref)
    w_hi = w_lo + wr.segments.to_numpy() * mss
    w_t = wr.t_ns.to_numpy()
    w_due = w_t - wr.late_ns.to_numpy()
    a = unwrap(acks.ack.to_numpy(), ref)
    t = acks.t_ns.to_numpy()
    new = np.concatenate([[True], a[1:] > np.maximum.accumulate(a)[:-1]])
    j = np.searchsorted(w_t, t, side="right") - 1  # the last write before each ACK
    ok = new & (j >= 0)
    j = np.where(ok, j, 0)
    ok &= (w_lo[j] < a) & (a <= w_hi[j])
    return (t[ok] - w_due[j[ok]]) / 1e3


def sender_delays(io: pd.DataFrame, probes: pd.DataFrame) -> np.ndarray:
    """Per ACK the sender handled that released new data, the last ACK written before it was
    handled: the first read of that data less the ACK write's due time (us)."""
    acks = io[(io.dir == 1) & (io.kind == "write")]
    reads = io[(io.dir == 0) & (io.kind == "read")]
    pr = probes[probes.event == "probe"].sort_values("time_us", kind="stable")
    ref = int(reads.seq.iloc[0])
    r_seq = unwrap(reads.seq.to_numpy(), ref)
    r_t = reads.t_ns.to_numpy()
    # New data only: a read whose first sequence number is above every one read before.
    fresh = np.concatenate([[True], r_seq[1:] > np.maximum.accumulate(r_seq)[:-1]])
    first_read = dict(zip(r_seq[fresh], r_t[fresh]))
    a_ack = unwrap(acks.ack.to_numpy(), ref)
    a_t = acks.t_ns.to_numpy()
    a_due = a_t - acks.late_ns.to_numpy()
    p_t = pr.time_us.to_numpy() * 1000
    p_nxt = unwrap(pr.snd_nxt.to_numpy(), ref)
    p_una = unwrap(pr.snd_una.to_numpy(), ref)
    out = []
    for k in range(len(pr) - 1):
        if p_una[k + 1] == p_una[k] or p_nxt[k + 1] == p_nxt[k]:
            continue  # a duplicate (its write cannot be told from the last one's), or it released nothing
        t_read = first_read.get(p_nxt[k])
        # The ACK this row handled carries the next row's snd_una: the last one written before it.
        j = np.searchsorted(a_t, p_t[k], side="right") - 1
        if t_read is None or t_read < p_t[k] or j < 0 or a_ack[j] != p_una[k + 1]:
            continue
        out.append((t_read - a_due[j]) / 1e3)
    return np.asarray(out)


def summary(name: str, d: np.ndarray, cut_us: float) -> dict:
    near = d[d <= cut_us]
    q = np.quantile(near, QUANTILES) if len(near) else [np.nan] * len(QUANTILES)
    return {"side": name, "n": int(len(d)), "over_cut": float((d > cut_us).mean()) if len(d) else np.nan,
            "mean_us": float(near.mean()) if len(near) else np.nan,
            **{f"p{100 * p:g}": round(float(v), 1) for p, v in zip(QUANTILES, q)}}


def load(folder: Path, flow: int | None) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """A kept run's io.csv rows and `tcp_probe` rows of one bulk flow, and its MSS. io.csv
    does not say which flow a packet is: with several flows, `flow` (an index of the
    sender's plan) picks the rows whose sequence (data) or acknowledgment (ACKs) numbers lie
    in that flow's range, from its probes' first snd_una to their last snd_nxt (flows start
    at random initial sequence numbers, far apart in the 32-bit space)."""
    # The sender's plan: bulk-forward.json (bulk.json in runs kept before the reverse path).
    plan = next(p for p in (folder / "bulk-forward.json", folder / "bulk.json") if p.exists())
    flows = json.loads(plan.read_text())["flows"]
    if flow is None and len(flows) != 1:
        raise SystemExit(f"host_timing: {len(flows)} bulk flows in {folder}: choose one with --flow 0..{len(flows) - 1}")
    io = pd.read_csv(folder / "emu" / "io.csv")
    probes = pd.read_csv(folder / "trace.csv", low_memory=False)
    if flow is not None:
        port = flows[flow]["port"]
        probes = probes[(probes.sport == port) | (probes.dport == port)]
        mine = probes[probes.event == "probe"]
        ref = int(mine.snd_una.iloc[0])
        span = int(unwrap(mine.snd_nxt.to_numpy(), ref).max())
        number = np.where(io.dir == 0, io.seq, io.ack)
        rel = unwrap(number, ref)
        io = io[(io.kind != "wake") & (rel >= 0) & (rel <= span)]
    # The emulator's link line states the full packet: 52 header bytes (IPv4, TCP with timestamps) and the MSS.
    link = next(x for x in (folder / "emu.cfg").read_text().splitlines() if x.startswith("fwd_link"))
    return io, probes, int(json.loads(link.split(" ", 1)[1])["packet_bytes"]) - HEADER_BYTES


def measure(folder: Path, cut_us: float, flow: int | None = None) -> list[dict]:
    io, probes, mss = load(folder, flow)
    late = io[io.kind == "write"].late_ns.to_numpy() / 1e3
    rows = [summary("receiver", receiver_delays(io, mss), cut_us), summary("sender", sender_delays(io, probes), cut_us)]
    rows.append({"side": "emulator lateness", "n": int(len(late)), "over_cut": float((late > cut_us).mean()),
                 "mean_us": float(late.mean()),
                 **{f"p{100 * p:g}": round(float(v), 1) for p, v in zip(QUANTILES, np.quantile(late, QUANTILES))}})
    return rows


def delays(folder: Path, cut_us: float, flow: int | None = None) -> dict[str, np.ndarray]:
    """Per side, one kept run's delays up to `cut_us` (us)."""
    io, probes, mss = load(folder, flow)
    d = {"receiver": receiver_delays(io, mss), "sender": sender_delays(io, probes)}
    return {k: v[v <= cut_us] for k, v in d.items()}


def per_run(folders: list[Path], cut_us: float, flow: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each run's offsets from the pooled runs (per side: its mean and quantiles less the
    pooled ones, us), and per side the variance components (within a run, between runs)."""
    runs = [delays(f, cut_us, flow) for f in folders]
    rows, parts = [], []
    for side in ("receiver", "sender"):
        pooled = np.concatenate([r[side] for r in runs])
        q_all = np.quantile(pooled, (0.1, 0.5, 0.9))
        means = np.array([r[side].mean() for r in runs])
        n = np.array([len(r[side]) for r in runs])
        for f, r, m in zip(folders, runs, means):
            q = np.quantile(r[side], (0.1, 0.5, 0.9))
            extra = json.loads((f / "metrics.json").read_text()) if (f / "metrics.json").exists() else {}
            rows.append({"run": f.name, "side": side, "n": len(r[side]), "mean_us": round(float(m), 1),
                         "d_mean": round(float(m - pooled.mean()), 1),
                         **{f"d_p{p}": round(float(a - b), 1) for p, a, b in zip((10, 50, 90), q, q_all)},
                         **{k: extra[k] for k in ("load1", "ce_marks", "cwnd_mean[0]") if k in extra}})
        within = float(np.average([r[side].var(ddof=1) for r in runs], weights=n - 1))
        between = max(float(means.var(ddof=1)) - within * float(np.mean(1 / n)), 0.0)
        parts.append({"side": side, "runs": len(runs), "pooled_mean_us": round(float(pooled.mean()), 1),
                      "within_sd_us": round(within ** 0.5, 1), "between_sd_us": round(between ** 0.5, 1),
                      "run_means_sd_us": round(float(means.std(ddof=1)), 1),
                      "run_medians_sd_us": round(float(np.std([np.median(r[side]) for r in runs], ddof=1)), 1)})
    r_mean = [np.array([r[side].mean() for r in runs]) for side in ("receiver", "sender")]
    # Two points always correlate by +-1: from three runs on.
    corr = float(np.corrcoef(r_mean[0], r_mean[1])[0, 1]) if len(runs) > 2 else np.nan
    parts[0]["corr_receiver_sender"] = parts[1]["corr_receiver_sender"] = round(corr, 2)
    return pd.DataFrame(rows), pd.DataFrame(parts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", nargs="?", help="a scenario of bulk flows, run on the testbed (root)")
    ap.add_argument("--dir", type=Path, nargs="+", help="kept runs to measure instead (several: per run)")
    ap.add_argument("--keep", type=Path, help="where to keep the run's files")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--flow", type=int, help="with several bulk flows: the one to measure (its index)")
    ap.add_argument("--cut", type=float, default=5000.0, help="delays above this (us) are counted apart")
    args = ap.parse_args()
    if bool(args.scenario) == bool(args.dir):
        ap.error("give a scenario or --dir")
    if args.dir and len(args.dir) > 1:
        runs, parts = per_run(args.dir, args.cut, args.flow)
        print(runs.to_string(index=False))
        print()
        print(parts.to_string(index=False))
        return 0
    folder = args.dir[0] if args.dir else None
    if args.scenario:
        import tempfile

        from cubiclab.scenario import Scenario
        from cubiclab.testbed.ensemble import run_metrics
        from cubiclab.testbed.run import testbed

        sc = Scenario.load(args.scenario).replace(duration=f"{args.seconds}s")
        if args.seed is not None:
            sc = sc.replace(seed=args.seed)
        folder = args.keep or Path(tempfile.mkdtemp(prefix="host-timing-"))
        load1 = os.getloadavg()[0]
        res = testbed(sc, keep_dir=folder, io_trace=5_000_000)
        (folder / "metrics.json").write_text(json.dumps({"load1": load1, **run_metrics(res)}, default=float) + "\n")
        print(f"# {sc.name}: {args.seconds:g} s, utilisation {res.summary['utilization']:.3f}, emulator "
              f"lateness p99 {res.summary['emulator'].get('late_p99_us')} us; kept in {folder}", file=sys.stderr)
    print(pd.DataFrame(measure(folder, args.cut, args.flow)).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
