"""What the user told the model, carried over every compaction without asking a model
(issue 23, spec section 10).

A summary is only as good as the model that writes it: a small local model's summary keeps
almost none of the user's facts. So at every compaction Coco itself takes, from the user
messages leaving the model's view, the statements that carry facts (names and identifiers,
paths and URLs, numbers with units, dates and times, code spans, e-mail addresses, and the
rules the user set: "always", "never", "must", "don't", "please use", "make sure"), in the
user's own words, and from the tool calls leaving the view the files read, the files changed
and the commands run. They go into the rebuilt history as one labelled user message, just
before the summary: the **carried notes**. The next compaction finds that block by its label
and merges it with what leaves then, so a note survives any number of compactions unless its
budget (a share of the post-compaction room, ``CompactionBudget.notes_budget``) forces it out; then the
least specific and oldest notes go first.

Deterministic, no model call, no tokenizer call per sentence (sizes are estimated from bytes;
the caller counts the finished block once): one linear pass over the messages leaving view.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ..items import Item, is_message, item_type, message_text, user_message
from ..tokens import approx_tokens

# The label the block opens with: how the next compaction (and the Model view, and the demo
# model) recognises it. Its first line never says "summary": it is not one.
NOTES_LABEL = "[Coco carried notes]"
NOTES_INTRO = (
    f"{NOTES_LABEL} Kept from older messages compacted out of your view: what the user told "
    "you, in their own words, and the files and commands of the earlier work. Still true "
    "unless the user says otherwise."
)
NOTES_HEADING = "The user told you (oldest first):"
CHANGED_HEADING = "Files changed (newest first):"
READ_HEADING = "Files read (newest first):"
COMMANDS_HEADING = "Commands run (newest first):"
_HEADINGS = (NOTES_HEADING, CHANGED_HEADING, READ_HEADING, COMMANDS_HEADING)

# A note is at most this many characters: a fact inside a long run-on paragraph comes out as
# the words around it, not the paragraph.
MAX_NOTE_CHARS = 140
# Around each fact in a sentence longer than that: this many characters on either side.
SPAN_CONTEXT_CHARS = 50
MAX_SPANS_PER_SENTENCE = 2
# More candidate notes than any budget holds are cut to this many (by eviction order) first.
MAX_CANDIDATES = 800
MAX_PATH_CHARS = 160
MAX_COMMAND_CHARS = 160
# The most entries each list keeps, newest first (a short list, not an inventory).
MAX_FILES = 12
MAX_COMMANDS = 8
# The files and commands lists give way to the notes past this share of the block.
LISTS_SHARE = 0.3

# -- what makes a statement a fact -----------------------------------------------------------

_URL = r"\b(?:https?|ftp|ssh|git|wss?)://[^\s<>\"'`)\]]+"
_EMAIL = r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"
_CODE = r"`[^`\n]{1,200}`"
_PATH = (
    r"(?:(?<![\w/])(?:~|\.{1,2})?/(?:[\w.@-]+/)*[\w.@-]+)"  # /etc/nginx, ~/work/x, ./run.sh
    r"|\b[A-Za-z]:\\[^\s]+"  # C:\Users\x
    r"|\b(?:[\w.-]+/){2,}[\w.-]+|\b(?:[\w.-]+/)+[\w-]+\.[A-Za-z0-9]{1,8}\b"  # app/x.py
    r"|\b[\w-]+\.(?:py|js|ts|tsx|jsx|json|ya?ml|toml|md|txt|sh|cfg|ini|conf|env|sql|go|rs|c|h"
    r"|cpp|hpp|java|kt|rb|php|html|css|scss|csv|log|lock|xml|ipynb|pdf|docx?|xlsx?|png|jpg"
    r"|svg|tf|proto|gradle|swift|cs|lua|zip|tar|gz)\b"
)
_UNIT = (
    r"%|ms|µs|ns|s|sec|secs|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|months?|"
    r"years?|[kKmMgGtTpP]i?[bB]|bytes?|[kKmMgG]bps|[kKmMgG]?[hH]z|px|pt|em|rem|dpi|"
    r"[kK]|[mM]|bn|k?tokens?|rps|qps|req/s|cores?|cpus?|gpus?|threads?|workers?|replicas?|"
    r"nodes?|users?|requests?|items?|rows?|lines?|chars?|characters?|words?|pages?|"
    r"°[CF]|[ck]?m|km|kg|g|lbs?|mg|ml|l|euros?|dollars?|usd|eur|gbp|chf|jpy|people|"
    r"retries|attempts?|times|steps?|epochs?|GB/s|MB/s|V|W|kW|mAh"
)
_NUMBER = (
    r"(?:[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn|million|billion))?)"
    r"|\b\d[\d,]*(?:\.\d+)?\s?(?:" + _UNIT + r")(?![\w])"
    r"|\bport\s+\d{2,5}\b|(?<=\w):\d{2,5}\b"
    r"|\bv?\d+\.\d+(?:\.\d+)+\b"  # versions 1.2.3
    r"|\b\d{3,}\b"  # a bare number of three digits or more: ids, ports, budgets
)
_MONTHS = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DATE = (
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b"
    r"|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
    r"|\b" + _MONTHS + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTHS + r"\b(?:\s+\d{4})?"
    r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
    r"|\b\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?(?:\s?(?:utc|gmt|[a-z]{3}t))?\b"
    r"|\b\d{1,2}\s?[ap]\.?m\.?\b|\b(?:19|20)\d{2}\b|\b(?:q[1-4])\b"
)
_IDENT = (
    r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"  # snake_case
    r"|\b[a-z]+[A-Z][A-Za-z0-9]*\b"  # camelCase
    r"|\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b"  # CamelCase
    r"|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"  # CONSTANT_CASE
    r"|\b[A-Z]{2,}-\d+\b"  # JIRA-123
    r"|\b[a-z][\w-]*-\d[\w-]*\b"  # svc-42, db-prod-2
    r"|\b[a-z]+(?:\.[a-z_][\w]*){2,}\b"  # com.example.app
    r"|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"  # commit hashes
)
_NAME = (  # a name the user gives: "my name is Ada", "the bot is called Coco"
    r"(?i:\b(?:name\s+is|named|called|call\s+me|i\s+am|i'm|is\s+called))\s+[A-Z][\w'-]+"
    r"(?:\s+[A-Z][\w'-]+)?"
)
_PROPER = (
    r"(?<=[a-z,;:]\s)[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+"  # Two Capitalised words mid-sentence
    r"|\b[A-Z]{2,}[a-z]*[A-Z]*\b"  # acronyms and product names: AWS, GCP, MySQL
)
# A rule is said as one: at the start of a sentence or clause, or by "you/we/I" ("Never
# propose X", "we always deploy on Monday", "deploys must go through CI", "please use X"). A
# "never" or "must" in the middle of ordinary prose is not a rule.
_RULE = (
    r"(?:^|[.;:!?,(]\s*|\b(?:please|and|but|so|you|we|they|then|also)\s+)"
    r"(?:always|never|don't|do\s+not|make\s+sure|ensure|avoid|only\s+use)\b"
    r"|\bmust(?:n't)?\s+(?:not|never|always|be|go|use|stay|run|have|keep|include|follow|"
    r"pass|only)\b"
    r"|\b(?:please\s+use|make\s+sure|from\s+now\s+on|keep\s+in\s+mind|remember\s+that|"
    r"i\s+prefer|we\s+prefer|i\s+want\s+you\s+to|no\s+more\s+than|at\s+most|at\s+least|"
    r"not\s+allowed|forbidden)\b"
)
# The same, as it is checked: the rule's word, then what precedes it (a pattern that starts
# with the alternatives of what may precede is tried at every position, many times slower).
_RULE_LEAD = re.compile(
    r"(?<![\w'])(?:always|never|don't|do\s+not|make\s+sure|ensure|avoid|only\s+use)\b",
    re.IGNORECASE,
)
_RULE_PHRASE = re.compile(
    r"(?<![\w'])(?:must(?:n't)?\s+(?:not|never|always|be|go|use|stay|run|have|keep|include|"
    r"follow|pass|only)|please\s+use|make\s+sure|from\s+now\s+on|keep\s+in\s+mind|"
    r"remember\s+that|i\s+prefer|we\s+prefer|i\s+want\s+you\s+to|no\s+more\s+than|"
    r"at\s+most|at\s+least|not\s+allowed|forbidden)\b",
    re.IGNORECASE,
)
_RULE_AFTER_WORDS = frozenset(["please", "and", "but", "so", "you", "we", "they", "then", "also"])


def _rules(sentence: str) -> list[tuple[int, int]]:
    """Where ``sentence`` states a rule (see ``_RULE``)."""
    found = [(m.start(), m.end()) for m in _RULE_PHRASE.finditer(sentence)]
    for match in _RULE_LEAD.finditer(sentence):
        start = match.start()
        before = sentence[max(0, start - 24) : start].rstrip()
        if start > 24 and " " not in before:
            continue  # inside a long unbroken run: not a clause start
        if not before or before[-1] in ".;:!?,(" or (
            before.rsplit(None, 1)[-1].lower() in _RULE_AFTER_WORDS
        ):
            found.append((start, match.end()))
    return found


# Acronyms that carry nothing on their own.
_PLAIN_CAPS = frozenset(
    {"I", "OK", "OKAY", "TODO", "FYI", "BTW", "IMO", "IMHO", "ASAP", "PS", "NB", "AM", "PM",
     "AND", "OR", "NOT", "THE", "A", "IT", "IS", "NO", "YES", "LOL", "ETA", "TL", "DR"}
)

# (kind, pattern, weight): the weight says how specific a match makes a note. The first
# group does not depend on case; names and identifiers do.
_KINDS_ANY_CASE: tuple[tuple[str, str, int], ...] = (
    ("url", _URL, 3),
    ("email", _EMAIL, 3),
    ("code", _CODE, 3),
    ("date", _DATE, 2),
    ("number", _NUMBER, 2),
    ("path", _PATH, 3),
    ("rule", _RULE, 1),
)
_KINDS_CASED: tuple[tuple[str, str, int], ...] = (
    ("ident", _IDENT, 2),
    ("name", _NAME, 3),
    ("proper", _PROPER, 1),
)
# One pattern per kind, each tried only on a sentence holding what that kind needs (a digit,
# a slash, an "@", a backtick, one of its words): one big alternation tried at every position
# of every sentence costs ten times more.
_PATTERNS = {
    kind: re.compile(pattern, re.IGNORECASE if index < len(_KINDS_ANY_CASE) else 0)
    for index, (kind, pattern, _) in enumerate((*_KINDS_ANY_CASE, *_KINDS_CASED))
}
_PRIORITY = {kind: index for index, (kind, _, _) in enumerate((*_KINDS_ANY_CASE, *_KINDS_CASED))}
_DIGIT = re.compile(r"\d")
_DOTTED = re.compile(r"\w\.[A-Za-z]")
_MIXED_CASE = re.compile(r"[a-z][A-Z]|[A-Z]{2}|(?<=\S\s)(?!I\b)[A-Z]")
_RULE_WORDS = frozenset(
    ["always", "never", "must", "mustn't", "don't", "not", "sure", "ensure", "avoid", "use", "now", "mind", "remember", "prefer", "want", "most", "least", "more", "allowed", "forbidden"]
)
_NAME_WORDS = frozenset(["name", "named", "called", "call", "am", "i'm"])
# What a date needs beside a digit (when no month or weekday is named): a year, a time of day,
# a quarter (the "-", "/" and ":" of the other forms are looked for as characters).
_DATE_HINT = re.compile(r"(?:19|20)\d\d|\d\s?[ap]\.?m\b|[qQ][1-4]\b", re.IGNORECASE)
_HEXISH = re.compile(r"[0-9a-f]{7}")
_MONTHS_WORDS = frozenset(
    [
        "jan", "january", "feb", "february", "mar", "march", "apr", "april", "may", "jun",
        "june", "jul", "july", "aug", "august", "sep", "sept", "september", "oct", "october",
        "nov", "november", "dec", "december",
    ]
)
_WEEKDAYS = frozenset(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])
_KINDS = (*_KINDS_ANY_CASE, *_KINDS_CASED)
_WEIGHTS = {kind: weight for kind, _, weight in _KINDS}

# Lines that are pasted output or code, not the user speaking.
_LOG_LINE = re.compile(
    r"^\s*(?:\[?\d{4}-\d{2}-\d{2}[T ]\d|\[?\d{2}:\d{2}:\d{2}|\[?(?:DEBUG|INFO|WARN(?:ING)?|ERROR"
    r"|TRACE|FATAL|CRITICAL)\b|Traceback \(|File \"|[\w.]*(?:Error|Exception|Warning)\b:|at [\w.$]+\(|\s*\^+\s*$|[<>+-]{3}\s|@@ )"
)
_CODE_LINE = re.compile(
    r"^\s*(?:def |class |import |from \S+ import |return\b|if .*:\s*$|for .*:\s*$|elif |else:|"
    r"try:|except\b|fn |func |function |const |let |var |public |private |#include|package |"
    r"\}|\{|//|/\*|\*/|#!|\$ |>>> )"
    r"|[;{}]\s*$|^\s{4,}\S"
)
_LOWER_WORDS = re.compile(r"[a-z']+")
_SPACES = re.compile(r"\s+")
# The marker a middle-truncated message carries (Coco's, not the user's words): a break.
_TRUNCATION = re.compile(r"…\d+ tokens truncated…")
_WORD_CHARS = re.compile(r"\w+")


@dataclass(frozen=True)
class CarriedOver:
    """The carried notes of one compaction: the user's facts (oldest first) and the files
    and commands of the earlier work (newest first)."""

    notes: tuple[str, ...] = ()
    files_changed: tuple[str, ...] = ()
    files_read: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    # Notes the budget forced out at this compaction (none unless it was full).
    dropped: int = 0

    @property
    def empty(self) -> bool:
        return not (self.notes or self.files_changed or self.files_read or self.commands)

    @property
    def files(self) -> list[str]:
        """Every file named, changed first, each once, with what was done to it."""
        seen: set[str] = set()
        shown: list[str] = []
        for paths, verb in ((self.files_changed, "changed"), (self.files_read, "read")):
            for path in paths:
                if path not in seen:
                    seen.add(path)
                    shown.append(f"{path} ({verb})")
        return shown

    def text(self) -> str:
        """The block's text, as the model reads it."""
        parts = [NOTES_INTRO]
        for heading, lines, quote in (
            (NOTES_HEADING, self.notes, False),
            (CHANGED_HEADING, self.files_changed, False),
            (READ_HEADING, self.files_read, False),
            (COMMANDS_HEADING, self.commands, True),
        ):
            if lines:
                body = "\n".join(f"- `{line}`" if quote else f"- {line}" for line in lines)
                parts.append(f"{heading}\n{body}")
        return "\n\n".join(parts)

    def item(self) -> Item:
        return user_message(self.text())


@dataclass
class _Note:
    text: str
    order: int  # chronological position: lower is older
    score: int  # how specific: the weights of the facts it holds
    key: str = field(default="")


def is_notes_message(item: Item) -> bool:
    """Whether ``item`` is a carried-notes block (recognised by its label). Looks at the first
    text part only: called on every user message of a history, it must not join them."""
    if not is_message(item, "user"):
        return False
    content = item.get("content")
    if isinstance(content, str):
        return content.startswith(NOTES_LABEL)
    if isinstance(content, list) and content:
        first = content[0]
        text = first.get("text") if isinstance(first, dict) else first
        return isinstance(text, str) and text.startswith(NOTES_LABEL)
    return False


def is_notes_text(text: str) -> bool:
    return text.startswith(NOTES_LABEL)


def notes_from_text(text: str) -> CarriedOver:
    """A block's text read back into its lists (what the previous compaction carried)."""
    sections: dict[str, list[str]] = {heading: [] for heading in _HEADINGS}
    current: list[str] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in sections:
            current = sections[stripped]
        elif current is not None and stripped.startswith("- "):
            entry = stripped[2:].strip()
            if current is sections[COMMANDS_HEADING] and len(entry) > 1:
                entry = entry.removeprefix("`").removesuffix("`")
            if entry:
                current.append(entry)
    return CarriedOver(
        notes=tuple(sections[NOTES_HEADING]),
        files_changed=tuple(sections[CHANGED_HEADING]),
        files_read=tuple(sections[READ_HEADING]),
        commands=tuple(sections[COMMANDS_HEADING]),
    )


def previous_notes(history: Iterable[Item]) -> CarriedOver:
    """The newest carried-notes block in ``history`` (empty when there is none)."""
    found: Item | None = None
    for item in history:
        if is_notes_message(item):
            found = item
    return notes_from_text(message_text(found)) if found is not None else CarriedOver()


# -- extracting ------------------------------------------------------------------------------


def extract_notes(text: str) -> list[str]:
    """The statements of one user message that carry facts (see :func:`extract_scored`)."""
    return [note for note, _ in extract_scored(text)]


def extract_scored(text: str) -> list[tuple[str, int]]:
    """The notes of one user message, each with its specificity (see :func:`extract_many`)."""
    return extract_many([text])


def extract_many(texts: Sequence[str], limit: int | None = None) -> list[tuple[str, int]]:
    """The notes of each of ``texts`` (see :func:`extract_chunk`); with ``limit``, read newest
    first, one message at a time, until that many notes are found: a budget holds a few
    hundred notes, and when far more than that leave at once (the first compaction of a long
    resumed conversation) the oldest would go first anyway. Returned oldest first.

    A message is read for facts once: its notes are remembered by a digest of its text, so a
    compaction run again (after an undo, or a narrower pass of the same one) and the next
    compaction, which sees the same messages leave the view, read nothing twice."""
    chunks: list[tuple[tuple[str, int], ...]] = []
    found = 0
    for text in reversed(texts):
        notes = _notes_of_message(text)
        chunks.append(notes)
        found += len(notes)
        if limit is not None and found >= limit:
            break
    return [note for chunk in reversed(chunks) for note in chunk]


# The notes of messages already read, by a digest of their text (16 bytes a key, not the text);
# the oldest entries go first past this many. Longer messages are read again each time (rare,
# and their text would make a poor key).
_READ: OrderedDict[bytes, tuple[tuple[str, int], ...]] = OrderedDict()
_READ_KEPT = 20_000
_READ_MAX_CHARS = 64_000


def _notes_of_message(text: str) -> tuple[tuple[str, int], ...]:
    if len(text) > _READ_MAX_CHARS:
        return tuple(extract_chunk([text]))
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    notes = _READ.get(key)
    if notes is None:
        notes = _READ[key] = tuple(extract_chunk([text]))
        if len(_READ) > _READ_KEPT:
            _READ.popitem(last=False)
    return notes


def extract_chunk(texts: Sequence[str]) -> list[tuple[str, int]]:
    """The statements of user messages that carry facts, in their own words and order, each
    at most :data:`MAX_NOTE_CHARS` long, with how specific each is. Code blocks, pasted logs
    and code lines are skipped: they are material, not what the user told the model.

    Only the sentences around a place that may start a fact are read (a digit, a slash, an
    "@", a backtick, a capital inside a sentence, a word of a rule or a name, found by two
    character-class scans and plain substring searches over all the messages at once): most
    of a long conversation is never split into sentences at all."""
    parts: list[str] = []
    fences: list[tuple[int, int]] = []
    offset = 0
    for message in texts:
        if "tokens truncated…" in message:
            message = _TRUNCATION.sub("\n", message)
        if "```" in message or "~~~" in message:
            fences.extend((lo + offset, hi + offset) for lo, hi in _fenced_ranges(message))
        parts.append(message)
        offset += len(message) + 2
    text = "\n\n".join(parts)  # a blank line: no sentence runs from one message on
    positions = _candidates(text)
    if not positions:
        return []
    fence_starts = [lo for lo, _ in fences]
    notes: list[tuple[str, int]] = []
    done = -1  # everything before this offset has been read
    checked_line, line_skipped = -1, False
    for pos in positions:
        if pos < done:
            continue
        line_start = text.rfind("\n", 0, pos) + 1
        line_end = text.find("\n", pos)
        if line_end == -1:
            line_end = len(text)
        if line_start != checked_line:
            checked_line = line_start
            line = text[line_start:line_end]
            inside = bisect.bisect_right(fence_starts, pos) - 1
            line_skipped = bool(
                (inside >= 0 and pos < fences[inside][1])
                or _LOG_LINE.match(line)
                or _CODE_LINE.search(line)
            )
        if line_skipped:
            done = line_end
            continue
        marks = [text.rfind(mark, line_start, pos + 1) for mark in _SENTENCE_MARKS]
        start = max(marks)
        start = line_start if start == -1 else start + 2
        ends = [i for i in (text.find(mark, pos, line_end) for mark in _SENTENCE_MARKS) if i != -1]
        end = min(ends) + 1 if ends else line_end
        note = _note_of(text[start:end])
        if note:
            notes.append(note)
        done = end
    return notes


# Where a sentence ends inside a line (a new line ends one too).
_SENTENCE_MARKS = (". ", "! ", "? ", "; ")
# What may start a fact: a character class (digits, paths, e-mail, code, identifiers,
# capitals inside a sentence), and the words of rules, names and weekdays (lowercase).
# (Two scans, each led by a character class, are several times faster than one alternation.)
_STRONG = (
    re.compile(r"[\d/@`$€£¥_\\]"),
    re.compile(r"[A-Z](?:(?<=[a-z,;:] [A-Z])|(?<=[a-z][A-Z])|(?=[A-Z]))"),
)
_KEYWORDS = (
    "always", "never", "must", "don't", "do not", "make sure", "ensure", "avoid", "only use",
    "please use", "from now on", "keep in mind", "remember that", "prefer", "want you to",
    "no more than", "at most", "at least", "not allowed", "forbidden", "name is", "named",
    "called", "call me", "i am", "i'm", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday",
)


def _candidates(text: str) -> list[int]:
    """Sorted offsets in ``text`` where a fact may be."""
    positions = [m.start() for pattern in _STRONG for m in pattern.finditer(text)]
    lowered = text.lower()
    if len(lowered) != len(text):  # a character whose lower case is longer: offsets differ
        lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    for word in _KEYWORDS:
        at = lowered.find(word)
        while at != -1:
            positions.append(at)
            at = lowered.find(word, at + len(word))
    positions.sort()
    return positions


def _fenced_ranges(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the fenced code blocks (a fence left open runs to the end)."""
    marks: list[int] = []
    for fence in ("```", "~~~"):
        at = text.find(fence)
        while at != -1:
            line_start = text.rfind("\n", 0, at) + 1
            if not text[line_start:at].strip():
                marks.append(line_start)
            at = text.find(fence, at + 3)
    marks.sort()
    ranges: list[tuple[int, int]] = []
    for index in range(0, len(marks), 2):
        opened = marks[index]
        if index + 1 < len(marks):
            closing = marks[index + 1]
            end = text.find("\n", closing)
            ranges.append((opened, len(text) if end == -1 else end + 1))
        else:
            ranges.append((opened, len(text)))
    return ranges


def _kinds_to_try(sentence: str) -> list[str]:
    """The kinds of fact ``sentence`` may hold, from cheap looks at it."""
    digit = _DIGIT.search(sentence) is not None
    words = set(_LOWER_WORDS.findall(sentence.lower()))
    dotted = _DOTTED.search(sentence) is not None
    kinds: list[str] = []
    if "://" in sentence:
        kinds.append("url")
    if "@" in sentence:
        kinds.append("email")
    if "`" in sentence:
        kinds.append("code")
    if not (_WEEKDAYS.isdisjoint(words) and _MONTHS_WORDS.isdisjoint(words)) or (
        digit
        and ("-" in sentence or "/" in sentence or ":" in sentence or _DATE_HINT.search(sentence))
    ):
        kinds.append("date")
    if digit:
        kinds.append("number")
    if "/" in sentence or "\\" in sentence or dotted:
        kinds.append("path")
    if not _RULE_WORDS.isdisjoint(words):
        kinds.append("rule")
    mixed = _MIXED_CASE.search(sentence) is not None
    if (
        dotted
        or mixed
        or "_" in sentence
        or (digit and ("-" in sentence or _HEXISH.search(sentence) is not None))
    ):
        kinds.append("ident")
    if not _NAME_WORDS.isdisjoint(words):
        kinds.append("name")
    if mixed:
        kinds.append("proper")
    return kinds


def _facts(sentence: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every fact in ``sentence``, in order, none overlapping (where
    two kinds match the same words, the kind listed first in ``_KINDS`` holds them)."""
    found: list[tuple[int, int, int, str]] = []
    for kind in _kinds_to_try(sentence):
        if kind == "rule":
            found.extend((lo, _PRIORITY[kind], hi, kind) for lo, hi in _rules(sentence))
            continue
        for match in _PATTERNS[kind].finditer(sentence):
            if kind == "proper" and match.group(0).strip() in _PLAIN_CAPS:
                continue
            found.append((match.start(), _PRIORITY[kind], match.end(), kind))
    if len(found) < 2:
        return [(start, end, kind) for start, _, end, kind in found]
    found.sort()
    kept: list[tuple[int, int, str]] = []
    for start, _, end, kind in found:
        if kept and start < kept[-1][1]:
            continue
        kept.append((start, end, kind))
    return kept


def specificity(text: str) -> int:
    """How specific a note is: the weights of the fact kinds it holds (each kind counted
    once, a second fact of a kind adds one)."""
    return _score(_facts(text))


def _score(facts: list[tuple[int, int, str]]) -> int:
    kinds: dict[str, int] = {}
    for _, _, kind in facts:
        kinds[kind] = kinds.get(kind, 0) + 1
    return sum(_WEIGHTS[kind] + (1 if n > 1 else 0) for kind, n in kinds.items())


def _note_of(sentence: str) -> tuple[str, int] | None:
    """The note a sentence makes, with its specificity; None when it holds no fact."""
    sentence = _SPACES.sub(" ", sentence).strip()
    if len(sentence) < 4:
        return None
    facts = _facts(sentence)
    if not facts:
        return None
    score = _score(facts)
    if len(sentence) <= MAX_NOTE_CHARS:
        return sentence, score
    # A long run-on sentence: the words around its facts, joined with an ellipsis.
    windows: list[list[int]] = []
    for start, end, _ in facts:
        lo, hi = max(0, start - SPAN_CONTEXT_CHARS), min(len(sentence), end + SPAN_CONTEXT_CHARS)
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], hi)
        else:
            windows.append([lo, hi])
    pieces: list[str] = []
    room = MAX_NOTE_CHARS
    for lo, hi in windows[:MAX_SPANS_PER_SENTENCE]:
        lo, hi = _snap(sentence, lo, hi)
        piece = sentence[lo:hi].strip()
        if len(piece) > room:
            piece = piece[:room].rsplit(" ", 1)[0]
        if not piece:
            break
        pieces.append(("…" if lo > 0 else "") + piece + ("…" if hi < len(sentence) else ""))
        room -= len(piece) + 2
        if room < 40:
            break
    note = " ".join(pieces)
    return (note, score) if note else None


def _snap(text: str, lo: int, hi: int) -> tuple[int, int]:
    """``lo``/``hi`` moved out of the middle of a word (inward: a span never grows)."""
    if lo > 0 and text[lo - 1] != " ":
        space = text.find(" ", lo, hi)
        lo = space + 1 if space != -1 else lo
    if hi < len(text) and text[hi] != " ":
        space = text.rfind(" ", lo, hi)
        hi = space if space > lo else hi
    return lo, hi


def _key(text: str) -> str:
    return " ".join(_WORD_CHARS.findall(text.lower()))


# -- files and commands ----------------------------------------------------------------------

_READ_TOOLS = ("read", "open", "view", "cat", "show", "get_file", "fetch_file", "search", "grep",
               "list", "find")
_WRITE_TOOLS = ("write", "edit", "create", "patch", "replace", "insert", "delete", "remove",
                "move", "rename", "append", "save", "update")
_SHELL_TOOLS = ("shell", "exec", "run", "command", "bash", "terminal", "sh")
_PATH_ARGS = ("path", "file", "file_path", "filepath", "filename", "target", "source",
              "destination", "dest")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)


def _tool_kind(name: str) -> str | None:
    lowered = name.lower()
    if any(word in lowered for word in _WRITE_TOOLS):
        return "changed"
    if any(word in lowered for word in _SHELL_TOOLS) and "search" not in lowered:
        return "command"
    if any(word in lowered for word in _READ_TOOLS):
        return "read"
    return None


def _arguments(item: Item) -> dict[str, object]:
    raw = item.get("arguments") if item_type(item) == "function_call" else item.get("input")
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        return {"input": raw}
    return parsed if isinstance(parsed, dict) else {}


def _short(text: str, limit: int) -> str:
    text = _SPACES.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tool_traffic(items: Iterable[Item]) -> tuple[list[str], list[str], list[str]]:
    """The files changed, the files read and the commands run by the tool calls in
    ``items``: each newest first, each entry once."""
    changed: list[str] = []
    read: list[str] = []
    commands: list[str] = []
    items = list(items)
    failed = _failed_calls(items)
    for item in items:
        kind = item_type(item)
        if item.get("call_id") in failed:
            continue
        if kind == "local_shell_call":
            action = item.get("action")
            command = action.get("command") if isinstance(action, dict) else None
            if isinstance(command, list):
                commands.append(_short(" ".join(str(c) for c in command), MAX_COMMAND_CHARS))
            continue
        if kind not in ("function_call", "custom_tool_call"):
            continue
        name = str(item.get("name") or "")
        args = _arguments(item)
        patch = args.get("input") or args.get("patch")
        if isinstance(patch, str) and "*** " in patch:
            changed.extend(_short(p, MAX_PATH_CHARS) for p in _PATCH_FILE.findall(patch))
            continue
        what = _tool_kind(name)
        if what == "command":
            command = args.get("command") or args.get("cmd") or args.get("input")
            if isinstance(command, list):
                command = " ".join(str(c) for c in command)
            if isinstance(command, str) and command.strip():
                commands.append(_short(command, MAX_COMMAND_CHARS))
            continue
        if what is None:
            continue
        for arg in _PATH_ARGS:
            value = args.get(arg)
            if isinstance(value, str) and value.strip():
                (changed if what == "changed" else read).append(_short(value, MAX_PATH_CHARS))
                break
    return _newest_first(changed), _newest_first(read), _newest_first(commands)


# The items :func:`tool_traffic` reads (calls, and outputs that say a call failed).
TOOL_ITEM_TYPES = frozenset(
    {"function_call", "custom_tool_call", "local_shell_call", "function_call_output"}
)


def _failed_calls(items: list[Item]) -> set[object]:
    """Call ids whose output says the call failed (a file that was not there was not read)."""
    failed: set[object] = set()
    for item in items:
        if item_type(item) != "function_call_output":
            continue
        output = item.get("output")
        head = output[:200].lower() if isinstance(output, str) else ""
        if head.startswith(("error", "failed")) or " failed: " in head or "no such file" in head:
            failed.add(item.get("call_id"))
    return failed


def _newest_first(entries: list[str], older: Iterable[str] = ()) -> list[str]:
    seen: set[str] = set()
    result: list[str] = []
    for entry in [*reversed(entries), *older]:
        if entry not in seen:
            seen.add(entry)
            result.append(entry)
    return result


# -- merging within the budget ---------------------------------------------------------------


def carry_over(
    leaving: Iterable[str],
    tool_items: Iterable[Item],
    previous: CarriedOver,
    budget: int,
    count: Callable[[str], int] = approx_tokens,
    extracted: list[tuple[str, int]] | None = None,
    traffic: tuple[list[str], list[str], list[str]] | None = None,
) -> CarriedOver:
    """The notes the rebuilt history carries: ``previous`` (the block the history held) merged
    with the facts of the user messages ``leaving`` the view (oldest first) and the files and
    commands of ``tool_items``, within ``budget`` tokens.

    Nothing the previous block carried is lost unless the budget forces it; then the least
    specific notes go first, the oldest first among equals, and the files and commands lists
    give way first, down to :data:`LISTS_SHARE` of the budget. ``count`` sizes the block
    (one call per size check, never one per sentence: an estimate from bytes by default).
    ``extracted``: the notes of ``leaving``, ``traffic``: :func:`tool_traffic` of
    ``tool_items``, when the caller has them already."""
    if extracted is None:
        extracted = extract_many(list(leaving), candidate_limit(budget))
    notes: list[_Note] = []
    seen: set[str] = set()
    scored = [(text, specificity(text)) for text in previous.notes]
    for text, score in [*scored, *extracted]:
        key = _key(text)
        if not key or key in seen:
            continue
        seen.add(key)
        notes.append(_Note(text=text, order=len(notes), score=score, key=key))
    if len(notes) > MAX_CANDIDATES:
        # Far more than any budget holds: the ones eviction would take first go now.
        strongest = sorted(notes, key=lambda n: (n.score, n.order))[-MAX_CANDIDATES:]
        dropped_early = len(notes) - len(strongest)
        notes = sorted(strongest, key=lambda n: n.order)
    else:
        dropped_early = 0
    new_changed, new_read, new_commands = traffic or tool_traffic(tool_items)
    changed = _newest_first(list(reversed(new_changed)), previous.files_changed)[:MAX_FILES]
    read = [
        p for p in _newest_first(list(reversed(new_read)), previous.files_read)
        if p not in changed
    ][:MAX_FILES]
    commands = _newest_first(list(reversed(new_commands)), previous.commands)[:MAX_COMMANDS]
    if budget <= 0:
        return CarriedOver()
    # The lists give way first, down to their share of the budget: the notes are the point.
    lists_cap = int(budget * LISTS_SHARE)
    while (changed or read or commands) and _lists_tokens(changed, read, commands) > lists_cap:
        max((commands, read, changed), key=len).pop()
    # Which notes stay: the most specific first, the newest first among equals, while their
    # estimated size fits; then one real count, and a smaller estimate if that was short.
    ranked = sorted(notes, key=lambda n: (n.score, n.order), reverse=True)
    # A note's line ("- " + text + a line break) in bytes / 4, not rounded: the block is
    # counted whole.
    costs = {n.order: (len(n.text.encode("utf-8")) + 3) / 4 for n in notes}
    target = budget
    best: CarriedOver | None = None
    for _ in range(6):
        header = CarriedOver((), tuple(changed), tuple(read), tuple(commands)).text()
        fixed = approx_tokens(header) + (len(NOTES_HEADING) + 2) / 4
        room: float = target - fixed
        chosen: set[int] = set()
        for note in ranked:
            if costs[note.order] <= room:
                chosen.add(note.order)
                room -= costs[note.order]
            elif room < 8:
                break
        kept = tuple(n.text for n in notes if n.order in chosen)
        block = CarriedOver(
            kept, tuple(changed), tuple(read), tuple(commands),
            dropped_early + len(notes) - len(kept),
        )
        if block.empty:
            return block
        size = count(block.text())
        if size <= budget:
            if best is not None and len(block.notes) <= len(best.notes):
                break
            best = block
            if len(kept) == len(notes) or budget - size < 6:
                break
            target += budget - size  # the estimate was generous: room for more
            continue
        if best is not None:
            break
        target -= size - budget + 4
        if not kept and (changed or read or commands):
            max((commands, read, changed), key=len).pop()
    if best is None:
        return CarriedOver(dropped=dropped_early + len(notes))
    return _without_contained_notes(best)


def candidate_limit(budget: int) -> int:
    """How many of the newest notes are worth reading for a block of ``budget`` tokens: about
    twice what it can hold (a note takes some twenty tokens)."""
    return max(48, budget // 10)


def _lists_tokens(*lists: list[str]) -> int:
    return sum(approx_tokens(entry) + 2 for entries in lists for entry in entries)


def _without_contained_notes(block: CarriedOver) -> CarriedOver:
    """The block less the notes whose words are all inside another of its notes (the longer
    one says it all). One search of each key in all the keys joined: a key found twice is
    inside another note. Run on what the budget kept, so it stays small."""
    keys = [_key(note) for note in block.notes]
    joined = "\n".join(keys)
    kept = tuple(n for n, k in zip(block.notes, keys, strict=True) if joined.count(k) < 2)
    if len(kept) == len(block.notes):
        return block
    return CarriedOver(
        kept, block.files_changed, block.files_read, block.commands,
        block.dropped + len(block.notes) - len(kept),
    )

