"""The look shared by every widget: colours from the palette, icons and small common widgets."""
