"""Where a text breaks (no Qt): Markdown's closed blocks and long lines' break opportunities."""
