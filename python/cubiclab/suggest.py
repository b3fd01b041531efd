""""Did you mean": the nearest allowed name added to a refusal of an unknown one.

Every refusal of a name (the schema's keys and queue disciplines, the registry's algorithms
and parameters, the CLI's choices) already lists what is allowed; the suggestion is read from
that list, so names added to the registries or the schema are covered without a list here."""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import functools
import re

# The refused name: 'x' or `x` after "unknown ..." (scenario keys, algorithms, parameters,
# serde's variants) or argparse's "invalid choice: 'x'".
_REFUSED = re.compile(r"(?:unknown [^'`]*?|invalid choice: )['`]([^'`]+)['`]")
# What is allowed: the text after "allowed:" or argparse's "(choose from ...)".
_ALLOWED = re.compile(r"(?:allowed: (?:one of )?|choose from )(.*)")


def did_you_mean(message: str) -> str:
    """`message` with "; did you mean 'y'?" added when it refuses an unknown name and one of
    the names it allows is close to it; otherwise `message` unchanged."""
    refused, allowed = _REFUSED.search(message), _ALLOWED.search(message)
    if not refused or not allowed or "did you mean" in message:
        return message
    names = [n.strip(" '`\")") for n in re.split(r",|\bor\b", allowed.group(1))]
    return message + suggestion(refused.group(1), names)


def suggestion(name: str, names) -> str:
    """"; did you mean 'y'?" for the allowed name y nearest to `name`, or "" if none is close."""
    close = difflib.get_close_matches(name, [n for n in names if n], n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


@contextlib.contextmanager
def suggesting():
    """Re-raise a ValueError with the nearest allowed name added to its message."""
    try:
        yield
    except ValueError as e:
        message = did_you_mean(str(e))
        if message == str(e):
            raise
        raise ValueError(message) from None


def keywords_suggested(cls):
    """A dataclass whose constructor, given a keyword it has no field for, refuses it naming
    the nearest field and every allowed one (Python's own TypeError names neither), as a
    scenario file's unknown key is refused. Apply after ``@dataclass``."""
    init, names = cls.__init__, [f.name for f in dataclasses.fields(cls)]

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        for key in kwargs:
            if key not in names:
                raise TypeError(f"{cls.__name__}() has no field '{key}'{suggestion(key, names)} "
                                f"(allowed: {', '.join(names)})")
        init(self, *args, **kwargs)

    cls.__init__ = __init__
    return cls
