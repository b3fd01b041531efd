"""`cubiclab model ...`: the analytic models from the command line.

    cubiclab model markov --capacity 100Mbps --rtt 100ms --alpha 1e6 --beta 0.5 --loss-rate 1 --states 100
    cubiclab model response --model all --rtt 100ms --loss 1e-6 1e-4
    cubiclab model validate --events 10000 --seed 0
    cubiclab model figures --out cubiclab-out/models

Bad input raises ValueError (cubiclab.cli.main turns it into one line and exit status 2).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from cubiclab import _core
from cubiclab.units import format_rate, parse_percent, parse_rate, parse_time_s

#: N x N arrays of 8-byte numbers the chain holds at once (P, tau, s, the joint flow and its
#: two products, the solver's copy and its workspace).
_CHAIN_MATRICES = 8
#: Most states whose matrices fit the run memory budget shared with the simulator.
MAX_STATES = math.isqrt(_core.MEMORY_BUDGET_BYTES // (8 * _CHAIN_MATRICES))
#: Largest W / alpha (s^3): the chain's areas grow as alpha tau^4 with tau ~ (W / alpha)^(1/3),
#: so (W / alpha)^(4/3), summed over the states, must stay far below the float maximum 1.8e308.
MAX_W_OVER_ALPHA = 1e200


def _alpha(text: str) -> float:
    """alpha in bits/s^3: a number ('1e6') or a rate-like string ('1Mbps', the paper's
    'alpha = 1 Mb/s' meaning 1e6 bits/s^3)."""
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return float(parse_rate(text, "alpha"))
    except ValueError:
        raise ValueError(
            f"alpha: cannot parse '{text}'; give bits/s^3 as a number ('1e6') or as the paper writes it ('1Mbps')"
        ) from None


def _float(text: str, field: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"{field}: '{text}' is not a number") from None
    if math.isnan(v):
        raise ValueError(f"{field}: '{text}' is not a number")
    return v


#: Loss events `model validate` simulates at most: its loop takes about 1.8 us and 40 bytes
#: an event (1e8 events took 182 s and 3.9 GiB).
MAX_EVENTS = 10_000_000


def _int(text: str, field: str, least: int | None = None, most: int | None = None, why: str = "") -> int:
    """The integer `text`, within [least, most] when given; the message names `field`."""
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{field}: '{text}' is not an integer") from None
    if (least is not None and value < least) or (most is not None and value > most):
        span = f"{least:,} to {most:,}" if most is not None else f">= {least}"
        raise ValueError(f"{field} is {value:,}; allowed: an integer {span}{why}")
    return value


def _events(text: str) -> int:
    return _int(text, "--events", least=1, most=MAX_EVENTS,
                why=f" (about {MAX_EVENTS * 1.8e-6:.0f} s and {MAX_EVENTS * 40 / 2**30:.1f} GiB at most)")


def _markov_inputs(args) -> dict:
    kw = dict(
        capacity=float(parse_rate(args.capacity, "capacity", default_unit="bps")),
        rtt=parse_time_s(args.rtt, "rtt"),
        alpha=_alpha(args.alpha),
        beta=_float(args.beta, "beta"),
        loss_rate=_float(args.loss_rate, "loss-rate"),
    )
    w = kw["capacity"] * kw["rtt"]
    if kw["alpha"] > 0 and not w / kw["alpha"] <= MAX_W_OVER_ALPHA:
        raise ValueError(
            f"alpha: {kw['alpha']:g} bits/s^3 with W = capacity x rtt = {w:.3g} bits puts the chain's growth time "
            f"cbrt(W / alpha) at {(w / kw['alpha']) ** (1 / 3):.3g} s, too long for its floating-point areas; allowed: "
            f"W / alpha <= {MAX_W_OVER_ALPHA:g} (here alpha >= {w / MAX_W_OVER_ALPHA:.3g})")
    return kw


def _states(text: str) -> int:
    n = _int(text, "states")
    if n > MAX_STATES:
        gib = _CHAIN_MATRICES * 8 * n * n / 2**30
        raise ValueError(f"states: {n} states need {gib:.1f} GiB ({_CHAIN_MATRICES} matrices of N x N numbers); "
                         f"allowed: at most {MAX_STATES} ({_core.MEMORY_BUDGET_BYTES / 2**30:.0f} GiB)")
    return n


def _finite(value: float, what: str, kw: dict) -> float:
    """A result that floating point could not carry is the inputs' fault: say which."""
    if not math.isfinite(value):
        raise ValueError(f"the chain has no finite {what} for capacity {kw['capacity']:g} bit/s, rtt {kw['rtt']:g} s, "
                         f"alpha {kw['alpha']:g}, beta {kw['beta']:g}, loss-rate {kw['loss_rate']:g}; "
                         "choose values nearer the paper's (100Mbps, 100ms, 1e6, 0.5, 1)")
    return value


def _solved(compute, kw: dict):
    """`compute()`, with numerical failures (a singular chain, an overflow) told as the inputs'."""
    import numpy as np

    try:
        with np.errstate(all="ignore"):
            return compute()
    except (np.linalg.LinAlgError, OverflowError, ZeroDivisionError) as e:
        _finite(math.nan, f"solution ({e})", kw)


def cmd_markov(args) -> int:
    from cubiclab.models.markov import markov_model

    kw = _markov_inputs(args)
    r = _solved(lambda: markov_model(**kw, n_states=_states(args.states), method=args.solver), kw)
    _finite(r.normalized_throughput, "throughput", kw)
    if args.json:
        print(json.dumps(r.to_dict(), indent=2))
        return 0
    p = r.params
    print(
        f"CUBIC Markov model (seed 004): C = {format_rate(p['capacity'])}, RTT = {p['rtt'] * 1e3:g} ms, "
        f"W = {p['W']:.6g} bits, alpha = {p['alpha']:g} bits/s^3, beta = {p['beta']:g} (kept), "
        f"lambda = {p['loss_rate']:g}/s, N = {p['n_states']}"
    )
    print(f"normalized throughput: {r.normalized_throughput:.6f}  ({format_rate(r.throughput_bps)})")
    print(f"mean time between loss events: {r.mean_loss_interval:.4g} s")
    print(f"stationary distribution (solver {r.solver}, max |pi P - pi| = {r.residual:.2e}):")
    print(f"{'state':>6} {'window_bits':>14} {'probability':>12}")
    for row in r.stationary.itertuples(index=False):
        if args.min_probability and row.probability < args.min_probability:
            continue
        print(f"{row.state:>6d} {row.window:>14.6g} {row.probability:>12.6g}")
    return 0


def cmd_validate(args) -> int:
    from cubiclab.models.markov import markov_model
    from cubiclab.models.validate import rms_error, simulate_chain

    kw = _markov_inputs(args)
    n = _states(args.states)
    m = _solved(lambda: markov_model(**kw, n_states=n), kw)
    sim = _solved(lambda: simulate_chain(**kw, n_events=_events(args.events), seed=_int(args.seed, "--seed", least=0)), kw)
    _finite(m.normalized_throughput, "throughput", kw)
    _finite(sim.normalized_throughput, "simulated throughput", kw)
    out = {
        "params": m.params,
        "n_events": sim.params["n_events"],
        "seed": int(args.seed),
        "rms_error": rms_error(m.pi, sim.distribution(n)),
        "normalized_throughput_model": m.normalized_throughput,
        "normalized_throughput_simulated": sim.normalized_throughput,
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            if k != "params":
                print(f"{k}: {v:.6g}" if isinstance(v, float) else f"{k}: {v}")
    return 0


def cmd_response(args) -> int:
    from cubiclab.models.response import cubic_tcp_friendly_loss_rate, response_table

    rtt = parse_time_s(args.rtt, "rtt")
    losses = [parse_percent(x, "loss") for x in args.loss]
    t0 = parse_time_s(args.t0, "t0") if args.t0 is not None else None
    w_max = _float(args.wmax, "wmax") if args.wmax is not None else math.inf
    c = _float(args.c, "C")
    if args.beta is not None:
        raise ValueError("--beta of `model response` is now --decrease (the fraction of the window removed at a "
                         "loss, seed 000's beta; beta elsewhere, as in `model markov --beta`, is the fraction kept)")
    decrease = _float(args.decrease, "decrease")
    b = _float(args.b, "b")
    df = response_table(losses, rtt, args.model, c=c, decrease=decrease, b=b, t0=t0, w_max=w_max)
    p_star = float(cubic_tcp_friendly_loss_rate(rtt, c, decrease))
    if args.json:
        print(json.dumps({
            "rtt": rtt, "C": c, "decrease": decrease, "b": b, "t0": t0 if t0 is not None else 4 * rtt,
            "w_max": None if math.isinf(w_max) else w_max,
            "cubic_tcp_friendly_above_p": p_star,
            "windows": df.to_dict(orient="records"),
        }, indent=2))
        return 0
    print(f"average window (segments), RTT = {rtt * 1e3:g} ms; CUBIC C = {c:g}, decrease {decrease:g}; "
          f"CUBIC is in its TCP-friendly region for p > {p_star:.3g}")
    cols = list(df.columns)
    print(" ".join(f"{c_:>12}" for c_ in cols))
    for row in df.itertuples(index=False):
        print(" ".join(f"{v:>12.6g}" for v in row))
    return 0


def cmd_figures(args) -> int:
    from cubiclab.models.figures import reproduce_all

    paths = reproduce_all(Path(args.out), quick=args.quick)
    for name, path in paths.items():
        print(f"{name}: {path}")
    return 0


def add_parsers(sub) -> None:
    """Add the `model` subcommand (with markov, response, validate, figures) to `sub`."""
    m = sub.add_parser("model", help="analytic models: Markov chain (seed 004), response functions")
    msub = m.add_subparsers(dest="model_command", required=True)

    def chain_args(p):
        p.add_argument("--capacity", default="100Mbps", help="bottleneck capacity C (e.g. 100Mbps)")
        p.add_argument("--rtt", default="100ms", help="round-trip time (e.g. 100ms, 0.1s)")
        p.add_argument("--alpha", default="1e6", help="window growth factor, bits/s^3 ('1e6' or '1Mbps' as in the paper)")
        p.add_argument("--beta", default="0.5", help="fraction of the window kept at a loss, in (0, 1)")
        p.add_argument("--loss-rate", default="1", help="random loss events per second (lambda >= 0)")
        p.add_argument("--states", default="100", help="number of states N (>= 2)")
        p.add_argument("--json", action="store_true", help="print JSON")

    k = msub.add_parser("markov", help="stationary distribution and normalized throughput (seed 004)")
    chain_args(k)
    k.add_argument("--solver", choices=["solve", "lstsq", "eig"], default="solve")
    k.add_argument("--min-probability", type=float, default=0.0, help="hide states below this probability")
    k.set_defaults(func=cmd_markov)

    v = msub.add_parser("validate", help="discrete-event validation of the chain (seed 004 Sec. III-A)")
    chain_args(v)
    v.add_argument("--events", default="10000", help="number of loss events K")
    v.add_argument("--seed", default="0")
    v.set_defaults(func=cmd_validate)

    r = msub.add_parser("response", help="average window against loss rate")
    r.add_argument("--model", choices=["cubic", "cubic_pure", "tcp", "hstcp", "padhye", "all"], default="all")
    r.add_argument("--rtt", default="100ms")
    r.add_argument("--loss", nargs="+", default=["1e-6"], help="loss rate(s) p: 1e-6, 0.1%%")
    r.add_argument("--c", "--C", dest="c", default="0.4", help="CUBIC scaling constant C")
    r.add_argument("--decrease", default="0.2",
                   help="CUBIC's multiplicative decrease: the fraction of the window removed at a loss (seed 000's "
                        "beta, 0.2)")
    r.add_argument("--beta", help=argparse.SUPPRESS)  # the old name of --decrease: refused, naming it
    r.add_argument("--b", default="1", help="packets per ACK (Mathis, Padhye)")
    r.add_argument("--t0", default=None, help="Padhye base timeout (default 4 RTT)")
    r.add_argument("--wmax", default=None, help="Padhye receiver window limit (segments)")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=cmd_response)

    f = msub.add_parser("figures", help="reproduce seed 000 Fig. 3 and seed 004 Figs. 3-7 (PNG + CSV)")
    f.add_argument("--out", default="cubiclab-out/models")
    f.add_argument("--quick", action="store_true", help="few points (smoke run)")
    f.set_defaults(func=cmd_figures)
