"""The ``readalign`` command line (also ``python -m readalign``)."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from . import __version__
from .errors import ReadalignError

COMMANDS = ("align", "distance")
"""Modules under readalign.commands, in the order --help lists them."""

log = logging.getLogger("readalign")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one subparser per command module."""
    parser = argparse.ArgumentParser(
        prog="readalign",
        description="Exact alignment of read/window pairs (quadrant-boundary Needleman-Wunsch, "
        "GPU when present, CPU otherwise). Logs go to stderr, data to files or stdout.",
    )
    parser.add_argument("--version", action="version", version=f"readalign {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f".commands.{name}", __package__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.commands.{name}":
                raise
            continue  # a command whose module is not there yet
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.__doc__,
                           formatter_class=argparse.ArgumentDefaultsHelpFormatter)
        p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
        p.add_argument("-q", "--quiet", action="store_true",
                       help="only warnings and errors on stderr; no progress bar")
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def setup_logging(verbose: bool, quiet: bool) -> None:
    """Log to stderr: INFO by default, DEBUG with -v, WARNING with -q."""
    level = logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO
    logging.basicConfig(level=level, stream=sys.stderr, format="readalign: %(message)s")


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 bad input, 2 usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    setup_logging(args.verbose, args.quiet)
    try:
        return int(args._run(args) or 0)
    except ReadalignError as exc:
        log.error("error: %s", exc)
        return 1
    except KeyboardInterrupt:
        log.error("interrupted")
        return 130
    except BrokenPipeError:
        return 141


if __name__ == "__main__":
    sys.exit(main())
