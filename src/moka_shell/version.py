"""Moka's version, written once: the package face, the core and packaging all read it from here."""

__version__ = "0.1.0"
