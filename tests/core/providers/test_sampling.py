"""The retry policy: a server's Retry-After is capped, each retry says how long and why, and a
stall can be given up on at once (remote compaction falls back instead of waiting again)."""

from __future__ import annotations

import pytest

from app.core.providers import sampling
from app.core.providers.base import ProviderError, RetryWait
from app.core.providers.sampling import MAX_SERVER_WAIT, backoff_delay, wait_before_retry


class Recorder:
    """Stands in for asyncio.sleep and the retry notice: records instead of waiting."""

    def __init__(self) -> None:
        self.slept: list[float] = []
        self.notices: list[tuple[int, int, RetryWait | None]] = []

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)

    def notice(self, attempt: int, max_attempts: int, error: ProviderError) -> None:
        self.notices.append((attempt, max_attempts, error.retry_wait))


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder()
    monkeypatch.setattr(sampling.asyncio, "sleep", recorder.sleep)
    return recorder


def test_a_server_requested_wait_is_capped() -> None:
    assert MAX_SERVER_WAIT == 60.0
    assert backoff_delay(1, 0.2, 3600.0) == 60.0
    assert backoff_delay(1, 0.2, 7.0) == 7.0
    assert backoff_delay(1, 0.2, None) == pytest.approx(0.2, rel=0.11)


async def test_retry_after_3600_waits_60_s_and_the_notice_says_how_long_and_why(
    recorder: Recorder,
) -> None:
    error = ProviderError("rate_limit", "rate limited", status=429, retry_after=3600.0)

    await wait_before_retry(error, 1, max_retries=5, base_delay=0.2, on_retry=recorder.notice)

    assert recorder.slept == [60.0]
    assert recorder.notices == [
        (
            1,
            5,
            RetryWait(
                seconds=60.0, reason="the server is rate limiting requests", requested=3600.0
            ),
        )
    ]
    wait = recorder.notices[0][2]
    assert wait is not None and wait.capped


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (ProviderError("server", "x", status=503), "the server had an error (HTTP 503)"),
        (ProviderError("connection", "x"), "the server could not be reached"),
        (ProviderError("connection", "x", code="timeout"), "the server did not answer in time"),
        (ProviderError("stream", "x"), "the reply was cut off"),
        (ProviderError("malformed", "x"), "the server sent a reply that could not be read"),
    ],
)
async def test_every_retry_names_its_reason(
    recorder: Recorder, error: ProviderError, reason: str
) -> None:
    await wait_before_retry(error, 2, max_retries=5, base_delay=0.2, on_retry=recorder.notice)
    wait = recorder.notices[0][2]
    assert wait is not None
    assert wait.reason == reason
    assert wait.seconds == recorder.slept[0]
    assert not wait.capped


async def test_a_stall_is_not_retried_when_stalls_are_not_to_be_retried(
    recorder: Recorder,
) -> None:
    stall = ProviderError("connection", "timed out", code="timeout")
    with pytest.raises(ProviderError) as caught:
        await wait_before_retry(
            stall, 1, max_retries=5, base_delay=0.2, on_retry=recorder.notice, retry_stalls=False
        )
    assert caught.value is stall
    assert recorder.notices == [] and recorder.slept == []
    # Other failures are still retried under the same policy; stalls by default too.
    refused = ProviderError("connection", "refused")
    await wait_before_retry(
        refused, 1, max_retries=5, base_delay=0.2, on_retry=recorder.notice, retry_stalls=False
    )
    await wait_before_retry(stall, 1, max_retries=5, base_delay=0.2, on_retry=recorder.notice)
    assert len(recorder.notices) == 2
