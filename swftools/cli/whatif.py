"""``swftools whatif TRACE``: compare placement policies on one trace; ``whatif profile``: draw a
per-GPU variability profile; ``whatif estimate``: the training-time model per GPU count. ``whatif TRACE ...`` is short for ``whatif run TRACE ...``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from swftools.cli.common import (FROM_HELP, JSON_HELP, OUT_OPTION, SCHEDULER_HELP, SITE_HELP,
                                 SITE_PRESETS_HELP, handle_errors, output_path, print_json, warn)
from swftools.cli.group import Group, Typer
from swftools.errors import UsageError

# spelled here for the help text without importing the library (checked equal in the tests)
MOLDABLE_POLICIES = ("rigid", "moldable-fastest", "moldable-efficient")
MOLDABLE_MODELS = "alexnet=alexnet,resnet50=resnet50,vgg16=vgg16"


class _RunByDefault(Group):
    """A group whose unknown first word is a trace: ``whatif TRACE`` runs ``whatif run TRACE``."""

    def parse_args(self, ctx, args):  # noqa: D102 (click API)
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


whatif_app = Typer(name="whatif", cls=_RunByDefault, no_args_is_help=True,
                   add_completion=False,
                   help="What-if replays: placement policies on heterogeneous, variable GPUs."
                        "\n\nwhatif TRACE is short for whatif run TRACE; whatif profile draws "
                        "variability profiles; whatif estimate gives DL training time per GPU "
                        "count.")


@whatif_app.command("run")
def run_command(
    trace: Path = typer.Argument(..., metavar="TRACE", help="Trace: NQSII log, SWF file or data package."),
    site: Optional[str] = typer.Option(None, "--site", help=SITE_HELP),
    v100_nodes: Optional[int] = typer.Option(None, "--v100-nodes", min=0,
                                             help="Upgrade the site's last N nodes to V100."),
    procs: Optional[int] = typer.Option(None, "--procs", min=1, help="Flat pool of N processors "
                                        "(SWF mode; default without --site: the header's "
                                        "MaxProcs)."),
    profile: Optional[Path] = typer.Option(None, "--profile", help="Per-GPU score profile CSV "
                                           "(whatif profile): variability and classes; optional "
                                           "score:<class> columns give per-application-class "
                                           "scores (pal, pm-first)."),
    sensitivity: Optional[str] = typer.Option(None, "--sensitivity", help="Job sensitivity "
                                              "model: preset or JSON file (default: "
                                              "mlperf-p100-v100; compute-only on a flat pool)."),
    policies: str = typer.Option("packed,priority,priority-wc,lxv", "--policies",
                                 help="Placement policies to compare, comma-separated; the "
                                 "first is the baseline: packed, best-fit, random, even, "
                                 "priority (strict median split), priority-wc (work-conserving), "
                                 "variability-first, locality-first, lxv, pm-first, pal; or "
                                 "the moldable ones: rigid, moldable-fastest, "
                                 "moldable-efficient."),
    platform: Optional[str] = typer.Option(None, "--platform", help="Moldable policies: the "
                                           "training platform, preset (aaic, abci) or JSON file "
                                           "(default: the site's preset)."),
    dl_models: str = typer.Option(MOLDABLE_MODELS, "--dl-models", help="Moldable policies: "
                                  "job class -> training model (preset, file, or none for a "
                                  "rigid class), LABEL=MODEL,..."),
    threshold: float = typer.Option(0.8, "--threshold", help="moldable-efficient: the lowest "
                                    "parallel efficiency of the GPU count it picks."),
    class_column: Optional[str] = typer.Option(None, "--class-column", help="Trace column that "
                                               "holds each job's application class."),
    class_rule: str = typer.Option("hash", "--class-rule", help="Without a class column: hash "
                                   "(job id into the model's mix) or single:<class>."),
    scheduler: str = typer.Option("easy", "--scheduler", help=SCHEDULER_HELP),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the random placement."),
    locality_penalty: float = typer.Option(1.7, "--locality-penalty", help="pal: multiplier "
                                           "of the class value of cells spanning nodes (PAL's "
                                           "default 1.7; 1 = none)."),
    pal_k2: bool = typer.Option(False, "--pal-k2", help="pal: always 2 k-means classes (PAL's "
                                "artifact, whose silhouette loop returns early) instead of the "
                                "silhouette's k."),
    shape: str = typer.Option("recorded", "--shape", help="Job shapes: recorded (nodes x GPUs "
                              "per node, as HPC sites enforce them) or gpus (a job's GPU count "
                              "on any free GPUs, partial nodes allowed, as PAL places jobs; "
                              "Python engine)."),
    from_format: Optional[str] = typer.Option(None, "--from", help=FROM_HELP),
    out: Optional[Path] = typer.Option(None, *OUT_OPTION, help="Write per-policy job tables "
                                       "(Parquet), comparison.json/.txt and jct-cdf.png here."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --out directory."),
    progress_bar: Optional[bool] = typer.Option(None, "--progress/--no-progress",
                                                help="Progress per policy (default: on a "
                                                     "terminal)."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Replay a trace under several placement policies and print one comparison table."""
    import sys

    from swftools import formats
    from swftools import progress as progress_mod
    from swftools.atomic import check_not_inside, check_writable
    from swftools.whatif.cluster import upgraded
    from swftools.whatif.run import parse_policies, whatif
    from swftools.site import resolve_site

    with handle_errors():
        wanted = [p.strip() for p in policies.split(",") if p.strip()]
        moldable = any(p in MOLDABLE_POLICIES for p in wanted)
        if moldable:
            others = [p for p in wanted if p not in MOLDABLE_POLICIES]
            if others:
                raise UsageError(f"moldable policies ({', '.join(MOLDABLE_POLICIES)}) run apart "
                                 f"from placement policies: not with {', '.join(others)}")
            for given, flag in ((profile, "--profile"), (sensitivity, "--sensitivity"),
                                (v100_nodes, "--v100-nodes")):
                if given is not None:
                    raise UsageError(f"{flag} does not apply to the moldable policies")
            if shape != "recorded":
                raise UsageError("--shape does not apply to the moldable policies: they choose "
                                 "each job's shape themselves")
            names = wanted
        else:
            names = parse_policies(policies)
            if platform is not None:
                raise UsageError("--platform is for the moldable policies (rigid, "
                                 "moldable-fastest, moldable-efficient)")
        if out is not None:
            check_writable(out, force, directory=True)
            check_not_inside([trace, profile, *(v for v in (site, sensitivity, platform)
                                                if v and Path(v).is_file())], out)
        table = formats.read(trace, from_format)
        site_obj = None if procs is not None else resolve_site(
            site, table, fmt=from_format or formats.detect_format(trace))
        if v100_nodes is not None:
            if site_obj is None:
                raise UsageError("--v100-nodes upgrades a site's nodes: give --site")
            site_obj = upgraded(site_obj, v100_nodes)
        show = sys.stderr.isatty() if progress_bar is None else progress_bar
        with progress_mod.stages([f"replay: {n}" for n in names] + ["done"], show) as advance:
            if moldable:
                from swftools.whatif.moldable import moldable_whatif

                result = moldable_whatif(table, site_obj, policies=names, platform=platform,
                                         dl_models=dl_models, class_column=class_column,
                                         class_rule=class_rule, threshold=threshold,
                                         procs=procs, scheduler=scheduler,
                                         on_policy=lambda name, k, n: advance() if k else None)
            else:
                result = whatif(table, site_obj, policies=names, profile=profile, procs=procs,
                                sensitivity=sensitivity, class_column=class_column,
                                class_rule=class_rule, scheduler=scheduler, seed=seed,
                                locality_penalty=locality_penalty, pal_k2=pal_k2, shape=shape,
                                on_policy=lambda name, k, n: advance() if k else None)
            advance()
        if out is not None:
            result.write(out, force=force)
    for name, reason in result.no_op.items():
        warn(f"policy {name}: {reason}")
    if as_json:
        print_json({**result.to_json(), "out": None if out is None else str(out)})
        return
    typer.echo(result.table_text(), nl=False)  # byte for byte what comparison.txt holds
    if out is not None:
        typer.echo(f"wrote {out}/ (per-policy jobs, comparison, jct-cdf.png)", err=True)


@whatif_app.command("profile")
def profile_command(
    site: Optional[str] = typer.Option(None, "--site", help=SITE_PRESETS_HELP
                                       + ": the GPUs to score."),
    procs: Optional[int] = typer.Option(None, "--procs", min=1, help="Or a flat pool of N "
                                        "processors (for whatif --procs N / SWF mode)."),
    spread: float = typer.Option(0.05, "--spread", help="Standard deviation of the scores "
                                 "(0.05 = 5 %; at most 0.3)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Random seed (same seed, same file)."),
    classes: int = typer.Option(4, "--classes", min=1, help="Performance classes (k-means); "
                                "class 0 is the fastest."),
    distribution: str = typer.Option("normal", "--distribution", help="normal (truncated to "
                                     "1 +- 3 spread) or uniform."),
    per_class: bool = typer.Option(False, "--per-class", help="Also a score:<class> column per "
                                   "application class of --sensitivity (PAL's per-class "
                                   "variability; pal and pm-first rank by it)."),
    sensitivity: Optional[str] = typer.Option(None, "--sensitivity", help="With --per-class: "
                                              "the sensitivity model whose classes get columns "
                                              "(default mlperf-p100-v100; compute-only with "
                                              "--procs)."),
    out: Optional[Path] = typer.Option(None, *OUT_OPTION, help="Output CSV "
                                       "node,gpu_index,score,class."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing output."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Draw a per-GPU performance score profile and cluster it into classes."""
    from swftools.whatif.profile import generate_profile, write_profile  # keeps start-up fast
    from swftools.site import resolve_site

    with handle_errors():
        out = output_path(out, None, "")
        if (site is None) == (procs is None):
            raise UsageError("give --site (GPU nodes) or --procs (a flat pool), not both")
        if procs is not None:
            from swftools.whatif.cluster import flat_site

            site_obj = flat_site(procs)
        else:
            site_obj = resolve_site(site)
        if sensitivity is not None and not per_class:
            raise UsageError("--sensitivity names the classes of --per-class: give --per-class "
                             "too")
        app_classes: tuple[str, ...] = ()
        if per_class:
            from swftools.whatif.run import DEFAULT_SENSITIVITY, FLAT_SENSITIVITY
            from swftools.whatif.sensitivity import load_sensitivity

            default = FLAT_SENSITIVITY if procs is not None else DEFAULT_SENSITIVITY
            app_classes = load_sensitivity(sensitivity or default).names
        profile = generate_profile(site_obj, spread=spread, seed=seed, classes=classes,
                                   distribution=distribution, app_classes=app_classes)
        write_profile(profile, out, force=force)
    summary = profile.summary()
    if as_json:
        print_json({**summary, "out": str(out), "site": site_obj.name})
        return
    typer.echo(f"wrote scores of {summary['gpus']} GPUs (site {site_obj.name}, {distribution} "
               f"spread {spread}, seed {seed}) in {len(summary['classes'])} classes to {out}",
               err=True)
    for c in summary["classes"]:
        typer.echo(f"  class {c['class']}: {c['gpus']} GPUs, scores {c['min']:.4f}.."
                   f"{c['max']:.4f}", err=True)
    for name, grid in profile.app_scores:
        typer.echo(f"  score:{name}: {grid.min():.4f}..{grid.max():.4f}", err=True)


@whatif_app.command("estimate")
def estimate_command(
    model: str = typer.Option(..., "--model", help="Training model: preset (alexnet, resnet50, "
                              "vgg16) or JSON file (schemas/training-model.schema.json)."),
    platform: str = typer.Option(..., "--platform", help="Training platform: preset "
                                 "(aaic, abci) or JSON file "
                                 "(schemas/training-platform.schema.json)."),
    gpus: Optional[str] = typer.Option(None, "--gpus", help="GPU counts: a list 1,2,4 or a "
                                       "doubling range 1..1024 (default: powers of two up to "
                                       "the platform's GPUs, else 1024)."),
    micro_batch: Optional[int] = typer.Option(None, "--micro-batch", min=1, help="Samples per "
                                              "GPU per iteration (default: the model's, else "
                                              "the largest power of two that fits)."),
    out: Optional[Path] = typer.Option(None, *OUT_OPTION, help="Write the scaling curve to "
                                       "this PNG file."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing --out."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Estimate one epoch of data-parallel training per GPU count (ParaDL's model)."""
    from swftools.whatif.training import (estimate, load_model, load_platform, parse_gpus,
                                          scaling_figure, table_text)

    with handle_errors():
        counts = None if gpus is None else parse_gpus(gpus)
        if out is not None:
            from swftools.atomic import check_writable

            check_writable(out, force)
        m, p = load_model(model), load_platform(platform)
        if counts is None:
            counts = parse_gpus(f"1..{p.max_gpus or 1024}")
        rows = estimate(m, p, counts, micro_batch)
        if out is not None:
            scaling_figure(m, p, rows, out, force=force)
    if as_json:
        print_json({"model": m.name, "platform": p.name, "dataset_samples": m.dataset_samples,
                    "estimates": [r.to_json() for r in rows],
                    "out": None if out is None else str(out)})
        return
    typer.echo(table_text(m, p, rows), nl=False)
    if out is not None:
        typer.echo(f"wrote {out}", err=True)


def register(app: typer.Typer) -> None:
    """Add the ``whatif`` command group to ``app``."""
    app.add_typer(whatif_app, name="whatif")
