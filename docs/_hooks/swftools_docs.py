"""MkDocs hooks of the swftools site: the CLI reference rendered from the typer app at build time,
and ARCHITECTURE.md, DEVELOPING.md and the archive page's screenshots served from where they are
in the repository (pages, not copies that drift)."""

from __future__ import annotations

from pathlib import Path

import click
import typer

# Repository files the site shows as they are, by their path in the repository.
REPO_FILES = ("ARCHITECTURE.md", "DEVELOPING.md", "archive/screenshots/index-1280-top.png",
              "archive/screenshots/index-1280.png", "archive/screenshots/index-390.png")
CLI_MARKER = "<!-- swftools:cli-reference -->"
HELP_WIDTH_CHARS = 100  # as the golden help files (tests/golden/cli) are rendered


def command_help(path: tuple[str, ...]) -> str:
    """``swftools PATH --help`` as click prints it, 100 columns wide, trailing blanks removed."""
    from swftools.cli import app

    command = typer.main.get_command(app)
    ctx = click.Context(command, info_name="swftools", terminal_width=HELP_WIDTH_CHARS,
                        max_content_width=HELP_WIDTH_CHARS)
    for name in path:
        command = command.commands[name]
        ctx = click.Context(command, info_name=name, parent=ctx,
                            terminal_width=HELP_WIDTH_CHARS, max_content_width=HELP_WIDTH_CHARS)
    text = command.get_help(ctx)
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def cli_reference_markdown() -> str:
    """One section per visible command (``swftools.cli.command_paths``) with its whole help."""
    from swftools.cli import command_paths

    parts = []
    for path in command_paths():
        title = " ".join(("swftools", *path))
        level = "#" * min(2 + max(len(path) - 1, 0), 4)
        parts.append(f"{level} `{title}`\n\n```text\n{command_help(path)}```\n")
    return "\n".join(parts)


def on_files(files, config):
    """Add the repository files of ``REPO_FILES`` (paths from mkdocs.yml's folder) to the site
    under their repository paths."""
    from mkdocs.structure.files import File

    root = Path(config.config_file_path).resolve().parent
    for rel in REPO_FILES:
        files.append(File.generated(config, rel, abs_src_path=str(root / rel)))
    return files


def on_page_markdown(markdown, page, config, files):
    """Replace the CLI marker with the reference rendered from the app."""
    if CLI_MARKER in markdown:
        return markdown.replace(CLI_MARKER, cli_reference_markdown())
    return markdown
