"""The ``readalign`` command line (also ``python -m readalign``).

Each subcommand is one module of this package, listed in :data:`COMMANDS`; it
defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``,
and loads no numba until ``run`` (``--help`` stays fast); ``QUIET_FLAGS``, where a module
defines it, replaces ``-q``/``--quiet`` (``search`` takes ``-q`` for its queries).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import signal
import sys

from .._version import __version__
from ..errors import ReadalignError

COMMANDS = ("align", "distance", "search", "makedb", "warmup")
"""Subcommand modules of this package, in the order --help lists them."""

log = logging.getLogger("readalign")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Show an option's default only when it means something and its help does not state one."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default in (None, False, argparse.SUPPRESS) or "default" in text:
            return text
        return super()._get_help_string(action)


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
        mod = importlib.import_module(f".{name}", __name__)
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.__doc__,
                           formatter_class=HelpFormatter)
        p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
        p.add_argument(*getattr(mod, "QUIET_FLAGS", ("-q", "--quiet")), dest="quiet",
                       action="store_true",
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
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        return int(args._run(args) or 0)
    except ReadalignError as exc:
        log.error("error: %s", exc)
        return 1
    except KeyboardInterrupt:
        log.error("interrupted")
        return 130
    except Terminated:
        log.error("terminated")
        return 143
    except BrokenPipeError:
        _silence_stdout()
        return 141
    finally:
        signal.signal(signal.SIGTERM, previous)


class Terminated(BaseException):
    """SIGTERM arrived: unwind like Ctrl-C, so temporary outputs are removed."""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


def _silence_stdout() -> None:
    """After a closed pipe, point stdout at /dev/null: no flush error at interpreter exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)

