"""The package version (its own module, so the command line imports it without the package)."""

__version__ = "0.2.0"
