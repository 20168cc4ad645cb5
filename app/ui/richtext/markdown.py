"""Markdown → HTML for Qt's rich-text widgets, with highlighted code and copy links.

Model output is untrusted: raw HTML is escaped (``html: False``), images become plain links (no
request is ever made for them), and link targets other than http(s) are left inert by the view.
Each fenced code block gets a header with a ``coco-copy:N`` link; ``RenderedMarkdown.code_blocks``
holds the text that link copies. Invisible direction controls (right-to-left overrides and the
like) in link text, link targets and code are shown as visible marks (``⟨U+202E⟩``): they could
otherwise make ``evil\u202etxt.exe`` read as ``evilexe.txt``; the copied code keeps them.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.normalize_url import normalizeLinkText
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from pygments import highlight  # type: ignore[import-untyped]
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]
from pygments.lexers import (  # type: ignore[import-untyped]
    TextLexer,
    get_lexer_by_name,
    guess_lexer,
)
from pygments.util import ClassNotFound  # type: ignore[import-untyped]

from ..style.theme import Colors
from ..style.widgets import COPY_SCHEME
from ..text.long_text import break_runs, break_runs_html

# Characters that change the display order of the text around them without being seen: the
# embeddings and overrides (U+202A–U+202E), the isolates (U+2066–U+2069) and the directional
# marks (U+200E, U+200F, U+061C).
BIDI_CONTROLS = frozenset(
    chr(code) for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)
)
_BIDI_TABLE = {ord(ch): f"⟨U+{ord(ch):04X}⟩" for ch in BIDI_CONTROLS}


def show_bidi_controls(text: str) -> str:
    """``text`` with every direction control replaced by a visible mark such as ``⟨U+202E⟩``."""
    return text.translate(_BIDI_TABLE)


def _reveal_bidi(state: StateCore) -> None:
    """A core rule: direction controls in links (text and target) and inline code become
    visible; a link's target is also its tooltip, so the user can see where it goes."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        depth = 0
        for token in block.children:
            if token.type == "link_open":
                depth += 1
                href = str(token.attrGet("href") or "")
                if href:
                    token.attrSet("title", show_bidi_controls(normalizeLinkText(href)))
            elif token.type == "link_close":
                depth = max(0, depth - 1)
            elif token.type in ("code_inline", "image") or (depth and token.type == "text"):
                token.content = show_bidi_controls(token.content)


@dataclass
class RenderedMarkdown:
    """The HTML for a message and the plain text of each of its code blocks, in order."""

    html: str
    code_blocks: list[str] = field(default_factory=list)


def _lexer(lang: str, code: str) -> Any:
    if lang:
        return _named_lexer(lang)
    try:
        # Guessing is slow on big blocks and often wrong on small ones; only for mid sizes.
        return guess_lexer(code) if 40 <= len(code) <= 4000 else TextLexer()
    except ClassNotFound:
        return TextLexer()


@functools.lru_cache(maxsize=64)
def _named_lexer(lang: str) -> Any:
    """The lexer for a code block's language (a lexer keeps no state between texts). Finding
    it by name goes through every lexer Pygments has, each time: once per language here, as
    a streaming reply renders its open code block again on every frame."""
    try:
        return get_lexer_by_name(lang, stripall=False)
    except ClassNotFound:
        return TextLexer()


# The languages models write most, whose lexers the preload compiles ahead.
COMMON_LANGUAGES = ("python", "bash", "json", "javascript")


def prepare_lexers(languages: Sequence[str] = COMMON_LANGUAGES) -> None:
    """Find and compile the lexers of ``languages`` now: Pygments compiles a lexer's rules the
    first time one is made (about 20 ms for Python), which the first code block in that
    language paid in the block that drew it. Run by the preload's worker thread."""
    for lang in languages:
        _named_lexer(lang)


class MarkdownRenderer:
    """Renders Markdown for one palette; build a new one when the palette changes."""

    def __init__(self, colors: Colors, pygments_style: str) -> None:
        self._colors = colors
        self._formatter = HtmlFormatter(nowrap=True, noclasses=True, style=pygments_style)
        self._md = self._make_parser(breaks=False)
        self._md_breaks: MarkdownIt | None = None  # built with the first user message
        # Renders made ahead (``render_ahead``), each taken once by the ``render`` it answers.
        self._ahead: dict[tuple[str, int, bool], RenderedMarkdown] = {}

    def _make_parser(self, breaks: bool) -> MarkdownIt:
        parser = MarkdownIt(
            "commonmark",
            {"html": False, "linkify": False, "typographer": False, "breaks": breaks},
        )
        parser.enable(["table", "strikethrough"])

        # markdown-it binds each rule to its renderer, so register plain functions.
        def fence(_r: Any, tokens: Sequence[Token], idx: int, opts: OptionsDict, env: EnvType) -> str:
            return self._render_fence(tokens, idx, opts, env)

        def image(_r: Any, tokens: Sequence[Token], idx: int, opts: OptionsDict, env: EnvType) -> str:
            return self._render_image(tokens, idx, opts, env)

        parser.add_render_rule("fence", fence)
        parser.add_render_rule("code_block", fence)
        parser.add_render_rule("image", image)
        parser.core.ruler.push("reveal_bidi", _reveal_bidi)
        return parser

    def _parser(self, breaks: bool) -> MarkdownIt:
        """The parser; with ``breaks``, each line break in a paragraph is kept (a user's
        Shift+Enter), where Markdown would join the lines."""
        if not breaks:
            return self._md
        if self._md_breaks is None:
            self._md_breaks = self._make_parser(breaks=True)
        return self._md_breaks

    # -- public -----------------------------------------------------------------------------

    def render(self, text: str, first_code: int = 0, breaks: bool = False) -> RenderedMarkdown:
        """HTML for ``text`` plus its code blocks (for the copy links). ``first_code`` numbers
        the copy links of a part of a longer message after that message's earlier blocks;
        ``breaks`` keeps the line breaks inside paragraphs (what the user typed)."""
        if self._ahead:  # rarely: a reopened huge message's part on screen (see render_ahead)
            ready = self._ahead.pop((text, first_code, breaks), None)
            if ready is not None:
                return ready
        return self._render(text, first_code, breaks)

    def render_ahead(self, text: str, first_code: int = 0, breaks: bool = False) -> RenderedMarkdown:
        """Render ``text`` now for a :meth:`render` of the same arguments to come, which takes
        it ready (once). Safe in a worker thread: Markdown and highlighting touch no Qt object;
        the replay of a huge message renders its part on screen so (3.8 ms for 16 KB)."""
        rendered = self._render(text, first_code, breaks)
        self._ahead[(text, first_code, breaks)] = rendered
        return rendered

    def forget_ahead(self) -> None:
        """Drop the renders made ahead that were not used."""
        self._ahead.clear()

    def _render(self, text: str, first_code: int, breaks: bool) -> RenderedMarkdown:
        env: dict[str, Any] = {"code_blocks": [], "first_code": first_code}
        # Break opportunities in long runs: a line Qt cannot wrap costs time that grows much
        # faster than its length (see ``long_text``). Display only: code blocks keep their text.
        body = break_runs_html(self._parser(breaks).render(text, env))
        # Markdown tables (only they render a bare <table>) get visible cell borders.
        body = body.replace(
            "<table>",
            f'<table border="1" cellspacing="0" cellpadding="4" '
            f'style="border-color: {self._colors.border}; border-style: solid;">',
        )
        return RenderedMarkdown(html=body, code_blocks=list(env["code_blocks"]))

    def style_sheet(self) -> str:
        """The document style sheet the views install (sizes, spacing, inline code)."""
        c = self._colors
        return (
            f"a {{ color: {c.accent}; }}"
            f"code {{ font-family: monospace; background-color: {c.code_bg}; }}"
            "pre { font-family: monospace; margin: 0; white-space: pre-wrap; }"
            "h1 { font-size: x-large; } h2 { font-size: large; } h3 { font-size: medium; }"
            "p { margin-top: 4px; margin-bottom: 4px; }"
            f"th {{ background-color: {c.code_bg}; }}"
            f"blockquote {{ color: {c.muted}; }}"
        )

    # -- render rules -----------------------------------------------------------------------

    def _render_fence(
        self,
        tokens: Sequence[Token],
        idx: int,
        options: OptionsDict,
        env: EnvType,
    ) -> str:
        token = tokens[idx]
        code = token.content
        lang = token.info.strip().split(maxsplit=1)[0] if token.info.strip() else ""
        blocks: list[str] = env.setdefault("code_blocks", [])
        number = int(env.get("first_code", 0)) + len(blocks)
        blocks.append(code.rstrip("\n"))
        shown = show_bidi_controls(code)  # the copy link keeps the code as it is
        highlighted = highlight(shown, _lexer(lang, shown), self._formatter).rstrip("\n")
        c = self._colors
        label = html.escape(lang) if lang else "code"
        # A one-cell-per-row table is the box model Qt's rich text renders reliably.
        return (
            f'<table width="100%" cellspacing="0" cellpadding="6" '
            f'style="background-color: {c.code_bg}; border: 1px solid {c.border}; '
            f'margin-top: 4px; margin-bottom: 4px;">'
            f'<tr><td style="color: {c.muted};">{label}'
            f'&nbsp;&nbsp;·&nbsp;&nbsp;<a href="{COPY_SCHEME}:{number}">Copy code</a></td></tr>'
            f'<tr><td><pre style="white-space: pre-wrap;">{highlighted}</pre></td></tr></table>\n'
        )

    def _render_image(
        self,
        tokens: Sequence[Token],
        idx: int,
        options: OptionsDict,
        env: EnvType,
    ) -> str:
        # Never load images: show them as a link the user can choose to open.
        token = tokens[idx]
        src = str(token.attrGet("src") or "")
        alt = html.escape(token.content or "image")
        if src.startswith(("http://", "https://")):
            return f'[image: <a href="{html.escape(src, quote=True)}">{alt}</a>]'
        return f"[image: {alt}]"


def plain_to_html(text: str) -> str:
    """Plain text (user messages, tool output) as HTML that preserves line breaks."""
    return "<p style=\"white-space: pre-wrap;\">" + html.escape(break_runs(text)) + "</p>"
