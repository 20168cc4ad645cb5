"""Any text the model or the user types, made into a safe FTS5 query.

Nothing the user types reaches FTS5's query syntax: the text is cut into words (runs of letters
and digits), each word quoted, so ``"``, ``*``, ``NEAR``, ``OR`` or ``(`` are plain words or
nothing. An identifier (``ORCHARD_SHARD_COUNT``, ``svc-orchard-41``) becomes the phrase of its
parts, which the tokenizer also splits it into; a camelCase or letter-digit word
(``orchardShard``, ``svc41``) may be one token or its parts (see :func:`split_form`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_QUERY_CHARS = 2000
MAX_TERMS = 16
MAX_WORD_CHARS = 64
# A longer query is not also searched as one phrase (it is a question, not a quotation).
MAX_PHRASE_WORDS = 32

# What the tokenizer (unicode61) keeps together: letters and digits; "_" and "-" separate.
WORD = re.compile(r"[^\W_]+")
# A camelCase or letter-digit boundary: the token around it is also indexed in its parts.
BOUNDARY = re.compile(r"[a-z](?=[A-Z])|[A-Za-z](?=[0-9])|[0-9](?=[A-Za-z])")
_PIECE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W_0-9A-Za-z]+")
# Characters that end a word group; what joins an identifier's parts ("_", "-", ".", "/", ":")
# keeps them one phrase.
_CHUNK_BREAKS = re.compile(r"[\"'()*^{}\[\],;+!?<>=|&~`]")
# Words that say nothing on their own; dropped when the query has others.
STOPWORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "had",
        "has", "have", "i", "in", "is", "it", "me", "my", "near", "not", "of", "on", "or", "our",
        "that", "the", "this", "to", "was", "we", "were", "what", "when", "where", "which", "who",
        "why", "with", "you", "your", "about", "earlier", "before", "said", "say", "told",
    }
)


def split_form(token: str) -> list[str]:
    """The parts of a camelCase or letter-digit token: ``orchardShard41`` → orchard, shard, 41."""
    return _PIECE.findall(token)


@dataclass(frozen=True)
class SearchQuery:
    """A sanitised query: ``match`` needs every word, ``any_match`` one of them, ``phrase``
    (when the query has several words) all of them in their order, stop words included;
    ``words`` (lower case) are what the excerpts are centred on; ``note`` says what was
    changed."""

    match: str
    any_match: str
    words: list[str]
    note: str = ""
    phrase: str = ""


def build_query(text: str) -> SearchQuery | None:
    """The safe query for ``text``; ``None`` when it holds no word to look for."""
    note = ""
    if len(text) > MAX_QUERY_CHARS:
        text = text[:MAX_QUERY_CHARS]
        note = f"the query was cut to its first {MAX_QUERY_CHARS} characters"
    terms: list[str] = []
    words: list[str] = []
    in_order: list[str] = []  # every word, repeats and stop words included: the phrase
    seen: set[str] = set()
    for chunk in _CHUNK_BREAKS.sub(" ", text).split():
        parts = [p.lower()[:MAX_WORD_CHARS] for p in WORD.findall(chunk)]
        if not parts:
            continue
        in_order.extend(parts)
        key = " ".join(parts)
        if key in seen:
            continue
        seen.add(key)
        if len(parts) == 1:
            pieces = [p.lower() for p in split_form(WORD.findall(chunk)[0])]
            if len(pieces) > 1:  # one token in the text, or its parts in the split column
                terms.append(f'("{parts[0]}" OR "{" ".join(pieces)}")')
            else:
                terms.append(f'"{parts[0]}"')
        else:
            terms.append(f'"{key}"')
        words.extend(parts)
    if not terms:
        return None
    meaningful = [t for t, k in zip(terms, _keys(terms), strict=True) if k not in STOPWORDS]
    if meaningful:
        terms = meaningful
    if len(terms) > MAX_TERMS:
        terms = terms[:MAX_TERMS]
        extra = f"only its first {MAX_TERMS} words were searched"
        note = f"{note}; {extra}" if note else extra
    kept_words = [w for w in words if w not in STOPWORDS] or words
    match = " AND ".join(terms)
    phrase = f'"{" ".join(in_order)}"' if 1 < len(in_order) <= MAX_PHRASE_WORDS else ""
    if phrase == match:
        phrase = ""  # one identifier: already searched as the phrase of its parts
    return SearchQuery(match, " OR ".join(terms), kept_words, note, phrase)


def _keys(terms: list[str]) -> list[str]:
    return [t.strip('()"').split('"')[0] for t in terms]
