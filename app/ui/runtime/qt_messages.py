"""Qt's own warnings go to Coco's log (logger ``qt``) instead of straight to stderr.

Messages known to be harmless (the headless platform plugin's notes) are logged at DEBUG, so a
headless run such as ``--self-test`` stays readable.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler

log = logging.getLogger("qt")

_HARMLESS = (
    "This plugin does not support propagateSizeHints()",
    "This plugin does not support raise()",
    "This plugin does not support setParent!",
    "QFont::fromString",
)
_LEVELS = {
    QtMsgType.QtDebugMsg: logging.DEBUG,
    QtMsgType.QtInfoMsg: logging.INFO,
    QtMsgType.QtWarningMsg: logging.WARNING,
    QtMsgType.QtCriticalMsg: logging.ERROR,
    QtMsgType.QtFatalMsg: logging.CRITICAL,
}


def _handle(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
    level = _LEVELS.get(kind, logging.WARNING)
    if level == logging.WARNING and message.startswith(_HARMLESS):
        level = logging.DEBUG
    log.log(level, "%s", message)


def route_qt_messages() -> None:
    """Install the handler (once per process; installing again is harmless)."""
    qInstallMessageHandler(_handle)
