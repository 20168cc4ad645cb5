"""The conversation as a tree, as ops: edit a turn's message, regenerate its answer, switch
branch, fork into a new session. Each is refused in words while a turn or compaction runs, for
a turn the conversation does not have, and for a session that cannot be written.

A branch's view is rebuilt from the rollout (``conversation.tree``), off the window's thread,
into fresh parts that take over at once: the model then sees exactly what it saw at that point,
whatever compactions, pins, summary edits and undos lie before it on the path and whatever lies
on other branches. An edit or a regeneration sends the input the replaced turn was sent (its
message, and what it compacted before its first request), with the new text for an edit, so a
server's prompt cache still holds the prefix.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Literal

from .. import protocol as p
from ..conversation.tree import TurnTree
from ..items import new_id
from ..rollout.store import RolloutRecord
from ..sessions.fork import ForkError, write_fork
from ..sessions.record import STORAGE_ERRORS
from ..sessions.turn_items import items_by_turn
from ..system.collector import collector_paused
from .branch_summary import carried as carried_summary
from .branch_summary.summary import BranchSummary, summarize_branch, wants_summary
from .left_view import LeftView
from .parts import BranchParts, Shared, build_parts
from .turn.branch_input import (
    TurnInput,
    edited_message,
    message_of,
    summary_record,
    with_summary,
    with_text,
)
from .turn.branch_start import BranchStart

Record = RolloutRecord
BranchOp = p.EditTurn | p.RegenerateTurn | p.SwitchBranch | p.ForkSession | p.UndoBranchSummary


class _Unkept:
    """The view being replaced is no branch's (an op that failed half way): not kept."""


UNKEPT = _Unkept()


class BranchUnavailable(Exception):
    """The branch cannot be made or shown; the message says why in words."""


class Branches:
    """Runs the tree's ops for one session; ``install`` puts a rebuilt view in place."""

    def __init__(
        self,
        shared: Shared,
        *,
        parts: Callable[[], BranchParts],
        install: Callable[[BranchParts, TurnTree], Awaitable[None]],
        busy: Callable[[], bool],
    ) -> None:
        self._shared = shared
        self._tree = shared.tree
        self._parts = parts
        self._install = install
        self._busy = busy
        self._left = LeftView(shared)

    # ------------------------------------------------------------------ ops

    def task(self, op: BranchOp) -> Coroutine[Any, Any, None] | None:
        """The task that carries ``op`` out, or ``None`` after saying why it cannot run."""
        refusal = self._refusal(op)
        if refusal is not None:
            self._shared.emit(p.Error(message=refusal, kind="invalid_op"))
            return None
        if isinstance(op, p.ForkSession):
            return self._fork(op.turn_id)
        if isinstance(op, p.UndoBranchSummary):
            self._undo_summary(op.turn_id)
            return None
        carry = wants_summary(getattr(op, "carry_summary", False), self._shared.config())
        if isinstance(op, p.SwitchBranch):
            return self._switch(op.turn_id, carry)
        if isinstance(op, p.EditTurn):
            return self._branch(op.turn_id, "edit", op.text, carry, op.keep_attachments)
        return self._branch(op.turn_id, "regenerate", None, False)

    def _refusal(self, op: BranchOp) -> str | None:
        verb = {
            "edit_turn": "edit a message", "regenerate_turn": "regenerate an answer",
            "switch_branch": "switch branch", "fork_session": "fork the conversation",
            "undo_branch_summary": "undo the branch summary",
        }[op.op]
        if self._busy():
            return f"Wait for the current turn or compaction to finish before you {verb}."
        if op.turn_id not in self._tree:
            return f"Cannot {verb}: this conversation has no turn {op.turn_id!r}."
        if isinstance(op, p.EditTurn) and not op.text.strip():
            return "Type a message first."
        read_only = self._shared.store.read_only
        if read_only is not None and not isinstance(op, p.ForkSession):
            return f"Cannot {verb}: {read_only}"
        return None

    async def _switch(self, turn_id: str, carry: bool) -> None:
        tree = self._tree
        leaf, before = tree.newest_leaf(turn_id), tree.active
        if leaf == before:
            self._announce(leaf, "switch")
            return
        summary = await self._left_behind(tree.path(leaf)) if carry else None
        kept = self._left.take(leaf)  # before the switch is recorded (on the path it makes)
        try:
            self._shared.store.record("branch_switched", {"turn_id": leaf})
            await self._show(leaf, kept, left=before)
            if summary is not None:
                self._put_input(leaf, [summary_record(summary, leaf)], None, summary)
        except (*STORAGE_ERRORS, OSError, BranchUnavailable) as exc:
            self._failed("switch branch", exc)
            await self._restore(before)
            return
        self._announce(leaf, "switch", summary)

    async def _left_behind(self, new_path: list[str]) -> BranchSummary | None:
        """The summary of the active branch's turns that ``new_path`` leaves behind."""
        staying = set(new_path)
        left = {turn for turn in self._tree.path() if turn not in staying}
        items = [
            entry["item"]
            for entry in self._parts().transcript.item_entries()
            if entry.get("turn_id") in left
        ]
        shared = self._shared
        return await summarize_branch(items, shared.settings.provider, shared.config())

    async def _branch(
        self, turn_id: str, reason: Literal["edit", "regenerate"], text: str | None, carry: bool,
        keep: list[str] | None = None,
    ) -> None:
        """A new branch from ``turn_id``'s parent, sent the input ``turn_id`` was sent (with
        ``text`` as its message for an edit), which then runs."""
        tree, before = self._tree, self._tree.active
        parent = tree.parents[turn_id]
        try:
            built, warnings, source_input = await asyncio.to_thread(self._build, parent, turn_id)
            message = message_of(source_input)
            if message is None:
                raise BranchUnavailable(
                    "the message of that turn could not be read from the session's file"
                )
            if text is not None:
                source_input = with_text(source_input, message, text, keep)
            parts = self._parts()
            if text is not None and not parts.turns.message_fits(
                turn_id, p.UserTurn(text=text), edited_message(source_input, text)
            ):
                return
            path = [*tree.path(parent), ""] if parent is not None else [""]
            summary = await self._left_behind(path) if carry else None
            if summary is not None:
                source_input = with_summary(source_input, text or message, summary)
            await built.resume.precount()
        except (OSError, BranchUnavailable) as exc:
            self._failed(f"{reason} that turn", exc)
            return
        await self._put_in_place(built, left=before)
        for warning in warnings:
            self._shared.emit(p.Warning(message=warning))
        start = BranchStart(
            parent=parent, source=turn_id, reason=reason,
            put_input=lambda new: self._put_input(new, source_input, reason, summary),
        )
        try:
            await self._parts().turns.run(p.UserTurn(text=text or message), start)
        finally:
            if tree.active == before:  # the new turn was never recorded: back where it was
                await self._restore(before)

    async def _fork(self, turn_id: str) -> None:
        shared = self._shared
        store, config = shared.store, shared.config()
        try:
            fork = await asyncio.to_thread(
                write_fork, store.path, config, source_id=shared.session_id, turn_id=turn_id,
                title=store.title, tree=self._tree,
            )
        except ForkError as exc:
            self._failed("fork the conversation", exc)
            return
        shared.emit(
            p.SessionForked(
                session_id=fork.session_id, source_session_id=shared.session_id,
                turn_id=turn_id, title=fork.title,
            )
        )

    # ------------------------------------------------------------------ views

    async def _show(
        self, leaf: str | None, kept: BranchParts | None, *, left: str | None | _Unkept
    ) -> None:
        """Install the view of ``leaf``'s branch: ``kept`` (the view left last, when it is
        that branch's) or one rebuilt from the rollout. The view shown until now is kept as
        ``left``'s branch's, unless ``left`` is ``UNKEPT``."""
        warnings: list[str] = []
        if kept is None:
            built, warnings, _input = await asyncio.to_thread(self._build, leaf)
            await built.resume.precount()  # as an open does, off the window's thread
            kept = built
        else:
            self._left.wake(kept)
        await self._put_in_place(kept, left=left)
        for warning in warnings:
            self._shared.emit(p.Warning(message=warning))

    async def _put_in_place(self, parts: BranchParts, *, left: str | None | _Unkept) -> None:
        if isinstance(left, _Unkept):
            self._left.drop()
        else:
            self._left.keep(left, self._parts())
        await self._install(parts, self._tree)

    async def _restore(self, leaf: str | None) -> None:
        """Back to ``leaf``'s view after a branch op that could not be carried out (the view
        shown meanwhile is no branch's to keep)."""
        kept = self._left.take(leaf)
        try:
            if self._tree.active != leaf:
                self._shared.store.record("branch_switched", {"turn_id": leaf})
            await self._show(leaf, kept, left=UNKEPT)
        except (*STORAGE_ERRORS, OSError, BranchUnavailable) as exc:
            self._failed("show the branch again", exc)
            return
        self._announce(leaf, "switch")

    def _build(
        self, leaf: str | None, source: str | None = None
    ) -> tuple[BranchParts, list[str], list[Record]]:
        """``leaf``'s view in fresh parts, read from the rollout in one streaming pass with the
        tree the session holds (as an open reads it: no record kept but what the view keeps),
        the user's warnings, and the input turn ``source`` was sent (``TurnInput``) when
        asked. What an open counts is counted before the parts are put in place
        (``SessionResume.precount``)."""
        tree = self._tree
        taker = TurnInput(tree.anchors, source) if source is not None else None
        with collector_paused():
            parts = build_parts(self._shared)
            warnings, read = parts.resume.replay_branch(
                tree, leaf, tap=taker
            )
        if read != len(tree.anchors):
            raise BranchUnavailable(
                "the session's file changed while it was open (was it edited elsewhere?)"
            )
        return parts, warnings, taker.records if taker is not None else []

    def _put_input(
        self,
        turn_id: str,
        records: list[Record],
        reason: Literal["edit", "regenerate"] | None,
        summary: BranchSummary | None = None,
    ) -> None:
        """Records put under ``turn_id`` and in the model's view; for a new turn's input
        (``reason``), the branch is then announced (the window draws it again)."""
        store, parts = self._shared.store, self._parts()
        for record in records:
            payload = dict(record.payload, turn_id=turn_id)
            if record.type == "compacted":
                payload["item_id"] = new_id("cmp")
            store.record(record.type, payload)
            parts.resume.replay([record._replace(payload=payload)])
        if summary is not None:
            carried_summary.carry(turn_id, summary, parts.transcript, store.record)
        if reason is not None:
            self._announce(turn_id, reason, summary)

    def _undo_summary(self, turn_id: str) -> None:
        parts, shared = self._parts(), self._shared
        try:
            refused = carried_summary.undo(
                turn_id, parts.transcript, parts.history, shared.store.record
            )
        except STORAGE_ERRORS as exc:
            self._failed("undo the branch summary", exc)
            return
        if refused is not None:
            shared.emit(p.Error(message=refused, kind="invalid_op"))
            return
        shared.emit(p.BranchSummaryUndone(turn_id=turn_id))
        shared.emit(parts.meter.token_event())

    def _announce(
        self, leaf: str | None, reason: p.BranchReason, summary: BranchSummary | None = None
    ) -> None:
        emit = self._shared.emit
        text = summary.text if summary is not None else ""
        emit(p.BranchSwitched(turn_id=leaf or "", reason=reason, summary=text))
        if leaf is not None and (branches := self.turn_branches().get(leaf)) is not None:
            emit(branches)

    def _failed(self, what: str, exc: Exception) -> None:
        self._shared.emit(p.Error(message=f"Could not {what}: {exc}", kind="storage"))

    # ------------------------------------------------------------------ the tree, told

    def turn_branches(self) -> dict[str, p.TurnBranches]:
        """The turns of the active branch that have siblings, as their ``TurnBranches``."""
        tree = self._tree
        found: dict[str, p.TurnBranches] = {}
        for turn in tree.branch_points():
            siblings = tree.siblings(turn)
            found[turn] = p.TurnBranches(
                turn_id=turn, siblings=siblings, index=siblings.index(turn),
                regenerated=all(tree.reasons.get(s) == "regenerate" for s in siblings[1:]),
            )
        return found

    def turn_items(self) -> dict[str, list[dict[str, Any]]]:
        """Every turn's items as recorded, on every branch (``items_by_turn``)."""
        return items_by_turn(self._shared.store.path, self._tree)

    def tree_view(self) -> p.ConversationTree:
        tree = self._tree
        on_path = tree.on_path()
        return p.ConversationTree(
            nodes=[
                p.TreeNode(
                    turn_id=turn, parent=parent, label=tree.labels.get(turn, ""),
                    compactions=tree.compactions.get(turn, 0), active=turn in on_path,
                )
                for turn, parent in tree.parents.items()
            ],
            active=tree.active,
        )
