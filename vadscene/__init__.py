"""vadscene — label scene factors on video anomaly detection benchmarks, publish the labels as
versioned releases, and audit what model scores respond to.

Data flow: video files (:mod:`vadscene.video`) → workspace and annotation store
(:mod:`vadscene.workspace`, :mod:`vadscene.store`) → release (:mod:`vadscene.release`) →
audit engine → report.
"""

__version__ = "0.1.0"
