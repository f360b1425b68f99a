"""What every script of the workflow does when Snakemake's ``script:`` directive runs it.

Snakemake puts the script's own directory on ``sys.path``, so the scripts import
this module by name, and only when ``snakemake`` is among their globals: run by
hand or imported by the tests, they do not need it.
"""

import sys
from collections.abc import Callable
from contextlib import nullcontext, redirect_stderr


def run_rule(smk, main: Callable[[list[str]], int], argv: list[str]) -> None:
    """Run ``main(argv)`` as the job of a rule: its stderr goes to the rule's log (if it has
    one) and a non-zero status fails the job."""
    log = smk.log[0] if smk.log else None
    with open(log, "w") if log else nullcontext(sys.stderr) as fh, redirect_stderr(fh):
        rc = main(argv)
    if rc:
        sys.exit(rc)
