"""``swftools validate PATH...``: schema and semantic checks, as findings, JSON or a summary table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from swftools.cli.common import (ALLOW_EMPTY_HELP, EXIT_INVALID, EXIT_OK, FROM_HELP, OUT_OPTION,
                                 SITE_HELP,
                                 STRICT_HELP, deprecated, handle_errors, output_path)
from swftools.errors import count

DEFAULT_MAX_FINDINGS = 1000


def _ids(values: Optional[list[str]]) -> Optional[list[str]]:
    if not values:
        return None
    return [i.strip() for v in values for i in v.split(",") if i.strip()]


def _console(stderr: bool = False):
    from rich.console import Console
    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def print_rules() -> None:
    """``--list-rules``: id, default severity and one-line description of every rule."""
    from swftools.validate import describe_rules
    rows = describe_rules()
    width = max(len(r[0]) for r in rows)
    for rule_id, severity, _group, description in rows:
        typer.echo(f"{rule_id:<{width}}  {severity:<7}  {description}")


def summary_table(report, console_width: int = 100):
    """A rich table: one row per rule that found something, with counts."""
    from rich.table import Table

    from swftools.validate import RULES
    from swftools.validate.registry import ENGINE_RULES
    status = "[green]valid[/green]" if report.valid else "[red]INVALID[/red]"
    title = f"{report.path}: {status} ({count(report.rows, 'job')})"
    table = Table(title=title, title_justify="left", expand=False)
    width = max([len(r["rule"]) for r in report.summary()] + [4])
    counts = max([len(str(r["count"])) for r in report.summary()] + [5])
    table.add_column("rule", no_wrap=True, width=width)
    table.add_column("severity", no_wrap=True, width=8)
    table.add_column("count", justify="right", no_wrap=True, width=counts)
    rest = max(console_width - width - 8 - counts - 13, 10)
    table.add_column("checks", overflow="ellipsis", no_wrap=True, width=rest)
    colours = {"error": "red", "warning": "yellow", "info": "cyan"}
    for row in report.summary():
        rule = RULES.get(row["rule"])
        text = rule.description if rule else ENGINE_RULES.get(row["rule"], ("", "", ""))[2]
        sev = row["severity"]
        table.add_row(row["rule"], f"[{colours[sev]}]{sev}[/{colours[sev]}]", str(row["count"]), text)
    if report.partial:
        table.caption = (f"partial: {len(report.findings)} of {report.total()} findings kept "
                         "(--max-findings)")
    return table


def register(app: typer.Typer) -> None:
    """Add the ``validate`` command to ``app``."""

    @app.command("validate")
    def validate_command(
        paths: Optional[list[Path]] = typer.Argument(
            None, metavar="PATH...", help="Traces to check: NQSII logs, SWF files, data packages (directory or "
                       "datapackage.json)."),
        site: Optional[str] = typer.Option(
            None, "--site", help=SITE_HELP + " Enables queue limits and node packing."),
        fmt: Optional[str] = typer.Option(None, "--from",
                                          help=FROM_HELP),
        old_fmt: Optional[str] = typer.Option(None, "--format", hidden=True,
                                              help="Deprecated: use --from."),
        tz: Optional[str] = typer.Option(
            None, "--tz", help="Time zone (IANA name) of the local times in a Slurm or PBS file, "
                               "as given to convert --tz. Default: the site's, else UTC."),
        rules: Optional[list[str]] = typer.Option(None, "--rules", help="Only these rule ids (comma-separated, repeatable)."),
        skip_rules: Optional[list[str]] = typer.Option(None, "--skip-rules", help="Rule ids not to run."),
        max_findings: int = typer.Option(DEFAULT_MAX_FINDINGS, "--max-findings", min=0,
                                         help="Keep at most N findings per input (counts stay "
                                              "complete; the report says it is partial). 0: all."),
        as_json: bool = typer.Option(False, "--json", help="Print the report as JSON "
                                     "(schemas/validation-report.schema.json)."),
        summary_only: bool = typer.Option(False, "--summary", help="Print only the summary table per rule."),
        out: Optional[Path] = typer.Option(None, *OUT_OPTION, help="Also write the JSON report to this file."),
        old_output: Optional[Path] = typer.Option(None, "--output", hidden=True,
                                                  help="Deprecated: use --out."),
        force: bool = typer.Option(False, "--force", help="Overwrite --out if it exists."),
        strict: bool = typer.Option(False, "--strict", help=STRICT_HELP),
        allow_empty: bool = typer.Option(False, "--allow-empty", help=ALLOW_EMPTY_HELP),
        list_rules: bool = typer.Option(False, "--list-rules", help="List every rule id with its description and exit."),
        flurry_jobs: int = typer.Option(1000, "--flurry-jobs", min=1, help="Flurry: jobs of one user within the window."),
        flurry_window: int = typer.Option(86_400, "--flurry-window", min=1, help="Flurry: window, seconds."),
        flurry_share: float = typer.Option(0.5, "--flurry-share", min=0.0, max=1.0,
                                           help="Flurry: minimum share of all submissions in the burst."),
        late_start: int = typer.Option(86_400, "--late-start", min=0,
                                       help="swf-late-start: first submit offset allowed, seconds."),
        grace: Optional[int] = typer.Option(None, "--grace", min=0,
                                            help="Walltime grace, seconds (default: the site's, else 300)."),
    ) -> None:
        """Check traces against their schemas and the semantic rules.

        Exit 0 valid, 1 invalid, 2 usage error.
        """
        if list_rules:
            print_rules()
            raise typer.Exit(EXIT_OK)
        from swftools.errors import UsageError
        with handle_errors():
            output = output_path(out, old_output, "--output", required=False)
            if old_fmt is not None:
                deprecated("--format", "--from")
                fmt = fmt or old_fmt
            if not paths:
                raise UsageError("give at least one trace to validate (or --list-rules)")
            if as_json and summary_only:
                raise UsageError("--json and --summary are exclusive")
            from swftools.atomic import atomic_file, check_writable
            from swftools.validate import Options, validate
            if output is not None:
                check_writable(output, force)
            options = Options(flurry_window_s=flurry_window, flurry_min_jobs=flurry_jobs,
                              flurry_min_share=flurry_share, late_start_s=late_start,
                              walltime_grace_s=grace)
            reports = [validate(p, site=site, rules=_ids(rules), skip_rules=_ids(skip_rules),
                                max_findings=max_findings or None, fmt=fmt, options=options,
                                strict=strict, allow_empty=allow_empty, tz=tz)
                       for p in paths]
            document = report_document(reports)
            if output is not None:
                with atomic_file(output, force) as tmp:
                    tmp.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n",
                                   encoding="utf-8")
        if as_json:
            typer.echo(json.dumps(document, indent=2, sort_keys=True))
        else:
            console = _console()
            for report in reports:
                if not summary_only:
                    for finding in report.findings:
                        typer.echo(finding.render())
                if report.summary():  # a clean report needs no empty table
                    console.print(summary_table(report, console.width))
                typer.echo(report.status_line())
        raise typer.Exit(EXIT_OK if all(r.valid for r in reports) else EXIT_INVALID)


def report_document(reports) -> dict:
    """The JSON document for one or more reports (``schemas/validation-report.schema.json``)."""
    from swftools import __version__
    return {"swftools_version": __version__, "valid": all(r.valid for r in reports),
            "reports": [r.to_json() for r in reports]}
