"""Falcon resources, one module per feature; each exports ``routes(hub)``."""
