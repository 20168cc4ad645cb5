"""Who Coco is to the desktop: the names the OS, the .desktop entry and AppStream use."""

from __future__ import annotations

APP_NAME = "Coco"
# Reverse-DNS id: the .desktop file is ``APP_ID.desktop``, the icon and the AppStream
# component are named after it, and Qt reports it as the Wayland app id. The packaging
# files repeat it (a test checks they agree).
APP_ID = "io.github.coco_chat.Coco"
SUMMARY = "Chat with LLMs; long conversations are compacted, never lost"
