"""Releases: build, validate, import and diff versioned JSON; tables (CSV) and Label Studio
interchange.
"""
