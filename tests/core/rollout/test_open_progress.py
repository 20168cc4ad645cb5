"""Opening progress: the object a front end polls, reported into through a context variable
that reaches the core's worker threads."""

from __future__ import annotations

import asyncio

from app.core.rollout.open_progress import OPEN_PROGRESS, OpenProgress, progress_reporter


def test_nobody_following_means_no_reporter() -> None:
    assert OPEN_PROGRESS.get() is None
    assert progress_reporter("reading") is None


def test_a_reporter_tells_the_current_progress_its_stage_and_amounts() -> None:
    progress = OpenProgress()
    assert (progress.stage, progress.done, progress.total, progress.finished) == (
        "reading", 0, 0, False,
    )
    token = OPEN_PROGRESS.set(progress)
    try:
        report = progress_reporter("counting")
        assert report is not None
        report(250, 1000)
    finally:
        OPEN_PROGRESS.reset(token)
    assert (progress.stage, progress.done, progress.total) == ("counting", 250, 1000)
    assert progress_reporter("counting") is None  # reset: nobody follows any more


async def test_the_progress_reaches_a_worker_thread() -> None:
    progress = OpenProgress()
    token = OPEN_PROGRESS.set(progress)
    try:

        def in_worker() -> None:
            report = progress_reporter("reading")
            assert report is not None
            report(7, 9)

        await asyncio.to_thread(in_worker)
    finally:
        OPEN_PROGRESS.reset(token)
    assert (progress.stage, progress.done, progress.total) == ("reading", 7, 9)
