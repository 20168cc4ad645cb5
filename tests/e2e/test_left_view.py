"""Going back to the branch just left puts its view back as it was: nothing is read from the
file, and the model is sent what a view rebuilt from the file would send. A record of the whole
session written meanwhile (a rename) has the view rebuilt instead."""

from __future__ import annotations

from typing import Any

from app.core import Session, ops
from app.core.sessions import SessionLibrary
from app.demo import Reply
from tests.conftest import collect, input_texts, of_type, run
from tests.e2e.branch_sessions import two_branches


async def _switch(session: Session, turn_id: str) -> None:
    await session.submit(ops.SwitchBranch(turn_id=turn_id))
    assert not of_type(await collect(session, "branch_switched"), "error")


async def _next_turn(server: Any, session: Session) -> tuple[list[tuple[str, str]], int]:
    """The input the next turn sends, and the context's tokens the gauge shows after it."""
    server.enqueue(Reply(text="A2"))
    events = await run(session, ops.UserTurn(text="q2"))
    return input_texts(server.requests[-1].body), of_type(events, "token_count")[-1].total


async def test_the_branch_just_left_comes_back_without_reading_the_file(
    server, make_config, parsed_lines
):
    config = make_config()
    session, first, _again = await two_branches(server, config)
    parsed_lines.clear()
    await _switch(session, first)
    assert parsed_lines == []  # the view the regeneration left, put back
    kept = await _next_turn(server, session)
    await session.close()

    # The same conversation opened afresh: the switch reads the branch from the file.
    reopened, first, _again = await two_branches(server, config, reopened=True)
    await _switch(reopened, first)
    assert parsed_lines
    assert await _next_turn(server, reopened) == kept
    assert [text for _role, text in kept[0]][-4:] == ["A0", "q1", "A1", "q2"]
    await reopened.close()


async def test_going_back_and_forth_reads_nothing_after_the_first_view(
    server, make_config, parsed_lines
):
    session, first, again = await two_branches(server, make_config())
    parsed_lines.clear()
    for leaf, answer in ((first, "A1"), (again, "A0, again"), (first, "A1")):
        await _switch(session, leaf)
        texts = [text for _role, text in (await _next_turn(server, session))[0]]
        assert answer in texts
    assert parsed_lines == []
    await session.close()


async def test_a_rename_meanwhile_has_the_view_rebuilt(server, make_config, parsed_lines):
    config = make_config()
    session, first, _again = await two_branches(server, config)
    SessionLibrary(config.sessions_dir).rename(session.id, "Renamed while away")
    parsed_lines.clear()
    await _switch(session, first)
    assert parsed_lines  # read again: a record of the whole session came after it was left
    texts = [text for _role, text in (await _next_turn(server, session))[0]]
    assert texts[-4:] == ["A0", "q1", "A1", "q2"]
    await session.close()

