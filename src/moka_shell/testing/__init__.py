"""Fakes and helpers for testing Moka and Moka plugins."""
