"""Synthetic rollouts in exactly the format the core writes.

The record shapes are learnt, not hard-coded: :func:`capture_templates` drives a real ``Session``
against the scripted server for a few turns (a tool call, a compaction) and keeps one record of
each kind. :class:`RolloutSynth` then writes thousands of turns by filling those templates; filling
a key the template does not have raises, so a change of the core's format shows up here at once.
"""

from __future__ import annotations

import asyncio
import copy
import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench._common import TextMaker, core_config, temp_dir

Record = dict[str, Any]
_TEMPLATES: dict[str, Record] | None = None


async def _drive_real_session() -> dict[str, Record]:
    from app.core import Session, ops
    from app.demo import ModelServer, Reply, ToolCall

    def usage(total: int) -> dict[str, int]:
        return {"input_tokens": total - 10, "output_tokens": 10, "total_tokens": total}

    async def until_done(session: Any) -> None:
        async for event in session.events():
            if event.type == "turn_complete":
                return

    server = ModelServer(mode="scripted").start()
    try:
        with temp_dir() as root:
            workspace = root / "ws"
            workspace.mkdir()
            (workspace / "notes.txt").write_text("some notes\n")
            config = core_config(server.url, root / "data", workspace=workspace)
            session = await Session.open(config)
            server.enqueue(
                Reply(function_calls=[ToolCall("read_file", {"path": "notes.txt"})], usage=usage(200))
            )
            server.enqueue(Reply(text="first answer", usage=usage(300)))
            await session.submit(ops.UserTurn(text="first question"))
            await asyncio.wait_for(until_done(session), 30)
            server.enqueue(Reply(text="SUMMARY"))
            await session.submit(ops.Compact())
            await asyncio.wait_for(until_done(session), 30)
            server.enqueue(Reply(text="second answer", usage=usage(400)))
            await session.submit(ops.UserTurn(text="second question"))
            await asyncio.wait_for(until_done(session), 30)
            await session.close()
            lines = session.rollout_path.read_text(encoding="utf-8").splitlines()
    finally:
        server.stop()
    found: dict[str, Record] = {}
    for line in lines:
        record = json.loads(line)
        kind, payload = record["type"], record["payload"]
        key = kind
        if kind == "response_item":
            item = payload["item"]
            key = f"item:{item.get('type')}:{item.get('role', '')}"
        elif kind == "event":
            key = f"event:{payload.get('kind')}:{payload.get('source', '')}"
        found.setdefault(key, record)
    return found


def capture_templates() -> dict[str, Record]:
    """One real record of each kind the core writes (cached per process)."""
    global _TEMPLATES
    if _TEMPLATES is None:
        found = asyncio.run(_drive_real_session())
        needed = {
            "session_meta": "session_meta",
            "turn_context": "turn_context",
            "user": "item:message:user",
            "assistant": "item:message:assistant",
            "call": "item:function_call:",
            "call_output": "item:function_call_output:",
            "usage_api": "event:token_count:api",
            "usage_estimate": "event:token_count:estimate",
            "compacted": "compacted",
        }
        missing = [key for key in needed.values() if key not in found]
        if missing:
            raise RuntimeError(f"the core wrote no record of kind {missing}; update bench/_rollout")
        _TEMPLATES = {name: found[key] for name, key in needed.items()}
    return _TEMPLATES


def _fill(template: Record, **values: Any) -> Record:
    """A copy of ``template`` with ``values`` set; only keys the template has may be set."""
    unknown = set(values) - set(template)
    if unknown:
        raise KeyError(f"the core's record has no {sorted(unknown)}; update bench/_rollout")
    out = copy.deepcopy(template)
    out.update(values)
    return out


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class RolloutStats:
    """What a synthetic rollout holds."""

    path: Path
    session_id: str
    turns: int
    records: int
    bytes: int
    tokens: int  # every item written, counted (or estimated) once
    messages: int  # user + assistant messages
    compactions: int
    history_items: int  # items in the model view at the end
    history_tokens: int


class RolloutSynth:
    """Writes realistic rollouts: user questions, Markdown answers, some tool calls, and
    automatic compactions where asked, each record shaped like the core's own."""

    def __init__(self, text: TextMaker, counter: Any | None = None) -> None:
        self.text = text
        self.counter = counter
        self.t = capture_templates()

    def _count(self, item: Record, text: str) -> int:
        if self.counter is not None:
            return int(self.counter.count_item(item))
        return (len(text.encode()) + 3) // 4 + 4

    def write(
        self,
        sessions_dir: Path,
        *,
        turns: int,
        user_tokens: int = 60,
        answer_tokens: int = 440,
        tool_every: int = 10,
        compact_at: tuple[int, ...] = (),
        summary_tokens: int = 1500,
        title: str | None = None,
        session_id: str | None = None,
        start: datetime | None = None,
    ) -> RolloutStats:
        """Write ``sessions_dir/<id>.jsonl`` with ``turns`` turns; a pre-turn automatic
        compaction happens before each turn number in ``compact_at``."""
        from app.core.compaction.prompts import summary_text
        from app.core.compaction.rebuild import build_compacted_history

        t = self.t
        session_id = session_id or str(uuid.uuid4())
        path = sessions_dir / f"{session_id}.jsonl"
        from app.core.rollout.store import new_record_id

        sessions_dir.mkdir(parents=True, exist_ok=True)
        moment = start or datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
        step = timedelta(milliseconds=1500)
        lines: list[str] = []
        history: list[Record] = []
        history_tokens = 0
        total_tokens = 0
        messages = 0
        compactions = 0
        mark = 0

        def emit(template: Record, payload: Record) -> None:
            nonlocal moment
            moment += step
            record = _fill(template, timestamp=_stamp(moment), payload=payload)
            if "id" in record:
                # Each record its own id, as the core writes them: a repeated id reads as
                # the same line saved twice and is skipped.
                record["id"] = new_record_id()
            lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))

        def add_item(template: Record, item: Record, turn_id: str, text: str) -> None:
            nonlocal history_tokens, total_tokens
            emit(template, _fill(template["payload"], item=item, turn_id=turn_id))
            tokens = self._count(item, text)
            history.append(item)
            history_tokens += tokens
            total_tokens += tokens

        def usage_event(output: int) -> None:
            emit(
                t["usage_api"],
                _fill(
                    t["usage_api"]["payload"],
                    api_total=history_tokens,
                    mark=len(history),
                    total=history_tokens,
                    input=history_tokens - output,
                    output=output,
                ),
            )

        emit(
            t["session_meta"],
            _fill(t["session_meta"]["payload"], id=session_id, created_at=_stamp(moment)),
        )
        parent: str | None = None
        for turn in range(turns):
            turn_id = f"turn_{uuid.uuid4().hex[:24]}"
            context = t["turn_context"]["payload"]
            # Each turn follows the one before (one branch, as a conversation grows).
            links = {"parent": parent} if "parent" in context else {}
            emit(t["turn_context"], _fill(context, turn_id=turn_id, **links))
            parent = turn_id
            if turn in compact_at and history:
                summary = self.text.markdown(summary_tokens)
                rebuilt = build_compacted_history(history, summary)
                before = history_tokens
                history = list(rebuilt.items)
                history_tokens = sum(
                    self._count(item, json.dumps(item)) for item in history
                )
                mark = len(history)
                compactions += 1
                marker = _fill(
                    t["compacted"]["payload"],
                    message=summary_text(summary),
                    replacement_history=history,
                    undoable=False,
                    item_id=f"cmp_{uuid.uuid4().hex[:24]}",
                    turn_id=turn_id,
                    trigger="auto",
                    strategy="local",
                    tokens_before=before,
                    tokens_after=history_tokens,
                    duration_ms=4200,
                    summary=summary,
                    kept_user_messages=rebuilt.kept_user_messages,
                    kept_truncated=rebuilt.kept_truncated,
                    trimmed_items=0,
                    focus=None,
                )
                emit(t["compacted"], marker)
                emit(
                    t["usage_estimate"],
                    _fill(
                        t["usage_estimate"]["payload"],
                        api_total=None,
                        mark=mark,
                        total=history_tokens,
                        input=0,
                        output=0,
                    ),
                )
            question = (
                title if (turn == 0 and title) else self.text.plain(user_tokens)
            ) + f" (question {turn + 1})"
            user = _fill(
                t["user"]["payload"]["item"],
                content=[{"type": "input_text", "text": question}],
            )
            add_item(t["user"], user, turn_id, question)
            messages += 1
            if tool_every and turn % tool_every == tool_every - 1:
                call_id = f"call_{uuid.uuid4().hex[:24]}"
                call = _fill(
                    t["call"]["payload"]["item"],
                    id=f"fc_{uuid.uuid4().hex[:24]}",
                    call_id=call_id,
                    arguments=json.dumps({"path": f"src/module_{turn}.py"}),
                )
                add_item(t["call"], call, turn_id, call["name"] + call["arguments"])
                usage_event(20)
                output = self.text.plain(answer_tokens // 2)
                add_item(
                    t["call_output"],
                    _fill(t["call_output"]["payload"]["item"], call_id=call_id, output=output),
                    turn_id,
                    output,
                )
            answer = self.text.markdown(answer_tokens)
            template_content = t["assistant"]["payload"]["item"]["content"][0]
            assistant = _fill(
                t["assistant"]["payload"]["item"],
                id=f"msg_{uuid.uuid4().hex}",
                content=[_fill(template_content, text=answer)],
            )
            add_item(t["assistant"], assistant, turn_id, answer)
            messages += 1
            usage_event(answer_tokens)
        data = ("\n".join(lines) + "\n").encode("utf-8")
        path.write_bytes(data)
        return RolloutStats(
            path=path,
            session_id=session_id,
            turns=turns,
            records=len(lines),
            bytes=len(data),
            tokens=total_tokens,
            messages=messages,
            compactions=compactions,
            history_items=len(history),
            history_tokens=history_tokens,
        )
