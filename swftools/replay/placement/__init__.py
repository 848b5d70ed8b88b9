"""Placement plug-ins of the replay engine: which free nodes and GPUs a job that fits now gets.

The engine (``engine_gpu.run_gpu``) decides *when* a job starts (FCFS / EASY on the node model
of ``model.GpuState``); a placement decides *where*, among the nodes that can host the job now:

* single-node jobs may go on any managed node with at least ``per_node`` free GPUs, and take
  ``per_node`` of its free GPUs;
* multi-node jobs take ``nodes`` whole free managed nodes (all their GPUs).

A placement is an object with ``choose(state, j, nodes, per_node) -> (node_set, gpus)``: the
node set (bit ``k`` = node ``k``) and the GPU set used on each of those nodes (bit ``i`` = GPU
``i``; whole nodes for multi-node jobs); it must not change ``state``. ``start(state,
runtime_factor)`` is called once before the replay.

Inputs come as plain arrays (``PlacementInputs``; the replay package does not know the what-if
model files): per node a rack id and a GPU model index, per node and GPU a speed score (1.0
nominal) and a performance class (0 fastest), per GPU model a relative speed, per job a gain.
Absent inputs mean a homogeneous machine: one rack, one model, scores 1.0, class 0, gains 1.0.
In flat mode (a pool of processors) a "node" is one processor with one "GPU".

Policies (``PLACEMENTS``):

``packed``
    today's first-fit: lowest-numbered node with enough free GPUs, lowest-numbered free GPUs;
    multi-node jobs the lowest-numbered whole free nodes (``GpuState.place`` + ``take``).
``best-fit``
    today's best-fit: the node with the fewest free GPUs that still fit, lowest number on ties,
    and its lowest-numbered free GPUs; multi-node jobs as ``packed``.
``random``
    a uniformly random node among those that fit (random whole nodes for multi-node jobs) and
    random free GPUs on it; ``random.Random(seed)``, so the same seed gives the same replay.
    On the engine's state one draw is made per job shape and state: jobs of the same shape asked
    about before the state changes (backfill candidates the reservation refuses) get the same
    draw, and the next start or end draws afresh. Every job that starts still gets a uniformly
    random placement among those that fit at its start; only refused candidates share draws,
    which lets the engine skip the rest of a refused shape as it does for the other policies.
``even``
    spreads every GPU model evenly, whatever the job: the job goes to the GPU model with the
    largest share of free GPUs (free GPUs of the model / its GPUs; ties: lower model index) among
    the models that can host it, first-fit inside the model; multi-node jobs take their nodes one
    at a time the same way (share of whole free nodes).
``priority``
    the seed's strict median split: fastest GPUs to the jobs that gain most. Nodes are ranked by
    (GPU model speed, best performance class of the node) from fastest to slowest. A job whose
    gain is *above the median gain of the replayed workload* (all jobs, fixed before the replay,
    so a job's side does not depend on the queue at the instant it starts) takes the fastest
    nodes that fit and the fastest free GPUs on them; the others take the slowest nodes and
    slowest GPUs, even while faster ones idle (nodes: lowest number within a rank; GPUs: the
    fast order reversed, so the higher-numbered of two equal GPUs). With equal gains every job
    is on the slow side.
``priority-wc``
    work-conserving priority: fast GPUs go to the highest-gain waiting job that fits, and no
    GPU is kept for a job that is not waiting. Nodes ranked as for ``priority``. The waiting
    jobs of higher gain than the job placed (submitted, not started; highest gain first, then
    queue order) claim, on a copy of the free GPUs, the fastest nodes that fit them (whole free
    nodes for multi-node jobs; a job that does not fit now claims nothing). The job takes the
    fastest unclaimed nodes that fit it and the fastest free GPUs on them; when everything it
    fits on is claimed it still starts (placements never hold a job back), on the slowest nodes
    and GPUs. With equal gains every job takes the fastest GPUs that fit. The engine tells it
    the queue (``PriorityWc.watches_queue``): every job submitted and not yet started or
    dropped is waiting, those of the instant's arrivals not yet looked at too. Its choice
    follows the queue, so it has no choice group; the compiled engine keeps the waiting jobs
    by gain rank, in queue order, in C (``_waiting.pxd``).
``variability-first``
    best performance class first: nodes ranked by the class of their slowest GPU (0 first),
    lowest number on ties; on a node the best-class (then highest-score) free GPUs.
``locality-first``
    fewest nodes, then fewest racks: single-node jobs best-fit (keeps whole nodes free for
    multi-node jobs); a multi-node job goes into the rack with the fewest whole free nodes that
    still holds it all, else takes racks by most whole free nodes first.
``lxv``
    the locality x variability trade-off: for each class threshold ``c`` (only GPUs of class
    ``<= c``) the fewest-racks placement (``locality-first`` on those GPUs: a single-node job on
    the node with the fewest such free GPUs that fit, then the fewest free GPUs, then the lowest
    number; its best-class GPUs) is one candidate, i.e. one cell of the L x V matrix; the
    engine's ``runtime_factor`` estimates each candidate's run time and the smallest wins (ties:
    fewer racks, then lower threshold). Without a ``runtime_factor`` every factor is 1 and the
    fewest-racks, best-class candidate wins.

``pm-first``, ``pal``
    PAL's placements as published (``pal.py``, ``pal_classes.py``): GPUs ranked by the job's
    application-class variability; PAL's class formation, cell order with its locality penalty
    and first fit. Compiled on recorded node shapes (``_pal.pyx``); ``tables.COMPILED_POLICIES``
    lists the policies with a compiled twin.

Placement by GPU count (``replay(..., shape="gpus")``, ``engine_count``): ``counts.py``'s
``choose_by_count`` gives a job any free GPUs, partial nodes allowed: ``pm-first`` and ``pal``
by their published rule on the count, the others by their own rule when the count fits one
node (or whole free nodes), else over the fewest nodes.

Keyed run-time factors. With ``PlacementInputs.factor_by_key`` the factor callback promises that
``runtime_factor(j, None, None)`` (the key query) returns a hashable key of job ``j``, and that a
job's factor depends on the job only through that key and on the placement only through its
signature (``Placement.signature``: the GPU models held, the lowest score held, the nodes and
racks spanned, the GPUs per node; from these placement inputs). Placements then evaluate the
callback once per (key, signature) and cache it (``Placement.factor``, which the engine uses
too); ``lxv`` caches its candidates per shape and its choices per (key, shape) while the
engine's state is unchanged (``model.TrackedGpuState``; on any other state it scans, as the
reference tests do), and keeps per-threshold usable-GPU counts up to date instead of scanning
nodes. ``swftools.whatif`` answers the key query with the job's class. Without the flag every
candidate is evaluated through the callback, as before; the schedules are the same either way.

Compiled twins (Cython, built at install): ``_choose.pyx`` has each built-in policy's ``choose``
(and ``_mtrand.pyx`` CPython's ``random.Random`` for ``random``, its state from ``mtrand.py``;
``_pal.pyx`` ``pm-first``'s and ``pal``'s) on the compiled engine's state, with their tables
from ``tables.py``; the engine's compiled general path (``replay/_engine_general.pyx``) uses
them for the classes of ``POLICY_CLASSES`` exactly (a subclass runs in Python).
"""

from __future__ import annotations

from typing import Sequence

from swftools.errors import UsageError
from swftools.replay.placement.base import (BestFit, Machine, Placement, PlacementInputs,
                                            RuntimeFactor, node_candidates, pick_gpus,
                                            take_tiers)
from swftools.replay.placement.locality import LocalityFirst, Lxv, fewest_racks
from swftools.replay.placement.pal import Pal, PmFirst
from swftools.replay.placement.policies import (Even, Priority, PriorityWc, Random, Tiered,
                                                VariabilityFirst)

__all__ = ["PLACEMENTS", "POLICY_CLASSES", "BestFit", "Even", "LocalityFirst", "Lxv",
           "Machine", "Pal", "Placement", "PlacementInputs", "PmFirst", "Priority", "PriorityWc",
           "Random", "RuntimeFactor", "Tiered", "VariabilityFirst", "fewest_racks", "make_placement",
           "node_candidates", "pick_gpus", "take_tiers"]

PLACEMENTS = ("packed", "best-fit", "random", "even", "priority", "priority-wc",
              "variability-first", "locality-first", "lxv", "pm-first", "pal")

POLICY_CLASSES: dict[str, type[Placement]] = {
    "packed": Placement, "best-fit": BestFit, "random": Random, "even": Even,
    "priority": Priority, "priority-wc": PriorityWc, "variability-first": VariabilityFirst,
    "locality-first": LocalityFirst, "lxv": Lxv, "pm-first": PmFirst, "pal": Pal,
}


def make_placement(name: str, machine: Machine | None = None,
                   gains: Sequence[float] | None = None, seed: int = 0) -> Placement:
    """The placement called ``name`` (one of ``PLACEMENTS``)."""
    cls = POLICY_CLASSES.get(name)
    if cls is None:
        raise UsageError(f"unknown placement {name!r} (choose from {', '.join(PLACEMENTS)})")
    return cls(machine, gains, seed)
