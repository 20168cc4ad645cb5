"""The conversation as a tree, as the session's ops: edit, regenerate, switch and fork
(``branches``), the summary of a branch left behind (``branch_summary``) and that summary
carried into a turn and undone (``carried_summary``)."""
