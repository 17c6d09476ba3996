"""The audit's computation: pair counts, every AUROC granularity, the paired bootstrap, scene
bias, definition probes, prototype readouts and the further tables, gathered by
:func:`~vadscene.audit.compute.engine.run_audit` into an :class:`AuditResult`.
"""
