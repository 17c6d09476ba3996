"""Video files: probing (frames, rate, size, fingerprint), browser-playable proxies and
filmstrips.
"""
