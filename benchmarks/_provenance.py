"""Where a benchmark's JSON came from: when, which commit, which command, which host.

Every benchmark that writes ``--json`` puts these fields at the top of its file, so that
``benchmarks/plots.py`` and ``benchmarks/RESULTS.md`` can say what each figure was measured
on without the reader keeping notes beside the file.
"""

from __future__ import annotations

import datetime
import os
import shlex
import subprocess
import sys
from collections.abc import Sequence

from ._host import host_name

HERE = os.path.dirname(os.path.abspath(__file__))


def _git(*args: str) -> str:
    """``git args`` in this checkout; its stdout, or "" where git or the repository is missing."""
    try:
        out = subprocess.run(["git", *args], capture_output=True, text=True, cwd=HERE, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def provenance(module: str, argv: Sequence[str] | None = None) -> dict:
    """The fields every benchmark JSON starts with.

    Parameters
    ----------
    module
        The benchmark's module name (``benchmarks.bench``), as ``python -m`` runs it.
    argv
        Its arguments (default: this process's).

    Returns
    -------
    dict
        ``date`` (UTC, ISO 8601 to the second), ``commit`` (short hash, ``unknown`` outside a
        git checkout), ``uncommitted_changes`` (tracked files differ from the commit: the
        numbers are of a working tree, not of the commit alone), ``command`` and ``host``.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    return {"date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "commit": _git("rev-parse", "--short", "HEAD") or "unknown",
            "uncommitted_changes": bool(_git("status", "--porcelain", "--untracked-files=no")),
            "command": shlex.join(["python", "-m", module, *args]),
            "host": host_name()}
