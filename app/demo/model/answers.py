"""The demo model's answers in words to a user's message: what was said first, last or so far,
what the notes carried over a compaction say, a greeting, and the general answer that restates
the message and refers back to earlier ones."""

from __future__ import annotations

import re

from ..phrasing import (
    first_sentence,
    is_topical,
    join_words,
    keywords,
    pick,
    quote,
    same_text,
    sentences,
    shorten,
)
from .formats import general_title

_GREETING = """\
Hello! I'm Coco's **offline demo model**: no network, no API key, just this computer. \
I answer from what is in our conversation, so you can try Coco safely.

Things to try:
- Tell me about a project, then ask *what did I say first?*
- Ask me to **list the files** or **read README.md** (with a workspace open).
- Ask for a code example.
- Type `/compact` and watch the conversation get summarized."""
_ASKING = re.compile(
    r"^\s*(what|which|who|whom|where|when|how|remind me|tell me)\b", re.IGNORECASE
)
_NOTE_WORDS = re.compile(r"[\w@.$/-]+")
# Words that make a question, not what it is about.
_QUESTION_WORDS = frozenset(
    {"what", "which", "who", "where", "when", "how", "remind", "tell", "told", "said", "say",
     "again", "earlier", "before", "remember", "did", "was", "were", "our", "the"}
)


def answer_first(earlier: list[str], summary_asks: list[str], summaries: list[str]) -> str:
    """Asked what was said first: the first message in view, and the first ask the summary keeps."""
    if not earlier and not summary_asks:
        return (
            "This is the first message I can see from you, so that is your first one:"
            " the question you just asked."
            if not summaries
            else "The earlier part of our conversation was compacted, and its summary does not "
            "list your requests, so I can't quote your first message."
        )
    lines: list[str] = []
    if earlier:
        lines += ["Your first message was:", "", quote(earlier[0])]
    if summary_asks and (not earlier or not same_text(summary_asks[0], earlier[0])):
        lines += [
            "",
            "According to the summary of our earlier conversation, you first asked:",
            "",
            quote(summary_asks[0]),
        ]
    return "\n".join(lines).strip()


def answer_previous(earlier: list[str], summary_asks: list[str]) -> str:
    """Asked what was said last: the message before this one, or the summary's last ask."""
    if earlier:
        return "Just before this, you wrote:\n\n" + quote(earlier[-1])
    if summary_asks:
        return (
            "Your earlier messages were compacted. The summary says your last request "
            "before that was:\n\n" + quote(summary_asks[-1])
        )
    return "I can't see any earlier message from you; this looks like the start."


def answer_recap(earlier: list[str], summary_asks: list[str], summaries: list[str]) -> str:
    """Asked for a recap: every ask, the summary's first, as a numbered list."""
    asks = list(summary_asks)
    for text in earlier:
        if not any(same_text(a, text) for a in asks):
            asks.append(shorten(text, 120))
    if not asks:
        return "We have only just started: this is the first thing you asked me."
    lines = ["Here is what we have covered so far:", ""]
    lines += [f"{n}. {shorten(a, 120)}" for n, a in enumerate(asks, 1)]
    if summaries:
        lines += ["", "Part of this comes from the summary left by a compaction."]
    return "\n".join(lines)


def answer_from_notes(text: str, notes: list[str]) -> str | None:
    """A question about something the user said before a compaction, answered from the notes
    the client carried over: the notes that share the question's telling words, quoted."""
    if not notes or not (text.rstrip().endswith("?") or _ASKING.match(text)):
        return None
    wanted = set(keywords(text, limit=8)) - _QUESTION_WORDS
    if not wanted:
        return None
    scored = []
    for index, note in enumerate(notes):
        words = {w.lower().strip(".") for w in _NOTE_WORDS.findall(note)}
        overlap = len(wanted & words)
        if overlap:
            scored.append((-overlap, -index, note))
    if not scored:
        return None
    best = [note for _, _, note in sorted(scored)[:3]]
    return "\n\n".join(
        [
            "From what you told me earlier (carried over when our conversation was compacted):",
            *[quote(note, 200) for note in best],
        ]
    )


def answer_greeting(earlier: list[str], hint: str = "") -> str:
    """A greeting back: where we were, or what to try when nothing was said yet (``hint``: one
    more thing to try, for the tools offered)."""
    if earlier:
        return (
            f"Hello again! We were talking about “{shorten(earlier[-1], 80)}”. "
            "Where would you like to go from here?"
        )
    return f"{_GREETING}\n{hint}" if hint else _GREETING


def answer_general(
    text: str,
    earlier: list[str],
    summary_asks: list[str],
    summaries: list[str],
    opaque_compactions: int,
) -> str:
    """The answer to anything else: the message restated, what was said earlier, and a way on."""
    is_question = text.rstrip().endswith("?")
    words = keywords(text)
    opening = (
        pick(["You asked:", "Your question:", "You want to know:"], text)
        if is_question
        else pick(["You said:", "You wrote:", "Noted:"], text)
    )
    paragraphs = [f"{opening} “{shorten(text, 200)}”"]

    recall: list[str] = []
    topical = [t for t in earlier if is_topical(t)]
    if topical:
        recent = topical[-1]
        verb = "asked" if recent.rstrip().endswith("?") else "said"
        recall.append(f"Earlier you {verb}: “{shorten(recent, 100)}”")
        if len(topical) > 1:
            recall.append(f"and at the start: “{shorten(topical[0], 80)}”")
    # What only the summary remembers (kept messages are quoted above already).
    summary_only = [
        a for a in summary_asks if is_topical(a) and not any(same_text(a, t) for t in earlier)
    ]
    if summary_only:
        recall.append(
            (
                "and the summary of our earlier conversation"
                if recall
                else "The summary of our earlier conversation"
            )
            + f" mentions “{shorten(summary_only[-1], 100)}”"
        )
    elif summary_asks:
        recall.append(
            ("and" if recall else "I also have")
            + " a summary of the earlier part of our conversation"
        )
    elif summaries:
        recall.append(
            ("and" if recall else "I also have")
            + f" a summary of earlier work: “{first_sentence(summaries[-1], 100)}”"
        )
    if opaque_compactions and not summaries:
        recall.append(
            ("and" if recall else "There is also")
            + " a compacted part of the conversation I cannot read"
        )
    if recall:
        sentence = " ".join(recall)
        paragraphs.append(sentence if sentence.endswith("”") else sentence + ".")

    title = general_title(text)
    if is_question:
        topic = f"**{words[0]}**" if words else "this"
        earlier_step = (
            f"2. **Check it against what we said**: “{shorten(topical[-1], 60)}”"
            if topical
            else "2. **Write down what you already know** and what is still open."
        )
        paragraphs.append(
            "\n".join(
                [
                    (
                        "I'm the offline demo model, so I can't look anything up, but this is "
                        "how I would approach it:"
                    ),
                    "",
                    f"1. **Pin down the goal**: what {topic} has to mean in your situation"
                    + (f", with {join_words(words[1:])} in mind." if len(words) > 1 else "."),
                    earlier_step,
                    "3. **Pick one concrete next step**, try it, and look at the result.",
                ]
            )
        )
        paragraphs.append(
            "_Ask for a list, a table or a code example and I'll answer in that format._"
        )
    else:
        points = sentences(text)[:3]
        if len(points) > 1:
            paragraphs.append(
                "\n".join(
                    ["What I'm keeping in mind:", "", *[f"- {shorten(p, 120)}" for p in points]]
                )
            )
        elif words:
            paragraphs.append(f"The key words I picked up are {join_words(words)}.")
        paragraphs.append(
            pick(
                [
                    "Tell me more, or ask me what you said first to see what I remember.",
                    "Keep going: after a few messages, try `/compact` and see what survives.",
                    "Ask me a question about it, or ask for a table or a code example.",
                ],
                text,
            )
        )
    return f"### {title}\n\n" + "\n\n".join(paragraphs)
