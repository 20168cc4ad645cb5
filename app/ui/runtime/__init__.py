"""The window's process: asyncio on Qt's loop, the interpreter handed back, memory housekeeping,
Qt's messages and enums, loading ahead, and one Coco per profile."""
