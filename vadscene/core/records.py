"""Per-video records: what the store holds and what a release publishes.

These pydantic models are the release format. Its JSON Schema is generated from them
(:func:`vadscene.release.releases.release_json_schema`) and shipped as
``vadscene/release/schemas/release-v2.schema.json``; a test keeps the two identical.

Every time is an :data:`~vadscene.core.instants.Instant`: an ISO 8601 time with an offset, held
in UTC. Every piece of state carries the time it was set — decisions, marks (each kind apart),
measurements, threshold rules — and a withdrawal (a cleared decision, a measurement that found no
value) is a record with its time too, so merging releases can keep the newer per key.
Version 2 added mark times and withdrawals; a version 1 release is read by
:func:`vadscene.release.releases.parse_release`, its marks dated at its ``created_at``.
"""

from __future__ import annotations

import unicodedata
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from vadscene.core.catalogue import Catalogue, ThresholdRule
from vadscene.core.instants import Instant

RELEASE_SCHEMA_VERSION: Literal[2] = 2

MAX_INTEGER = 2**63 - 1
"""The largest integer a release may hold: what SQLite (and most JSON readers) can store."""

_RECORD = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
"""JSON has no NaN or infinity, so a number that is one cannot round-trip through a release."""

AUTO_ANNOTATOR = "auto"
"""The annotator name of decisions made by measurement (source ``auto``)."""

DecisionSource = Literal["manual", "auto", "override", "consensus"]
"""manual: clicked by an annotator; auto: derived from a measurement; override: an annotator
replaced an auto pole; consensus: adjudicated value after disagreement."""

Resolution = Literal["consensus", "agreement", "single", "override", "auto", "disagreement"]
"""How a release chose a video's value for a factor, in order of precedence: a consensus
decision; all human annotators agree (``agreement`` with several, ``single`` with one; an
annotator's override of an auto factor is reported as ``override``); else the auto pole;
``disagreement`` when human annotators differ and nobody adjudicated (value is null)."""


class VideoInfo(BaseModel):
    """What probing a video file tells, as registered in a workspace."""

    model_config = _RECORD

    video_id: str = Field(min_length=1, description="File stem, unique within the benchmark.")
    category: str = Field(min_length=1, description="Anomaly category; 'Normal' for normal videos.")
    split: str | None = Field(default=None, description="Benchmark split (e.g. 'test'), if known.")
    path: str | None = Field(
        default=None, description="Path relative to the workspace's video root (posix)."
    )
    num_frames: int = Field(ge=0, le=MAX_INTEGER, description="Decodable frames.")
    fps: float = Field(ge=0, description="Average frame rate.")
    duration_s: float = Field(ge=0, description="num_frames / fps.")
    width: int = Field(ge=0, le=MAX_INTEGER, description="Frame width in pixels.")
    height: int = Field(ge=0, le=MAX_INTEGER, description="Frame height in pixels.")
    codec: str = Field(description="FFmpeg codec name.")
    size_bytes: int = Field(ge=0, le=MAX_INTEGER, description="File size.")
    fingerprint: str = Field(description="Fast content fingerprint (sampled blake2b).")

    @field_validator("video_id")
    @classmethod
    def _nfc(cls, video_id: str) -> str:
        """One spelling per id: NFD (macOS file names) and NFC name the same video."""
        return unicodedata.normalize("NFC", video_id)


class FactorDecision(BaseModel):
    """One annotator's current decision on one factor of one video, with its provenance."""

    model_config = _RECORD

    annotator: str = Field(
        min_length=1, description=f"Who decided ('{AUTO_ANNOTATOR}' = measured)."
    )
    value: str = Field(description="A value of the factor, or 'ambiguous'.")
    source: DecisionSource = Field(description="How the decision was made.")
    decided_at: Instant = Field(description="When it was committed (UTC).")
    note: str | None = Field(default=None, description="The annotator's note, if any.")
    replaced_auto_value: str | None = Field(
        default=None, description="For an override: the auto pole it replaced."
    )
    replaced_measurement: float | None = Field(
        default=None, description="For an override: the measured statistic at that time."
    )


class FactorAssignment(BaseModel):
    """A video's value for one factor, and every current decision behind it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: str | None = Field(
        description="The value the audit uses: a factor value, 'ambiguous', or null (unresolved)."
    )
    resolution: Resolution = Field(description="How the value was chosen from the decisions.")
    decisions: tuple[FactorDecision, ...] = Field(
        min_length=1, description="Each annotator's current decision, sorted by annotator."
    )


class Measurement(BaseModel):
    """An automatically measured per-video statistic (sharpness, motion, chroma, ...)."""

    model_config = _RECORD

    value: float = Field(description="The statistic's value.")
    params: dict[str, str | int | float | bool | None] = Field(
        default_factory=dict, description="Parameters it was measured with."
    )
    decoder: str = Field(
        description="Decoder that read the frames: 'pyav' (PyAV, FFmpeg) for vadscene's own "
        "measurements."
    )
    frames_read: int = Field(
        ge=0, le=MAX_INTEGER, description="Frames the statistic averages over."
    )
    seconds: float = Field(ge=0, description="Time taken.")
    measured_at: Instant = Field(description="When it was measured (UTC).")


class AutoThreshold(BaseModel):
    """The dataset-level rule that turned an auto factor's statistic into poles."""

    model_config = _RECORD

    factor: str = Field(description="Factor key.")
    statistic: str = Field(description="Measured statistic the rule applies to.")
    rule: ThresholdRule = Field(description="Threshold rule.")
    thresholds: tuple[float, ...] = Field(description="Threshold values the rule gave.")
    set_at: Instant = Field(description="When the rule was applied (UTC).")


class VideoMarks(BaseModel):
    """Per-video marks by one annotator, each with the time its current value was set.

    A time beside a cleared value (``flagged`` false, ``note`` null) is a withdrawal: the flag
    was removed, the note cleared, at that time — it wins over an older flag or note on merge.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    annotator: str = Field(min_length=1)
    flagged: bool = Field(default=False, description="Flagged for review.")
    flagged_at: Instant | None = Field(
        default=None, description="When the flag was last set or removed (null: never)."
    )
    skipped: bool = Field(default=False, description="Skipped (not annotatable).")
    skipped_at: Instant | None = Field(
        default=None, description="When the skip was last set or removed (null: never)."
    )
    note: str | None = Field(default=None, description="Free-text note about the video.")
    note_at: Instant | None = Field(
        default=None, description="When the note was last written or cleared (null: never)."
    )

    @model_validator(mode="after")
    def _set_values_have_times(self) -> VideoMarks:
        for kind, is_set, at in (
            ("flagged", self.flagged, self.flagged_at),
            ("skipped", self.skipped, self.skipped_at),
            ("note", self.note is not None, self.note_at),
        ):
            if is_set and at is None:
                raise ValueError(f"{kind} is set but {kind}_at (when it was set) is missing")
        return self


class DecisionWithdrawal(BaseModel):
    """A decision cleared by its annotator: a record, so colleagues' copies clear too."""

    model_config = _RECORD

    factor: str = Field(description="Factor key.")
    annotator: str = Field(min_length=1, description="Who cleared it.")
    source: DecisionSource = Field(description="Source of the cleared decision.")
    withdrawn_at: Instant = Field(description="When it was cleared (UTC).")


class MeasurementWithdrawal(BaseModel):
    """A statistic measured to have no value (motion of a video without two normal frames):
    an earlier value must not come back from an older release."""

    model_config = _RECORD

    statistic: str = Field(min_length=1, description="Statistic name.")
    withdrawn_at: Instant = Field(description="When it was measured to have none (UTC).")


class VideoAssignment(BaseModel):
    """Whether a video is assigned to an annotator, since when and by whom; ``assigned`` false
    is a withdrawal (the video was moved to someone else), which wins over an older
    assignment on merge."""

    model_config = _RECORD

    annotator: str = Field(min_length=1)
    assigned: bool = Field(description="Assigned (true) or withdrawn (false).")
    assigned_at: Instant = Field(description="When (UTC).")
    assigned_by: str | None = Field(default=None, description="The lead who planned it.")


class VideoRecord(VideoInfo):
    """A released video: its registry entry plus factor values, measurements and marks."""

    factors: dict[str, FactorAssignment] = Field(
        default_factory=dict, description="Factor key → assignment; absent = nobody decided."
    )
    measurements: dict[str, Measurement] = Field(
        default_factory=dict, description="Statistic name → measurement."
    )
    marks: tuple[VideoMarks, ...] = Field(default=(), description="Flags, skips and notes.")
    withdrawn_decisions: tuple[DecisionWithdrawal, ...] = Field(
        default=(), description="Current cleared decisions, sorted by factor and annotator."
    )
    withdrawn_measurements: tuple[MeasurementWithdrawal, ...] = Field(
        default=(), description="Statistics without a value since their time, sorted."
    )
    assignments: tuple[VideoAssignment, ...] = Field(
        default=(), description="Who the video is (or was) assigned to, sorted by annotator."
    )


class PoleSupport(BaseModel):
    """How many videos fall at each pole of one contrast (ambiguous and unresolved apart)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    factor: str
    positive: str = Field(description="⊕ pole.")
    negative: str = Field(description="⊖ pole.")
    primary: bool
    n_positive: int = Field(ge=0, le=MAX_INTEGER)
    n_negative: int = Field(ge=0, le=MAX_INTEGER)
    n_ambiguous: int = Field(
        ge=0, le=MAX_INTEGER, description="Videos marked ambiguous for the factor."
    )
    n_unresolved: int = Field(
        ge=0, le=MAX_INTEGER, description="Videos with no value (unlabelled or disputed)."
    )


class Selection(BaseModel):
    """Whose decisions a release resolves values from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["consensus", "annotator"]
    annotator: str | None = Field(default=None, description="With mode 'annotator'.")


class ToolInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Literal["vadscene"] = "vadscene"
    version: str


class Release(BaseModel):
    """A versioned, self-describing scene-factor annotation release."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[2] = Field(description="Release format version.")
    dataset: str = Field(min_length=1, description="Benchmark name.")
    created_at: Instant = Field(description="When the release was written (UTC).")
    tool: ToolInfo
    selection: Selection
    catalogue: Catalogue = Field(description="The catalogue the values refer to, embedded.")
    annotators: tuple[str, ...] = Field(description="Human annotators whose decisions appear.")
    thresholds: tuple[AutoThreshold, ...] = Field(default=(), description="Auto-factor rules.")
    videos: tuple[VideoRecord, ...] = Field(description="One record per video, sorted by id.")
    support: tuple[PoleSupport, ...] = Field(description="Support per pole per contrast.")
