"""The demo model's answer in the Markdown a request asks for: its sections (code, a list, a
table, a quote, headings) built from the request's own words, or a sampler of everything."""

from __future__ import annotations

from ..phrasing import join_words, plain, sentences, shorten
from .code import code_block
from .formats import LANGUAGE_LABELS, Formats, as_written, compared_pair, title_for, topic_words


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
        label = LANGUAGE_LABELS.get(lang, lang)
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
        label = LANGUAGE_LABELS.get(formats.code_language, formats.code_language)
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
    compared = compared_pair(text)
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


def _quote_block(text: str, earlier: list[str]) -> str:
    source = earlier[-1] if earlier else text
    return "> " + shorten(plain(source), 200) + "\n>\n> — you, " + (
        "earlier in this conversation" if earlier else "just now")


def _offline_note() -> str:
    return ("I'm Coco's offline demo model: no network and no knowledge beyond this "
            "conversation, so I shape your own words into the format you ask for.")


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
