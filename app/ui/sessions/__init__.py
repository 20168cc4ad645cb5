"""The saved sessions in the window: the sidebar list and export."""
