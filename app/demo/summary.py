"""The demo model's handoff summary: extractive, built only from the request it receives.

Two shapes: the default handoff (what the user asked / what was answered / open items) and the
checkpoint shape (Goal, Constraints & Preferences, Progress, Key Decisions, Next Steps, Critical
Context) when the prompt asks for those headings. An earlier summary in the input is carried
forward: its bullets are merged into the new sections, or kept verbatim when its shape is
unknown.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from .conversation import Conversation, Entry
from .phrasing import first_sentence, is_topical, middle_truncate, plain, sentences, shorten
from .wire import estimate_tokens

ASKED = "What the user asked"
ANSWERED = "What was answered and decided"
OPEN = "Open items"
EARLIER = "Earlier context"
CHECKPOINT_HEADINGS = (
    "Goal",
    "Constraints",
    "Progress",
    "Key Decisions",
    "Next Steps",
    "Critical Context",
)

_FOCUS = re.compile(r"(?:additional\s+)?focus\s*:\s*(.+)", re.IGNORECASE | re.DOTALL)
_CONSTRAINT = re.compile(
    r"\b(must|never|always|don't|do not|only|prefer|should|avoid|without|keep|constraints?|"
    r"requirements?|required|limit|at most|at least|no more than)\b",
    re.IGNORECASE,
)
_FILE = re.compile(
    r"(?<![\w/.])((?:[\w.-]+/)*[\w-]*[A-Za-z][\w-]*\.(?:[A-Za-z][A-Za-z0-9]{1,7}|[chr]))\b"
)
_DECISION = re.compile(
    r"\b(let's|lets|we will|we'll|i will|i'll|decided|decide|go with|chose|choose|instead)\b",
    re.IGNORECASE,
)
# Openings of the demo model's own restating sentences: no news in a summary.
_RESTATEMENT = re.compile(
    r"^(You said|You wrote|Noted|You asked|Your question|You want to know|Earlier you|"
    r"The key words|Tell me more|Keep going|Ask me|What I'm keeping in mind)\b"
)
# "(and 4 earlier requests)": a count the capped summary writes, not an entry to carry over.
_COUNT_LINE = re.compile(r"^\(and \d+ earlier \w+\)$")
_NOT_FILES = frozenset({"com", "org", "net", "www"})
# Our own "nothing here" bullets: never carried into the next summary.
_PLACEHOLDERS = frozenset(
    {
        "None.",
        "None stated.",
        "None yet.",
        "No user request yet.",
        "Nothing answered yet.",
        "Nothing completed yet.",
        "Nothing in progress.",
        "No goal stated yet.",
        "Wait for the user's next request.",
    }
)


@dataclass
class _Facts:
    """What the summary is made of, gathered in one pass over the conversation."""

    asks: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    tool_steps: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    open_items: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    earlier_unknown: list[str] = field(default_factory=list)
    earlier: dict[str, list[str]] = field(default_factory=dict)


def is_checkpoint_prompt(prompt: str) -> bool:
    """Whether the prompt asks for the checkpoint sections (nearly all of them by name).

    A handoff prompt may mention "goal", "constraints" and "next steps" in passing; asking for
    the checkpoint shape names at least five of the six sections.
    """
    lowered = prompt.lower()
    return sum(h.lower() in lowered for h in CHECKPOINT_HEADINGS) >= 5


def focus_of(prompt: str) -> str | None:
    """The focus text a ``/compact <focus>`` appended to the prompt, if any."""
    match = _FOCUS.search(prompt)
    return shorten(match.group(1), 200) if match else None


def parse_sections(summary: str) -> dict[str, list[str]]:
    """``## Heading`` → its bullet texts; ``### Sub`` under it becomes ``Heading/Sub``."""
    sections: dict[str, list[str]] = {}
    parent: str | None = None
    current: str | None = None
    for line in summary.splitlines():
        stripped = line.strip()
        if stripped.startswith("## "):
            parent = current = stripped[3:].strip()
            sections.setdefault(current, [])
        elif stripped.startswith("### ") and parent is not None:
            current = f"{parent}/{stripped[4:].strip()}"
            sections.setdefault(current, [])
        elif current is not None and stripped.startswith(("- ", "* ")):
            bullet = stripped[2:].strip()
            if bullet not in _PLACEHOLDERS and not _COUNT_LINE.match(bullet):
                sections[current].append(bullet)
    return sections


def asks_in_summary(summary: str) -> list[str]:
    """The user requests an earlier summary recorded (ours, either shape)."""
    sections = parse_sections(summary)
    return sections.get(ASKED) or sections.get("Goal") or []


def build_summary(conv: Conversation, prompt: str, max_tokens: int | None = None) -> str:
    """A handoff summary of ``conv``; ``prompt`` is the compaction request's own text.

    Like a real model asked to be concise, it stays short whatever the conversation's length:
    each section lists its newest entries only (older ones are counted, not restated). With
    ``max_tokens`` (the request's output limit) it lists fewer until the whole fits."""
    facts = _gather(conv)
    focus = focus_of(prompt)
    write = _checkpoint if is_checkpoint_prompt(prompt) else _handoff
    summary = ""
    for cap in SECTION_CAPS:
        summary = write(_capped(facts, cap), focus)
        if max_tokens is None or estimate_tokens(summary) <= max_tokens:
            break
    return summary


# How many entries a section lists, tried in turn until the summary fits its limit.
SECTION_CAPS = (8, 5, 3, 2, 1)


def _capped(facts: _Facts, cap: int) -> _Facts:
    """``facts`` with every list cut to its newest ``cap`` entries (and a line counting the
    rest), the way a concise writer keeps the latest state and mentions the older in passing."""

    def newest(values: list[str], noun: str) -> list[str]:
        if len(values) <= cap:
            return list(values)
        older = len(values) - cap
        return [f"(and {older} earlier {noun}{'s' if older != 1 else ''})", *values[-cap:]]

    earlier = {heading: newest(bullets, "point") for heading, bullets in facts.earlier.items()}
    return _Facts(
        asks=newest(facts.asks, "request"),
        answers=newest(facts.answers, "answer"),
        tool_steps=facts.tool_steps[-cap:],
        decisions=newest(facts.decisions, "decision"),
        open_items=facts.open_items[-cap:],
        constraints=facts.constraints[-cap * 2 :],  # constraints outlive everything else
        files=facts.files[-cap * 2 :],
        earlier_unknown=[middle_truncate(t, 200 * cap) for t in facts.earlier_unknown[-1:]],
        earlier=earlier,
    )


def _gather(conv: Conversation) -> _Facts:
    facts = _Facts()
    calls = conv.calls_by_id()
    entries = conv.entries
    last_summary = max((i for i, e in enumerate(entries) if e.kind == "summary"), default=-1)
    for index, entry in enumerate(entries):
        if entry.kind == "summary":
            _absorb_summary(facts, entry.text)
        elif entry.kind == "user":
            ask = shorten(entry.text, 160)
            _extend_unique(facts.asks, [ask])
            if _CONSTRAINT.search(entry.text):
                _extend_unique(facts.constraints, [ask])
            _extend_unique(
                facts.decisions,
                [shorten(s, 160) for s in sentences(entry.text) if _DECISION.search(s)],
            )
            answer = _answer_after(entries, index)
            if answer is not None:
                facts.answers.append(f"On “{shorten(entry.text, 60)}”: {gist(answer)}")
            elif index > last_summary:
                # Messages kept before a summary were handled by it; only later ones are open.
                _extend_unique(facts.open_items, [f"Respond to: “{ask}”"])
        elif entry.kind == "call":
            facts.tool_steps.append(f"Called `{entry.name}` ({describe_arguments(entry.text)})")
        elif entry.kind == "output":
            name = calls[entry.call_id].name if entry.call_id in calls else "a tool"
            lines = len(entry.text.splitlines())
            facts.tool_steps.append(f"`{name}` returned {lines} line(s)")
        if entry.kind in ("user", "call", "output", "assistant"):
            found = [
                f
                for f in _FILE.findall(_without_code(entry.text))
                if f.rsplit(".", 1)[-1].lower() not in _NOT_FILES
            ]
            _extend_unique(facts.files, found[:20])
    if last_summary >= 0 and not any(e.kind == "assistant" for e in entries[last_summary:]):
        # Nothing happened since the earlier summary: what it left open is still open.
        earlier_open = [
            *facts.earlier.get(OPEN, []),
            *facts.earlier.get("Progress/In Progress", []),
        ]
        _extend_unique(facts.open_items, [o for o in earlier_open if not o.startswith("Nothing")])
    return facts


def _absorb_summary(facts: _Facts, text: str) -> None:
    sections = parse_sections(text)
    files = [f.strip("`") for f in sections.get("Files mentioned", [])]
    files += [
        c[len("File: ") :].strip("`")
        for c in sections.get("Critical Context", [])
        if c.startswith("File: ")
    ]
    _extend_unique(facts.files, files)
    if sections.get(ASKED) or sections.get("Goal"):
        for heading, bullets in sections.items():
            facts.earlier.setdefault(heading, [])
            _extend_unique(facts.earlier[heading], bullets)
    else:
        facts.earlier_unknown.append(text.strip())


def gist(answer: str) -> str:
    """The first sentence of a reply that says something (restatements skipped)."""
    paragraphs = [plain(p) for p in re.split(r"\n\s*\n", _without_code(answer))]
    paragraphs = [p for p in paragraphs if p]
    for index, prose in enumerate(paragraphs):
        if _RESTATEMENT.match(prose):
            continue
        sentence = first_sentence(prose, 140)
        if sentence.endswith(":") and index + 1 < len(paragraphs):
            # "Your first message was:" says nothing without what follows.
            return shorten(f"{sentence} {paragraphs[index + 1]}", 140)
        return sentence.rstrip(":")
    return "acknowledged it and noted the details"


def _without_code(text: str) -> str:
    return re.sub(r"```.*?(```|$)", "", text, flags=re.DOTALL)


def _answer_after(entries: list[Entry], index: int) -> str | None:
    """The first assistant reply after ``entries[index]`` and before the next user message."""
    for later in entries[index + 1 :]:
        if later.kind == "user":
            return None
        if later.kind == "assistant" and later.text.strip():
            return later.text
    return None


def _extend_unique(target: list[str], values: list[str]) -> None:
    seen = {v.casefold() for v in target}
    for value in values:
        if value.casefold() not in seen:
            target.append(value)
            seen.add(value.casefold())


def _merged(earlier: list[str], current: list[str]) -> list[str]:
    merged = list(earlier)
    _extend_unique(merged, current)
    return merged


def _bullets(values: list[str], empty: str) -> list[str]:
    return [f"- {v}" for v in values] if values else [f"- {empty}"]


def _earlier_block(facts: _Facts) -> list[str]:
    if not facts.earlier_unknown:
        return []
    text = middle_truncate("\n\n".join(facts.earlier_unknown), 2000)
    return [
        "",
        f"## {EARLIER}",
        "A previous summary was handed over; its content follows.",
        "",
        text,
    ]


def _handoff(facts: _Facts, focus: str | None) -> str:
    asks = _merged(_earlier_asks(facts.earlier), facts.asks)
    answered = _merged(facts.earlier.get(ANSWERED, []), facts.answers + facts.tool_steps)
    open_items = facts.open_items or (
        [f"Nothing pending; the last request was “{facts.asks[-1]}”."] if facts.asks else []
    )
    lines = ["Summary of the conversation so far, for whoever continues it."]
    if focus:
        lines += ["", f"Focus requested: {focus}"]
    lines += ["", f"## {ASKED}", *_bullets(asks, "No user request yet.")]
    lines += ["", f"## {ANSWERED}", *_bullets(answered, "Nothing answered yet.")]
    lines += ["", f"## {OPEN}", *_bullets(open_items, "None.")]
    if facts.files:
        lines += ["", "## Files mentioned", *_bullets([f"`{f}`" for f in facts.files[:20]], "")]
    lines += _earlier_block(facts)
    return "\n".join(lines).strip()


def _checkpoint(facts: _Facts, focus: str | None) -> str:
    earlier = facts.earlier
    first = (
        [g for g in earlier.get("Goal", []) if not g.startswith("Latest request:")][:1]
        or [a for a in [*earlier.get(ASKED, []), *facts.asks] if is_topical(a)][:1]
        or facts.asks[:1]
    )
    goal = list(first)
    if facts.asks and not any(facts.asks[-1].casefold() == g.casefold() for g in goal):
        goal.append(f"Latest request: {facts.asks[-1]}")
    constraints = _merged(earlier.get("Constraints & Preferences", []), facts.constraints)
    done = _merged(
        earlier.get("Progress/Done", []) + earlier.get(ANSWERED, []),
        facts.answers + facts.tool_steps,
    )
    decisions = _merged(earlier.get("Key Decisions", []), facts.decisions)
    next_steps = facts.open_items or ["Wait for the user's next request."]
    requests = _merged(_earlier_asks(earlier), facts.asks)
    earlier_critical = [
        c
        for c in earlier.get("Critical Context", [])
        if not c.startswith(("User request: ", "File: ", "Focus requested: "))
    ]
    critical = _merged(
        earlier_critical,
        [f"User request: {a}" for a in requests] + [f"File: `{f}`" for f in facts.files[:20]],
    )
    if focus:
        critical.insert(0, f"Focus requested: {focus}")
    lines = [
        "## Goal",
        *_bullets(goal, "No goal stated yet."),
        "",
        "## Constraints & Preferences",
        *_bullets(constraints, "None stated."),
        "",
        "## Progress",
        "### Done",
        *_bullets(done, "Nothing completed yet."),
        "### In Progress",
        *_bullets(facts.open_items, "Nothing in progress."),
        "### Blocked",
        "- None.",
        "",
        "## Key Decisions",
        *_bullets(decisions, "None yet."),
        "",
        "## Next Steps",
        *_bullets(next_steps, "None."),
        "",
        "## Critical Context",
        *_bullets(critical, "None."),
    ]
    lines += _earlier_block(facts)
    return "\n".join(lines).strip()


def _earlier_asks(earlier: dict[str, list[str]]) -> list[str]:
    """User requests recorded by an earlier summary of either shape."""
    if earlier.get(ASKED):
        return earlier[ASKED]
    prefix = "User request: "
    return [c[len(prefix) :] for c in earlier.get("Critical Context", []) if c.startswith(prefix)]


def describe_arguments(arguments: str) -> str:
    """Tool arguments as ``key=value`` pairs for prose ("path='.'")."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return shorten(arguments, 60)
    if not isinstance(parsed, dict):
        return shorten(arguments, 60)
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in parsed.items())
