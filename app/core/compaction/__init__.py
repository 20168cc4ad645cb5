"""Conversation compaction: local summarisation, the remote endpoint, and the auto policy."""
