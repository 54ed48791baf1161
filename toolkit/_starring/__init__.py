"""Starring: a user's starred initiatives, starred and unstarred from frames, listed as frames."""

__all__: list[str] = []
