"""``swftools anonymize`` and ``swftools audit``: keyed pseudonyms, and proof that nothing leaks."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from swftools import formats  # the registry only (FORMATS); the format modules load on use
from swftools.cli.common import (EXIT_INVALID, FROM_HELP, JSON_HELP, OUT_OPTION, SITE_HELP,
                                 TO_HELP, deprecated, handle_errors, listing, nothing_to_search,
                                 output_path, print_json)
from swftools.errors import UsageError, count

# For the help text, without loading swftools.privacy (pyarrow) at start-up; equal to
# swftools.privacy.pseudonyms.DEFAULT_KEY_ENV (tests/test_cli_startup.py).
DEFAULT_KEY_ENV = "SWFTOOLS_ANON_KEY"


def _note(message: str) -> None:
    typer.echo(f"swftools: {message}", err=True)


def _inside(path: Path, directory: Path) -> bool:
    try:
        path.resolve().relative_to(directory.resolve())
        return True
    except ValueError:
        return False


def anonymize_command(
    source: Optional[Path] = typer.Argument(None, metavar="SOURCE", help="Raw job log (or any "
                                            "trace) to anonymize (not with --new-key)."),
    out: Optional[Path] = typer.Option(None, *OUT_OPTION, help="Output trace: .swf[.gz], NQSII "
                                       ".csv, or a data package directory."),
    old_out: Optional[Path] = typer.Argument(None, hidden=True, metavar="OUT", help="Deprecated: use --out."),
    key_file: Optional[Path] = typer.Option(None, "--key-file", help=f"Secret key file (else "
                                            f"${DEFAULT_KEY_ENV}). Keep it: the same key gives "
                                            "the same pseudonyms in every release."),
    ephemeral_key: bool = typer.Option(False, "--ephemeral-key", help="Use a random throw-away "
                                       "key: pseudonyms will NOT be stable across runs."),
    new_key_file: Optional[Path] = typer.Option(None, "--new-key", help="Only write a new random "
                                                "key (256 bits, mode 0600) to this file, for "
                                                "--key-file; --force replaces one."),
    time_shift_weeks: int = typer.Option(0, "--time-shift-weeks", help="Shift every timestamp "
                                         "by this many whole weeks (keeps weekday and hour)."),
    mapping_out: Optional[Path] = typer.Option(None, "--mapping-out", help="Write the PRIVATE "
                                               "raw -> pseudonym mapping here (mode 0600)."),
    dense_ids: bool = typer.Option(False, "--dense-ids", help="Number users and groups 1..N by "
                                   "first appearance in submit order (PWA style)."),
    keep: list[str] = typer.Option([], "--keep", help="Keep this free-text column (repeatable)."),
    from_format: Optional[str] = typer.Option(None, "--from", help=FROM_HELP),
    to_format: Optional[str] = typer.Option(None, "--to", help=TO_HELP),
    site: Optional[str] = typer.Option(None, "--site", help=SITE_HELP),
    force: bool = typer.Option(False, "--force", help="Overwrite existing outputs."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Replace user and group names by keyed pseudonyms and drop free-text columns."""
    from swftools.atomic import check_not_inside, check_writable  # on use: keeps start-up light (issue 15)
    from swftools.privacy.pseudonyms import anonymize, load_key, write_mapping
    from swftools.site import resolve_site

    if new_key_file is not None:
        _write_new_key(new_key_file, force, as_json, {
            "SOURCE": source, "--out": out or old_out, "--key-file": key_file,
            "--ephemeral-key": ephemeral_key or None, "--mapping-out": mapping_out})
        return
    with handle_errors():
        if source is None:
            raise UsageError("missing argument SOURCE: the job log to anonymize "
                             "(or --new-key FILE to make a key)")
        output = output_path(out, old_out, "the positional OUT")
        key = load_key(key_file, ephemeral=ephemeral_key, warn=_note)
        check_writable(output, force)
        if to_format == "package" or output.is_dir():
            check_not_inside([source, key_file], output)
        if mapping_out is not None:
            if mapping_out.resolve() in (output.resolve(), source.resolve()) \
                    or _inside(mapping_out, output):
                raise UsageError(f"{mapping_out}: the private mapping must not be written to or "
                                 "inside the output (nor over the input)")
            check_writable(mapping_out, force)
        src_fmt = from_format or formats.detect_format(source)
        table = formats.read(source, src_fmt, site=resolve_site(site, fmt=src_fmt))
        result = anonymize(table, key, time_shift_weeks=time_shift_weeks, keep_columns=keep,
                           dense_ids=dense_ids)
        losses = formats.write(result.table, output, to_format,
                               site=resolve_site(site, table, fmt=src_fmt), force=force)
        if mapping_out is not None:
            write_mapping(result.mapping, mapping_out, force=force, warn=_note)
        for note in result.notes:
            _note(f"note: {note}")
        for loss in losses:
            _note(f"not carried by the output: {loss}")
        counts = {ns: len(v) for ns, v in result.raw_names().items()}
    if as_json:
        print_json({"jobs": result.table.num_rows, "users": counts.get("user", 0),
                    "groups": counts.get("group", 0), "out": str(output),
                    "time_shift_weeks": time_shift_weeks, "notes": list(result.notes),
                    "losses": losses})
        return
    _note(f"anonymized {count(result.table.num_rows, 'job')} "
          f"({count(counts.get('user', 0), 'user')}, {count(counts.get('group', 0), 'group')}) "
          f"-> {output}"
          + ("; times shifted by whole weeks" if time_shift_weeks else ""))


def _write_new_key(path: Path, force: bool, as_json: bool, others: dict) -> None:
    """``anonymize --new-key FILE``: write a key and nothing else."""
    from swftools.privacy.keys import new_key  # on use: keeps start-up light

    with handle_errors():
        given = [name for name, value in others.items() if value is not None]
        if given:
            raise UsageError(f"--new-key FILE writes a new key and does nothing else: drop "
                             f"{', '.join(given)} (--force replaces an existing key file)")
        written = new_key(path, force=force)
    if as_json:
        print_json({"key_file": str(written), "mode": "0600", "random_bits": 256})
        return
    _note(f"wrote a new random key to {written} (mode 0600). Keep it private and keep it: the "
          "same key gives the same pseudonyms in every release (--key-file).")


def audit_command(
    path: Path = typer.Argument(..., metavar="PATH", help="Output directory, archive (.tar.gz, "
                                ".zip) or file."),
    raw: Optional[Path] = typer.Option(None, "--raw", help="Raw job log: its user, group, host "
                                       "and job names are searched for."),
    names: Optional[Path] = typer.Option(None, "--names", help="File of names to search for, "
                                         "one per line (# comments)."),
    hosts: Optional[Path] = typer.Option(None, "--hosts", help="File of host names, one per "
                                         "line."),
    telemetry: Optional[list[Path]] = typer.Option(None, "--telemetry", help="Telemetry export "
                                                   "file or folder given to release (repeatable): "
                                                   "its file names and host labels are searched "
                                                   "for."),
    allocations: Optional[Path] = typer.Option(None, "--allocations", help="Allocation table "
                                               "given to release: its node names are searched "
                                               "for."),
    key_file: Optional[Path] = typer.Option(None, "--key-file", help="The anonymization key, "
                                            f"searched for too (else ${DEFAULT_KEY_ENV} if set)."),
    raw_format: Optional[str] = typer.Option(None, "--from", help="Format of --raw "
                                             f"({listing(formats.FORMATS)}); default: from the "
                                             "name."),
    old_raw_format: Optional[str] = typer.Option(None, "--raw-format", hidden=True,
                                                 help="Deprecated: use --from."),
    site: Optional[str] = typer.Option(None, "--site", help=SITE_HELP + " (Used to read --raw.)"),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON "
                                 "(schemas/audit-report.schema.json)."),
) -> None:
    """Scan an archive for raw user, group, host and job names and the key.

    Exit 1 on any hit. With no raw name to search for (e.g. an SWF trace's numeric user ids) it
    says "nothing to search for" (exit 0), never CLEAN.
    """
    from swftools.privacy.audit import audit, read_names_file  # on use
    from swftools.privacy.rawnames import raw_names
    from swftools.privacy.pseudonyms import load_key
    from swftools.site import resolve_site

    with handle_errors():
        if old_raw_format is not None:
            deprecated("--raw-format", "--from")
            raw_format = old_raw_format
        if raw is None and names is None and not telemetry and allocations is None:
            raise UsageError("give --raw RAWLOG or --names FILE (or --telemetry EXPORTS): the "
                             "names to search for")
        searched: dict[str, list[str]] = {}
        if raw is not None:
            raw_fmt = raw_format or formats.detect_format(raw)
            # users, groups, hosts and job names, bad lines included (swftools.privacy.rawnames)
            searched.update(raw_names(raw, raw_fmt, site=resolve_site(site, fmt=raw_fmt)))
        if names is not None:
            searched["name"] = read_names_file(names)
        host_names = read_names_file(hosts) if hosts is not None else []
        if telemetry or allocations is not None:
            from swftools.privacy.rawnames import telemetry_names
            from swftools.telemetry import DEFAULT_MAPS, load_metric_map

            # file base names, instance/host labels, allocation nodes (as release searches)
            found = telemetry_names(telemetry or [], allocations, load_metric_map(DEFAULT_MAPS))
            host_names += found.get("host", [])
        key = None
        if key_file is not None:
            key = load_key(key_file, warn=_note)
        else:
            try:
                key = load_key(None, warn=_note)
            except UsageError:  # no key in the environment: nothing to search for
                key = None
        report = audit(path, searched, host_names, key)
    typer.echo(report.to_json() if as_json else report.render(), nl=not as_json)
    if report.failed:
        raise typer.Exit(EXIT_INVALID)
    nothing_to_search(report.nothing_to_search)


def register(app: typer.Typer) -> None:
    """Add ``anonymize`` and ``audit`` to the CLI."""
    app.command("anonymize")(anonymize_command)
    app.command("audit")(audit_command)
