"""The count refiner of a branch's view put back after another branch's was shown."""

from __future__ import annotations

from typing import Any

from app.core.conversation.count_refiner import CountRefiner


class _Counter:
    def __init__(self) -> None:
        self.on_estimate: Any = None
        self.estimating = False
        self.refined = ["a huge text"]
        self.refines = 0

    def refined_texts(self) -> list[str]:
        return list(self.refined)

    async def refine(self) -> list[str]:
        self.refines += 1
        self.estimating = False
        return ["another huge text"]


class _History:
    def __init__(self) -> None:
        self.recounted: list[list[str]] = []

    def recount(self, texts: list[str]) -> bool:
        self.recounted.append(texts)
        return True


async def test_a_reopened_refiner_counts_again_with_the_counts_made_meanwhile() -> None:
    counter, history, told = _Counter(), _History(), []
    refiner = CountRefiner(counter, history, lambda: told.append(1))  # type: ignore[arg-type]
    await refiner.close()
    other = CountRefiner(counter, _History(), lambda: None)  # type: ignore[arg-type]
    assert counter.on_estimate == other.schedule
    counter.estimating = True
    refiner.schedule()
    assert not refiner.busy  # closed: it counts nothing

    refiner.reopen()
    assert counter.on_estimate == refiner.schedule  # estimates handed out now are its own
    assert history.recounted == [["a huge text"]]  # counted exactly while it was closed
    refiner.schedule()
    await refiner.settled()
    assert counter.refines == 1 and history.recounted[-1] == ["another huge text"]
    assert told == [1]
