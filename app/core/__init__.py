"""Coco's engine: sessions, turns, compaction, providers and persistence. No Qt here."""

from . import events, ops
from .config import CoreConfig
from .session import Session

__all__ = ["CoreConfig", "Session", "events", "ops"]
