"""Loading ahead, in a worker thread, what the first message of a process needs.

Sending the first message of a process froze the window for 0.16-0.19 s: showing it imported
the Markdown renderer (Markdown, Pygments and Coco's renderer: about 0.14 s), the slash
commands, the code-highlighting style and the ops (and the first code block compiled its
language's lexer: about 20 ms for Python), and sending it loaded the provider, the
SDK's request classes and the HTTP stack (``app.core.preload``). A second after the first
session is shown and painted, :func:`start` runs those imports in one daemon thread, while the
user reads and types; a message sent before they are done waits only for the import under way. It
starts once per process, and creates no Qt object.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

MODULES = ("app.ui.controller.commands", "app.ui.richtext.markdown", "app.ui.richtext.markdown_document", "app.core.ops",
           "app.ui.transcript.attachments.strip")  # a sent message's thumbnails and chips


def _core_first_request() -> None:
    from app.core.preload import preload

    preload()


class Preloader:
    """Loads ``modules`` and a Pygments style, runs the ``prepare`` given to :meth:`start`
    (the window's: the common code lexers compiled) and then ``then`` (what the core's first
    request needs), in one daemon thread started by the first :meth:`start`."""

    def __init__(
        self,
        modules: tuple[str, ...] = MODULES,
        then: Callable[[], None] = _core_first_request,
    ) -> None:
        self.modules = modules
        self.then = then
        self.thread: threading.Thread | None = None
        self._lock = threading.Lock()
        # Set once the window has also built what it builds ahead with the loaded modules
        # (its first message widgets, on its own thread: :func:`settle`).
        self.settled = threading.Event()

    def start(self, style: str, prepare: Callable[[], None] | None = None) -> None:
        """Start loading (``style``: the code-highlighting style in use; ``prepare``, what to
        build ahead once the modules are loaded); a second call does nothing."""
        with self._lock:
            if self.thread is not None:
                return
            self.thread = threading.Thread(
                target=self._load, args=(style, prepare), name="preload", daemon=True
            )
        self.thread.start()

    def _load(self, style: str, prepare: Callable[[], None] | None) -> None:
        from app.core.preload import import_modules

        import_modules(self.modules)
        try:
            from pygments.styles import get_style_by_name  # type: ignore[import-untyped]

            get_style_by_name(style)
        except Exception:
            log.warning(
                "Could not load the code style %s ahead of the first message", style,
                exc_info=True,
            )
        if prepare is not None:
            try:
                prepare()
            except Exception:
                log.warning("Could not prepare ahead of the first message", exc_info=True)
        self.then()


_PROCESS = Preloader()


def start(style: str, prepare: Callable[[], None] | None = None) -> None:
    """Start this process's preload (once; see the module docstring)."""
    _PROCESS.start(style, prepare)


def settle() -> None:
    """The window has built, with what was loaded, what it builds ahead (see ``Preloader``)."""
    _PROCESS.settled.set()


def settled() -> threading.Event:
    """Set once the preload and the window's part of it are done."""
    return _PROCESS.settled


def started() -> threading.Thread | None:
    """This process's preload thread, once :func:`start` has run."""
    return _PROCESS.thread
