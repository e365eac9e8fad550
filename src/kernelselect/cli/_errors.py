"""The error type of a user mistake on the command line (reported as one line, exit
status 2): a leaf that every part of the command line raises, so that none of them
imports another for it."""

from __future__ import annotations

__all__ = ["CommandError"]


class CommandError(Exception):
    """A user error: reported as one line, exit status 2."""
