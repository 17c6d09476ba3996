"""The annotation store (SQLite, every SQL statement) and the workspace around it: a
benchmark's configuration, video registry, cache and releases.
"""
