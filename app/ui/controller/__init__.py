"""The open session as the window drives it, with no widget code: the bridge to the core, the
state derived from its events, the texts the window shows and the slash commands."""
