"""The parts of a session that hold one branch's view, built and wired together in one place.

A session keeps its file, its event stream, its settings, its token counter, its recall index
and its tree for as long as it is open (``Shared``). What the model and the user see on the
active branch (the history, the transcript, the compaction state, the meter, the turn and
compaction tasks) is a ``BranchParts``: built once when the session opens and built anew,
off the window's thread, when another branch becomes active, then swapped in at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..compaction.runner import Compactor
from ..conversation.count_refiner import CountRefiner
from ..conversation.history import ContextHistory
from ..conversation.transcript import Transcript
from ..providers.capabilities import RemoteCapabilities
from ..tokens.calibration import calibration_store
from .compaction_undo import CompactionUndo
from .manual_compaction import ManualCompaction
from .notices import Notices
from .resume import SessionResume
from .turn.compact_after import CompactAfterTurn
from .turn.request import TurnRequests
from .turn.retry import TurnRetry
from .turn.task import UserTurnTask
from .usage_meter import UsageMeter

if TYPE_CHECKING:
    from .. import protocol as p
    from ..attachments.session_files import SessionAttachments
    from ..config import CoreConfig
    from ..conversation.tree import TurnTree
    from ..recall import SessionTools
    from ..sessions.record import SessionRecord
    from ..tokens.counter import TokenCounter
    from .config import SessionConfig
    from .event_stream import EventStream


@dataclass(frozen=True)
class Shared:
    """What every branch's parts use: the session's own, alive while it is open."""

    session_id: str
    counter: TokenCounter
    settings: SessionConfig
    store: SessionRecord
    events: EventStream
    tree: TurnTree
    emit: Callable[[p.Event], None]
    attachments: SessionAttachments  # the session's files, stored by hash beside it

    def config(self) -> CoreConfig:
        return self.settings.config

    def tools(self) -> SessionTools:
        return self.settings.tools


@dataclass(frozen=True)
class BranchParts:
    history: ContextHistory
    transcript: Transcript
    refiner: CountRefiner
    meter: UsageMeter
    notices: Notices
    requests: TurnRequests
    compactor: Compactor
    undo: CompactionUndo
    retry: TurnRetry
    turns: UserTurnTask
    manual: ManualCompaction
    after_turn: CompactAfterTurn
    resume: SessionResume


def build_parts(shared: Shared) -> BranchParts:
    """A branch's parts, empty, wired to each other and to ``shared``."""
    config, counter, emit, store = shared.config(), shared.counter, shared.emit, shared.store
    get_config, get_tools, record = shared.config, shared.tools, store.record
    history = ContextHistory(counter, config.instructions)  # attached when installed
    transcript = Transcript()
    meter: UsageMeter
    compactor: Compactor
    refiner = CountRefiner(counter, history, lambda: emit(meter.token_event()))
    meter = UsageMeter(
        config=get_config, counter=counter, history=history,
        calibration=calibration_store(config.data_dir),
        window=lambda model: compactor.window(model), limit=lambda model: compactor.limit(model),
        emit=emit, record=record,
    )
    notices = Notices(
        config=get_config, transcript=transcript, emit=emit, record=record,
        no_tool_calls=shared.settings.no_tool_calls,
    )
    requests = TurnRequests(
        shared.session_id, config=get_config, history=history, tools=get_tools,
        limit=meter.limit, attachments=shared.attachments,
    )
    compactor = Compactor(
        session_id=shared.session_id, history=history, transcript=transcript, counter=counter,
        config=get_config, provider=shared.settings.provider,
        tool_specs=lambda: shared.settings.tools.specs(),
        initial_context=requests.initial_context, emit=emit, record=record,
        note=notices.note, usage_reset=meter.reset, emit_usage=meter.emit_usage,
        retry_notice=notices.retry_notice, turn_request=requests.build,
        capabilities=RemoteCapabilities(config.data_dir), usage=meter.usage,
        token_ratio=meter.token_ratio,
    )
    undo = CompactionUndo(
        compactor=compactor, history=history, refiner=refiner, transcript=transcript,
        store=store, meter=meter, emit=emit,
    )
    retry = TurnRetry(history, emit)
    turns = UserTurnTask(
        config=get_config, tools=get_tools, provider=shared.settings.provider, history=history,
        counter=counter, refiner=refiner, compactor=compactor, meter=meter, notices=notices,
        store=store, retry=retry, requests=requests, transcript=transcript,
        events=shared.events, tree=shared.tree, emit=emit, emit_undo_state=undo.emit_state,
    )
    manual = ManualCompaction(
        compactor=compactor, history=history, refiner=refiner, undo=undo, meter=meter,
        notices=notices, store=store, retry=retry, emit=emit,
    )
    after_turn = CompactAfterTurn(
        turns=turns, compactor=compactor, refiner=refiner, meter=meter, requests=requests,
        notices=notices, store=store, emit=emit,
    )
    resume = SessionResume(
        config=get_config, store=store, history=history, transcript=transcript,
        counter=counter, compactor=compactor, undo=undo, meter=meter, notices=notices,
        turns=turns, tree=shared.tree, emit=emit,
    )
    return BranchParts(
        history=history, transcript=transcript, refiner=refiner, meter=meter, notices=notices,
        requests=requests, compactor=compactor, undo=undo, retry=retry, turns=turns,
        manual=manual, after_turn=after_turn, resume=resume,
    )
