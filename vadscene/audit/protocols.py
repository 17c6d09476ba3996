"""Protocol presets: the conventions each paper used, chosen with one option.

``vadscene audit --protocol look-inside`` (or ``AuditRequest(protocol="look-inside")``) sets
every audit setting the paper fixes, so one command reproduces its numbers; the index of the
papers' tables with their commands is docs/papers.md. Each preset is a small table of
settings (fields of :class:`~vadscene.audit.request.AuditRequest`), each with the sentence of
the paper that justifies it. A setting the request gives explicitly wins over the preset:
one named in :attr:`~vadscene.audit.request.AuditRequest.explicit` (the CLI names every option
typed), or one set to other than its default.

Settings no preset sets, and why: ``snippet_repeat`` and ``feature_snippet_frames`` describe
how a score or feature file was saved (``:K``, ``models.json``, ``probes.json``), not a choice
of the paper; ``normal_with_anomaly`` only matters for inconsistent ground truth, which the
papers' benchmarks do not hold; the scene-bias paper does not say how its interval ends
were read, so its preset leaves ``interval_end`` as given. The look-inside paper reports point
estimates only (§7, "We do not estimate uncertainty in these differences"), yet its preset keeps
the bootstrap: intervals do not change a point estimate, and a reader of a new benchmark
wants them.
"""

from __future__ import annotations

import typing
from dataclasses import MISSING, dataclass, fields, replace
from typing import Any, ClassVar, TypeVar

from vadscene.benchmark.frames import AuditInputError


class _Request(typing.Protocol):
    """What this module reads of an :class:`~vadscene.audit.request.AuditRequest` (which
    imports this module, so it is described here rather than imported)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def protocol(self) -> str | None: ...

    @property
    def explicit(self) -> frozenset[str]: ...


_AnyRequest = TypeVar("_AnyRequest", bound=_Request)


@dataclass(frozen=True)
class ProtocolSetting:
    """One setting of a preset: the request field, its value and the paper's reason."""

    name: str
    value: Any  # of the field's type; AuditRequest checks it when the preset is applied
    reason: str


@dataclass(frozen=True)
class Protocol:
    """A paper's protocol: its name (the ``--protocol`` value), the paper and its settings."""

    name: str
    paper: str
    settings: tuple[ProtocolSetting, ...]


LOOK_INSIDE = Protocol(
    name="look-inside",
    paper="Song & Lee, Look Inside Each Video (arXiv 2608.21854)",
    settings=(
        ProtocolSetting(
            "interval_end",
            "inclusive",
            "§4.1 and Table 2 give the UCF-Crime oracle video-constant micro AUROC as "
            '92.95 %, and App. C.1: "Ground-truth-only analyses instead use the full benchmark '
            'annotations." On the full UR-DMU annotation (original frame counts) the oracle is '
            "92.95 % only when an interval's end frame is anomalous (92.96 % otherwise).",
        ),
        ProtocolSetting(
            "interval_ap",
            True,
            "App. H reports binary anomaly-event AP (Tables 18–20) and class-wise mAP "
            "(Table 21) beside the frame metrics.",
        ),
        ProtocolSetting(
            "interval_ap_events",
            "vadclip",
            "App. H: \"The binary comparison uses a scalar adaptation of VadCLIP's released "
            'interval evaluation."',
        ),
    ),
)

SCENE_BIAS = Protocol(
    name="scene-bias",
    paper="Auditing Frame-Level AUC in WSVAD: Granularity, Resolution, and Scene Bias "
    "(arXiv 2608.11985)",
    settings=(
        ProtocolSetting(
            "bootstrap",
            1000,
            '§5.1: "Resampling experiments use B=1000 video-level replicates".',
        ),
        ProtocolSetting(
            "category_bootstrap",
            "unstratified",
            '§3.3: "We quantify the AUC uncertainty by repeatedly drawing evaluation videos '
            'with replacement, retaining all frames of each selected video" — drawn from all '
            "videos, not within each category.",
        ),
    ),
)

PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (LOOK_INSIDE, SCENE_BIAS)}
"""The presets by ``--protocol`` name."""


def protocol_named(name: str) -> Protocol:
    """The preset called ``name``; an unknown name is refused with the known ones."""
    if name not in PROTOCOLS:
        raise AuditInputError(f"unknown protocol {name!r}: expected one of {', '.join(PROTOCOLS)}")
    return PROTOCOLS[name]


def apply_protocol(request: _AnyRequest) -> _AnyRequest:
    """``request`` with its protocol's settings filled in, those it gives explicitly kept.

    A setting counts as given when :attr:`~vadscene.audit.request.AuditRequest.explicit`
    names it or its value differs from the field's default (:func:`is_given`); the returned
    request's ``explicit`` also names the settings the protocol filled in. Without a protocol
    the request is returned as it is.
    """
    if request.protocol is None:
        return request
    protocol = protocol_named(request.protocol)
    filled = {s.name: s.value for s in protocol.settings if not is_given(request, s.name)}
    return replace(request, **filled, explicit=request.explicit | set(filled))


def protocol_conventions(request: _Request) -> dict[str, str] | None:
    """What the report states of the protocol of ``request`` (as given, before
    :func:`apply_protocol`): its name, paper, the settings it set and those given explicitly
    instead; ``None`` without a protocol."""
    if request.protocol is None:
        return None
    protocol = protocol_named(request.protocol)
    given = [s for s in protocol.settings if is_given(request, s.name)]
    taken = [s for s in protocol.settings if s not in given]
    return {
        "name": protocol.name,
        "paper": protocol.paper,
        "settings_from_it": _listed([(s.name, s.value) for s in taken]),
        "settings_given_explicitly": _listed([(s.name, getattr(request, s.name)) for s in given]),
    }


def is_given(request: _Request, name: str) -> bool:
    """Whether ``request`` sets ``name`` itself rather than leaving it at its default: named in
    its ``explicit`` or given another value than the field's default."""
    field = next(f for f in fields(request) if f.name == name)
    return name in request.explicit or (
        field.default is not MISSING and getattr(request, name) != field.default
    )


def _listed(settings: list[tuple[str, object]]) -> str:
    return ", ".join(f"{name}={value}" for name, value in settings) or "none"
