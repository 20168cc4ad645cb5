"""Coco: a desktop chat client for LLMs, built around conversation compaction."""

__version__ = "0.1.0"
