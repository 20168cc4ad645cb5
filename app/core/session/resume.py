"""Resume: a session's state rebuilt from its rollout, record by record (spec section 6), the
rollout's writer taken over, a broken tool pairing repaired, and the gauge's counts made."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .. import protocol as p
from ..compaction.pins import PIN_RECORD
from ..compaction.rebuild import build_compacted_history, real_user_messages
from ..compaction.summary_edit import SUMMARY_EDIT_RECORD
from ..conversation.history_repair import pair_tool_calls
from ..conversation.transcript import CUT_OFF_KIND, ENDED_KIND
from ..conversation.tree import BRANCH_RECORD, TURN_RECORD, TurnTree, on_path_of
from ..rollout.lines_at import Chosen, LineChanged, RolloutChanged, read_lines_at
from ..rollout.store import RolloutRecord, progress_reporter, read_rollout, resume_rollout
from ..system.collector import collector_paused
from .branch_summary import carried as carried_summary
from .turn.cut_off import restore as restore_cut_off

if TYPE_CHECKING:
    from ..compaction.runner import Compactor
    from ..config import CoreConfig
    from ..conversation.history import ContextHistory
    from ..conversation.transcript import Transcript
    from ..recall.index import RecallIndex
    from ..sessions.record import SessionRecord
    from ..tokens.counter import TokenCounter
    from .compaction_undo import CompactionUndo
    from .notices import Notices
    from .turn.branch_input import TurnInput
    from .turn.task import UserTurnTask
    from .usage_meter import UsageMeter


OnPath = Callable[[int, RolloutRecord], bool]  # whether record number n is in a branch's view


class _LinearPrefix:
    """Notes every record in the tree and passes on those read while the conversation is one
    branch: a turn that does not follow the newest one, or a switch, ends that (``branched``);
    the records after it are noted only."""

    def __init__(self, tree: TurnTree) -> None:
        self._tree = tree
        self.branched = False
        self.count = 0

    def records(self, records: Iterable[RolloutRecord]) -> Iterator[RolloutRecord]:
        tree = self._tree
        note = tree.note
        for record in records:
            self.count += 1
            kind = record.type
            if kind != TURN_RECORD and kind != BRANCH_RECORD:  # most records: noted, passed on
                note(kind, record.payload, record.line_no)
                if not self.branched:
                    yield record
                continue
            before = tree.active
            note(kind, record.payload, record.line_no)
            if self.branched:
                continue
            if kind == BRANCH_RECORD or (
                tree.active != before and tree.parents.get(str(tree.active)) != before
            ):
                self.branched = True
                continue
            yield record


class SessionResume:
    """Rebuilds one session from its rollout into the parts the session holds."""

    def __init__(
        self,
        *,
        config: Callable[[], CoreConfig],
        store: SessionRecord,
        history: ContextHistory,
        transcript: Transcript,
        counter: TokenCounter,
        compactor: Compactor,
        undo: CompactionUndo,
        meter: UsageMeter,
        notices: Notices,
        turns: UserTurnTask,
        tree: TurnTree,
        emit: Callable[[p.Event], None],
    ) -> None:
        self._config = config
        self._store = store
        self._history = history
        self._transcript = transcript
        self._counter = counter
        self._compactor = compactor
        self._undo = undo
        self._meter = meter
        self._notices = notices
        self._turns = turns
        self._tree = tree
        self._emit = emit

    def resume(self, recall_index: RecallIndex) -> bool:
        """Read the rollout (in a worker thread: the caller's), take over its writer, and build
        the active branch's view, in one streaming pass while the conversation is one branch.
        True when it is not: the view then has to be built again, into fresh parts, from the
        records of the active path (``replay_path``)."""
        store = self._store
        path = store.path
        if not path.exists():
            raise FileNotFoundError(f"No saved conversation with id {store.id}")
        linear = _LinearPrefix(self._tree)
        with collector_paused():  # only live containers are made: collections are waste
            resumed = resume_rollout(
                path, consume=lambda r: self.replay(linear.records(r)), lines=self._tree.read_to
            )
            warnings = list(resumed.warnings)
            if not linear.branched:
                warnings += self._repair()
        store.writer, store.read_only = resumed.writer, resumed.read_only
        recall_index.follow(resumed.writer, records=linear.count)
        if resumed.read_only:
            warnings.append(resumed.read_only)
        self._emit(
            p.SessionConfigured(
                session_id=store.id,
                model=self._config().model,
                resumed=True,
                rollout_path=str(path),
            )
        )
        for warning in warnings:
            self._emit(p.Warning(message=warning))
        return linear.branched

    def replay_path(self) -> None:
        """Build the active branch's view from the rollout, streamed once more (after
        ``resume`` found branches)."""
        warnings, read = self.replay_branch(self._tree, self._tree.active)
        if read != len(self._tree.anchors):
            warnings.append(
                "This conversation's file changed while it was being opened (was it edited "
                "elsewhere?): what is shown may be incomplete. Open it again to read it whole."
            )
        for warning in warnings:
            self._emit(p.Warning(message=warning))

    def replay_branch(
        self,
        tree: TurnTree,
        leaf: str | None,
        tap: TurnInput | None = None,
    ) -> tuple[list[str], int]:
        """Build the view at turn ``leaf`` (``None``: before the first turn) from the rollout,
        streamed once as an open streams it: the records anchored on its path (``tree`` is
        this file's), replayed as they are parsed, none kept; only their lines are parsed
        (``read_lines_at``), unless the file is not what the tree says, when it is all read
        again. ``tap`` sees the records of its turn with their places in the file. Returns
        the warnings for the user and the records read."""
        keep = on_path_of(tree, leaf)
        with collector_paused():
            try:
                read = self._replay_lines(tree, leaf, keep, tap)
            except RolloutChanged:  # the file is not what the tree says: all of it is read
                read = self._replay_all(keep, tap)
            return self._repair(), read

    def _replay_lines(
        self, tree: TurnTree, leaf: str | None, keep: OnPath, tap: TurnInput | None
    ) -> int:
        """The records of ``leaf``'s view (and ``tap``'s turn), their lines alone parsed; the
        records the file holds, or -1 when a chosen line turns out to hold none. Raises
        ``RolloutChanged`` before replaying anything when the file has other lines than the
        tree knows."""
        seqs = tree.path_records(leaf, also=tap.turn if tap is not None else None)
        lines, total = tree.lines_at(seqs)

        def consume(_data: object, chosen: Chosen) -> None:
            def records() -> Iterator[RolloutRecord]:
                for seq, (record, _start, _end) in zip(seqs, chosen, strict=False):
                    if tap is not None:
                        tap.see(seq, record)
                    if keep(seq, record):
                        yield record

            self.replay(records())

        try:
            read_lines_at(self._store.path, lines, total, consume)
        except LineChanged:
            return -1  # a record replayed already: the view is not to be shown
        return len(tree.anchors)

    def _replay_all(self, keep: OnPath, tap: TurnInput | None) -> int:
        """The view replayed from every record of the file; the records read."""
        read = 0

        def on_branch(records: Iterable[RolloutRecord]) -> Iterator[RolloutRecord]:
            nonlocal read
            for seq, record in enumerate(records):
                read = seq + 1
                if tap is not None:
                    tap.see(seq, record)
                if keep(seq, record):
                    yield record

        read_rollout(self._store.path, consume=lambda r: self.replay(on_branch(r)))
        return read

    def _repair(self) -> list[str]:
        # A crash between a tool call and its output would make every later request fail.
        repair = pair_tool_calls(self._history.raw_items())
        if not repair.changed:
            return []
        self._history.replace(repair.items)
        return [f"Repaired this conversation: {repair.describe()}."]

    async def precount(self) -> None:
        """Count the long texts the gauge needs at once (those after the last reported
        usage, or all when none was) in a worker thread, telling the open's progress: a 50 MB
        message took seconds to count on the window's thread."""
        history = self._history
        start = history.mark if history.api_total is not None else 0
        await self._counter.precount_items(
            history.raw_items()[start:], progress_reporter("counting"), estimate_huge=True
        )

    def replay(self, records: Iterable[Any]) -> None:
        """Rebuild history and transcript from the rollout, in order (spec section 6).

        Items are counted lazily and the usage is restored once, from the last token count
        written after the last history rewrite: most items of a long rollout are replaced by
        a later compaction and never need counting.
        """
        usage: tuple[int | None, int] | None = None
        history = self._history
        transcript = self._transcript
        compactor = self._compactor
        wholes: dict[str, Any] = {}  # cut tool outputs' wholes, by call id, until their item
        for record in records:
            payload = record.payload
            kind = record.type
            if kind == "session_meta":
                self._store.created_at = payload.get("created_at", self._store.created_at)
            elif kind == "session_title":
                self._store.title = payload.get("title") or None
            elif kind == "tool_output" and isinstance(payload.get("item"), dict):
                wholes[str(payload["item"].get("call_id", ""))] = payload["item"]
            elif kind == "response_item" and isinstance(payload.get("item"), dict):
                history.append(payload["item"], defer_count=True)
                compactor.undo.note_appended(payload["item"])
                transcript.add_item(  # a cut tool output is shown whole
                    wholes.pop(str(payload["item"].get("call_id", "")), payload["item"])
                    if wholes else payload["item"],
                    str(payload.get("turn_id", "")),
                    interrupted=bool(payload.get("interrupted")),
                )
            elif kind == "turn_context":
                compactor.undo.turn_started()
                self._turns.last_model = payload.get("model")
            elif kind == "compacted":
                usage = None  # the rewrite resets usage; a later token count restores it
                self._compacted(payload)
            elif kind == "compaction_undone":
                usage = None
                self._undo.restore()
            elif kind == PIN_RECORD:
                compactor.pins.replay(payload)
            elif kind == SUMMARY_EDIT_RECORD:
                compactor.summary_edits.replay(payload)
            elif kind == "history_replaced":
                usage = None
                replacement = payload.get("replacement_history")
                if isinstance(replacement, list):
                    history.replace(replacement, defer_count=True)
                transcript.mark_not_sent(str(payload.get("turn_id", "")))
            elif kind == "event":
                event_kind = payload.get("kind")
                if event_kind == "token_count":
                    api_total = payload.get("api_total")
                    usage = (
                        api_total if isinstance(api_total, int) else None,
                        int(payload.get("mark", len(history))),
                    )
                    self._meter.restore(payload)
                elif event_kind == "error" and payload.get("details"):
                    transcript.add_error(
                        str(payload.get("message", "")), str(payload.get("details"))
                    )
                elif event_kind == CUT_OFF_KIND:
                    restore_cut_off(transcript, payload)
                elif event_kind == carried_summary.CARRIED_KIND:
                    carried_summary.replay_carried(payload, transcript)
                elif event_kind == carried_summary.UNDONE_KIND:
                    usage = None  # the history was rewritten
                    carried_summary.replay_undone(payload, transcript, history)
                elif event_kind in ("error", "warning", "background", ENDED_KIND):
                    self._notices.replayed(transcript.add_recorded(payload))
        if usage is not None:
            history.set_usage(*usage)

    def _compacted(self, payload: dict[str, Any]) -> None:
        history = self._history
        snapshot = history.snapshot()
        replacement = payload.get("replacement_history")
        if isinstance(replacement, list):
            history.replace(replacement, defer_count=True)
        else:  # an older record: rebuild from the summary text (spec section 6)
            summary = str(payload.get("message", ""))
            rebuilt = build_compacted_history(history.raw_items(), summary)
            history.replace(rebuilt.items, defer_count=True)
        compactor = self._compactor
        compactor.compacted_version = history.version
        tokens_after = payload.get("tokens_after")
        compactor.post_compaction_usage = tokens_after if isinstance(tokens_after, int) else None
        if payload.get("strategy") not in ("remote", "prune"):
            compactor.warned = True
        if payload.get("undoable", True):
            compactor.undo.offer(str(payload.get("item_id", "")), snapshot)
        else:  # written by an older version: automatic compactions were final
            compactor.undo.turn_started()
        self._transcript.add_compaction(
            p.CompactionMarker.from_record(payload),
            real_user_messages(history.raw_items()),
        )
