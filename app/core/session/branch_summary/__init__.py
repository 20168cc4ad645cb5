"""The summary of a branch left behind: written when a person edits or switches away from it
(``summary``), carried into the turn they go to, kept there and undone on request
(``carried``)."""
