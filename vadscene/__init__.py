"""vadscene — label scene factors on video anomaly detection benchmarks, publish the labels as
versioned releases, and audit what model scores respond to.

One folder per stage of the data flow; a stage imports only earlier ones
(``tests/layout/test_import_direction.py`` enforces it):

core → benchmark → video → store → measure → annotate → release → audit (io → compute →
report) → demo → cli.
"""

__version__ = "0.1.0"
