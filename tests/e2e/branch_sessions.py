"""Sessions with branches, made through the core's ops for the branch tests."""

from __future__ import annotations

from typing import Any

from app.core import Session, ops
from app.demo import Reply
from tests.conftest import of_type, run


async def two_branches(
    server: Any, config: Any, *, reopened: bool = False
) -> tuple[Session, str, str]:
    """A session on a regenerated first turn; the first answer's branch is left behind (the
    turn ids of the original first turn and of the regeneration). ``reopened``: the session
    is closed and opened again, so it keeps no view of the branch it left (a switch back
    reads that branch's lines from the file)."""
    session = await Session.open(config)
    for n in range(2):
        server.enqueue(Reply(text=f"A{n}"))
    events = await run(session, ops.UserTurn(text="q0"))
    first = of_type(events, "turn_started")[0].turn_id
    await run(session, ops.UserTurn(text="q1"))
    server.enqueue(Reply(text="A0, again"))
    events = await run(session, ops.RegenerateTurn(turn_id=first))
    regenerated = of_type(events, "turn_started")[0].turn_id
    if reopened:
        await session.close()
        session = await Session.open(config, session_id=session.id)
    return session, first, regenerated
