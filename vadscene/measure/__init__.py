"""The two computed scene factors: per-video statistics in one decoding pass (sharpness,
motion, colour), the run over a workspace, and the threshold rules that turn statistics into
poles.
"""
