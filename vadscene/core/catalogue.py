"""The scene-factor catalogue: which factors a benchmark is annotated with.

A catalogue is data (YAML or JSON), validated here with pydantic. Each factor has a stable key,
a level (recording | content), two or more values, the contrasts it contributes to the audit
(pairs of values, ⊕ first), the criterion shown to the annotator, and a source (manual | auto).
Every factor also admits :data:`AMBIGUOUS` — excluded from that factor only — so the value is
reserved. The default UCF-Crime catalogue (``spec/factors.md``; Table S1 of the scene-bias audit
paper) ships as ``annotations/catalogues/ucf_crime.yaml``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from vadscene.core import jsonio
from vadscene.core.errors import CatalogueError, parse_failure, validation_problems
from vadscene.core.paths import default_catalogue_path

AMBIGUOUS = "ambiguous"
"""The value every factor admits besides its own: the criterion is not met for the majority of
the video, or the video is mixed. Ambiguous videos are left out of that factor's contrasts."""

ThresholdRule = Literal["median", "terciles", "explicit"]
"""How an auto factor's statistic becomes poles (:mod:`vadscene.measure.thresholds`)."""
THRESHOLD_RULES: tuple[ThresholdRule, ...] = get_args(ThresholdRule)
"""Every threshold rule, in the order the CLI and the Measure page offer them."""

_KEY = r"^[a-z][a-z0-9_]*$"


class Contrast(BaseModel):
    """A pair of values compared by the audit: ``positive`` is the ⊕ pole, ``negative`` ⊖."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    positive: str = Field(description="The ⊕ pole.")
    negative: str = Field(description="The ⊖ pole.")
    primary: bool = Field(
        default=False,
        description="Counted among the benchmark's primary contrasts; false (the default for a "
        "listed contrast) = corroboration only. The contrast implied by a two-valued factor "
        "is primary.",
    )

    @property
    def label(self) -> str:
        return f"{self.positive} vs {self.negative}"


class AutoRule(BaseModel):
    """How an automatically measured factor turns its statistic into poles."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    statistic: Literal["sharpness", "motion"] = Field(
        description="sharpness: mean Laplacian variance; motion: mean abs frame difference."
    )
    rule: ThresholdRule = Field(
        description="median split; terciles with the middle ambiguous; or explicit thresholds."
    )
    thresholds: tuple[float, ...] = Field(
        default=(), description="Threshold values, only with rule 'explicit' (1 or 2 values)."
    )

    @model_validator(mode="after")
    def _thresholds_match_rule(self) -> AutoRule:
        if self.rule == "explicit" and len(self.thresholds) not in (1, 2):
            raise ValueError("rule 'explicit' needs 1 or 2 thresholds")
        if self.rule != "explicit" and self.thresholds:
            raise ValueError(f"rule '{self.rule}' derives its thresholds; give none")
        return self


class Factor(BaseModel):
    """One scene factor of the catalogue."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(pattern=_KEY, description="Stable identifier used in stores and releases.")
    name: str = Field(min_length=1, description="Display name.")
    level: Literal["recording", "content"] = Field(
        description="recording: how the footage was recorded; content: what the scene shows."
    )
    values: tuple[str, ...] = Field(description="The factor's values (poles); at least two.")
    criterion: str = Field(min_length=1, description="The annotation criterion.")
    source: Literal["manual", "auto"] = Field(description="Clicked by an annotator, or measured.")
    role: Literal["scene", "control"] = Field(
        default="scene",
        description="control: a composition control reported apart (e.g. activity).",
    )
    contrasts: tuple[Contrast, ...] = Field(
        default=(),
        description="Audited value pairs; defaults to values[0] vs values[1] for two values.",
    )
    auto: AutoRule | None = Field(default=None, description="Measurement rule of an auto factor.")
    hint: str | None = Field(
        default=None, description="A measured statistic that may pre-fill a manual factor."
    )

    @model_validator(mode="before")
    @classmethod
    def _default_contrast(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("contrasts"):
            values = data.get("values")
            if isinstance(values, list | tuple) and len(values) == 2:
                implied = {"positive": values[0], "negative": values[1], "primary": True}
                data = {**data, "contrasts": [implied]}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Factor:
        if len(self.values) < 2:
            raise ValueError(f"needs at least two values, got {len(self.values)}")
        duplicates = sorted({v for v in self.values if self.values.count(v) > 1})
        if duplicates:
            raise ValueError(f"duplicate values {duplicates}")
        # Reserved however written: "Ambiguous" beside the admitted "ambiguous" would be a
        # second, look-alike value that the audit counts as a pole.
        reserved = next((v for v in self.values if v.strip().casefold() == AMBIGUOUS), None)
        if reserved is not None:
            raise ValueError(
                f"'{reserved}' is reserved (every factor admits '{AMBIGUOUS}', in any case or "
                "spacing); remove it"
            )
        if any(not v.strip() for v in self.values):
            raise ValueError("values must be non-empty text")
        if not self.contrasts:
            raise ValueError("a factor with more than two values must list its contrasts")
        for contrast in self.contrasts:
            for pole in (contrast.positive, contrast.negative):
                if pole not in self.values:
                    raise ValueError(
                        f"contrast '{contrast.label}' names unknown value '{pole}' "
                        f"(values: {', '.join(self.values)})"
                    )
            if contrast.positive == contrast.negative:
                raise ValueError(f"contrast '{contrast.label}' compares a value with itself")
        if self.source == "auto" and self.auto is None:
            raise ValueError("source 'auto' needs an 'auto' rule (statistic and rule)")
        if self.source == "manual" and self.auto is not None:
            raise ValueError("an 'auto' rule is only allowed with source 'auto'")
        return self

    def allows(self, value: str) -> bool:
        """True when ``value`` is one of the factor's values or :data:`AMBIGUOUS`."""
        return value == AMBIGUOUS or value in self.values


class Catalogue(BaseModel):
    """A benchmark's list of scene factors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="Catalogue name, e.g. 'ucf-crime'.")
    version: str = Field(default="1", description="Version of this catalogue's text.")
    description: str = Field(default="", description="What the catalogue covers.")
    factors: tuple[Factor, ...] = Field(min_length=1, description="The factors, in display order.")

    @model_validator(mode="after")
    def _unique_keys(self) -> Catalogue:
        keys = [f.key for f in self.factors]
        duplicates = sorted({k for k in keys if keys.count(k) > 1})
        if duplicates:
            raise ValueError(f"duplicate factor keys {duplicates}")
        return self

    @cached_property
    def _by_key(self) -> dict[str, Factor]:
        return {f.key: f for f in self.factors}

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(f.key for f in self.factors)

    def factor(self, key: str) -> Factor:
        """The factor named ``key``; :class:`CatalogueError` listing the known keys otherwise."""
        try:
            return self._by_key[key]
        except KeyError:
            raise CatalogueError(
                f"unknown factor '{key}' (catalogue '{self.name}' has: {', '.join(self.keys)})"
            ) from None

    def primary_contrasts(self) -> list[tuple[Factor, Contrast]]:
        """The primary contrasts in catalogue order (twelve for the UCF-Crime default)."""
        return [(f, c) for f in self.factors for c in f.contrasts if c.primary]


def parse_catalogue(data: Any, *, origin: str = "catalogue") -> Catalogue:
    """Validate already-parsed catalogue data; errors name the factor by key and the problem."""
    try:
        return Catalogue.model_validate(data)
    except ValidationError as exc:
        problems = [_name_factor(p, data) for p in validation_problems(exc)]
        # pydantic skips the catalogue-level check when a factor fails; report duplicates anyway.
        duplicates = _duplicate_keys(data)
        if duplicates and not any("duplicate factor keys" in p for p in problems):
            problems.append(f"$.factors: duplicate factor keys {duplicates}")
        raise CatalogueError(
            f"{origin}: invalid catalogue\n" + "\n".join(f"  - {p}" for p in problems)
        ) from None


def load_catalogue(path: Path | str | None = None) -> Catalogue:
    """Load a catalogue from a ``.yaml``/``.yml``/``.json`` file (the default one when None)."""
    path = Path(path) if path is not None else default_catalogue_path()
    if not path.is_file():
        raise CatalogueError(f"{path}: catalogue file not found")
    text = path.read_text(encoding="utf-8")
    try:
        data = jsonio.loads(text) if path.suffix.lower() == ".json" else jsonio.load_yaml(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise CatalogueError(
            f"{path}: not valid {path.suffix.lstrip('.').upper()}: {parse_failure(exc)}"
        ) from None
    return parse_catalogue(data, origin=str(path))


def _duplicate_keys(data: Any) -> list[str]:
    try:
        keys = [f.get("key") for f in data["factors"]]
    except (KeyError, TypeError, AttributeError):
        return []
    return sorted({k for k in keys if isinstance(k, str) and keys.count(k) > 1})


def _name_factor(problem: str, data: Any) -> str:
    """Prefix a problem located under ``$.factors[i]`` with the factor's key, when it has one."""
    match = re.match(r"\$\.factors\[(\d+)\]", problem)
    if not match or not isinstance(data, dict):
        return problem
    try:
        key = data["factors"][int(match.group(1))].get("key")
    except (KeyError, IndexError, TypeError, AttributeError):
        return problem
    return f"factor '{key}': {problem}" if key else problem


THRESHOLD_COUNTS: dict[str, tuple[int, ...]] = {
    "median": (1,),
    "terciles": (2,),
    "explicit": (1, 2),
}
"""How many thresholds each rule gives: one splits at a value, two leave the middle ambiguous."""


def threshold_rule_problems(
    catalogue: Catalogue, factor_key: str, statistic: str, rule: str, thresholds: Sequence[float]
) -> list[str]:
    """What is wrong with an auto factor's threshold rule, against the catalogue and itself.

    The factor must be an auto factor, the statistic the one its catalogue entry measures, the
    rule one of :data:`THRESHOLD_RULES` with as many finite thresholds as it gives
    (:data:`THRESHOLD_COUNTS`), in increasing order. The store API and release validation both
    ask this, so a rule the store accepts can always be released.
    """
    if factor_key not in catalogue.keys:
        return [f"unknown factor '{factor_key}' (catalogue has: {', '.join(catalogue.keys)})"]
    auto = catalogue.factor(factor_key).auto
    if auto is None:
        return [f"factor '{factor_key}' is not an auto factor of the catalogue"]
    found = []
    if statistic != auto.statistic:
        found.append(f"factor '{factor_key}' is measured by '{auto.statistic}', not '{statistic}'")
    if rule not in THRESHOLD_COUNTS:
        found.append(f"unknown rule '{rule}' (expected one of: {', '.join(THRESHOLD_RULES)})")
        return found
    values = list(thresholds)
    if not all(isinstance(t, int | float) and math.isfinite(t) for t in values):
        found.append(f"thresholds must be finite numbers, got {values}")
    elif len(values) not in THRESHOLD_COUNTS[rule]:
        expected = " or ".join(str(n) for n in THRESHOLD_COUNTS[rule])
        found.append(f"rule '{rule}' gives {expected} thresholds, got {len(values)}: {values}")
    elif values != sorted(values):
        found.append(f"thresholds must be in increasing order, got {values}")
    return found
