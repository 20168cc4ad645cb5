"""What makes a statement a fact (spec section 10): the patterns of each kind of fact, how
specific each makes a note, and finding the facts of one sentence."""

from __future__ import annotations

import re

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

_LOWER_WORDS = re.compile(r"[a-z']+")


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


def facts_of(sentence: str) -> list[tuple[int, int, str]]:
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
    return score_of(facts_of(text))


def score_of(facts: list[tuple[int, int, str]]) -> int:
    kinds: dict[str, int] = {}
    for _, _, kind in facts:
        kinds[kind] = kinds.get(kind, 0) + 1
    return sum(_WEIGHTS[kind] + (1 if n > 1 else 0) for kind, n in kinds.items())
