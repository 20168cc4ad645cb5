"""The main window and its panels: the status bar, the Model view, find, notifications, the
dialogs, the panes' layout and the saved window state."""
