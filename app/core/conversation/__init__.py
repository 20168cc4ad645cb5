"""The conversation's two views: the history the model sees and the transcript the user keeps,
with the repair of a damaged history and the exact recount of huge texts."""
