"""Small text helpers the demo model writes with: shortening, first sentences, key words."""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

_STOPWORD_TEXT = """
    a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing done down during each even ever few
    for from further get got had has have having he her here hers him his how i if in into is it
    its itself just let like me more most much my no nor not now of off on once only or other our
    out over own please same she should so some such than that the their them then there these
    they this those through to too under until up very want was we were what when where which
    while who whom why will with would you your yours tell show give make know think thing things
    really maybe okay ok yes thanks thank hello hi hey need use using used one two also could
    said say ask asked again still something anything everything best good great much many lot
    see look way time times going went come came take took well sure right
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_+#.-]*[A-Za-z0-9_+#]|[A-Za-z]")


def one_line(text: str) -> str:
    """Whitespace collapsed to single spaces."""
    return " ".join(text.split())


def shorten(text: str, limit: int = 140) -> str:
    """``text`` on one line, cut at a word boundary to at most ``limit`` characters."""
    flat = one_line(text)
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.") + "…"


def plain(text: str) -> str:
    """Markdown noise (headings, bullets, fences, emphasis) removed, for quoting prose."""
    lines = []
    in_fence = False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        lines.append(re.sub(r"^\s*(#+|[-*>]|\d+\.)\s*", "", line))
    return one_line(" ".join(lines)).replace("**", "").replace("`", "")


def first_sentence(text: str, limit: int = 160) -> str:
    """The first sentence of ``text`` as plain prose, shortened."""
    prose = plain(text)
    return shorten(_SENTENCE_END.split(prose, maxsplit=1)[0] if prose else "", limit)


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` as plain prose."""
    return [s for s in _SENTENCE_END.split(plain(text)) if s]


def keywords(text: str, limit: int = 3) -> list[str]:
    """The most telling words: frequent first, then longer, then earlier."""
    counts: dict[str, int] = {}
    for word in _WORD.findall(text):
        lowered = word.lower().strip(".")
        if len(lowered) < 3 or lowered in _STOPWORDS:
            continue
        counts[lowered] = counts.get(lowered, 0) + 1
    ranked = sorted(counts, key=lambda w: (-counts[w], -len(w)))  # stable: ties keep order
    return ranked[:limit]


def join_words(words: Sequence[str], style: str = "**") -> str:
    """``a``, ``a and b``, ``a, b and c`` with each word wrapped in ``style``."""
    marked = [f"{style}{w}{style}" for w in words]
    if len(marked) <= 1:
        return "".join(marked)
    return ", ".join(marked[:-1]) + " and " + marked[-1]


def pick(options: Sequence[str], seed: str) -> str:
    """A deterministic choice: the same text always picks the same option."""
    return options[zlib.crc32(seed.encode("utf-8")) % len(options)]


def quote(text: str, limit: int = 300) -> str:
    """A Markdown block quote of ``text`` shortened to one line."""
    return "> " + shorten(text, limit)


def middle_truncate(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, keeping its head and tail."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half].rstrip() + "\n…\n" + text[-half:].lstrip()


def conversation_question(lowered: str) -> str | None:
    """Which question about the conversation itself ``lowered`` asks, if any.

    One of "first" (what did I say first), "previous", "recap", "count"; None otherwise.
    """
    about_me = re.search(r"\b(i|my|me)\b", lowered) is not None
    said = (
        re.search(
            r"\b(say|said|ask|asked|write|wrote|type|typed|message|question|"
            r"request)\b",
            lowered,
        )
        is not None
    )
    if about_me and said and re.search(r"\b(first|earliest|beginning|start)\b", lowered):
        return "first"
    if about_me and said and re.search(r"\b(last|previous|before|earlier|prior)\b", lowered):
        return "previous"
    if (
        re.search(r"\b(recap|what have we|what did we)\b", lowered)
        or re.search(r"\bsummari[sz]e (our|the|this) (conversation|chat)\b", lowered)
        or ("so far" in lowered and "?" in lowered)
    ):
        return "recap"
    if "how many" in lowered and re.search(r"\b(messages|questions)\b", lowered):
        return "count"
    return None


def is_greeting(lowered: str) -> bool:
    """Whether ``lowered`` opens with a greeting."""
    return (
        re.match(r"\s*(hi|hello|hey|good (morning|afternoon|evening)|howdy)\b", lowered) is not None
    )


def is_topical(text: str) -> bool:
    """Whether a message is about something (not a greeting or a question about the chat)."""
    lowered = text.lower()
    return not is_greeting(lowered) and conversation_question(lowered) is None


def same_text(a: str, b: str) -> bool:
    """Whether a (possibly shortened) quote ``a`` stands for the message ``b``."""
    short_a = shorten(a, 1000).rstrip("…").casefold()
    return shorten(b, 1000).casefold().startswith(short_a[:60])
