"""Queue limits from the site settings and termination-code consistency."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from swftools.site import Queue, Site
from swftools.validate.context import Context
from swftools.validate.registry import NotApplicable, rule

TERMCODES = {0: "success", 1: "fail", 2: "walltime exceeded", 3: "cancelled by user",
             4: "killed by system"}


def node_shape(ctx: Context) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(nodes, gpus_per_node, known) per job.

    Tables from SWF have no node columns; with a site they are derived from the processor count as
    the AAIC policy allows (``swf.md`` section 8): nodes = ceil(gpus / gpus_per_node), a single-node
    job uses its processor count per node, a multi-node job whole nodes.
    """
    if ctx.has("nodes") and ctx.has("gpus_per_node"):
        nodes, nk = ctx.values("nodes")
        per_node, pk = ctx.values("gpus_per_node")
        return nodes, per_node, nk & pk
    site = ctx.require_site()
    gpus, known = ctx.values("gpus")
    size = site.gpus_per_node
    nodes = np.maximum(-(-gpus // size), 1)
    per_node = np.where(nodes > 1, size, gpus)
    return nodes, per_node, known


def queue_index(ctx: Context, site: Site) -> tuple[np.ndarray, list[Queue]]:
    """Index into ``site.queues`` of every job's queue: -1 unknown to the site, -2 null."""
    queues = list(site.queues)
    col = ctx.strings("queue")
    distinct = pc.unique(col.drop_null()).to_pylist()
    mapping = {}
    for text in distinct:
        q = site.queue(text)
        if q is None and text.strip().isdigit():  # site numbers are >= 0
            q = site.queue_by_number(int(text))
        mapping[text] = queues.index(q) if q is not None else -1
    keys = pa.array(list(mapping), pa.string())
    pos = pc.index_in(col, value_set=keys)
    codes = np.array(list(mapping.values()) + [-2], np.int64)
    pos_np = pc.fill_null(pos, len(mapping)).to_numpy(zero_copy_only=False)
    return codes[pos_np], queues


def _limits(ctx: Context) -> tuple[np.ndarray, list[Queue]]:
    site = ctx.require_site()
    ctx.require("queue")
    return queue_index(ctx, site)


def _limit_array(queues: list[Queue], qi: np.ndarray, attr: str) -> np.ndarray:
    table = np.array([getattr(q, attr) for q in queues] + [0], np.int64)
    return table[np.where(qi >= 0, qi, len(queues))]


@rule("queue-unknown", "error", "queue",
      "Every queue named in the data is defined by the site settings (by name, or by SWF number).")
def queue_unknown(ctx: Context) -> None:
    qi, queues = _limits(ctx)
    col = ctx.strings("queue")
    names = ", ".join(q.name for q in queues)
    ctx.flag(qi == -1, "queue", lambda i: f"queue {col[i].as_py()!r} is not defined by the site",
             value=lambda i: col[i].as_py(), expected=f"one of {names}")


def _range_rule(ctx: Context, column: str, low: str, high: str, what: str) -> None:
    qi, queues = _limits(ctx)
    nodes, per_node, known = node_shape(ctx)
    values = nodes if column == "nodes" else per_node
    lo, hi = _limit_array(queues, qi, low), _limit_array(queues, qi, high)
    bad = known & (qi >= 0) & ((values < lo) | (values > hi))
    ctx.flag(bad, column,
             lambda i: f"{values[i]} {what} outside queue {queues[qi[i]].name}'s range {lo[i]}..{hi[i]}",
             value=values, expected=lambda i: f"{lo[i]}..{hi[i]}")


@rule("queue-nodes", "error", "queue",
      "The node count lies within the queue's range (AAIC: Short, Middle and Long take 1 node).")
def queue_nodes(ctx: Context) -> None:
    _range_rule(ctx, "nodes", "nodes_min", "nodes_max", "nodes")


@rule("queue-gpus-per-node", "error", "queue",
      "GPUs per node lie within the queue's range (AAIC: Short takes 1 GPU).")
def queue_gpus_per_node(ctx: Context) -> None:
    _range_rule(ctx, "gpus_per_node", "gpus_per_node_min", "gpus_per_node_max", "GPUs per node")


@rule("queue-walltime", "error", "queue",
      "The requested walltime does not exceed the queue's maximum.")
def queue_walltime(ctx: Context) -> None:
    qi, queues = _limits(ctx)
    ctx.require("requested_walltime_s")
    req, known = ctx.values("requested_walltime_s")
    top = _limit_array(queues, qi, "walltime_max_s")
    bad = known & (qi >= 0) & (req > top)
    ctx.flag(bad, "requested_walltime_s",
             lambda i: f"requests {req[i]} s, above queue {queues[qi[i]].name}'s maximum {top[i]} s",
             value=req, expected=lambda i: f"<= {top[i]}")


@rule("multi-node-whole-nodes", "error", "queue",
      "A multi-node job holds every GPU of each of its nodes (site setting multi_node_whole_nodes); "
      "a CPU job (0 GPUs) holds none.")
def multi_node_whole_nodes(ctx: Context) -> None:
    site = ctx.require_site()
    if not site.multi_node_whole_nodes:
        raise NotApplicable("the site lets multi-node jobs share nodes")
    ctx.require("nodes", "gpus_per_node")
    nodes, per_node, known = node_shape(ctx)
    # a CPU job of a mixed site (0 GPUs; formats without a cpus column keep only that) holds
    # no GPU of its nodes: the rule is about how a GPU job spreads over nodes
    bad = known & (nodes > 1) & (per_node != site.gpus_per_node) & (per_node != 0)
    ctx.flag(bad, "gpus_per_node",
             lambda i: f"{nodes[i]}-node job uses {per_node[i]} of {site.gpus_per_node} GPUs per node",
             value=per_node, expected=str(site.gpus_per_node))


@rule("gpus-total", "error", "queue",
      "The total GPU count equals nodes x GPUs per node.")
def gpus_total(ctx: Context) -> None:
    ctx.require("nodes", "gpus_per_node", "gpus")
    nodes, nk = ctx.values("nodes")
    per_node, pk = ctx.values("gpus_per_node")
    gpus, gk = ctx.values("gpus")
    product = nodes * per_node
    bad = nk & pk & gk & (gpus != product)
    ctx.flag(bad, "gpus", lambda i: f"{gpus[i]} GPUs but {nodes[i]} nodes x {per_node[i]} per node",
             value=gpus, expected=lambda i: str(product[i]))


@rule("termcode-walltime", "warning", "termcode",
      "A job ended for exceeding its walltime (termcode 2) ran its requested walltime, within the "
      "grace setting (site walltime_grace_s, default 300 s).")
def termcode_walltime(ctx: Context) -> None:
    ctx.require("termcode", "walltime_s", "requested_walltime_s")
    term, tk = ctx.values("termcode")
    run, rk = ctx.values("walltime_s")
    req, qk = ctx.values("requested_walltime_s")
    grace = ctx.grace_s
    bad = tk & rk & qk & (term == 2) & (np.abs(run - req) > grace)
    ctx.flag(bad, "walltime_s",
             lambda i: f"walltime exceeded (termcode 2) but ran {run[i]} s of a {req[i]} s request",
             value=run, expected=lambda i: f"{max(req[i] - grace, 0)}..{req[i] + grace}")


@rule("walltime-overrun", "warning", "termcode",
      "A job does not run past its requested walltime plus grace (the system kills overruns); "
      "walltime-exceeded jobs are left to termcode-walltime; skipped when the SWF header says "
      "AllowOveruse: Yes.")
def walltime_overrun(ctx: Context) -> None:
    if (ctx.header_value("AllowOveruse") or "").strip().lower().startswith("yes"):
        raise NotApplicable("the SWF header says AllowOveruse: Yes")
    ctx.require("walltime_s", "requested_walltime_s")
    run, rk = ctx.values("walltime_s")
    req, qk = ctx.values("requested_walltime_s")
    grace = ctx.grace_s
    bad = rk & qk & (run > req + grace)
    if ctx.has("termcode"):
        term, tk = ctx.values("termcode")
        bad &= ~(tk & (term == 2))
    ctx.flag(bad, "walltime_s",
             lambda i: f"ran {run[i]} s, {run[i] - req[i]} s past its {req[i]} s request",
             value=run, expected=lambda i: f"<= {req[i] + grace} (request + {grace} s grace)")


@rule("never-started", "warning", "termcode",
      "A job without a start time was cancelled (termcode 3 or 4) and records no run time.")
def never_started(ctx: Context) -> None:
    ctx.require("termcode")
    term, tk = ctx.values("termcode")
    _, sk = ctx.values("start_time")
    run, rk = ctx.values("walltime_s")
    unstarted = tk & ~sk
    bad_code = unstarted & (term != 3) & (term != 4)
    ctx.flag(bad_code, "termcode",
             lambda i: f"never started but termcode {term[i]} ({TERMCODES.get(int(term[i]), '?')})",
             value=term, expected="3 or 4 (cancelled)")
    ran = ~sk & rk & (run > 0)
    ctx.flag(ran, "walltime_s", lambda i: f"has no start time but ran {run[i]} s",
             value=run, expected="0 or unknown")


@rule("termcode-swf-status", "warning", "termcode",
      "Where both are known, the SWF status agrees with the termcode through the site's "
      "termcode_to_swf_status mapping.")
def termcode_swf_status(ctx: Context) -> None:
    site = ctx.require_site()
    ctx.require("termcode", "swf_status")
    if not site.termcode_to_swf_status:
        raise NotApplicable("the site has no termcode_to_swf_status mapping")
    term, tk = ctx.values("termcode")
    status, sk = ctx.swf_status
    lookup = np.full(max(int(term.max()), max(site.termcode_to_swf_status)) + 2, -9, np.int64)
    for code, swf in site.termcode_to_swf_status.items():
        lookup[code] = swf
    # a termcode outside the mapping (negative: another rule's finding) maps to nothing
    want = np.where(term >= 0, lookup[np.clip(term, 0, len(lookup) - 1)], -9)
    bad = tk & sk & (want != -9) & (status != want)
    ctx.flag(bad, "swf_status", lambda i: f"status {status[i]} but termcode {term[i]} maps to {want[i]}",
             value=status, expected=lambda i: str(want[i]))
