"""Subcommands of the ``readalign`` command line; each module adds one.

A command module defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``.
"""
