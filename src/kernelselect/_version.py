"""The package version (kept equal to meson.build's project version)."""

__version__ = "0.1.0"
