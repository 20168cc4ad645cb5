"""A session's file on disk: where it lives, the one writer's lock, appending records (never half
a line), reading them back (huge lines in steps) and how far an open has got."""
