"""A kill at any byte of an edit, a regeneration, a switch or a fork leaves a session that opens
on a consistent branch with nothing lost (issue 36). Appends are unbuffered and never rewrite
what is there, so a kill after byte N leaves exactly the first N bytes: the test cuts the
rollout (and a fork's file) at 100 places and opens each cut as a session of its own. What it
expects is read from the lines independently of the core's tree: the turns' parents, the last
turn made or branch switched to, and the user messages on that path."""

from __future__ import annotations

import errno
import json
import os
import random
from pathlib import Path
from typing import Any

from app.core import Session, ops
from app.core.rollout.store import read_rollout
from app.demo import Reply
from tests.conftest import collect, input_texts, of_type, run
from tests.e2e.branch_sessions import two_branches

CUTS = 100


def expected_view(data: bytes) -> tuple[str | None, list[str]]:
    """The active turn and the user messages on its path, from the whole lines of ``data``."""
    parents: dict[str, str | None] = {}
    active: str | None = None
    users: list[tuple[str, str]] = []
    for line in data.split(b"\n"):
        try:
            record = json.loads(line)
        except ValueError:
            continue  # the cut line, or nothing
        payload = record["payload"]
        if record["type"] == "turn_context":
            parents[payload["turn_id"]] = payload["parent"]
            active = payload["turn_id"]
        elif record["type"] == "branch_switched":
            active = payload["turn_id"]
        elif record["type"] == "response_item" and payload["item"].get("role") == "user":
            users.append((payload["turn_id"], payload["item"]["content"][0]["text"]))
    path, turn = set(), active
    while turn is not None:
        path.add(turn)
        turn = parents[turn]
    return active, [text for turn_id, text in users if turn_id in path]


async def build(server: Any, config: Any) -> Session:
    """A session with an edit, a regeneration and a switch back: every kind of branch record."""
    session = await Session.open(config)
    for n in range(3):
        server.enqueue(Reply(text=f"answer {n}"))
    await run(session, ops.UserTurn(text="first question"))
    events = await run(session, ops.UserTurn(text="second question"))
    second = of_type(events, "turn_started")[0].turn_id
    await run(session, ops.UserTurn(text="third question"))
    server.enqueue(Reply(text="edited answer"))
    events = await run(session, ops.EditTurn(turn_id=second, text="second, edited"))
    edited = of_type(events, "turn_started")[0].turn_id
    server.enqueue(Reply(text="regenerated answer"))
    await run(session, ops.RegenerateTurn(turn_id=edited))
    await session.submit(ops.SwitchBranch(turn_id=second))
    await collect(session, "branch_switched")
    return session


async def test_a_cut_at_any_of_100_bytes_opens_on_a_consistent_branch(server, make_config):
    config = make_config()
    session = await build(server, config)
    data = session.rollout_path.read_bytes()
    sessions_dir = session.rollout_path.parent
    await session.close()

    cuts = sorted(random.Random(36).sample(range(1, len(data)), CUTS))
    for n, cut in enumerate(cuts):
        cut_id = f"cut-{n}"
        (sessions_dir / f"{cut_id}.jsonl").write_bytes(data[:cut])
        active, users = expected_view(data[:cut])
        opened = await Session.open(config, session_id=cut_id)
        try:
            assert opened.tree().active == active, cut
            shown = [t for role, t in input_texts({"input": opened.history()}) if role == "user"]
            assert [t for t in shown if not t.startswith("<")] == users, cut
            # Nothing lost: every whole line is read back.
            whole = data[:cut].count(b"\n")
            assert len(read_rollout(opened.rollout_path)[0]) >= whole - 1, cut
        finally:
            await opened.close()


async def test_a_cut_fork_opens_and_the_source_is_untouched(server, make_config):
    config = make_config()
    session = await build(server, config)
    first = session.tree().nodes[0].turn_id
    source = session.rollout_path.read_bytes()
    await session.submit(ops.ForkSession(turn_id=session.tree().active or ""))
    forked = of_type(await collect(session, "session_forked"), "session_forked")[0]
    assert session.rollout_path.read_bytes() == source
    fork_path = session.rollout_path.with_name(f"{forked.session_id}.jsonl")
    data = fork_path.read_bytes()
    await session.close()

    for n, cut in enumerate(sorted(random.Random(37).sample(range(1, len(data)), 20))):
        cut_path = fork_path.with_name(f"forkcut-{n}.jsonl")
        cut_path.write_bytes(data[:cut])
        active, users = expected_view(data[:cut])
        opened = await Session.open(config, session_id=f"forkcut-{n}")
        try:
            assert opened.tree().active == active
            shown = [t for role, t in input_texts({"input": opened.history()}) if role == "user"]
            assert [t for t in shown if not t.startswith("<")] == users
            assert opened.tree().nodes == [] or opened.tree().nodes[0].turn_id == first
        finally:
            await opened.close()


async def test_a_fork_into_a_read_only_folder_says_so_and_the_session_goes_on(
    server, make_config, monkeypatch
):
    config = make_config()
    session = await Session.open(config)
    server.enqueue(Reply(text="A1"))
    events = await run(session, ops.UserTurn(text="q1"))
    first = of_type(events, "turn_started")[0].turn_id
    folder = session.rollout_path.parent
    real_open = os.open

    def read_only(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        # The folder became read-only (tests run as root, so a mode would not stop them).
        if flags & os.O_CREAT and Path(path).parent == folder and not Path(path).exists():
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    await session.submit(ops.ForkSession(turn_id=first))
    error = of_type(await collect(session, "error"), "error")[0]
    monkeypatch.undo()
    assert error.message.startswith("Could not fork the conversation:")
    assert "the folder is read-only" in error.message
    assert sorted(p.name for p in folder.glob("*.jsonl")) == [session.rollout_path.name]
    server.enqueue(Reply(text="A2"))
    assert (await run(session, ops.UserTurn(text="q2")))[-1].status == "completed"
    await session.close()


async def test_an_edit_of_a_turn_whose_records_are_damaged_is_refused_in_words(
    server, make_config
):
    config = make_config()
    session = await Session.open(config)
    server.enqueue(Reply(text="A1"))
    events = await run(session, ops.UserTurn(text="q1"))
    first = of_type(events, "turn_started")[0].turn_id
    path = session.rollout_path
    await session.close()
    # The turn's message line is damaged on disk (its turn record survives).
    lines = path.read_bytes().split(b"\n")
    lines = [b'{"broken' if b'"q1"' in line else line for line in lines]
    path.write_bytes(b"\n".join(lines))

    reopened = await Session.open(config, session_id=session.id)
    await reopened.submit(ops.EditTurn(turn_id=first, text="q1, edited"))
    error = of_type(await collect(reopened, "error"), "error")[0]
    assert "could not be read" in error.message
    server.enqueue(Reply(text="A2"))
    assert (await run(reopened, ops.UserTurn(text="q2")))[-1].status == "completed"
    await reopened.close()


async def test_a_switch_after_the_file_changed_elsewhere_is_refused_in_words(server, make_config):
    """A branch's view is read from the rollout with the tree the session holds; a file that
    another program changed meanwhile no longer matches it: refused, the view unchanged."""
    session, first, _again = await two_branches(server, make_config(), reopened=True)
    line = json.dumps({"type": "session_title", "payload": {"title": "elsewhere"}})
    path = session.rollout_path
    path.write_bytes(path.read_bytes() + line.encode() + b"\n")  # another program appended
    await switch_refused(server, session, first)


async def switch_refused(server: Any, session: Session, leaf: str) -> None:
    """A switch to ``leaf`` is refused as the file changed; the session goes on, on the branch
    of the regeneration (``two_branches``)."""
    await session.submit(ops.SwitchBranch(turn_id=leaf))
    messages = [e.message for e in await collect(session, "error") if e.type == "error"]
    assert any("changed while it was open" in m for m in messages)
    server.enqueue(Reply(text="A2"))
    assert (await run(session, ops.UserTurn(text="q2")))[-1].status == "completed"
    texts = [text for _role, text in input_texts(server.requests[-1].body)]
    assert "A0, again" in texts and "q1" not in texts  # still on the branch it was on
    await session.close()


async def test_a_switch_reads_only_the_lines_of_its_branch(server, make_config, parsed_lines):
    session, first, _again = await two_branches(server, make_config(), reopened=True)
    total = len(session.rollout_path.read_bytes().splitlines())
    parsed_lines.clear()  # what the switch parses
    await session.submit(ops.SwitchBranch(turn_id=first))
    await collect(session, "branch_switched")
    off_path = [
        n for n, line in enumerate(session.rollout_path.read_bytes().splitlines()[:total], 1)
        if b"A0, again" in line
    ]
    assert parsed_lines and off_path and not set(off_path) & set(parsed_lines)
    server.enqueue(Reply(text="A2"))
    await run(session, ops.UserTurn(text="q2"))
    texts = [text for _role, text in input_texts(server.requests[-1].body)]
    assert texts[-4:] == ["A0", "q1", "A1", "q2"]
    await session.close()


async def test_a_blank_line_another_program_added_leaves_branches_working(server, make_config):
    """The file no longer has the lines the tree knows: the branch is read from all of it."""
    session, first, again = await two_branches(server, make_config())
    path = session.rollout_path
    path.write_bytes(path.read_bytes() + b"\n")
    for leaf, answer in ((first, "A1"), (again, "A0, again")):
        await session.submit(ops.SwitchBranch(turn_id=leaf))
        events = await collect(session, "branch_switched")
        assert not [e for e in events if e.type == "error"]
        server.enqueue(Reply(text="next"))
        await run(session, ops.UserTurn(text=f"after {answer}"))
        assert answer in [text for _role, text in input_texts(server.requests[-1].body)]
    await session.close()


async def test_a_line_of_the_branch_changed_elsewhere_is_refused_in_words(server, make_config):
    """The same number of lines, but one on the path no longer a record: refused, the view
    unchanged (what was replayed of the branch is not shown)."""
    session, first, _again = await two_branches(server, make_config(), reopened=True)
    path = session.rollout_path
    lines = path.read_bytes().split(b"\n")
    lines = [b'{"broken' if b'"A1"' in line else line for line in lines]
    path.write_bytes(b"\n".join(lines))
    await switch_refused(server, session, first)


async def test_a_branched_file_changed_while_it_opens_says_so(server, make_config, monkeypatch):
    """Opening a branched conversation reads its active path a second time, by line: a line of
    it changed in between (the same number of lines) is said in a warning, not shown as if
    nothing were missing."""
    from app.core.session import resume as resume_module

    config = make_config()
    session, _first, _again = await two_branches(server, config)
    path = session.rollout_path
    await session.close()
    real = resume_module.read_lines_at

    def changed_first(file, lines, total, consume):  # type: ignore[no-untyped-def]
        rows = file.read_bytes().split(b"\n")
        file.write_bytes(b"\n".join(b'{"broken' if b'"A0, again"' in r else r for r in rows))
        return real(file, lines, total, consume)

    monkeypatch.setattr(resume_module, "read_lines_at", changed_first)
    reopened = await Session.open(config, session_id=session.id)
    warnings = [e.message for e in await collect(reopened, "token_count") if e.type == "warning"]
    assert any("changed while it was being opened" in w for w in warnings)
    assert path.exists()
    await reopened.close()
