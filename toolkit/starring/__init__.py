"""Starring: a user's starred initiatives, starred and unstarred from frames, listed as frames."""

from toolkit.starring.operations import star, starred, starred_many, starred_pages, unstar

__all__ = ["star", "starred", "starred_many", "starred_pages", "unstar"]
