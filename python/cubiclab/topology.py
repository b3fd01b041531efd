"""Topology presets: a few keys that stand for a path of links and the routes across it.

A scenario file may give its path as ``[topology]`` instead of ``[bottleneck]`` or
``[[links]]``; loading expands it into ``links`` and each group's ``route``, so everything
downstream (the simulator, the testbed, the results) sees an ordinary scenario::

    [topology]
    preset = "parking-lot"      # or "dumbbell"
    hops = 3                    # links "hop1" ... "hop3", crossed in that order
    link = { rate = "100Mbps", buffer = "100%BDP" }    # every hop: the keys of [bottleneck]
    hop_links = [{}, { queue = "red" }, { rate = "50Mbps" }]   # per hop, over `link`

    [[topology.cross]]          # a flow group repeated on each hop (the keys of [[flows]])
    algorithm = "reno"
    rtt = "40ms"
    on = [1, 3]                 # which hops (default: every hop)

    [[topology.cross_web]]      # web sessions repeated on each hop (the keys of [[web]], and `on`)
    sessions = 10

    [[flows]]                   # a group without a route crosses every hop: the long flows
    algorithm = "cubic"
    rtt = "80ms"

The copies of a cross group are named after it and their hop ("reno@hop2"). ``dumbbell``
takes only ``link``: it is ``[bottleneck]`` under another name.

From Python, :func:`parking_lot` builds the same scenario.
"""

from __future__ import annotations

from dataclasses import asdict, is_dataclass

from cubiclab import _core

#: The presets and the keys each takes besides ``preset``.
PRESETS = {
    "dumbbell": ("link",),
    "parking-lot": ("hops", "link", "hop_links", "cross", "cross_web"),
}


def hop_name(h: int) -> str:
    """The name of hop `h` (1-based) of a parking lot."""
    return f"hop{h}"


def expand(d: dict) -> dict:
    """Scenario table `d` with its ``topology`` replaced by the links and routes it stands
    for (``d`` itself is left alone). Bad keys and values are refused naming their path."""
    d = dict(d)
    topo = d.pop("topology")
    if not isinstance(topo, dict):
        raise ValueError(f"topology must be a table; got {type(topo).__name__}")
    preset = topo.get("preset")
    if preset not in PRESETS:
        raise ValueError(f"topology.preset is {preset!r}; allowed: {', '.join(map(repr, PRESETS))}")
    allowed = ("preset", *PRESETS[preset])
    for k in topo:
        if k not in allowed:
            raise ValueError(f"topology: unknown key '{k}' for preset {preset!r}; allowed: {', '.join(allowed)}")
    for k in ("bottleneck", "links"):
        if k in d:
            raise ValueError(f"{k}: a scenario gives its path one way: [topology], [bottleneck] or [[links]]")
    link = _table(topo.get("link", {}), "topology.link")
    if "name" in link:
        raise ValueError("topology.link.name: the preset names its links; remove the key")
    if preset == "dumbbell":
        d["bottleneck"] = link
        return d
    hops = topo.get("hops")
    if isinstance(hops, bool) or not isinstance(hops, int) or not 1 <= hops <= _core.MAX_HOPS:
        raise ValueError(f"topology.hops is {hops!r}; allowed: an integer in [1, {_core.MAX_HOPS}]")
    names = [hop_name(h) for h in range(1, hops + 1)]
    per_hop = topo.get("hop_links", [{}] * hops)
    if not isinstance(per_hop, list) or len(per_hop) != hops:
        raise ValueError(f"topology.hop_links must be a list of {hops} tables (one per hop); got {per_hop!r}")
    d["links"] = []
    for i, (name, extra) in enumerate(zip(names, per_hop)):
        extra = _table(extra, f"topology.hop_links[{i}]")
        if "name" in extra:
            raise ValueError(f"topology.hop_links[{i}].name: the preset names its links; remove the key")
        d["links"].append({**link, **extra, "name": name})
    for key in ("flows", "web"):
        groups = d.get(key, [])
        if isinstance(groups, list):
            d[key] = [{**g, "route": names} if isinstance(g, dict) and "route" not in g else g for g in groups]
    for key, into, default_label in (("cross", "flows", "cubic"), ("cross_web", "web", "web")):
        groups = topo.get(key, [])
        if not isinstance(groups, list):
            raise ValueError(f"topology.{key} must be a list of tables (in a file: [[topology.{key}]])")
        copies = []
        for j, g in enumerate(groups):
            at = f"topology.{key}[{j}]"
            g = _table(g, at)
            if "route" in g:
                raise ValueError(f"{at}.route: a cross group crosses one hop; choose hops with `on`")
            on = g.pop("on", list(range(1, hops + 1)))
            if (not isinstance(on, list) or not on
                    or any(isinstance(h, bool) or not isinstance(h, int) or not 1 <= h <= hops for h in on)
                    or len(set(on)) != len(on)):
                raise ValueError(f"{at}.on is {on!r}; allowed: a list of distinct hops in [1, {hops}]")
            label = g.get("name") or (g.get("algorithm", default_label) if key == "cross" else f"{default_label}{j}")
            copies += [{**g, "name": f"{label}@{names[h - 1]}", "route": [names[h - 1]]} for h in on]
        if copies:
            if not isinstance(d.get(into, []), list):
                raise ValueError(f"{into} must be a list of tables (in a file: [[{into}]])")
            d[into] = [*d.get(into, []), *copies]
    return d


def parking_lot(hops: int, link=None, hop_links=None, long=(), cross=(), cross_web=(), **scenario):
    """A parking lot of `hops` links "hop1" ... as a :class:`cubiclab.Scenario`: `long` flow
    groups cross every hop, each group of `cross` (flow groups) and `cross_web` (web groups)
    is repeated on each hop (or on the hops its ``on`` list names, when given as a table).
    `link` (a table or a Link/Bottleneck) sets every hop's keys, `hop_links` (one per hop)
    override them; other keywords are scenario keys (``duration="30s"``)."""
    from cubiclab.scenario import Scenario

    topo = {"preset": "parking-lot", "hops": hops, "link": _plain(link or {}),
            "cross": [_plain(g) for g in cross], "cross_web": [_plain(g) for g in cross_web]}
    if hop_links is not None:
        topo["hop_links"] = [_plain(x) for x in hop_links]
    return Scenario.from_dict({**scenario, "topology": topo, "flows": [_plain(g) for g in long]})


def _plain(x) -> dict:
    """A group or link as the table a file gives: the fields set away from their defaults."""
    if is_dataclass(x):
        defaults = type(x)()
        return {k: v for k, v in asdict(x).items() if v != getattr(defaults, k)}
    return x


def _table(value, at: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{at} must be a table; got {type(value).__name__}")
    return dict(value)
