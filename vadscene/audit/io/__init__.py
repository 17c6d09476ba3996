"""The audit's inputs read from files and workspaces: model scores, scene labels, definition
scores, features, soft labels.
"""
