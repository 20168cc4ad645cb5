"""A question that looks back at something said earlier: the demo model first looks for it in
what it still sees (the request), searches the whole conversation with the recall tool only when
it is not there, and tells what the search found as what it is: still in view or no longer, and
never the question that asked."""

from __future__ import annotations

import re

from ..conversation import Conversation, Entry
from ..phrasing import conversation_question, keywords, quote, same_text, sentences, shorten
from ..script import ToolCall

RECALL_TOOL = "recall"
# A question about something said, decided or read earlier in the conversation.
_LOOK_BACK = re.compile(
    r"\b(remember|recall|earlier|previously|before|back then|did (?:i|we|you)|what was|"
    r"what were|which (?:\w+ )?(?:did|was|were))\b",
    re.IGNORECASE,
)
# A look back is asked: "which port did I give you?", "remind me of the budget". "Please
# remember the port is 8443" looks forward, and is answered without a search.
_ASKS = re.compile(
    r"\?|(?:^|[.!,;:\n])\s*(?:what|which|where|when|who|how|why|do you|did|can you|"
    r"could you|remind me|tell me)\b",
    re.IGNORECASE,
)
_LOOK_BACK_WORDS = frozenset(
    {"remember", "recall", "earlier", "previously", "before", "back", "then", "told", "said",
     "tell", "mentioned", "mention", "again", "choose", "chose", "chosen", "decide", "decided",
     "pick", "picked", "what", "which", "called", "named"}
)
# A word as :func:`keywords` reads it (an identifier such as "svc-orchard-41" is one word).
_TOKEN = re.compile(r"[a-z][a-z0-9_+#.-]*[a-z0-9_+#]|[a-z]")
# Where the answer to a look-back may be, most trusted first: the user's words, the notes and
# summaries that keep them, what a tool read, what the model said (which may only echo them).
_TRUSTED = ("user", "notes", "summary", "output", "assistant")
# Where a recall hit comes from says whether the model still sees it.
_STILL_SEEN = "still in your view"
_SEEN_AS = {"the user's message": "what you said", "your answer": "what I answered"}


def telling_words(text: str) -> list[str]:
    """What a look-back question is about: its key words without the asking ones."""
    return [w for w in keywords(text, 4) if w not in _LOOK_BACK_WORDS]


def is_look_back(text: str) -> bool:
    """Whether ``text`` asks about something said earlier ("which port did I give you?"),
    rather than about the conversation itself ("what did I say first?")."""
    return (
        bool(_LOOK_BACK.search(text) and _ASKS.search(text))
        and conversation_question(text.lower()) is None
        and bool(telling_words(text))
    )


def seen_sentence(conv: Conversation, words: list[str]) -> tuple[Entry, str] | None:
    """The sentence of what the model still sees (not the question being answered) that holds
    the most of ``words``: at least half of them, and two when there are more than two."""
    needed = max(1, min(2, len(words)), (len(words) + 1) // 2)
    best: tuple[int, int, Entry, str] | None = None
    for entry in conv.entries[:-1]:
        if entry.kind not in _TRUSTED:
            continue
        for sentence in sentences(entry.text):
            if _is_question(sentence):
                continue  # a question (even one quoted back) holds no answer
            held = sum(1 for w in words if _holds(sentence, w))
            # The most of the words, then what the user said over what was said about it.
            rank = (held, -_TRUSTED.index(entry.kind))
            if held >= needed and (best is None or rank > best[:2]):
                best = (*rank, entry, sentence)
    return None if best is None else (best[2], best[3])


def answer_from_view(conv: Conversation, text: str) -> str | None:
    """The answer to a look-back question from what is still in view, or ``None``."""
    found = seen_sentence(conv, telling_words(text))
    if found is None:
        return None
    entry, sentence = found
    where = {
        "user": "You told me",
        "assistant": "I said",
        "summary": "The summary of our earlier conversation says",
        "notes": "The notes carried over from our earlier conversation say",
        "output": "A tool's output I read says",
    }[entry.kind]
    return f"That is still in my view, no search needed. {where}:\n\n{quote(sentence, 300)}"


def recall_call(conv: Conversation, text: str) -> ToolCall | None:
    """Search the whole conversation (the recall tool) when ``text`` looks back at something
    that is not in this request: no sentence in view holds its telling words."""
    if RECALL_TOOL not in conv.tools or not is_look_back(text):
        return None
    words = telling_words(text)
    if seen_sentence(conv, words) is not None:
        return None  # still in view: answered from it
    return ToolCall(name=RECALL_TOOL, arguments={"query": " ".join(words)})


def answer_from_recall(conv: Conversation, query: str, text: str) -> str:
    """What the recall search found, told as what it is: its first excerpt that is not the
    question being answered, with where it comes from and whether it is still in view."""
    if "\n\n[1] " not in text:
        if text.startswith("No earlier part"):
            return (
                f"I searched our whole conversation for “{query}” and found nothing about it, "
                "so I can't tell you from what we said."
            )
        return f"I tried to search our conversation, but the search said:\n\n{quote(text, 300)}"
    asked = next((e.text for e in reversed(conv.entries) if e.kind == "user"), "")
    for block in text.split("\n\n[")[1:]:
        where, _, excerpt = block.partition("\n")
        excerpt = excerpt.strip()
        if not excerpt or (asked and same_text(excerpt.strip("…"), asked)):
            continue  # the question itself is not its answer
        origin = where.split("] ", 1)[-1].split(" · ")
        place = f"{origin[0]}, {_SEEN_AS.get(origin[1], origin[1])}" if len(origin) > 1 \
            else origin[0]
        seen = _STILL_SEEN in origin or _seen_in(conv, excerpt, query.split())
        opening = (
            f"I searched our conversation for “{query}”: it is still in my view"
            if seen else
            f"That is no longer in my view, so I searched our earlier conversation for “{query}”"
        )
        return f"{opening}. From {place}:\n\n{quote(excerpt, 400)}"
    return (
        f"I searched our conversation for “{query}”, but it found only your question, "
        f"“{shorten(asked, 80)}”, so I can't tell you from what we said."
    )


def _seen_in(conv: Conversation, excerpt: str, words: list[str]) -> bool:
    """Whether what an excerpt says of ``words`` is in view: a sentence the model still sees
    (not the question, nor the search's output) that holds one of them is in the excerpt
    (an answer out of view quoting what the user said, still in view)."""
    flat = _flat(excerpt.strip("…"))
    for entry in conv.entries[:-1]:
        for sentence in sentences(entry.text):
            if _is_question(sentence) or len(sentence) < 20:
                continue
            if any(_holds(sentence, w) for w in words) and _flat(sentence) in flat:
                return True
    return False


def _is_question(sentence: str) -> bool:
    return sentence.rstrip(" \"'”’»)*_").endswith("?")


def _holds(sentence: str, word: str) -> bool:
    """Whether ``sentence`` has ``word`` or another form of it (the same stem as the search
    finds: "listening" and "listens", "port" and "ports")."""
    stem = word[: max(4, len(word) - 3)] if len(word) > 5 else word
    tokens = {t.strip(".") for t in _TOKEN.findall(sentence.lower())}
    return word in tokens or (len(stem) >= 4 and any(t.startswith(stem) for t in tokens))


def _flat(text: str) -> str:
    return " ".join(text.split()).casefold()
