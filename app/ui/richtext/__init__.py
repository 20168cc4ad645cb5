"""Markdown rendered for Qt's rich-text widgets, whole or kept in step with a growing text."""
