"""Every turn's items as recorded, on every branch: what an export of the whole conversation
tree holds (the transcript is the active branch's alone).

The rollout is read once, streaming; the session's tree says which turn each record belongs
to (``TurnTree.anchors``), so nothing but the items is kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..conversation.tree import TurnTree
from ..items import is_injected_context
from ..rollout.store import RolloutRecord, read_rollout
from ..system.collector import collector_paused


def items_by_turn(path: Path, tree: TurnTree) -> dict[str, list[dict[str, Any]]]:
    """Each turn of ``tree`` (the tree of the rollout at ``path``) with the items it recorded
    (messages, reasoning, tool calls and outputs; not the environment block Coco adds), in
    order. A record written after the tree was read belongs to the active turn."""
    found: dict[str, list[dict[str, Any]]] = {turn: [] for turn in tree.parents}
    anchors = tree.anchors

    def take(records: Iterable[RolloutRecord]) -> None:
        for seq, record in enumerate(records):
            if record.type != "response_item":
                continue
            anchor = anchors[seq] if seq < len(anchors) else tree.active
            item = record.payload.get("item")
            if anchor in found and isinstance(item, dict) and not is_injected_context(item):
                found[anchor].append(item)

    with collector_paused():
        read_rollout(path, consume=take)
    return found
