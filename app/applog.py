"""Logging to a rotating file, a scrubber for secrets, and the hook for unhandled exceptions.

The log lives in the profile's log folder (platformdirs' user log dir, or ``<data-dir>/logs``).
At the default level (INFO) nothing logs message contents; a filter on every handler also
blanks anything that looks like an API key or a bearer token, in case some library or
exception text carries one. An unhandled exception is logged with its traceback and reported
to the user with the log's path; session files are append-only, so they stay intact.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from app.paths import LOG_FILE_NAME

log = logging.getLogger("coco")

DEFAULT_FILE_LEVEL = "INFO"
DEFAULT_STDERR_LEVEL = "WARNING"
LOG_MAX_BYTES = 1_000_000
LOG_BACKUPS = 3
REDACTED = "[REDACTED]"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(threadName)s]: %(message)s"
# Libraries that log every request at INFO; their lines add nothing unless debugging.
_CHATTY_LOGGERS = ("httpx", "httpcore", "openai", "urllib3", "asyncio")

_SECRET_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # "Bearer <token>" (Authorization headers, in any casing).
    (re.compile(r"(?i)\bbearer\s+(?!\[REDACTED\])[A-Za-z0-9._~+/=\-]{4,}"), f"Bearer {REDACTED}"),
    # OpenAI / Anthropic style keys: sk-..., sk-proj-..., sk-ant-...
    (re.compile(r"\bsk-[A-Za-z0-9][A-Za-z0-9_\-]{5,}"), REDACTED),
    # Other common key shapes: Google API keys, GitHub tokens, Hugging Face tokens.
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"), REDACTED),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), REDACTED),
    # key=value / "key": "value" forms for fields that hold secrets.
    (
        re.compile(
            r"(?i)(\b(?:api[_-]?key|x-api-key|authorization|access[_-]?token|secret|password)"
            r"\b[\"']?\s*[:=]\s*[\"']?)(?!Bearer\b)(?!\[REDACTED\])([^\s\"',;}\]]+)"
        ),
        r"\1" + REDACTED,
    ),
)


def scrub(text: str) -> str:
    """``text`` with anything that looks like a key or token replaced by ``[REDACTED]``."""
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class SecretScrubFilter(logging.Filter):
    """Blanks secrets in a record's message and in its exception and stack text.

    Attach it to handlers (a logger's own filters do not see records from child loggers).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string must not lose the record
            message = f"{record.msg!r} {record.args!r}"
        record.msg = scrub(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        return True


def _level(name: str | int | None, default: str) -> int:
    if isinstance(name, int):
        return name
    value = logging.getLevelName((name or default).upper())
    return value if isinstance(value, int) else logging.getLevelName(default)


def _private_file(path: Path) -> None:
    """Create the log file readable by its owner only (it names folders and sessions)."""
    if path.exists() or os.name == "nt":
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.close(fd)


def setup_logging(
    log_dir: Path | None,
    level: str | int | None = None,
    *,
    stderr: bool = True,
) -> Path | None:
    """Log to ``log_dir/coco.log`` (rotating) and to stderr; returns the file's path.

    ``level`` None means the defaults: INFO to the file, WARNING to stderr. An explicit level
    applies to both. Returns None when the folder cannot be written (then only stderr logs).
    Calling it again replaces the handlers it installed before.
    """
    file_level = _level(level, DEFAULT_FILE_LEVEL)
    stderr_level = _level(level, DEFAULT_STDERR_LEVEL)
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, "coco_handler", False)]:
        root.removeHandler(handler)
        handler.close()
    scrubber = SecretScrubFilter()
    formatter = logging.Formatter(LOG_FORMAT)
    handlers: list[logging.Handler] = []
    log_path: Path | None = None
    problem = ""
    if log_dir is not None:
        try:
            log_dir.mkdir(parents=True, exist_ok=True)
            log_path = log_dir / LOG_FILE_NAME
            _private_file(log_path)
            file_handler = logging.handlers.RotatingFileHandler(
                log_path, maxBytes=LOG_MAX_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8"
            )
            file_handler.setLevel(file_level)
            handlers.append(file_handler)
        except OSError as exc:
            log_path = None
            problem = f"Cannot write the log in {log_dir}: {exc.strerror or exc}"
    if stderr:
        stream_handler = logging.StreamHandler(sys.stderr)
        stream_handler.setLevel(stderr_level)
        handlers.append(stream_handler)
    for handler in handlers:
        handler.addFilter(scrubber)
        handler.setFormatter(formatter)
        handler.coco_handler = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(min(file_level, stderr_level) if handlers else file_level)
    debugging = min(file_level, stderr_level) <= logging.DEBUG
    chatty_level = logging.DEBUG if debugging else logging.WARNING
    for name in _CHATTY_LOGGERS:
        logging.getLogger(name).setLevel(chatty_level)
    logging.captureWarnings(True)
    if problem:
        log.warning("%s", problem)
    return log_path


def crash_message(exc: BaseException, log_path: Path | None) -> str:
    """What the user reads after an unhandled exception: what happened, that the sessions are
    safe, and where the details are."""
    detail = scrub(str(exc)).strip()
    if len(detail) > 300:
        detail = detail[:300] + "…"
    what = type(exc).__name__ + (f": {detail}" if detail else "")
    where = (
        f"The details are in the log file:\n{log_path}"
        if log_path is not None
        else "The details were printed to the terminal (no log file could be written)."
    )
    return (
        f"Coco ran into an unexpected problem ({what}).\n\n"
        "Your conversations are safe: session files are only ever appended to, so nothing "
        "already saved is lost. You can keep working; if something looks wrong, restart "
        f"Coco.\n\n{where}"
    )


ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], None]


def install_excepthook(
    show_dialog: Callable[[str], None], log_path: Path | None = None
) -> Callable[[], None]:
    """Route unhandled exceptions to the log and to ``show_dialog(message)``.

    Covers ``sys.excepthook`` (which PySide also calls for exceptions raised in slots) and
    ``threading.excepthook``. ``show_dialog`` is only called on the main thread; a worker
    thread's exception is logged. The app keeps running. Returns a function that puts the
    previous hooks back.
    """
    previous_hook = sys.excepthook
    previous_thread_hook = threading.excepthook
    showing = threading.Lock()

    def report(exc_type: type[BaseException], exc: BaseException,
               tb: TracebackType | None, on_main_thread: bool) -> None:
        log.critical("Unhandled exception", exc_info=(exc_type, exc, tb))
        if not on_main_thread:
            return
        # One dialog at a time: an exception raised while the dialog is up is only logged.
        if not showing.acquire(blocking=False):
            return
        try:
            show_dialog(crash_message(exc, log_path))
        except Exception:
            log.exception("Could not show the error dialog")
        finally:
            showing.release()

    def hook(exc_type: type[BaseException], exc: BaseException,
             tb: TracebackType | None) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            previous_hook(exc_type, exc, tb)
            return
        report(exc_type, exc, tb,
               threading.current_thread() is threading.main_thread())

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit or args.exc_value is None:
            return
        report(args.exc_type, args.exc_value, args.exc_traceback, on_main_thread=False)

    sys.excepthook = hook
    threading.excepthook = thread_hook

    def uninstall() -> None:
        sys.excepthook = previous_hook
        threading.excepthook = previous_thread_hook

    return uninstall
