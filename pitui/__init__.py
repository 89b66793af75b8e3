"""pitui: a terminal coding agent whose conversations are trees (pi session format v3)."""

__version__ = "0.1.0"
