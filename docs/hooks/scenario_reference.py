"""The scenario file reference, generated from the one scenario schema (`cubiclab-sim`'s
serde `Scenario`, as `cubiclab._core.scenario_schema()` gives it as JSON Schema), with the
file's defaults from the Python edge (`cubiclab.scenario`), which fills them in."""

from __future__ import annotations

import json
from dataclasses import MISSING, fields


# How a base-unit integer is written in a file, told by the unit its description names.
UNIT_KINDS = ((", ns", "time"), ("bits/s", "rate"), (", bytes", "size"), ("Bytes to", "size"),
              ("receiver window, bytes", "size"))


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _type(prop: dict) -> str:
    """A short type: `integer`, `string or null`, a link to a definition, an enum."""
    if "$ref" in prop:
        name = _ref_name(prop["$ref"])
        return f"[{name}](#{name.lower()})"
    for key in ("allOf", "anyOf", "oneOf"):
        if key in prop:
            parts = [_type(p) for p in prop[key]]
            return " or ".join(dict.fromkeys(p for p in parts if p))
    if "enum" in prop:
        return " \\| ".join(f'`"{v}"`' for v in prop["enum"])
    if "const" in prop:
        return f'`"{prop["const"]}"`'
    t = prop.get("type", "")
    if t == "integer" or t == ["integer", "null"]:
        # The schema's integers in base units are written with units in a file.
        desc = prop.get("description", "")
        unit = next((kind for marker, kind in UNIT_KINDS if marker in desc), None)
        if unit:
            return unit if t == "integer" else f"{unit} or null"
    if isinstance(t, list):
        return " or ".join(t)
    if t == "array" and isinstance(prop.get("items"), list):  # a tuple: [a, b]
        return "[" + ", ".join(_type(p) for p in prop["items"]) + "]"
    if t == "array":
        return f"list of {_type(prop.get('items', {}))}"
    if t == "object" and isinstance(prop.get("additionalProperties"), dict):
        return f"table of {_type(prop['additionalProperties'])}"
    return t


def _file_defaults() -> dict[str, dict[str, object]]:
    """{definition name: {key: default}} from the dataclasses of `cubiclab.scenario` (a link's
    under the schema's name, `DuplexLink`; a table left out, such as `[record]`, takes its
    keys' defaults: TABLE_DEFAULT)."""
    from cubiclab import scenario as s

    out = {}
    for name, cls in (("Scenario", s.Scenario), ("DuplexLink", s.Bottleneck), ("FlowGroup", s.FlowGroup),
                      ("WebGroup", s.WebGroup), ("Host", s.Host),
                      ("Record", s.Record)):
        d = {}
        for f in fields(cls):
            if f.default is not MISSING:
                d[f.name] = f.default
            elif f.default_factory is not MISSING:
                value = f.default_factory()
                d[f.name] = value if value in ([], {}) else TABLE_DEFAULT
        out[name] = d
    return out


#: The default shown for a table whose keys have their own defaults (`[record]`, `[bottleneck]`).
TABLE_DEFAULT = "its keys' defaults"


def _default(value) -> str:
    if value is None:
        return "—"
    if value is TABLE_DEFAULT:
        return value
    if value in ([], {}):
        return "empty"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value}`"


def _variants(schema: dict) -> list[str]:
    """A tagged enum (`{"model": "poisson", ...}`, `{"packets": n}`): one line per variant."""
    lines = []
    for v in schema.get("oneOf", []) + schema.get("anyOf", []):
        desc = v.get("description", "").replace("\n", " ")
        if "enum" in v:
            lines += [f"- {', '.join(f'`{e!r}`'.replace(chr(39), chr(34)) for e in v['enum'])}: {desc}".rstrip(": ")]
            continue
        props = v.get("properties", {})
        props = dict(sorted(props.items(), key=lambda kv: kv[0] != "model"))  # the tag first
        keys = ", ".join(f"`{k}` ({_type(p)})" for k, p in props.items()) or _type(v)  # untagged: its type
        lines.append(f"- {keys}" + (f": {desc}" if desc else ""))
    return lines


def _definition(name: str, schema: dict, defaults: dict) -> list[str]:
    lines = [f"## {name}", ""]
    if schema.get("description"):
        lines += [schema["description"].replace("\n", " "), ""]
    props = schema.get("properties")
    if props:
        required = set(schema.get("required", []))
        lines += ["| key | type | default | meaning |", "|---|---|---|---|"]
        for key, prop in props.items():
            if key in defaults and not (defaults[key] in ([], {}) and "default" in prop):
                default = _default(defaults[key])
            elif "default" in prop and _type(prop) == "time" and isinstance(prop["default"], int):
                default = _default(f"{prop['default'] / 1e6:g}ms")
            elif "default" in prop:
                default = _default(prop["default"])
            else:
                default = "required" if key in required else "—"
            desc = (prop.get("description") or "").replace("\n", " ").replace("|", "\\|")
            lines.append(f"| `{key}` | {_type(prop)} | {default} | {desc} |")
        lines.append("")
    variants = _variants(schema)
    if variants:
        lines += ["One of:", "", *variants, ""]
    if "enum" in schema:
        lines += ["One of " + ", ".join(f'`"{v}"`' for v in schema["enum"]) + ".", ""]
    return lines


INTRO = """# Scenario files

Generated from the one scenario schema (`cubiclab-sim`'s `Scenario`, serde with JSON
Schema) by `python docs/hooks/generate.py`, and checked against it by the tests, so it
cannot drift from what the simulator accepts. The schema holds
values in base units (bits/s, ns, bytes); in a file or from Python you write units, and
`cubiclab.scenario` parses them before handing the scenario over:

- rates: `"400Mbps"`, `"2.64Mbps"`, `"10Gbps"`, `"500kbps"`;
- times: `"40ms"`, `"1.5s"`, `"200us"`;
- sizes: `"10MB"`, `"1500B"`, `"100packets"` (of `mss` bytes);
- buffers: also `"100%BDP"`, a fraction of the bandwidth-delay product with the largest
  flow RTT, rounded to whole packets.

The defaults are the file's (a key left out takes them). Every value is checked before a
run; a bad one is a `ValueError` (exit status 2 from the command line) naming its key
path, for example `flows[1].rtt`, and what is allowed.

A complete example, the built-in default scenario (seed 000 Fig. 6):

```toml
name = "fig6-default"
duration = "120s"

[bottleneck]
rate = "400Mbps"
buffer = "100%BDP"

[[flows]]
name = "cubic"
algorithm = "cubic"
count = 4
rtt = "40ms"
start_spacing = "1s"

[[flows]]
name = "sack"
algorithm = "reno"
count = 4
rtt = "40ms"
start_spacing = "1s"
```
"""


def _topology() -> list[str]:
    """`[topology]`, the Python edge's presets (`cubiclab.topology`), which loading expands into
    `links` and routes before the schema sees them: its docstring, the TOML block fenced."""
    import inspect

    from cubiclab import topology

    head, rest = inspect.cleandoc(topology.__doc__).split("::\n", 1)
    block, tail = [], []
    for line in rest.splitlines()[1:]:
        (block if line.startswith("    ") or (not line and not tail) else tail).append(line)
    while block and not block[-1]:
        block.pop()

    def md(text: str) -> str:  # the docstring's reST as Markdown
        return text.replace("``", "`").replace(":func:`", "`cubiclab.topology.")

    return ["## Topology presets", "", md(head.replace("\n", " ")) + ":", "", "```toml", *[b[4:] for b in block],
            "```", "", md(" ".join(t for t in tail if t)), ""]


def scenario_reference() -> str:
    from cubiclab import _core

    schema = json.loads(_core.scenario_schema())
    defaults = _file_defaults()
    lines = [INTRO]
    lines += _definition("Scenario", schema, {**defaults["Scenario"], "name": defaults["Scenario"]["name"]})
    lines += ["`name` (default `\"scenario\"`, or the file's name) labels the output folder; it is the "
              "Python edge's and not part of the schema.", ""]
    lines += _topology()
    for name, sub in schema.get("definitions", {}).items():
        lines += _definition(name, sub, defaults.get(name, {}))
    return "\n".join(lines) + "\n"
