"""The plan a hub produces: its schema, loading, and the AAVSR checks.

``maestro.planinput`` is the public face of this package.
"""
