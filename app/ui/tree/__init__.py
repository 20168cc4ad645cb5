"""The conversation as a tree in the window: the tree panel, and the window's part in
editing, regenerating, switching and forking (drawing another branch, opening a fork)."""
