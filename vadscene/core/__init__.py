"""The vocabulary every stage shares: errors, strict JSON, atomic files, shipped paths, the
scene-factor catalogue and the per-video records that the store holds and a release publishes.

Imports nothing else of vadscene.
"""
