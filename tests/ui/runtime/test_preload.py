"""The first message of a process: what it needs is loaded ahead, off the window's thread."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from app.ui.runtime import preload
from app.ui.style.widgets import RichTextView
from app.ui.window.main_window import MainWindow


def test_the_preloader_loads_in_one_worker_thread_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "coco_ui_preload_probe.py").write_text(
        "import threading\nTHREAD = threading.current_thread()\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "coco_ui_preload_probe", raising=False)
    after: list[threading.Thread] = []
    loader = preload.Preloader(
        ("coco_ui_preload_probe",), then=lambda: after.append(threading.current_thread())
    )

    loader.start("default")
    first = loader.thread
    loader.start("default")  # a second session shown: nothing more
    assert first is not None and loader.thread is first
    first.join(30)

    module = sys.modules["coco_ui_preload_probe"]
    assert module.THREAD is first and first is not threading.main_thread()
    assert after == [first]  # the core's part runs once, after the window's modules


def test_a_module_that_cannot_load_does_not_stop_the_rest(caplog: Any) -> None:
    after: list[bool] = []
    loader = preload.Preloader(("coco_no_such_ui_module",), then=lambda: after.append(True))
    loader.start("no-such-style")
    assert loader.thread is not None
    loader.thread.join(30)
    assert after == [True]
    assert "coco_no_such_ui_module" in caplog.text and "no-such-style" in caplog.text


def test_the_window_starts_the_preload_once_its_first_session_is_shown(
    qtbot: Any, make_window: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    styles: list[str] = []
    monkeypatch.setattr(preload, "start", lambda style, prepare=None: styles.append(style))
    monkeypatch.setattr(RichTextView, "_warmed", False)  # as in a process that built none
    monkeypatch.setattr(MainWindow, "PREPARE_AFTER_MS", 0)
    window = make_window()
    qtbot.waitUntil(lambda: bool(styles), timeout=5000)
    assert styles[0] in ("default", "monokai")  # the style the renderer will use
    # The first message view of the process is built then too, not in the send's block.
    assert RichTextView._warmed
    assert window.transcript.message_rows("user") == []


def test_once_the_modules_are_loaded_a_message_widget_of_each_role_is_built_ahead(
    qtbot: Any, make_window: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first message widgets of a process cost the most (the renderer, icons, first use
    of their classes): they are built at idle once the preload is done, not when the first
    message is shown; the preload is settled only then."""
    from app.ui.transcript.view import row_host

    loader = preload.Preloader((), then=lambda: None)
    monkeypatch.setattr(preload, "_PROCESS", loader)
    monkeypatch.setattr(row_host, "_ROWS_WARMED", False)
    monkeypatch.setattr(MainWindow, "PREPARE_AFTER_MS", 0)
    built: list[str] = []
    create = row_host.RowHostArea.create_row_widget

    def counting(self: Any, row: Any) -> Any:
        built.append(getattr(row, "role", type(row).__name__))
        return create(self, row)

    monkeypatch.setattr(row_host.RowHostArea, "create_row_widget", counting)
    window = make_window()
    qtbot.waitUntil(loader.settled.is_set, timeout=10_000)
    assert loader.thread is not None and not loader.thread.is_alive()
    assert built == ["user", "assistant", "ToolRow"]
    assert window.transcript._renderer is not None  # the first message needs none built
    assert window.transcript.rows == []  # nothing shown: built and dropped


def test_the_rows_built_ahead_leave_the_thumbnail_thread_started_and_the_icons_drawn(
    qtbot: Any, make_window: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resumed message with attachments does not start the thumbnails' thread (8 ms of
    waiting for the interpreter) nor render its buttons' icons (those shown on hover too) in
    the block that shows it: both are done when the rows are built ahead."""
    from PySide6.QtWidgets import QAbstractButton

    from app.ui.style import icons
    from app.ui.transcript.message_rows import MessageRow
    from app.ui.transcript.row_models import ToolRow
    from app.ui.transcript.view import row_host

    loader = preload.Preloader((), then=lambda: None)
    monkeypatch.setattr(preload, "_PROCESS", loader)
    monkeypatch.setattr(row_host, "_ROWS_WARMED", False)
    monkeypatch.setattr(MainWindow, "PREPARE_AFTER_MS", 0)
    icons._pixmap.cache_clear()  # as in a process that drew none
    window = make_window()
    host = window.transcript
    qtbot.waitUntil(loader.settled.is_set, timeout=10_000)
    assert host.images.started

    rendered = icons._pixmap.cache_info().misses
    row = MessageRow(host, "user", "Here they are.")
    row.attachments = [{"kind": "file", "name": "log.txt", "size": 10}]
    widget = host.create_row_widget(row)
    tool = ToolRow(host, "c1", "read_file", '{"path": "app.log"}')
    tool.output = "A long log."
    shown = host.create_row_widget(tool)  # a tool's output first shown: its icons too
    for button in [*widget.findChildren(QAbstractButton), *shown.findChildren(QAbstractButton)]:
        button.icon().pixmap(button.iconSize(), button.devicePixelRatioF())
    assert icons._pixmap.cache_info().misses == rendered  # every icon was drawn already
    widget.deleteLater()
    shown.deleteLater()


def test_the_preload_compiles_the_common_code_lexers_in_its_worker_thread(
    qtbot: Any, make_window: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first code block in Python (and the other common languages) does not compile its
    lexer in the block that draws it: the window's preload has made that lexer already, in
    the preload's thread."""
    from app.ui.richtext import markdown

    made: list[tuple[str, threading.Thread]] = []
    named = markdown._named_lexer

    def spy(lang: str) -> Any:
        made.append((lang, threading.current_thread()))
        return named(lang)

    monkeypatch.setattr(markdown, "_named_lexer", spy)
    loader = preload.Preloader((), then=lambda: None)
    monkeypatch.setattr(preload, "_PROCESS", loader)
    monkeypatch.setattr(MainWindow, "PREPARE_AFTER_MS", 0)
    make_window()
    qtbot.waitUntil(loader.settled.is_set, timeout=10_000)

    assert {lang for lang, _ in made} == set(markdown.COMMON_LANGUAGES)
    assert "python" in markdown.COMMON_LANGUAGES
    assert all(thread is loader.thread for _, thread in made)
    # And the lexer it made is the one a code block gets: rules compiled, cached by name.
    lexer = named("python")
    assert type(lexer).__name__ == "PythonLexer" and "_tokens" in type(lexer).__dict__


def test_a_preparation_that_fails_does_not_stop_the_core_part(caplog: Any) -> None:
    after: list[bool] = []

    def broken() -> None:
        raise RuntimeError("no lexers today")

    loader = preload.Preloader((), then=lambda: after.append(True))
    loader.start("default", broken)
    assert loader.thread is not None
    loader.thread.join(30)
    assert after == [True]
    assert "no lexers today" in caplog.text
