"""Maintenance of a database: correcting, inspecting and exporting, importing, copying, re-embedding."""
