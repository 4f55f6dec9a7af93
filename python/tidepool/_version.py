"""The package's version: libtidepool's, which the import checks (tidepool._lib)."""

__version__ = "0.2.0"
