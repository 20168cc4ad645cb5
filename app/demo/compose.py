"""Markdown answers of the offline demo model: headings, lists, tables and code when asked.

The demo knows nothing beyond the conversation, so what it writes is built from the request
itself (its key words and sentences) or, for a bare formatting request ("show me a Python code
block and a Markdown list"), about Coco: its compaction triggers, things to try. Either way the
answer is real Markdown of the kind asked for, so the renderer shows what it can do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .phrasing import join_words, keywords, pick, plain, sentences, shorten

# Words that name a format or a language rather than the subject of the request.
_FORMAT_WORDS_TEXT = """
    code block blocks fenced fence snippet snippets example examples sample samples function
    functions script program class list lists bullet bullets bulleted point points numbered
    checklist todo table tables heading headings header headers section sections title titles
    quote quotes blockquote markdown formatting format formatted render rendering rich text
    write show give make create draft produce short small simple quick little nice demo compare
    comparing comparison versus hello please thanks
"""
_FORMAT_WORDS = frozenset(_FORMAT_WORDS_TEXT.split())
_LANGUAGE_NAMES = {
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
_LANGUAGE_LABELS = {
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
        found.append((match.start(), _LANGUAGE_NAMES[match.group(1)]))
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
        if w not in _FORMAT_WORDS and w not in _LANGUAGE_NAMES and w not in ("go", "c")
    ][:limit]


def title_for(text: str, words: list[str], fallback: str) -> str:
    """A heading for an answer to ``text``: "Python vs Rust", "Sourdough bread", "Planning a
    trip to Lisbon" (the span of the request between its first two key words, as written), or
    ``fallback`` when it has no key words."""
    compared = _compared(text)
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


# ---------------------------------------------------------------------------- the answer


def formatted_answer(text: str, formats: Formats, earlier: list[str]) -> str:
    """An answer to ``text`` made of the elements in ``formats``."""
    words = topic_words(text)
    points = _points(text)
    if formats.sampler:
        return _sampler(text, words, points)
    wanted = _describe(formats)
    title = title_for(text, words, "Coco, in Markdown")
    sections: list[tuple[str, str]] = []
    if formats.code_language:
        lang = formats.code_language
        label = _LANGUAGE_LABELS.get(lang, lang)
        sections.append((f"{label} code", code_block(text, lang)))
    if formats.list_style:
        sections.append(("Checklist" if formats.list_style == "tasks" else
                         "Steps" if formats.list_style == "numbered" else "Key points",
                         _list(formats.list_style, words, points)))
    if formats.table:
        sections.append(("At a glance", _table(text, words, points)))
    if formats.quote:
        sections.append(("Quoted", _quote_block(text, earlier)))
    if formats.headings and not sections:
        sections += [("What you asked", f"“{shorten(text, 160)}”"),
                     ("What I can do offline", _offline_note()),
                     ("Next", "Ask for a list, a table or code and I'll add that section.")]
    lines = [f"## {title}", "", f"Here is {wanted}, as you asked.", ""]
    many = len(sections) > 1 or formats.headings
    for heading, body in sections:
        if many:
            lines += [f"### {heading}", ""]
        lines += [body, ""]
    if formats.code_language:
        lines.append(_code_note())
    else:
        lines.append(_content_note(text, words))
    return "\n".join(lines).rstrip()


def _describe(formats: Formats) -> str:
    parts: list[str] = []
    if formats.code_language:
        label = _LANGUAGE_LABELS.get(formats.code_language, formats.code_language)
        parts.append(f"{'an' if label == 'HTML' else 'a'} {label} code block")
    if formats.list_style:
        parts.append({"tasks": "a checklist", "numbered": "a numbered list"}.get(
            formats.list_style, "a bulleted list"))
    if formats.table:
        parts.append("a table")
    if formats.quote:
        parts.append("a block quote")
    if formats.headings:
        parts.append("sections with headings")
    if len(parts) <= 1:
        return parts[0] if parts else "an answer"
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _points(text: str) -> list[str]:
    """What the request says, as short points (its sentences, or its key words)."""
    said = [shorten(s, 90) for s in sentences(text) if len(s.split()) > 3]
    return said[:3]


def _list(style: str, words: list[str], points: list[str]) -> str:
    if words:
        leads = ["what it has to achieve, and by when",
                 "what you already have for it, and what is missing",
                 "what it depends on, and who can help"]
        items = [(f"**{w[:1].upper() + w[1:]}**", lead) for w, lead in zip(words, leads)]
        items.append(("**Constraints**", "the limits you already know: time, budget, tools"))
        items.append(("**Next step**", "one small thing to try first, then check the result"))
    else:
        items = [
            ("**Compact**", "press *Compact* or type `/compact` to summarise the conversation"),
            ("**Focus**", "`/compact <focus>` tells the summary what to keep"),
            ("**Model view**", "shows exactly what the model will see next"),
            ("**Undo**", "the last compaction can be undone until you send again"),
        ]
    if style == "numbered":
        return "\n".join(f"{n}. {head}: {body}" for n, (head, body) in enumerate(items, 1))
    if style == "tasks":
        return "\n".join(f"- [{'x' if n == 0 else ' '}] {head}: {body}"
                         for n, (head, body) in enumerate(items))
    lines = [f"- {head}: {body}" for head, body in items]
    if words and len(points) > 1:
        lines.append("- **From your message**:")
        lines += [f"  - {p}" for p in points]
    return "\n".join(lines)


def _table(text: str, words: list[str], points: list[str]) -> str:
    compared = _compared(text)
    if compared:
        a, b = compared
        rows = [
            ("What it is for", f"where **{a}** fits best", f"where **{b}** fits best"),
            ("Strengths", "to be filled in from your experience", "to be filled in from yours"),
            ("Watch out for", "the cost of switching later", "the cost of switching later"),
            ("First step", f"try one small task with {a}", f"try the same task with {b}"),
        ]
        head = ("Aspect", a, b)
    elif words:
        head = ("#", "Topic", "From your message")
        said = points or [shorten(plain(text), 60)]
        rows = [(str(n), w.capitalize(), said[min(n - 1, len(said) - 1)])
                for n, w in enumerate(words, 1)]
    else:
        head = ("Trigger", "How", "When")
        rows = [
            ("Manual", "the **Compact** button", "whenever you choose"),
            ("Command", "`/compact` or `/compact <focus>`", "whenever you choose"),
            ("Automatic", "Coco itself", "when the context reaches the auto-compact limit"),
        ]
    def row(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([row(head), "| " + " | ".join("---" for _ in head) + " |",
                      *[row(r) for r in rows]])


def _compared(text: str) -> tuple[str, str] | None:
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


def _quote_block(text: str, earlier: list[str]) -> str:
    source = earlier[-1] if earlier else text
    return "> " + shorten(plain(source), 200) + "\n>\n> — you, " + (
        "earlier in this conversation" if earlier else "just now")


def _offline_note() -> str:
    return ("I'm Coco's offline demo model: no network and no knowledge beyond this "
            "conversation, so I shape your own words into the format you ask for.")


def as_written(word: str, text: str) -> str:
    """``word`` (a lowercased key word) as ``text`` spells it ("cli" → "CLI")."""
    match = re.search(rf"\b{re.escape(word)}\b", text, re.IGNORECASE)
    return match.group(0) if match else word


def _content_note(text: str, words: list[str]) -> str:
    if words:
        named = join_words([as_written(w, text) for w in words[:2]], "")
        return ("_I'm the offline demo model: the content comes from your message, not from "
                f"research. Tell me more about {named} and I'll use it._")
    return "_I'm the offline demo model: ask about anything and I'll answer in this format._"


def _code_note() -> str:
    return ("_I'm the offline demo model, so this is a template rather than a tested solution: "
            "rename it and fill in the real logic._")


def _sampler(text: str, words: list[str], points: list[str]) -> str:
    title = title_for(text, words, "Markdown in Coco")
    return "\n".join([
        f"## {title}",
        "",
        (
            "Here is a little of everything Coco renders: **bold**, *italic*, `inline code` "
            "and a [link](https://commonmark.org)."
        ),
        "",
        "### A list",
        "",
        _list("bullets", words, points),
        "",
        "### Numbered steps",
        "",
        _list("numbered", words, []),
        "",
        "### A table",
        "",
        _table(text, words, points),
        "",
        "### Code",
        "",
        code_block(text, "python"),
        "",
        "> A block quote: what you said stays in the transcript, even after a compaction.",
    ])


# ------------------------------------------------------------------------------------ code

_CODE_WORDS_TEXT = """
    write code function script snippet program implement example that the and with for some
    please small simple quick can you which from into this give show make block class using
    hello thanks
"""
_CODE_WORDS = frozenset(_CODE_WORDS_TEXT.split())


def code_name(text: str) -> str:
    """A function name from what the code should do ("…to convert yen to euros")."""
    match = re.search(r"\b(?:to|that|which|for)\s+(.+)$", text, re.IGNORECASE)
    source = match.group(1) if match else text
    words = [
        w for w in re.findall(r"[a-z]+", source.lower())
        if w not in _CODE_WORDS and w not in _LANGUAGE_NAMES and w not in _FORMAT_WORDS
        and len(w) > 2
    ][:3]
    return "_".join(words) or "greet"


def code_block(text: str, lang: str) -> str:
    """A fenced block of ``lang`` code for ``text``."""
    return f"```{lang}\n{code_template(lang, code_name(text), shorten(plain(text), 48))}\n```"


def code_template(lang: str, name: str, request: str) -> str:
    """A small, runnable-looking program in ``lang`` around a function called ``name``."""
    request = request.replace('"', "'").replace("*/", "* /")
    camel = name.split("_")[0] + "".join(p.capitalize() for p in name.split("_")[1:])
    pascal = camel[:1].upper() + camel[1:]
    templates = {
        "javascript": (
            f"// {request}\nfunction {camel}(text) {{\n"
            "  const words = text.split(/\\s+/).filter(Boolean);\n"
            '  return words.map((w) => w[0].toUpperCase() + w.slice(1)).join(" ");\n}\n\n'
            f'console.log({camel}("hello from coco"));'
        ),
        "typescript": (
            f"// {request}\nfunction {camel}(text: string): string {{\n"
            "  const words = text.split(/\\s+/).filter(Boolean);\n"
            '  return words.map((w) => w[0].toUpperCase() + w.slice(1)).join(" ");\n}\n\n'
            f'console.log({camel}("hello from coco"));'
        ),
        "rust": (
            f"/// {request}\nfn {name}(text: &str) -> String {{\n"
            "    text.split_whitespace()\n        .map(|w| w.to_uppercase())\n"
            '        .collect::<Vec<_>>()\n        .join(" ")\n}\n\n'
            f'fn main() {{\n    println!("{{}}", {name}("hello from coco"));\n}}'
        ),
        "go": (
            f'// {request}\npackage main\n\nimport (\n\t"fmt"\n\t"strings"\n)\n\n'
            f"func {camel}(text string) string {{\n\treturn strings.ToUpper(text)\n}}\n\n"
            f'func main() {{\n\tfmt.Println({camel}("hello from coco"))\n}}'
        ),
        "bash": (
            f"#!/usr/bin/env bash\n# {request}\nset -euo pipefail\n\n{name}() {{\n"
            '  local text="$1"\n  echo "${text^^}"\n}\n\n'
            f'{name} "hello from coco"'
        ),
        "sql": (
            f"-- {request}\nSELECT id, name, created_at\nFROM items\n"
            "WHERE name LIKE '%coco%'\nORDER BY created_at DESC\nLIMIT 10;"
        ),
        "java": (
            f"// {request}\npublic class {pascal} {{\n"
            f"    static String {camel}(String text) {{\n"
            "        return text.trim().toUpperCase();\n    }\n\n"
            "    public static void main(String[] args) {\n"
            f'        System.out.println({camel}("hello from coco"));\n    }}\n}}'
        ),
        "kotlin": (
            f"// {request}\nfun {camel}(text: String): String =\n"
            '    text.split(" ").joinToString(" ") { it.replaceFirstChar(Char::uppercase) }\n\n'
            f'fun main() {{\n    println({camel}("hello from coco"))\n}}'
        ),
        "swift": (
            f"// {request}\nfunc {camel}(_ text: String) -> String {{\n"
            "    text.capitalized\n}\n\n"
            f'print({camel}("hello from coco"))'
        ),
        "ruby": (
            f"# {request}\ndef {name}(text)\n"
            "  text.split.map(&:capitalize).join(' ')\nend\n\n"
            f"puts {name}('hello from coco')"
        ),
        "php": (
            f"<?php\n// {request}\nfunction {camel}(string $text): string\n{{\n"
            "    return ucwords($text);\n}\n\n"
            f"echo {camel}('hello from coco'), PHP_EOL;"
        ),
        "csharp": (
            f"// {request}\nusing System;\nusing System.Globalization;\n\n"
            f"static string {pascal}(string text) =>\n"
            "    CultureInfo.InvariantCulture.TextInfo.ToTitleCase(text);\n\n"
            f'Console.WriteLine({pascal}("hello from coco"));'
        ),
        "cpp": (
            f"// {request}\n#include <cctype>\n#include <iostream>\n#include <string>\n\n"
            f"std::string {name}(std::string text) {{\n"
            "    for (char &c : text) c = static_cast<char>(std::toupper(c));\n"
            "    return text;\n}\n\n"
            f'int main() {{\n    std::cout << {name}("hello from coco") << "\\n";\n}}'
        ),
        "c": (
            f"/* {request} */\n#include <ctype.h>\n#include <stdio.h>\n\n"
            f"void {name}(char *text) {{\n"
            "    for (; *text; text++) *text = (char)toupper((unsigned char)*text);\n}\n\n"
            'int main(void) {\n    char text[] = "hello from coco";\n'
            f'    {name}(text);\n    puts(text);\n    return 0;\n}}'
        ),
        "html": (
            f"<!-- {request} -->\n<!doctype html>\n<html lang=\"en\">\n<head>\n"
            '  <meta charset="utf-8">\n  <title>Hello from Coco</title>\n</head>\n<body>\n'
            "  <h1>Hello from Coco</h1>\n  <p>A small page to start from.</p>\n</body>\n</html>"
        ),
        "css": (
            f"/* {request} */\nbody {{\n  font-family: system-ui, sans-serif;\n"
            "  margin: 2rem auto;\n  max-width: 40rem;\n}\n\nh1 {\n  color: #2b6cb0;\n}"
        ),
        "json": (
            '{\n  "name": "coco",\n  "request": "' + request + '",\n'
            '  "items": [1, 2, 3],\n  "enabled": true\n}'
        ),
        "yaml": (
            f"# {request}\nname: coco\nitems:\n  - one\n  - two\nenabled: true"
        ),
        "toml": (
            f'# {request}\nname = "coco"\nitems = [1, 2, 3]\n\n[options]\nenabled = true'
        ),
    }
    if lang in templates:
        return templates[lang]
    return (
        f'def {name}(text: str) -> str:\n    """{request}"""\n'
        "    words = text.split()\n"
        '    return " ".join(word.capitalize() for word in words)\n\n\n'
        f'if __name__ == "__main__":\n    print({name}("hello from coco"))'
    )


def general_title(text: str) -> str:
    """A heading for an ordinary answer: the request's key words, or a neutral one."""
    return title_for(text, topic_words(text, 2),
                     pick(["Thinking it through", "A first take", "Where to start"], text))
