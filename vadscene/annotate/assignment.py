"""Assignment with overlap: each video to k annotators of a team, loads balanced, every
category spread over everyone in proportion, and a re-plan that leaves started work in place.

Terms. The *team* is the annotators a plan may give videos to; a plan only ever names team
members. A (video, annotator) pair is *started* when the annotator holds a decision on the
video; a started pair of a team member is *kept*: every plan holds it, so re-planning
mid-campaign never moves work someone has begun. Every video gets max(k, its kept
annotators) distinct team members — exactly k unless more than k of the team have started it
already. A *valid plan* is one that does both.

Balanced. Let load(a) be how many videos a plan gives annotator a and count_c(a) how many of
those are in category c. Kept work is fixed and can hold a load above an even split (so can
the rule that nobody is on a video twice), so the plan is the best that kept work allows, by
these criteria in this order:

1. with ``stratify``, in every category c: no valid plan has a smaller Σ_a count_c(a)²;
2. no valid plan that also meets 1 has a smaller Σ_a load(a)²;
3. no valid plan that also meets 1 and 2 keeps more of the current assignments.

A sum of squares is minimal exactly when no unstarted work can pass, directly or through
others, from an annotator to one at least two videos lighter; so criterion 2 also makes the
largest load as small as it can be, then the second largest, and so on. Without kept work
every load is within one of every other and, with ``stratify``, so is every annotator's count
in every category. Criterion 3 makes a re-plan of an unchanged campaign change nothing, and a
changed one move as little as balance allows. The seed breaks the remaining ties: the same
inputs and seed give the same plan.

How. Videos alike in category, kept annotators and current annotators are interchangeable,
so the plan is solved on such *types* — how many videos of each type go to each annotator —
as a minimum-cost flow with convex costs, then dealt out to the videos. A greedy start is
improved by cancelling negative-cost cycles of the residual graph one unit at a time; with
separable convex costs a flow without such a cycle is optimal.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from vadscene.annotate.consensus import HUMAN_SOURCES
from vadscene.core.errors import VadsceneError
from vadscene.store.database import AnnotationStore


class AssignmentError(VadsceneError):
    """An assignment that cannot be planned as asked (team, overlap)."""


def plan_assignment(
    videos: Mapping[str, str],
    annotators: Sequence[str],
    overlap: int,
    *,
    stratify: bool,
    seed: int,
    current: Mapping[str, Collection[str]],
    started: Mapping[str, Collection[str]],
) -> dict[str, tuple[str, ...]]:
    """Video → its annotators (sorted), for every video of ``videos`` (video → category).

    ``annotators`` is the team; ``overlap`` the k annotators per video; ``current`` (video →
    annotators assigned now) and ``started`` (video → annotators holding a decision on it)
    describe the campaign so far. Names outside the team are ignored in both. The plan's
    properties are the module's. Refuses (:class:`AssignmentError`) an empty team, a name
    listed twice, and an overlap below 1 or above the team's size.
    """
    team = _checked_team(annotators, overlap)
    rng = random.Random(seed)
    ordered = sorted(team)
    rng.shuffle(ordered)  # the seed's order of the team: it breaks ties between annotators
    index = {name: i for i, name in enumerate(ordered)}
    video_order = sorted(videos)
    rng.shuffle(video_order)
    groups = sorted({videos[v] for v in videos}) if stratify else [""]
    group_of = {g: i for i, g in enumerate(groups)}

    types: dict[tuple[int, tuple[int, ...], tuple[int, ...]], _Type] = {}
    for video in video_order:
        kept = tuple(sorted({index[a] for a in started.get(video, ()) if a in index}))
        now = {index[a] for a in current.get(video, ()) if a in index} - set(kept)
        group = group_of[videos[video]] if stratify else 0
        key = (group, kept, tuple(sorted(now)))
        if key not in types:
            types[key] = _Type(
                group=group,
                kept=kept,
                current=frozenset(now),
                need=max(overlap, len(kept)) - len(kept),
                allowed=tuple(a for a in range(len(ordered)) if a not in kept),
            )
        types[key].videos.append(video)

    flow = _Flow(len(groups), len(ordered), [types[k] for k in sorted(types)], len(videos))
    flow.start()
    flow.optimise()
    plan: dict[str, tuple[str, ...]] = {}
    for kind, units in zip(flow.types, flow.units, strict=True):
        for video, dealt in zip(kind.videos, _deal(units, len(kind.videos)), strict=True):
            plan[video] = tuple(sorted(ordered[a] for a in (*kind.kept, *dealt)))
    return {video: plan[video] for video in sorted(plan)}


def _checked_team(annotators: Sequence[str], overlap: int) -> list[str]:
    team = list(annotators)
    if not team:
        raise AssignmentError("an assignment needs at least one annotator (none given)")
    twice = sorted({name for name in team if team.count(name) > 1})
    if twice:
        raise AssignmentError(f"annotator '{twice[0]}' is listed twice; list each annotator once")
    if overlap < 1:
        raise AssignmentError(f"the overlap must be at least 1 annotator per video (got {overlap})")
    if overlap > len(team):
        raise AssignmentError(
            f"an overlap of {overlap} annotators per video needs at least {overlap} annotators; "
            f"{len(team)} given ({', '.join(team)})"
        )
    return team


@dataclass
class _Type:
    """Interchangeable videos: one group (category), the same kept annotators and the same
    current (unstarted) ones; each needs ``need`` more annotators from ``allowed``."""

    group: int
    kept: tuple[int, ...]
    current: frozenset[int]
    need: int
    allowed: tuple[int, ...]
    videos: list[str] = field(default_factory=list)


def _deal(units: Sequence[int], videos: int) -> list[tuple[int, ...]]:
    """Per video its new annotators, annotator a on ``units[a]`` of the ``videos``.

    Each annotator's units are consecutive in the sequence and at most ``videos`` long, so
    taking every ``videos``-th element gives a video no annotator twice."""
    sequence = [a for a, n in enumerate(units) for _ in range(n)]
    return [tuple(sequence[j::videos]) for j in range(videos)]


_MOVE, _COUNT_UP, _COUNT_DOWN, _LOAD_UP, _LOAD_DOWN = range(5)
_Arc = tuple[int, int, int, int]
"""(kind, …): (_MOVE, type, from annotator, to annotator) moves one video of a type;
(_COUNT_UP / _COUNT_DOWN, group, annotator, 0) and (_LOAD_UP / _LOAD_DOWN, annotator, 0, 0)
are the steps of a count or a load that a move makes."""
_Edge = tuple[int, int, int, _Arc]
"""(from node, to node, cost, arc)."""


class _Flow:
    """The type → annotator flow and its costs (module docstring, "How").

    ``units[t][a]`` videos of type t go to annotator a. The cost, minimised lexicographically,
    is (Σ count_c(a)², Σ load(a)², −current assignments kept), folded into one integer with
    weights large enough that no cycle's lower terms can outweigh a higher one.

    Cycles are sought in a condensed residual graph: a node per (group, annotator), per
    annotator, and a sink. An edge (g, a) → (g, b) moves one video of a type of group g from
    a to b (cost: the change in current assignments kept; the best type stands for all);
    (g, a) ↔ a steps count_g(a) up or down, a ↔ sink steps load(a), each at its marginal cost.
    """

    def __init__(self, groups: int, annotators: int, types: list[_Type], videos: int) -> None:
        self.groups, self.n, self.types = groups, annotators, types
        self.units = [[0] * annotators for _ in types]
        self.kept_count = [[0] * annotators for _ in range(groups)]
        self.kept_load = [0] * annotators
        for kind in types:
            for a in kind.kept:
                self.kept_count[kind.group][a] += len(kind.videos)
                self.kept_load[a] += len(kind.videos)
        self.count = [row[:] for row in self.kept_count]
        self.load = self.kept_load[:]
        self.nodes = groups * annotators + annotators + 1
        self.sink = self.nodes - 1
        # What a simple cycle's lower terms can reach: at most `nodes` moves (±1 each), at
        # most one load step up and one down (each below 2 * videos + 1 in size).
        self.w_load = self.nodes + 1
        self.w_count = (2 * videos + 3) * self.w_load

    def _add(self, t: int, a: int, step: int) -> None:
        kind = self.types[t]
        self.units[t][a] += step
        self.count[kind.group][a] += step
        self.load[a] += step

    def start(self) -> None:
        """A feasible flow: every video keeps its current annotators (up to its need, in the
        seed's order); the rest goes unit by unit to the allowed annotator with the lowest
        count in the group, then the lowest load, then first in the seed's order."""
        for t, kind in enumerate(self.types):
            size = len(kind.videos)
            kept = [a for a in kind.allowed if a in kind.current][: kind.need]
            for a in kept:
                self._add(t, a, size)
            for _ in range((kind.need - len(kept)) * size):
                best = min(
                    (a for a in kind.allowed if self.units[t][a] < size),
                    key=lambda a: (self.count[kind.group][a], self.load[a], a),
                )
                self._add(t, best, 1)

    def _cost(self, arc: _Arc) -> int:
        kind, i, j, k = arc
        if kind == _MOVE:
            current = self.types[i].current
            return (j in current) - (k in current)
        if kind == _COUNT_UP:
            return self.w_count * (2 * self.count[i][j] + 1)
        if kind == _COUNT_DOWN:
            return -self.w_count * (2 * self.count[i][j] - 1)
        if kind == _LOAD_UP:
            return self.w_load * (2 * self.load[i] + 1)
        return -self.w_load * (2 * self.load[i] - 1)

    def _open(self, arc: _Arc) -> bool:
        """Whether one more unit can pass the arc."""
        kind, i, j, k = arc
        if kind == _MOVE:
            return self.units[i][j] > 0 and self.units[i][k] < len(self.types[i].videos)
        if kind == _COUNT_DOWN:
            return self.count[i][j] > self.kept_count[i][j]
        if kind == _LOAD_DOWN:
            return self.load[i] > self.kept_load[i]
        return True

    def _edges(self) -> list[_Edge]:
        n, groups = self.n, self.groups
        best: dict[tuple[int, int, int], tuple[int, int]] = {}
        for t, kind in enumerate(self.types):
            size, units = len(kind.videos), self.units[t]
            takers = [b for b in kind.allowed if units[b] < size]
            for a in kind.allowed:
                if units[a] == 0:
                    continue
                for b in takers:
                    if a != b:
                        cost = (a in kind.current) - (b in kind.current)
                        key = (kind.group, a, b)
                        if key not in best or cost < best[key][0]:
                            best[key] = (cost, t)
        arcs: list[tuple[int, int, _Arc]] = [
            (g * n + a, g * n + b, (_MOVE, t, a, b)) for (g, a, b), (_c, t) in sorted(best.items())
        ]
        for g in range(groups):
            for a in range(n):
                arcs.append((g * n + a, groups * n + a, (_COUNT_UP, g, a, 0)))
                arcs.append((groups * n + a, g * n + a, (_COUNT_DOWN, g, a, 0)))
        for a in range(n):
            arcs.append((groups * n + a, self.sink, (_LOAD_UP, a, 0, 0)))
            arcs.append((self.sink, groups * n + a, (_LOAD_DOWN, a, 0, 0)))
        return [(u, v, self._cost(arc), arc) for u, v, arc in arcs if self._open(arc)]

    def optimise(self) -> None:
        """Cancel negative cycles until there is none; a cycle found is pushed again for as
        long as it stays open and negative (its marginal costs rise with every unit)."""
        while (cycle := _negative_cycle(self.nodes, self._edges())) is not None:
            arcs = [arc for _u, _v, _cost, arc in cycle]
            assert sum(map(self._cost, arcs)) < 0, "a cycle of the parent links is negative"
            while all(self._open(arc) for arc in arcs) and sum(map(self._cost, arcs)) < 0:
                for kind, t, a, b in arcs:
                    if kind == _MOVE:
                        self._add(t, a, -1)
                        self._add(t, b, 1)


def _negative_cycle(nodes: int, edges: Sequence[_Edge]) -> list[_Edge] | None:
    """A cycle of negative total cost, or None: Bellman–Ford from every node at once, looking
    for a cycle among the parent links after every pass (any such cycle is negative)."""
    distance = [0] * nodes
    parent: list[_Edge | None] = [None] * nodes
    for _ in range(nodes):
        relaxed = False
        for edge in edges:
            source, target, cost, _arc = edge
            if distance[source] + cost < distance[target]:
                distance[target] = distance[source] + cost
                parent[target] = edge
                relaxed = True
        if not relaxed:
            return None
        cycle = _parent_cycle(parent)
        if cycle is not None:
            return cycle
    return _parent_cycle(parent)


def _parent_cycle(parent: Sequence[_Edge | None]) -> list[_Edge] | None:
    """A cycle of the parent links (each node's last relaxing edge), if there is one."""
    state = [0] * len(parent)  # 0: not seen, 1: on the path being walked, 2: done
    for start in range(len(parent)):
        path, node = [], start
        while state[node] == 0:
            state[node] = 1
            path.append(node)
            edge = parent[node]
            if edge is None:
                break
            node = edge[0]
        else:
            if state[node] == 1:  # the walk came back onto itself
                cycle: list[_Edge] = []
                at = node
                while not cycle or at != node:
                    edge = parent[at]
                    assert edge is not None
                    cycle.append(edge)
                    at = edge[0]
                return cycle
        for node in path:
            state[node] = 2
    return None


# --- a workspace's re-plan ------------------------------------------------------------------


@dataclass(frozen=True)
class AnnotatorPlan:
    """What a plan means for one annotator."""

    annotator: str
    assigned: int
    """Videos the plan gives them."""
    started: int
    """Of those, videos they have started."""
    added: int
    """Of those, videos not assigned to them now."""
    withdrawn: int
    """Videos assigned to them now that the plan takes away."""
    by_category: dict[str, int]
    """Assigned videos per category (every category of the workspace)."""


@dataclass(frozen=True)
class Replan:
    """A plan for a workspace and the assignment changes that make it current."""

    plan: dict[str, tuple[str, ...]]
    """Video → its planned annotators."""
    team: tuple[str, ...]
    """The team's current ids, as listed."""
    changes: tuple[tuple[str, str, bool], ...]
    """(video, annotator, assigned) for :meth:`~vadscene.store.team.TeamStore.
    record_assignments`: True assigns, False withdraws; nothing already so."""
    annotators: tuple[AnnotatorPlan, ...]
    """The team in name order, then anyone outside it who loses assignments."""
    categories: tuple[str, ...]


def started_pairs(store: AnnotationStore) -> dict[str, set[str]]:
    """Video → the annotators holding a current value of their own on it (a manual decision
    or an override): work a re-plan keeps where it is."""
    started: dict[str, set[str]] = {}
    for d in store.current_decisions():
        if d.value is not None and d.source in HUMAN_SOURCES:
            started.setdefault(d.video_id, set()).add(d.annotator)
    return started


def replan(
    store: AnnotationStore,
    annotators: Iterable[str],
    overlap: int,
    *,
    stratify: bool,
    seed: int,
) -> Replan:
    """Plan the workspace's videos over the registered, active ``annotators`` (names resolve
    to their current ids) from its current assignments and started work, with the changes
    that make the plan current: the team's new videos assigned, every current assignment the
    plan does not hold withdrawn — also those of annotators left out of the team."""
    team = []
    for name in annotators:
        entry = store.annotator(name)
        if not entry.active:
            raise AssignmentError(f"annotator '{entry.annotator_id}' is revoked; leave them out")
        team.append(entry.annotator_id)
    categories = {video.video_id: video.category for video in store.videos()}
    current: dict[str, set[str]] = {}
    for name, assigned in store.assignments().items():
        for video in assigned:
            current.setdefault(video, set()).add(name)
    started = started_pairs(store)
    plan = plan_assignment(
        categories,
        team,
        overlap,
        stratify=stratify,
        seed=seed,
        current=current,
        started=started,
    )
    held = {(v, a) for v, names in current.items() for a in names}
    planned = {(v, a) for v, names in plan.items() for a in names}
    changes = sorted(
        [(v, a, True) for v, a in planned - held] + [(v, a, False) for v, a in held - planned],
        key=lambda change: (change[1], change[0], change[2]),
    )
    names = sorted(team) + sorted({a for _v, a in held - planned} - set(team))
    workspace_categories = sorted(set(categories.values()))
    rows = []
    for name in names:
        mine = sorted(v for v, a in planned if a == name)
        per_category = dict.fromkeys(workspace_categories, 0)
        for video in mine:
            per_category[categories[video]] += 1
        rows.append(
            AnnotatorPlan(
                annotator=name,
                assigned=len(mine),
                started=sum(1 for v in mine if name in started.get(v, ())),
                added=sum(1 for v in mine if (v, name) not in held),
                withdrawn=sum(1 for v, a in held - planned if a == name),
                by_category=per_category,
            )
        )
    return Replan(plan, tuple(team), tuple(changes), tuple(rows), tuple(workspace_categories))
