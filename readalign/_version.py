"""The package version (its own module, so the command line imports it without the package)."""

__version__ = "0.1.0"
