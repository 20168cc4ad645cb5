"""The transcript: the scrolling column of rows, the rows as plain models and as widgets, and the
compaction marker."""
