"""Fixtures for the packaging and desktop-integration tests.

Window tests reuse the real-window fixtures of ``tests/ui`` (offscreen Qt, a qasync loop, the
scripted model server, ``make_window``).
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from tests.ui.conftest import make_window, qloop, server  # noqa: F401
