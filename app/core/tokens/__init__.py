"""Counting tokens: estimates at once, exact counts once the tokenizer has loaded, huge texts as
dict keys, and the calibration of estimates per provider."""
