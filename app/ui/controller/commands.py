"""Slash commands typed in the composer: the list the popup offers, and the parser."""

from __future__ import annotations

from dataclasses import dataclass

COMPACT_STREAMING_REASON = "'/compact' is disabled while a response is streaming"
COMPACT_RUNNING_REASON = "'/compact' is disabled while a compaction is running"


@dataclass(frozen=True)
class CommandSpec:
    """One command the composer knows: its name, argument hint and one-line help."""

    name: str
    usage: str
    help: str
    takes_argument: bool = False
    needs_argument: bool = False


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec("compact", "/compact [focus]", "Summarise the conversation now; optional focus",
                takes_argument=True),
    CommandSpec("new", "/new", "Start a new session"),
    CommandSpec("undo-compact", "/undo-compact", "Undo the last compaction (until the next turn)"),
    CommandSpec("model", "/model <name>", "Switch this session to another model",
                takes_argument=True, needs_argument=True),
    CommandSpec("export", "/export", "Export this session to Markdown or JSON"),
    CommandSpec("fork", "/fork", "Fork this conversation into a new one, up to its last turn"),
)

_BY_NAME = {spec.name: spec for spec in COMMANDS}


@dataclass(frozen=True)
class Command:
    """A parsed, known command: ``name`` and its argument ("" when none)."""

    name: str
    argument: str = ""


@dataclass(frozen=True)
class CommandProblem:
    """Text that looks like a command but cannot run; ``hint`` says why, for the inline hint."""

    hint: str


def looks_like_command(text: str) -> bool:
    """True when the composer text is a slash command rather than a message.

    ``//`` escapes a leading slash, and a path like ``/usr/bin`` on a line of its own is only
    treated as a command when its first word has no further slash.
    """
    stripped = text.lstrip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return False
    first = stripped[1:].split(maxsplit=1)[0] if stripped[1:].strip() else ""
    return "/" not in first


def parse_command(text: str) -> Command | CommandProblem | None:
    """Parse composer text: a ``Command``, a ``CommandProblem`` (unknown/misused), or None
    when the text is an ordinary message."""
    if not looks_like_command(text):
        return None
    body = text.strip()[1:]
    name, _, argument = body.partition(" ")
    name = name.strip().lower()
    argument = argument.strip()
    spec = _BY_NAME.get(name)
    if spec is None:
        known = ", ".join(s.usage.split()[0] for s in COMMANDS)
        shown = f"/{name}" if name else "/"
        return CommandProblem(f"Unknown command {shown} — try {known}. Start with // to send a "
                              "message that begins with a slash.")
    if argument and not spec.takes_argument:
        return CommandProblem(f"{spec.usage} takes no argument.")
    if spec.needs_argument and not argument:
        return CommandProblem(f"Usage: {spec.usage}")
    return Command(name=name, argument=argument)


def completions(prefix: str) -> list[CommandSpec]:
    """Commands whose name starts with what follows the ``/`` in ``prefix``."""
    typed = prefix.strip().lstrip("/").split(" ", 1)[0].lower()
    return [spec for spec in COMMANDS if spec.name.startswith(typed)]


def unescape_message(text: str) -> str:
    """A message typed as ``//text`` is sent as ``/text``."""
    stripped = text.lstrip()
    if stripped.startswith("//"):
        return stripped[1:]
    return text
