"""Coco's real window for the display tests of what a person saw in an hour with a small local
model (find, markers, the status bar, small windows, Settings): a process of its own on the
test's X server, answered by the scripted demo server in order. The test moves the pointer,
clicks and types with xdotool; this probe only answers questions about what is on screen and
takes screenshots of the X screen (what a person sees).

Run as ``python -m tests.display.findings_probe <folder> <answer>...``; the test writes a
question to ``<folder>/ask-<n>`` and reads the JSON answer from ``<folder>/answer-<n>``.
Questions: ``state`` (the window's state as a dict), ``where <control>`` (the screen centre of
a named control), ``shot <path>`` (a PNG of the whole screen), ``settings`` (opens Settings
on its compaction page and says what the prompt box shows).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import qasync
from PySide6.QtCore import QPoint, QRect, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QWidget

MODEL = "gemma-3-270m-it-Q8_0"


def _rect(widget: QWidget) -> list[int]:
    top_left = widget.mapToGlobal(QPoint(0, 0))
    return [top_left.x(), top_left.y(), widget.width(), widget.height()]


def _on_screen(widget: QWidget, area: QWidget) -> bool:
    """``widget`` is shown and lies inside ``area`` (both in global coordinates)."""
    if not widget.isVisible():
        return False
    mine = QRect(widget.mapToGlobal(QPoint(0, 0)), widget.size())
    theirs = QRect(area.mapToGlobal(QPoint(0, 0)), area.size())
    return theirs.intersects(mine)


def _highlight(window: Any) -> dict[str, Any] | None:
    """The highlighted find match: which row, and whether its place is on screen."""
    row = window.transcript._found
    if row is None or row._widget is None:
        return None
    from app.ui.transcript.view.find_match import text_view

    view = text_view(row)
    selections = view.extraSelections() if hasattr(view, "extraSelections") else []
    if not selections:
        return {"kind": type(row).__name__, "marked": [], "visible": False}
    rect = view.cursorRect(selections[0].cursor)
    viewport = window.transcript.viewport()
    top = view.viewport().mapTo(viewport, rect.topLeft()).y()
    return {
        "kind": type(row).__name__,
        "marked": [s.cursor.selectedText() for s in selections],
        "visible": row.widget.isVisible() and 0 <= top <= viewport.height() - rect.height(),
        "at": [*_rect(view.viewport())[:2], rect.x(), rect.y()],
    }


def state(window: Any) -> dict[str, Any]:
    status = window.statusBar()
    markers = window.transcript.compaction_rows()
    answer: dict[str, Any] = {
        "busy": window.busy,
        "size": [window.width(), window.height()],
        "status_message": status.currentMessage(),
        "status_shown": status.shown_message() if status.currentMessage() else "",
        "model_label": window.model_label.text(),
        "model_label_visible": window.model_label.isVisible(),
        "model_label_rect": _rect(window.model_label),
        "indicator_rect": _rect(window.indicator),
        "indicator_text": window.indicator.text(),
        "messages": [[r.role, r.text[:80]] for r in window.transcript.message_rows()],
        "warnings": [r.message for r in window.transcript.notice_rows("warning")],
        "markers": [],
    }
    for marker in markers:
        entry: dict[str, Any] = {"state": marker.state, "title": marker.title,
                                 "expanded": marker.expanded, "info": marker.info,
                                 "undo_note": marker.undo_note}
        if marker._widget is not None:
            title = marker.widget.title_label
            need = title.heightForWidth(title.width())
            entry.update(title_height=title.height(), title_needs=need,
                         title_rect=_rect(title), on_screen=_on_screen(
                             marker.widget, window.transcript.viewport()))
        answer["markers"].append(entry)
    bar = window._find_bar
    if bar is not None:
        answer["find"] = {
            "visible": bar.isVisible(), "status": bar.status.text(),
            "shown": bar.status.shown_text(), "query_width": bar.query.width(),
            "highlight": _highlight(window),
        }
    return answer


def where(window: Any, control: str) -> list[int] | None:
    widget = {
        "compact": lambda: window.toolbar.widgetForAction(window.compact_action),
        "composer": lambda: window.composer.edit,
        "undo": lambda: window.transcript.compaction_rows()[-1].widget.undo_button,
        "summary": lambda: window.transcript.compaction_rows()[0].widget.summary_button,
    }[control]()
    if widget is None or not widget.isVisible():
        return None
    point = widget.mapToGlobal(QPoint(widget.width() // 2, widget.height() // 2))
    return [point.x(), point.y()]


def shot(path: str) -> bool:
    screen = QGuiApplication.primaryScreen()
    return bool(screen.grabWindow(0).save(path, "PNG"))


def settings(window: Any) -> dict[str, Any]:
    """Settings opened as the toolbar opens it, scrolled to the compaction prompt."""
    from PySide6.QtWidgets import QScrollArea

    dialog = window.open_settings()
    dialog.resize(900, 700)
    prompt = dialog.prompt
    # The scroll area that holds the prompt (the dialog has one a page).
    area = next(a for a in dialog.findChildren(QScrollArea) if a.widget().isAncestorOf(prompt))
    area.ensureWidgetVisible(prompt, 0, 200)
    QApplication.processEvents()
    document = prompt.document()
    first = document.firstBlock()
    # A plain-text box lays a paragraph out only when it is painted, and the first one is not
    # when the box shows its end: asking for its rectangle lays it out at the box's width.
    document.documentLayout().blockBoundingRect(first)
    return {
        "text": prompt.toPlainText(),
        "first_paragraph_lines": first.layout().lineCount() if first.layout() else 0,
        "box": _rect(prompt),
    }


def main(folder: Path, answers: list[str]) -> None:
    from app.core.settings import AppSettings, SettingsStore
    from app.core.system.secrets import SecretStore
    from app.demo import ModelServer, Reply
    from app.ui.window.app_context import AppContext
    from app.ui.window.main_window import MainWindow

    app = QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    server = ModelServer(mode="scripted").start()
    for answer in answers:
        server.enqueue(Reply(text=answer))
    config = folder / "config"
    SettingsStore(config).save(AppSettings(
        provider="custom", base_url=server.url, model=MODEL, context_window=100_000,
    ))
    secrets = SecretStore(config, use_keyring=False)
    secrets.set_api_key(server.url, "sk-test-not-a-real-key")
    context = AppContext(
        config_dir=config, data_dir=folder / "data", secrets=secrets, env={},
        start_demo=lambda: server.url, config_overrides={"tokenizer_download": False},
    )
    window = MainWindow(context)
    window.resize(1000, 700)
    window.show()
    asked = 0

    def poll() -> None:
        nonlocal asked
        question = folder / f"ask-{asked}"
        if not question.exists():
            return
        words = question.read_text(encoding="utf-8").split(" ", 1)
        answer: Any
        if words[0] == "state":
            answer = state(window)
        elif words[0] == "where":
            answer = where(window, words[1])
        elif words[0] == "shot":
            answer = shot(words[1])
        else:
            answer = settings(window)
        (folder / f"answer-{asked}.tmp").write_text(json.dumps(answer), encoding="utf-8")
        (folder / f"answer-{asked}.tmp").rename(folder / f"answer-{asked}")
        asked += 1

    timer = QTimer()
    timer.timeout.connect(poll)
    timer.start(50)
    window.closed.connect(app.quit)
    with loop:
        loop.run_until_complete(window.open_session(None))
        (folder / "ready").write_text("", encoding="utf-8")
        loop.run_forever()
    server.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
