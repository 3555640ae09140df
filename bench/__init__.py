"""Moka's benchmarks: how fast and how light it is (``python -m bench --help``)."""
