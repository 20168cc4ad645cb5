"""The offline demo model: deterministic, readable answers built from the conversation.

It is not clever; it is honest about what it sees. It restates the latest message, refers
back to earlier ones (and to a compaction summary when there is one), answers simple questions
about the conversation, calls the workspace tools when asked about files, describes tool
output, writes code blocks when asked for code, and writes a real extractive handoff summary
when asked to compact.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from typing import Any

from .conversation import Conversation, Entry
from .model.formats import general_title, requested_formats
from .model.markdown import formatted_answer
from .phrasing import (
    conversation_question,
    first_sentence,
    is_greeting,
    is_topical,
    join_words,
    keywords,
    pick,
    quote,
    same_text,
    sentences,
    shorten,
)
from .script import Reply, ToolCall
from .summary import asks_in_summary, build_summary, parse_sections

LIST_TOOL = "list_directory"
READ_TOOL = "read_file"
SEARCH_TOOL = "search_text"
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
     "tell", "mentioned", "again", "choose", "chose", "chosen", "decide", "decided", "pick",
     "picked", "what", "which"}
)

_WORDS = re.compile(r"[a-z']+")
# A file name or path. It never starts inside a name (the look-behind), and its name part is
# read once (the look-ahead finds its letter, the possessive run takes it):
# "[\w-]*[A-Za-z][\w-]*" tried every split of the run at every position of it, so a pasted
# 6 000-character run without a dot took minutes here, holding the GIL (the window froze).
_FILE_TOKEN = re.compile(
    r"(?<![\w-])[`'\"]?"
    r"((?:\.{1,2}/)?(?:[\w.-]+/)*(?=[\w-]*[A-Za-z])[\w-]*+\.[A-Za-z][A-Za-z0-9]{0,7})[`'\"]?"
)
_QUOTED = re.compile(r"[`\"“'‘]([^`\"”'’]{1,80})[`\"”'’]")
_IN_PATH = re.compile(
    r"\b(?:in|under|inside|within|of)\s+(?:the\s+)?[`'\"]?([\w./-]+?)[`'\"]?"
    r"(?:\s+(?:folder|directory|dir))?\s*[?.!]*$",
    re.IGNORECASE,
)
_SEARCH_TAIL = re.compile(
    r"\b(?:search(?:\s+the\s+\w+)?\s+for|grep(?:\s+for)?|look\s+for|find(?:\s+all)?|"
    r"where\s+is|occurrences\s+of)\s+(.+)$",
    re.IGNORECASE,
)
# Words that make a request about the workspace's files rather than about the world.
_WORKSPACE_WORDS = frozenset(
    {"file", "files", "folder", "folders", "directory", "directories", "dir", "repo",
     "repository", "codebase", "workspace"}
)
# Dotted names that are not files.
_NOT_FILES = frozenset(
    {"e.g", "i.e", "node.js", "vue.js", "next.js", "nuxt.js", "react.js", "express.js", "d3.js",
     "three.js", "chart.js", "socket.io", "asp.net", "vs.code"}
)
# A search query that names code: snake_case, dotted.names, calls(), CamelCase, CONSTANTS.
_IDENTIFIER = re.compile(
    r"\w_\w|\w\.\w|\(\)|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*|\b[A-Z_]{4,}\b"
)
_GENERIC_PLACES = frozenset(
    {
        "this",
        "the",
        "here",
        "project",
        "workspace",
        "repo",
        "repository",
        "folder",
        "directory",
        "codebase",
        "code",
        "files",
        "it",
    }
)
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
_EXT_LANG = {
    ".py": "python",
    ".js": "javascript",
    ".ts": "typescript",
    ".rs": "rust",
    ".go": "go",
    ".sh": "bash",
    ".md": "markdown",
    ".json": "json",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".sql": "sql",
    ".html": "html",
    ".css": "css",
}


class DemoModel:
    """Answers one request; holds no state between requests (the input is the memory)."""

    def respond(self, conv: Conversation) -> Reply:
        """The answer to a normal turn request."""
        last = conv.last
        if last is None:
            return Reply(text="There is no message for me to answer yet. Say something!")
        if last.kind == "output":
            return Reply(text=self._describe_output(conv, last))
        if last.kind == "summary":
            return Reply(text=self._continue_from_summary(last.text))
        if last.kind != "user":
            return Reply(text="I'm waiting for your next message.")
        tool_call = self._tool_call_for(last.text, conv.tools) or _recall_call(conv, last.text)
        if tool_call is not None:
            return Reply(function_calls=[tool_call])
        return Reply(text=self._answer(conv, last.text))

    def summarize(self, conv: Conversation, prompt: str, max_tokens: int | None = None) -> str:
        """The handoff summary a compaction request asks for, within its output limit."""
        return build_summary(conv, prompt, max_tokens)

    # ------------------------------------------------------------------------------ tools

    def _tool_call_for(self, text: str, tools: set[str]) -> ToolCall | None:
        intent = _file_intent(text)
        if intent is None:
            return None
        name, args = intent
        if name not in tools:
            return None
        return ToolCall(name=name, arguments=args)

    def _describe_output(self, conv: Conversation, output: Entry) -> str:
        call = conv.calls_by_id().get(output.call_id)
        name = call.name if call else "the tool"
        args = _json_object(call.text) if call else {}
        text = output.text.rstrip()
        lines = text.splitlines()
        if not text:
            return f"`{name}` returned nothing at all, so there is nothing to show."
        if _looks_like_error(lines[0]):
            return (
                f"`{name}` reported a problem:\n\n{quote(lines[0], 200)}\n\n"
                "Check the path or the wording and ask me again."
            )
        if name == LIST_TOOL:
            path = str(args.get("path", "."))
            # The tool's first line is a header ("./ (N entries)"), not an entry.
            if lines and lines[0].rstrip().endswith(("entries)", "entry)")):
                lines = lines[1:]
            shown = "\n".join(f"- `{line.strip()}`" for line in lines[:10])
            more = f"\n\n…and {len(lines) - 10} more." if len(lines) > 10 else ""
            return (
                f"The directory `{path}` has **{len(lines)}** entries:\n\n{shown}{more}\n\n"
                "Ask me to read one of them if you want to see what is inside."
            )
        if name == READ_TOOL:
            path = str(args.get("path", "the file"))
            lang = _EXT_LANG.get(PurePosixPath(path).suffix.lower(), "")
            head = "\n".join(lines[:8])
            return (
                f"`{path}` has **{len(lines)}** line(s) in the part I read "
                f"({len(text)} characters). It starts like this:\n\n"
                f"```{lang}\n{head}\n```\n\n{_file_remark(lines)}"
            )
        if name == RECALL_TOOL:
            return _answer_from_recall(str(args.get("query", "")), lines)
        if name == SEARCH_TOOL:
            query = str(args.get("query", ""))
            shown = "\n".join(f"- `{shorten(line, 100)}`" for line in lines[:6])
            more = f"\n\n…and {len(lines) - 6} more." if len(lines) > 6 else ""
            return (
                f"The search for “{query}” found **{len(lines)}** matching line(s):\n\n"
                f"{shown}{more}"
            )
        return (
            f"`{name}` returned {len(lines)} line(s), {len(text)} characters. "
            f"The first lines are:\n\n```\n" + "\n".join(lines[:6]) + "\n```"
        )

    # ---------------------------------------------------------------------------- answers

    def _answer(self, conv: Conversation, text: str) -> str:
        lowered = text.lower()
        earlier = conv.user_texts[:-1]
        summary_asks = [a for s in conv.summaries for a in asks_in_summary(s)]
        about_conversation = conversation_question(lowered)
        if about_conversation == "first":
            return _answer_first(earlier, summary_asks, conv.summaries)
        if about_conversation == "previous":
            return _answer_previous(earlier, summary_asks)
        if about_conversation == "recap":
            return _answer_recap(earlier, summary_asks, conv.summaries)
        recalled = _answer_from_notes(text, conv.notes)
        if recalled is not None:
            return recalled
        if about_conversation == "count":
            return f"I can see **{len(conv.user_texts)}** message(s) from you in this request" + (
                ", plus a summary of an earlier part of the conversation."
                if conv.summaries
                else "."
            )
        if _file_intent(text) is not None:
            return (
                "I can't look at your files here: this request offered me no workspace "
                "tools. Open a workspace folder in Coco and ask again."
            )
        formats = requested_formats(text)
        if formats.any:
            return formatted_answer(text, formats, earlier)
        if is_greeting(lowered) and len(lowered.split()) <= 6:
            return _answer_greeting(earlier)
        return _answer_general(text, earlier, summary_asks, conv.summaries, conv.opaque_compactions)

    def _continue_from_summary(self, summary: str) -> str:
        sections = parse_sections(summary)
        pending = sections.get("Open items") or sections.get("Next Steps") or []
        lines = ["Picking up from the summary of the earlier conversation."]
        if pending:
            lines += ["", "Still open:", *[f"- {p}" for p in pending[:5]]]
        else:
            lines += ["", "Nothing is marked as open there, so tell me what to do next."]
        return "\n".join(lines)


# ------------------------------------------------------------------------------------ intents


def _file_intent(text: str) -> tuple[str, dict[str, Any]] | None:
    """Which workspace tool ``text`` asks for, with its arguments; None when it asks for none.

    Only requests that are about files say so: "list the files", "read app/main.py", "search
    for `compact_locally`". "A Markdown list", "a binary tree" or "look for a good hotel" are
    ordinary requests, answered in words.
    """
    lowered = text.lower()
    words = set(_WORDS.findall(lowered))
    file_token = _file_token(text)
    about_files = bool(words & _WORKSPACE_WORDS)
    if (
        words & {"search", "grep", "occurrences"}
        or "look for" in lowered
        or (
            words & {"find", "where"}
            and file_token is None
            and (words & {"defined", "used", "mentioned", "declared"} or about_files)
        )
    ):
        query = _search_query(text)
        if query and (about_files or file_token is not None or words & {"grep", "occurrences"}
                      or words & {"defined", "used", "mentioned", "declared"}
                      or _QUOTED.search(text) or _IDENTIFIER.search(query)):
            return SEARCH_TOOL, {"query": query, "path": _place(text) or "."}
    reading = words & {"read", "open", "cat", "show", "display", "print", "contents", "view"} or (
        "what's in" in lowered or "what is in" in lowered or "look at" in lowered
    )
    if file_token and reading:
        return READ_TOOL, {"path": file_token, "start_line": 1, "end_line": 200}
    if "ls" in words or (
        words & {"files", "folder", "directory", "folders", "directories", "dir"}
        and words & {"list", "tree", "what", "which", "show", "see", "there"}
    ):
        return LIST_TOOL, {"path": _place(text) or "."}
    return None


def _recall_call(conv: Conversation, text: str) -> ToolCall | None:
    """Search the whole conversation (the recall tool) when ``text`` asks about something
    earlier that is no longer in this request: its telling words appear nowhere else in it."""
    if RECALL_TOOL not in conv.tools or not _LOOK_BACK.search(text) or not _ASKS.search(text):
        return None
    if conversation_question(text.lower()) is not None:
        return None  # "what did I say first?": answered from what is in view
    words = [w for w in keywords(text, 4) if w not in _LOOK_BACK_WORDS]
    if not words:
        return None
    visible = " ".join(e.text for e in conv.entries[:-1]).lower()
    if all(w in visible for w in words):
        return None  # still in view: no need to search
    return ToolCall(name=RECALL_TOOL, arguments={"query": " ".join(words)})


def _answer_from_recall(query: str, lines: list[str]) -> str:
    """An answer built from what the recall tool found (its first excerpt, with its origin)."""
    text = "\n".join(lines)
    if "\n\n[1] " not in text:
        if text.startswith("No earlier part"):
            return (
                f"I searched our whole conversation for “{query}” and found nothing about it, "
                "so I can't tell you from what we said."
            )
        return f"I tried to search our conversation, but the search said:\n\n{quote(text, 300)}"
    blocks = text.split("\n\n[")
    first = blocks[1] if len(blocks) > 1 else ""
    where, _, excerpt = first.partition("\n")
    where = where.split("] ", 1)[-1]
    origin = where.split(" · ")
    if len(origin) > 1:
        told = {"the user's message": "what you said", "your answer": "what I answered"}
        place = f"{origin[0]}, {told.get(origin[1], origin[1])}"
    else:
        place = where
    return (
        f"That is no longer in my view, so I searched our earlier conversation for "
        f"“{query}”. From {place}:\n\n{quote(excerpt.strip(), 400)}"
    )


def _file_token(text: str) -> str | None:
    """The first thing in ``text`` that looks like a file name or path ("app/main.py")."""
    for match in _FILE_TOKEN.finditer(text):
        token = match.group(1)
        if token.lower() not in _NOT_FILES:
            return token
    return None


def _place(text: str) -> str | None:
    match = _IN_PATH.search(text.strip())
    if match is None:
        return None
    place = match.group(1).strip("./") or "."
    return None if place.lower() in _GENERIC_PLACES else match.group(1)


def _search_query(text: str) -> str | None:
    quoted = _QUOTED.search(text)
    if quoted:
        return quoted.group(1).strip()
    match = _SEARCH_TAIL.search(text.strip())
    if match is None:
        return None
    tail = re.split(r"\s+(?:in|inside|under|within)\s+", match.group(1), maxsplit=1)[0]
    named = [w.strip("`'\"?.!,") for w in tail.split() if _IDENTIFIER.search(w)]
    if named:
        return named[0]  # "find where parse_config is defined": the name, not the sentence
    tail = re.sub(r"^(?:the\s+(?:word|text|string)\s+)", "", tail.strip(), flags=re.IGNORECASE)
    words = tail.strip(" ?.!").split()
    return " ".join(words[:5]) or None


def _looks_like_error(line: str) -> bool:
    lowered = line.lower()
    return (
        lowered.startswith(("error", "failed"))
        or "no such file" in lowered
        or "not found" in lowered
    )


def _json_object(text: str) -> dict[str, Any]:
    try:
        parsed = json.loads(text)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _file_remark(lines: list[str]) -> str:
    defs = [line.strip() for line in lines if re.match(r"\s*(def|class|fn|func|function)\s", line)]
    headings = [
        line.strip("# ").strip()
        for line in lines
        if line.startswith("#") and not line.startswith("#!")
    ]
    if defs:
        names = [re.split(r"[\s(:<{]+", d)[1] for d in defs[:4] if len(d.split()) > 1]
        return f"It defines {join_words(names, '`')}, among what I read."
    if headings:
        return f"Its headings include {join_words(headings[:3], '“')}."
    return "Ask me to search it for something specific if you need more."


# ------------------------------------------------------------------------------------ answers


def _answer_first(earlier: list[str], summary_asks: list[str], summaries: list[str]) -> str:
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


def _answer_previous(earlier: list[str], summary_asks: list[str]) -> str:
    if earlier:
        return "Just before this, you wrote:\n\n" + quote(earlier[-1])
    if summary_asks:
        return (
            "Your earlier messages were compacted. The summary says your last request "
            "before that was:\n\n" + quote(summary_asks[-1])
        )
    return "I can't see any earlier message from you; this looks like the start."


def _answer_recap(earlier: list[str], summary_asks: list[str], summaries: list[str]) -> str:
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


def _answer_from_notes(text: str, notes: list[str]) -> str | None:
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


def _answer_greeting(earlier: list[str]) -> str:
    if earlier:
        return (
            f"Hello again! We were talking about “{shorten(earlier[-1], 80)}”. "
            "Where would you like to go from here?"
        )
    return _GREETING


def _answer_general(
    text: str,
    earlier: list[str],
    summary_asks: list[str],
    summaries: list[str],
    opaque_compactions: int,
) -> str:
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
