"""Exceptions readalign raises for bad input and unusable backends."""


class ReadalignError(Exception):
    """Base class: a problem the user can fix (bad input, bad option)."""


class InputError(ReadalignError, ValueError):
    """An input file or argument is malformed; the message names where."""


class BackendUnavailableError(ReadalignError, RuntimeError):
    """The requested backend cannot run here (e.g. ``cuda`` without a GPU)."""


class OutputError(ReadalignError, OSError):
    """An output cannot be written (disk full, no permission); the message names the file."""


class GPUMemoryError(ReadalignError, MemoryError):
    """The GPU ran out of memory: another process holds it, or less is free than a call
    sized itself for when it began; the message says how much is free."""
