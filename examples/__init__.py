"""Runnable examples of the chapter's parallel training: `python -m examples.<name>`."""
