"""The command-line reference, walked from `cubiclab.cli.build_parser()`: every command,
its positional arguments and options with their help and defaults."""

from __future__ import annotations

import argparse
import os


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser, str]]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            out += [(name, sub, helps.get(name, "")) for name, sub in action.choices.items()]
    return out


def _row(action: argparse.Action) -> str | None:
    if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.help == argparse.SUPPRESS:
        return None  # (a suppressed option is an old name, kept only to be refused with the new one)
    name = ", ".join(f"`{o}`" for o in action.option_strings) or f"`{action.dest}`"
    if action.metavar and action.option_strings:
        name += f" `{action.metavar}`"
    text = (action.help or "").replace("|", "\\|")
    if action.choices:
        text += (" " if text else "") + "One of " + ", ".join(f"`{c}`" for c in action.choices) + "."
    if action.default not in (None, False, [], argparse.SUPPRESS) and action.option_strings:
        text += f" Default `{action.default}`."
    if action.nargs in ("+", "*"):
        text += " Repeatable." if action.nargs == "*" else " One or more."
    elif isinstance(action, argparse._AppendAction):
        text += " May be given more than once."
    return f"| {name} | {text} |"


def _section(path: str, parser: argparse.ArgumentParser, help_text: str, level: int) -> list[str]:
    lines = [f"{'#' * level} `{path}`", ""]
    if help_text:
        lines += [help_text[0].upper() + help_text[1:] + ".", ""]
    lines += ["```text", parser.format_usage().strip().replace("usage: ", ""), "```", ""]
    rows = [r for r in map(_row, parser._actions) if r]
    if rows:
        lines += ["| argument | meaning |", "|---|---|", *rows, ""]
    for name, sub, sub_help in _subcommands(parser):
        lines += _section(f"{path} {name}", sub, sub_help, min(level + 1, 4))
    return lines


def cli_reference() -> str:
    from cubiclab.cli import build_parser

    # argparse wraps usage lines at the terminal's width ($COLUMNS): the page's is fixed, so
    # it reads the same whoever generates it.
    width, os.environ["COLUMNS"] = os.environ.get("COLUMNS"), "100"
    try:
        return _reference(build_parser())
    finally:
        if width is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = width


def _reference(parser: argparse.ArgumentParser) -> str:
    lines = ["# Command line", "",
             "Generated from the parsers in `cubiclab.cli` (`python docs/hooks/generate.py`). Bad input exits with "
             "status 2 and one line naming the problem; Ctrl-C exits with 130 and writes nothing "
             "half-finished.", ""]
    for name, sub, help_text in _subcommands(parser):
        lines += _section(f"cubiclab {name}", sub, help_text, 2)
    return "\n".join(lines) + "\n"
