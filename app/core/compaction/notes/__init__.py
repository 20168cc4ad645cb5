"""The carried notes: the user's facts and rules, and the session's files and commands, read out
of the history and carried through every compaction without asking the summarizer."""
