"""Reading a request for the Markdown it asks for: the formats (code, lists, tables, headings,
quotes), the code language, the words about its subject, and a title for the answer."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..phrasing import keywords, pick

# Words that name a format or a language rather than the subject of the request.
_FORMAT_WORDS_TEXT = """
    code block blocks fenced fence snippet snippets example examples sample samples function
    functions script program class list lists bullet bullets bulleted point points numbered
    checklist todo table tables heading headings header headers section sections title titles
    quote quotes blockquote markdown formatting format formatted render rendering rich text
    write show give make create draft produce short small simple quick little nice demo compare
    comparing comparison versus hello please thanks
"""
FORMAT_WORDS = frozenset(_FORMAT_WORDS_TEXT.split())
LANGUAGE_NAMES = {
    "python": "python",
    "py": "python",
    "javascript": "javascript",
    "js": "javascript",
    "node": "javascript",
    "typescript": "typescript",
    "ts": "typescript",
    "rust": "rust",
    "golang": "go",
    "bash": "bash",
    "shell": "bash",
    "sh": "bash",
    "sql": "sql",
    "java": "java",
    "kotlin": "kotlin",
    "swift": "swift",
    "ruby": "ruby",
    "php": "php",
    "csharp": "csharp",
    "c#": "csharp",
    "c++": "cpp",
    "cpp": "cpp",
    "html": "html",
    "css": "css",
    "json": "json",
    "yaml": "yaml",
    "toml": "toml",
}
LANGUAGE_LABELS = {
    "python": "Python", "javascript": "JavaScript", "typescript": "TypeScript", "rust": "Rust",
    "go": "Go", "bash": "Bash", "sql": "SQL", "java": "Java", "kotlin": "Kotlin",
    "swift": "Swift", "ruby": "Ruby", "php": "PHP", "csharp": "C#", "cpp": "C++", "c": "C",
    "html": "HTML", "css": "CSS", "json": "JSON", "yaml": "YAML", "toml": "TOML",
    "markdown": "Markdown",
}
_LANGUAGE_WORD = re.compile(
    r"(?<![\w#+])(python|py|javascript|js|node|typescript|ts|rust|golang|bash|shell|sh|sql|java|"
    r"kotlin|swift|ruby|php|csharp|c#|c\+\+|cpp|html|css|json|yaml|toml)(?![\w#+])"
)
# "go" and "c" are ordinary words (or letters) too: only next to a code word, or after "in".
_SHORT_LANGUAGE = re.compile(
    r"\b(?:in|using|with)\s+(go|c)\b(?![#+])|\b(go|c)\s+(?:code|function|program|snippet|"
    r"example|script|block|version)\b"
)
# "code" asks for code; "function", "script"… only with a verb or a language ("write a
# function", "a Java class"), not in "the function of the liver".
_CODE_REQUEST = re.compile(r"\b(code|snippet|implement|implementation)\b")
_CODE_NOUN = re.compile(r"\b(function|script|program|class|method|regex)\b")
_CODE_VERB = re.compile(r"\b(write|show|give|make|create|need|example|sample)\b")
_LIST_REQUEST = re.compile(
    r"\b(list|lists|bullets?|bullet points?|bulleted|checklist|to-?do|steps|numbered)\b"
)
_TABLE_REQUEST = re.compile(r"\btables?\b")
_HEADING_REQUEST = re.compile(r"\b(headings?|sections?)\b")
_QUOTE_REQUEST = re.compile(r"\b(block ?quotes?|quotes?|quotation)\b")
_SAMPLER_REQUEST = re.compile(r"\b(markdown|formatting|rich text)\b")
_COMPARE = re.compile(
    r"\b(?:compare|comparing|comparison of|between)\s+(.+?)\s+(?:and|with|to|vs\.?|versus)\s+"
    r"(.+?)(?:[?.!,;]|\s+(?:for|in|on|when|as|by)\b|$)"
    r"|(\b[\w+#.-]+)\s+(?:vs\.?|versus)\s+([\w+#.-]+)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Formats:
    """What a request asks the answer to contain."""

    code_language: str | None = None  # set when code is asked for
    list_style: str | None = None  # "bullets", "numbered" or "tasks"
    table: bool = False
    headings: bool = False
    quote: bool = False
    sampler: bool = False  # "show me some Markdown": a bit of everything

    @property
    def any(self) -> bool:
        """Whether any format was asked for."""
        return bool(self.code_language or self.list_style or self.table or self.headings
                    or self.quote or self.sampler)


def code_language(lowered: str) -> str | None:
    """The programming language named in ``lowered`` (the first one), if any."""
    found: list[tuple[int, str]] = []
    match = _LANGUAGE_WORD.search(lowered)
    if match:
        found.append((match.start(), LANGUAGE_NAMES[match.group(1)]))
    short = _SHORT_LANGUAGE.search(lowered)
    if short:
        found.append((short.start(), short.group(1) or short.group(2)))
    return min(found)[1] if found else None


def wants_code(lowered: str, language: str | None = None) -> bool:
    """Whether ``lowered`` (naming ``language``, if any) asks for code."""
    if _CODE_REQUEST.search(lowered):
        return True
    asked = _CODE_VERB.search(lowered) is not None
    return bool(_CODE_NOUN.search(lowered) and (asked or language)) or bool(language and asked)


def requested_formats(text: str) -> Formats:
    """The Markdown elements ``text`` asks for."""
    lowered = text.lower()
    language = code_language(lowered)
    code = wants_code(lowered, language)
    list_style: str | None = None
    if _LIST_REQUEST.search(lowered):
        if re.search(r"\b(checklist|to-?do|task list)\b", lowered):
            list_style = "tasks"
        elif re.search(r"\b(numbered|steps|ordered)\b", lowered):
            list_style = "numbered"
        else:
            list_style = "bullets"
    formats = Formats(
        code_language=(language or "python") if code else None,
        list_style=list_style,
        table=_TABLE_REQUEST.search(lowered) is not None,
        headings=_HEADING_REQUEST.search(lowered) is not None,
        quote=_QUOTE_REQUEST.search(lowered) is not None,
    )
    if not formats.any and _SAMPLER_REQUEST.search(lowered):
        return Formats(sampler=True)
    return formats


def topic_words(text: str, limit: int = 3) -> list[str]:
    """The key words of ``text`` that are about its subject (format and language words out)."""
    return [
        w for w in keywords(text, limit + 8)
        if w not in FORMAT_WORDS and w not in LANGUAGE_NAMES and w not in ("go", "c")
    ][:limit]


def title_for(text: str, words: list[str], fallback: str) -> str:
    """A heading for an answer to ``text``: "Python vs Rust", "Sourdough bread", "Planning a
    trip to Lisbon" (the span of the request between its first two key words, as written), or
    ``fallback`` when it has no key words."""
    compared = compared_pair(text)
    if compared:
        return f"{compared[0]} vs {compared[1]}"
    if not words:
        return fallback
    spans = [m for w in words[:2] if (m := re.search(rf"\b{re.escape(w)}\b", text, re.IGNORECASE))]
    spans.sort(key=lambda m: m.start())
    title = spans[0].group(0) if spans else words[0]
    if len(spans) > 1:
        phrase = text[spans[0].start():spans[1].end()]
        if len(phrase.split()) <= 5 and not re.search(r"[.!?;:,](?:\s|$)", phrase):
            title = phrase
    return title[:1].upper() + title[1:]


def compared_pair(text: str) -> tuple[str, str] | None:
    """The two things ``text`` compares ("Python vs Rust", "between tea and coffee"), if any."""
    match = _COMPARE.search(text)
    if match is None:
        return None
    a = (match.group(1) or match.group(3) or "").strip(" \"'“”")
    b = (match.group(2) or match.group(4) or "").strip(" \"'“”")
    a = re.sub(r"^(?:the|a|an)\s+", "", a, flags=re.IGNORECASE)
    b = re.sub(r"^(?:the|a|an)\s+", "", b, flags=re.IGNORECASE)
    if not a or not b or len(a) > 40 or len(b) > 40:
        return None
    return a, b


def as_written(word: str, text: str) -> str:
    """``word`` (a lowercased key word) as ``text`` spells it ("cli" → "CLI")."""
    match = re.search(rf"\b{re.escape(word)}\b", text, re.IGNORECASE)
    return match.group(0) if match else word


def general_title(text: str) -> str:
    """A heading for an ordinary answer: the request's key words, or a neutral one."""
    return title_for(text, topic_words(text, 2),
                     pick(["Thinking it through", "A first take", "Where to start"], text))
