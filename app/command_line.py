"""Coco's command line: ``--data-dir``, ``--offline``, ``--session``, ``--log-level``,
``--self-test``, ``--version`` (and ``--help``).

:func:`build_parser` is the whole definition, and argparse says everything the user reads:
help, version, usage errors. Building the parser is what costs, though: argparse looks each of
its own words up in gettext's catalogues (importing ``locale``, searching folders), ~2.5 ms of
the launch before the window's first paint. So :func:`parse_args` reads the command lines Coco
is usually given itself — the options spelled out in full, each with a value that does not
look like an option, in either ``--name value`` or ``--name=value`` form — and builds the
parser for anything else, which argparse then parses, explains or refuses as ever. Both give
the same namespace (``tests/packaging/test_cli.py`` compares them).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app import __version__

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")

# The options read without the parser: name -> (the namespace's field, how its value is read;
# None for a switch). Whatever else is on the command line goes to argparse.
_FLAGS: dict[str, tuple[str, Callable[[str], Any] | None]] = {
    "--data-dir": ("data_dir", Path),
    "--offline": ("offline", None),
    "--session": ("session", str),
    "--log-level": ("log_level", str.upper),
    "--self-test": ("self_test", None),
}


def build_parser() -> argparse.ArgumentParser:
    """The command line's definition (help, version and errors come from it)."""
    parser = argparse.ArgumentParser(
        prog="coco",
        description="Coco: a desktop chat client for LLMs, built around conversation compaction.",
    )
    parser.add_argument(
        "--data-dir", type=Path, metavar="PATH",
        help="an isolated profile: sessions, settings and API keys (PATH/config, keys in a "
             "private file rather than the system keyring), logs (PATH/logs) and caches "
             "(PATH/cache)",
    )
    parser.add_argument(
        "--offline", action="store_true",
        help="use the built-in offline demo model, whatever is configured",
    )
    parser.add_argument("--session", metavar="ID", help="open the session with this id")
    parser.add_argument(
        "--log-level", default=None,
        choices=list(LOG_LEVELS), type=str.upper,
        help="log level for the log file and stderr (default: INFO to the file, "
             "WARNING to stderr)",
    )
    parser.add_argument(
        "--self-test", action="store_true",
        help="drive the window through a short conversation with compactions, report, exit",
    )
    parser.add_argument("--version", action="version", version=f"Coco {__version__}")
    return parser


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The options in ``argv``; raises SystemExit as argparse does (after printing help, the
    version or a usage error)."""
    parsed = read_plain(argv)
    return parsed if parsed is not None else build_parser().parse_args(argv)


def read_plain(argv: list[str]) -> argparse.Namespace | None:
    """``argv`` read without the parser, or None when it is not a plain command line (then
    only argparse may answer: help, an abbreviation, a missing value, a mistake)."""
    values: dict[str, Any] = {
        "data_dir": None, "offline": False, "session": None, "log_level": None,
        "self_test": False,
    }
    index = 0
    while index < len(argv):
        name, equals, value = argv[index].partition("=")
        if name not in _FLAGS:
            return None
        field, read = _FLAGS[name]
        index += 1
        if read is None:  # a switch
            if equals:
                return None
            values[field] = True
            continue
        if not equals:
            if index == len(argv):
                return None
            value = argv[index]
            index += 1
        if not value or value.startswith("-"):
            return None  # empty, or taken for an option by argparse: its rules apply
        values[field] = read(value)
    if values["log_level"] is not None and values["log_level"] not in LOG_LEVELS:
        return None
    return argparse.Namespace(**values)
