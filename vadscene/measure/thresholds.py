"""Dataset-level threshold rules that turn a measured statistic into an auto factor's poles.

An auto factor's first value is the pole of high statistics, its second the pole of low ones
(``resolution: [high, low]`` for sharpness, ``motion: [high, low]`` for frame difference):

- ``median``: above the median → first pole, at or below → second (spec: resolution);
- ``terciles``: at or below the 1/3 quantile → second pole, above the 2/3 quantile → first,
  between → ``ambiguous`` (spec: motion);
- ``explicit``: one value works like the median, two like the terciles.

Quantiles use numpy's default linear interpolation over the measured videos. Poles are
written to the store as decisions of annotator ``auto`` (source ``auto``) — only where the
pole changes, so the log records each re-derivation — in one transaction with the rule, so
an interrupted run leaves the rule and poles it found. An annotator's override is a separate
decision that the release prefers, so re-measuring or changing the rule never overwrites it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from vadscene.core.catalogue import AMBIGUOUS, THRESHOLD_RULES, Factor
from vadscene.core.errors import StoreError
from vadscene.core.records import AUTO_ANNOTATOR
from vadscene.store.database import AnnotationStore


@dataclass(frozen=True)
class PoleChanges:
    """What applying a rule does (or would do) to an auto factor."""

    factor: str
    statistic: str
    rule: str
    thresholds: tuple[float, ...]
    poles: dict[str, str]
    changed: list[tuple[str, str | None, str]] = field(default_factory=list)
    """(video, previous auto pole or None, new pole)"""

    def counts(self) -> dict[str, int]:
        values = list(self.poles.values())
        return {pole: values.count(pole) for pole in dict.fromkeys(values)}


def rule_thresholds(
    values: np.ndarray, rule: str, explicit: tuple[float, ...] = ()
) -> tuple[float, ...]:
    """The threshold values a rule gives on the measured values."""
    if rule == "median":
        return (float(np.median(values)),)
    if rule == "terciles":
        low, high = np.quantile(values, [1 / 3, 2 / 3])
        return float(low), float(high)
    if rule == "explicit":
        if not all(math.isfinite(t) for t in explicit):
            raise StoreError(f"rule 'explicit': thresholds must be finite numbers, got {explicit}")
        if len(explicit) not in (1, 2) or sorted(explicit) != list(explicit):
            raise StoreError(
                f"rule 'explicit' takes one threshold or two in increasing order, got {explicit}"
            )
        return tuple(float(t) for t in explicit)
    expected = f"{', '.join(THRESHOLD_RULES[:-1])} or {THRESHOLD_RULES[-1]}"
    raise StoreError(f"unknown threshold rule '{rule}' (expected {expected})")


def pole_of(value: float, thresholds: tuple[float, ...], factor: Factor) -> str:
    """The pole a measured value falls in (see the module docstring)."""
    high, low = factor.values[0], factor.values[1]
    if len(thresholds) == 1:
        return high if value > thresholds[0] else low
    if value <= thresholds[0]:
        return low
    return high if value > thresholds[1] else AMBIGUOUS


def preview_rule(
    store: AnnotationStore,
    factor_key: str,
    rule: str | None = None,
    explicit: tuple[float, ...] = (),
) -> PoleChanges:
    """Poles and pole changes of a rule, without writing anything (the app shows these before
    the annotator applies a new rule). ``rule`` None keeps the rule in force: the one last
    applied to this workspace, else the catalogue's."""
    factor = store.catalogue.factor(factor_key)
    if factor.auto is None:
        raise StoreError(f"factor '{factor_key}' is not measured (source '{factor.source}')")
    if rule is None:
        applied = {f: (r, tuple(t)) for f, _s, r, t, _at in store.thresholds()}
        rule, stored = applied.get(factor_key, (factor.auto.rule, factor.auto.thresholds))
        explicit = stored if rule == "explicit" else ()
    statistic = factor.auto.statistic
    measured = {
        video: stats[statistic].value
        for video, stats in store.measurements().items()
        if statistic in stats
    }
    if not measured:
        raise StoreError(f"no video has a '{statistic}' measurement yet; run `vadscene measure`")
    thresholds = rule_thresholds(np.array(list(measured.values())), rule, explicit)
    poles = {video: pole_of(value, thresholds, factor) for video, value in measured.items()}
    current = {
        d.video_id: d.value
        for d in store.current_decisions(annotator=AUTO_ANNOTATOR)
        if d.factor == factor_key
    }
    changed = [
        (video, current.get(video), pole)
        for video, pole in sorted(poles.items())
        if current.get(video) != pole
    ]
    return PoleChanges(factor_key, statistic, rule, thresholds, poles, changed)


def apply_rule(
    store: AnnotationStore,
    factor_key: str,
    rule: str | None = None,
    explicit: tuple[float, ...] = (),
) -> PoleChanges:
    """Apply a rule: record it and write the auto poles that changed, all in one transaction."""
    changes = preview_rule(store, factor_key, rule, explicit)
    store.apply_threshold(
        factor_key,
        changes.statistic,
        changes.rule,
        changes.thresholds,
        [(video, pole) for video, _previous, pole in changes.changed],
        note=f"{changes.statistic} {changes.rule} {list(changes.thresholds)}",
    )
    return changes
