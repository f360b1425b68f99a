"""Exceptions readalign raises for bad input, unusable backends, unwritable outputs and GPU memory.

Every one derives from :class:`ReadalignError` and from the built-in exception of its kind
(``ValueError``, ``RuntimeError``, ``OSError``, ``MemoryError``), so ``except ValueError``
catches bad input as it would from any other library. Arguments of the wrong type or value
given to the Python functions raise the built-in ``TypeError`` or ``ValueError`` naming the
argument.
"""


class ReadalignError(Exception):
    """Base class: a problem the user can fix (bad input, a missing GPU, a full disk).

    The command line prints its message as one line, ``readalign: error: ...``, and exits
    with status 1.

    Examples
    --------
    >>> import readalign
    >>> issubclass(readalign.InputError, readalign.ReadalignError)
    True
    """


class InputError(ReadalignError, ValueError):
    """An input file or option is malformed; the message names the file, the record and the
    problem.

    Raised by ``readalign align`` and ``readalign distance`` (and the functions behind them)
    for a bad reads, candidates, reference or word file, or a bad option value.

    Examples
    --------
    >>> import readalign
    >>> raise readalign.InputError("reads.fq: line 9: missing '+' separator line")
    Traceback (most recent call last):
    ...
    readalign.errors.InputError: reads.fq: line 9: missing '+' separator line
    """


class BackendUnavailableError(ReadalignError, RuntimeError):
    """The requested backend cannot run here: ``backend="cuda"`` (``--backend cuda``) where no
    CUDA GPU or driver is found; the message says why.

    Examples
    --------
    >>> import readalign
    >>> try:
    ...     where = readalign.align(["ACGT"], ["ACGT"], backend="cuda").backend
    ... except readalign.BackendUnavailableError:  # "backend 'cuda' requested but no CUDA GPU ..."
    ...     where = "cpu"
    >>> where in ("cuda", "cpu")
    True
    """


class OutputError(ReadalignError, OSError):
    """An output cannot be written (disk full, no permission, a closed pipe); the message names
    the file and the reason. Nothing that looks complete is left behind.

    Examples
    --------
    >>> from readalign.errors import OutputError
    >>> issubclass(OutputError, OSError)
    True
    """


class GPUMemoryError(ReadalignError, MemoryError):
    """The GPU ran out of memory: another process holds it, or less is free than a call sized
    itself for when it began; the message says how much is free.

    :func:`readalign.free_gpu_memory` gives back what readalign keeps between calls; a
    smaller call, or the other process's end, may leave enough.

    Examples
    --------
    >>> import readalign
    >>> issubclass(readalign.GPUMemoryError, MemoryError)
    True
    """
