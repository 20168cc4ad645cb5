"""The compaction paths: what a path works with and produces (``path``), and local, remote and
prune, each one entry point from a ``PathRun`` to a ``PathResult``."""
