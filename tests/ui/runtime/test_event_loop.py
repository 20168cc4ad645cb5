"""The harness itself: asyncio work runs while qtbot waits on the Qt event loop."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import QObject, Signal

from ..conftest import run


class _Emitter(QObject):
    fired = Signal(int)


def test_coroutines_and_signals_run_while_qtbot_waits(qtbot: Any, qloop: Any) -> None:
    emitter = _Emitter()
    seen: list[int] = []
    emitter.fired.connect(seen.append)

    async def work() -> int:
        await asyncio.sleep(0.05)
        emitter.fired.emit(7)
        await asyncio.sleep(0)
        return 42

    assert run(qtbot, work()) == 42
    assert seen == [7]
