"""Attacks on the atomic writers (``swftools.atomic``, issue 29 items 2 and 3): ``--force`` onto
folders swftools did not write, old-copy names, links at the target and at the temporary path,
inputs inside the output, the umask, concurrent writers, leftovers of killed writers."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

from swftools import atomic
from swftools.atomic import (MARKER, atomic_dir, atomic_file, check_not_inside, clean_stale,
                             is_swftools_output)
from swftools.cli import app
from swftools.errors import UsageError

from ..strategies import atomic_write_ops

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "archive" / "release-settings.example.json"
SWF = ("; UnixStartTime: 1500000000\n; MaxNodes: 1\n; MaxProcs: 4\n"
       "1 0 5 600 1 -1 -1 1 600 -1 1 1 1 -1 1 -1 -1 -1\n"
       "2 60 5 900 4 -1 -1 4 900 -1 1 2 1 -1 1 -1 -1 -1\n")


@contextmanager
def umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def user_folder(path: Path) -> Path:
    path.mkdir()
    (path / "thesis.tex").write_text("my thesis")
    (path / "summary.json").write_text('{"not": "a replay"}')
    return path


def write_dir(path: Path, text: str, force: bool = False) -> None:
    with atomic_dir(path, force=force) as tmp:
        (tmp / "out.txt").write_text(text)


def leftovers(parent: Path, *keep: str) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name not in keep)


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    try:
        os.kill(child.pid, 0)
    except ProcessLookupError:
        return child.pid
    pytest.skip("the pid of a finished child was reused at once")


def cli(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def one_error_line(result, code: int = 2) -> str:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output and result.exception is None or \
        isinstance(result.exception, SystemExit)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("swftools: error: "), result.output
    return lines[0]


# ------------------------------------------------------------------ --force and foreign folders

def test_force_refuses_a_folder_swftools_did_not_write(tmp_path):
    thesis = user_folder(tmp_path / "thesis")
    with pytest.raises(UsageError, match="not a folder swftools wrote.*even with --force"):
        write_dir(thesis, "replay", force=True)
    assert sorted(p.name for p in thesis.iterdir()) == ["summary.json", "thesis.tex"]
    assert (thesis / "thesis.tex").read_text() == "my thesis"
    assert leftovers(tmp_path) == ["thesis"]  # no temporary folder left either


def test_replay_cli_force_onto_a_user_folder_is_one_error_line(tmp_path):
    trace = tmp_path / "t.swf"
    trace.write_text(SWF)
    thesis = user_folder(tmp_path / "thesis")
    line = one_error_line(cli("replay", trace, "-o", thesis, "--force"))
    assert f"{thesis}: already exists and is not a folder swftools wrote" in line
    assert (thesis / "thesis.tex").read_text() == "my thesis"


def test_force_replaces_what_swftools_wrote_marker_and_earlier_versions(tmp_path):
    out = tmp_path / "out"
    write_dir(out, "one")
    assert (out / MARKER).read_text() == atomic.MARKER_TEXT
    write_dir(out, "two", force=True)
    assert (out / "out.txt").read_text() == "two" and leftovers(tmp_path) == ["out"]
    # a data package of an earlier version: no marker, a descriptor with the swftools extension
    legacy = tmp_path / "pkg"
    legacy.mkdir()
    (legacy / "datapackage.json").write_text(json.dumps({"resources": [], "swftools": {}}))
    write_dir(legacy, "new", force=True)
    assert sorted(p.name for p in legacy.iterdir()) == [MARKER, "out.txt"]
    # someone else's data package, a marker that is a link or a folder: not swftools's
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "datapackage.json").write_text(json.dumps({"resources": []}))
    (tmp_path / "decoy").write_text(atomic.MARKER_TEXT)
    (foreign / MARKER).symlink_to(tmp_path / "decoy")
    assert not is_swftools_output(foreign)
    with pytest.raises(UsageError, match="not a folder swftools wrote"):
        write_dir(foreign, "x", force=True)
    (foreign / MARKER).unlink()
    (foreign / MARKER).mkdir()
    assert not is_swftools_output(foreign)
    assert not is_swftools_output(tmp_path / "decoy") and not is_swftools_output(tmp_path / "no")


@pytest.mark.parametrize("name, value", [
    ("datapackage.json", {"resources": [], "swftools": {"extension_version": 1}}),
    ("report.json", {"report_format": 1, "swftools_version": "0.9", "analyses": {}}),
    ("summary.json", {"model": "flat", "policy": "easy", "allocation": "first-fit",
                      "bounded_slowdown_tau_s": 10, "peak_busy": 4}),
    ("comparison.json", {"policies": [], "scheduler": "easy", "sensitivity": "x", "classes": "y"}),
])
def test_outputs_of_earlier_versions_are_recognised_by_their_descriptor(tmp_path, name, value):
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / name).write_text(json.dumps(value))
    assert is_swftools_output(folder)
    (folder / name).write_text(json.dumps({k: v for k, v in list(value.items())[1:]}))
    assert not is_swftools_output(folder)  # a user's file of that name is not enough
    (folder / name).write_text("[1, 2]")
    assert not is_swftools_output(folder)


def test_the_marker_is_left_out_of_a_release_s_checksums_and_tarball(tmp_path):
    from swftools.release.tarball import archive_files, write_checksums

    root = tmp_path / "archive"
    write_dir(root, "x")
    assert (root / MARKER).is_file()
    assert archive_files(root) == ["out.txt"]
    assert MARKER not in write_checksums(root)


def test_a_preexisting_old_name_is_kept(tmp_path):
    out = tmp_path / "out"
    write_dir(out, "one")
    (tmp_path / ".out.old").write_text("the user's own file")
    (tmp_path / ".out.old.d").mkdir()
    write_dir(out, "two", force=True)
    assert (tmp_path / ".out.old").read_text() == "the user's own file"
    assert leftovers(tmp_path) == [".out.old", ".out.old.d", "out"]


def test_a_link_at_the_target_is_replaced_not_followed(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    write_dir(elsewhere, "theirs")  # even a folder swftools wrote: the link is what is replaced
    link = tmp_path / "link"
    link.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UsageError, match="already exists"):
        write_dir(link, "mine")
    write_dir(link, "mine", force=True)
    assert not link.is_symlink() and (link / "out.txt").read_text() == "mine"
    assert (elsewhere / "out.txt").read_text() == "theirs"
    write_dir(link, "again", force=True)  # nothing left behind breaks a later run
    assert leftovers(tmp_path) == ["elsewhere", "link"]
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    file_link = tmp_path / "out.swf"
    file_link.symlink_to(victim)
    with atomic_file(file_link, force=True) as tmp:
        tmp.write_text("output")
    assert not file_link.is_symlink() and file_link.read_text() == "output"
    assert victim.read_text() == "precious"


def test_replay_cli_force_onto_a_directory_link(tmp_path):
    trace = tmp_path / "t.swf"
    trace.write_text(SWF)
    target = user_folder(tmp_path / "target")
    link = tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    for _ in range(2):
        result = cli("replay", trace, "-o", link, "--force")
        assert result.exit_code == 0, result.output
    assert (link / "summary.json").is_file() and not link.is_symlink()
    assert sorted(p.name for p in target.iterdir()) == ["summary.json", "thesis.tex"]


def test_a_file_output_never_replaces_a_folder(tmp_path):
    out = tmp_path / "out.swf"
    write_dir(out, "x")
    with pytest.raises(UsageError, match="is a folder"):
        with atomic_file(out, force=True) as tmp:
            tmp.write_text("file")
    assert (out / "out.txt").read_text() == "x"


# ---------------------------------------------------------------------- input inside the output

def test_check_not_inside(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "t.swf").write_text(SWF)
    check_not_inside([tmp_path / "t.swf", None, {"settings": 1}], out)
    with pytest.raises(UsageError, match="inside the output"):
        check_not_inside([out / "t.swf"], out)
    with pytest.raises(UsageError, match="inside the output"):
        check_not_inside([out], out)
    # through a link to the output's folder: still inside
    (tmp_path / "alias").symlink_to(out, target_is_directory=True)
    with pytest.raises(UsageError, match="inside the output"):
        check_not_inside([tmp_path / "alias" / "t.swf"], out)
    # the output is a link: only the link is replaced, what it points to is not inside
    (tmp_path / "outlink").symlink_to(out, target_is_directory=True)
    check_not_inside([out / "t.swf"], tmp_path / "outlink")


@pytest.mark.parametrize("command", ["replay", "report", "whatif", "convert", "release"])
def test_commands_refuse_an_input_inside_the_output(tmp_path, command):
    out = tmp_path / "out"
    write_dir(out, "old output")
    trace = out / "t.swf"
    trace.write_text(SWF)
    args = {"replay": ["replay", trace, "-o", out],
            "report": ["report", trace, "-o", out],
            "whatif": ["whatif", trace, "--procs", "4", "-o", out],
            "convert": ["convert", trace, "--to", "package", "-o", out],
            "release": ["release", trace, "-o", out, "--version", "1.0.0", "--settings",
                        SETTINGS]}[command]
    line = one_error_line(cli(*args, "--force"))
    assert "inside the output" in line
    assert trace.read_text() == SWF and (out / "out.txt").read_text() == "old output"


def test_release_refuses_a_key_file_inside_the_output(tmp_path):
    out = tmp_path / "out"
    write_dir(out, "old")
    key = out / "key.txt"
    key.write_text("k" * 64)
    trace = tmp_path / "t.swf"
    trace.write_text(SWF)
    line = one_error_line(cli("release", trace, "-o", out, "--version", "1.0.0", "--settings",
                              SETTINGS, "--key-file", key, "--force"))
    assert f"{key}: this input is inside the output" in line and key.is_file()


# --------------------------------------------------------------------- redirection, permissions

def test_a_link_swapped_in_for_the_temporary_file_is_not_chmodded(tmp_path, monkeypatch):
    victim = tmp_path / "victim"
    victim.write_text("secret")
    victim.chmod(0o600)
    chmods = []
    monkeypatch.setattr(os, "chmod", lambda *a, **k: chmods.append(a))
    out = tmp_path / "out.csv"
    with pytest.raises(UsageError, match="temporary file was replaced"):
        with atomic_file(out) as tmp:
            tmp.write_text("data")
            tmp.unlink()
            tmp.symlink_to(victim)
    assert stat.S_IMODE(victim.stat().st_mode) == 0o600 and victim.read_text() == "secret"
    assert not os.path.lexists(out) and chmods == []
    assert leftovers(tmp_path) == ["victim"]


def test_a_link_swapped_in_for_the_temporary_folder_is_not_chmodded(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o700)
    victim.chmod(0o700)
    out = tmp_path / "out"
    with pytest.raises(UsageError, match="temporary folder was replaced"):
        with atomic_dir(out) as tmp:
            tmp.rmdir()
            tmp.symlink_to(victim, target_is_directory=True)
    assert stat.S_IMODE(victim.stat().st_mode) == 0o700 and list(victim.iterdir()) == []
    assert not os.path.lexists(out) and leftovers(tmp_path) == ["victim"]


def test_modes_are_set_on_the_descriptor(tmp_path, monkeypatch):
    calls = []
    real = os.fchmod
    monkeypatch.setattr(os, "fchmod", lambda fd, mode: (calls.append(mode), real(fd, mode)))
    monkeypatch.setattr(os, "chmod", lambda *a, **k: pytest.fail("chmod through a path"))
    with umask(0o022):
        with atomic_file(tmp_path / "f") as tmp:
            tmp.write_text("x")
        write_dir(tmp_path / "d", "x")
    assert calls == [0o644, 0o644, 0o755]  # the file; the folder's marker, then the folder


@pytest.mark.parametrize("mask", [0o077, 0o027, 0o002])
def test_the_umask_is_respected(tmp_path, mask):
    with umask(mask):
        assert atomic.current_umask() == mask
        with atomic_file(tmp_path / "f.csv") as tmp:
            tmp.write_text("raw names")
        write_dir(tmp_path / "d", "x")
    mode = lambda p: stat.S_IMODE(os.lstat(p).st_mode)  # noqa: E731
    assert mode(tmp_path / "f.csv") == 0o666 & ~mask
    assert mode(tmp_path / "d") == 0o777 & ~mask
    assert mode(tmp_path / "d" / MARKER) == 0o666 & ~mask


def test_an_nqsii_copy_under_umask_077_is_private(tmp_path):
    with umask(0o077):  # the raw sample: real user names
        result = cli("convert", ROOT / "samples" / "aaic-sample.csv.gz", "--to", "nqsii",
                     "-o", tmp_path / "copy.csv")
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE((tmp_path / "copy.csv").stat().st_mode) == 0o600


# ---------------------------------------------------------------------------- concurrent writers

def test_the_later_of_two_file_writers_fails(tmp_path):
    out = tmp_path / "out.swf"
    with pytest.raises(UsageError, match="appeared while this output was being written"):
        with atomic_file(out) as first:
            first.write_text("first")
            with atomic_file(out) as second:  # started after the check, finishes first
                second.write_text("second")
    assert out.read_text() == "second" and leftovers(tmp_path) == ["out.swf"]


@pytest.mark.parametrize("existing", ["absent", "empty folder"])
def test_the_later_of_two_folder_writers_fails(tmp_path, existing):
    out = tmp_path / "pkg"
    kwargs = {}
    if existing == "empty folder":  # used as if absent (the data package writer's rule)
        out.mkdir()
        kwargs["use_empty"] = True
    with pytest.raises(UsageError, match="appeared while this output was being written"):
        with atomic_dir(out, **kwargs) as first:
            (first / "out.txt").write_text("first")
            with atomic_dir(out, **kwargs) as second:
                (second / "out.txt").write_text("second")
    assert (out / "out.txt").read_text() == "second" and leftovers(tmp_path) == ["pkg"]


def test_two_package_writers_without_force(tmp_path, monkeypatch):
    """The data package writer used an existing empty folder with force: a second writer that
    had seen it empty silently replaced the first one's package."""
    from swftools.formats import datapackage
    from swftools.formats.datapackage import package
    from swftools.formats import swf

    trace = tmp_path / "t.swf"
    trace.write_text(SWF)
    table = swf.read(trace)
    out = tmp_path / "pkg"
    out.mkdir()
    real = package.atomic_dir

    @contextmanager
    def racing(*args, **kwargs):
        with real(*args, **kwargs) as tmp:
            if not racing.done:
                racing.done = True
                datapackage.write(table, out, properties={"title": "first"})
            yield tmp

    racing.done = False
    monkeypatch.setattr(package, "atomic_dir", racing)
    with pytest.raises(UsageError, match="appeared while"):
        datapackage.write(table, out, properties={"title": "second"})
    assert json.loads((out / "datapackage.json").read_text())["title"] == "first"


# -------------------------------------------------------------------------- killed writers' files

def test_stale_temporaries_of_dead_writers_are_removed(tmp_path):
    dead, live = dead_pid(), os.getppid()
    out = tmp_path / "out"
    names = {
        f".out.{dead}.0123abcd.tmp": "dir",  # a killed atomic_dir
        f".out.{dead}.89abcdef.tmp": "file",  # a killed atomic_file
        f"..out.{dead}.00000000.tmp.{dead}.11111111.tmp": "dir",  # a killed nested writer
        f".out.{dead}.22222222.old": "dir",  # an old copy: removed only once out exists
        f".out.{live}.33333333.tmp": "file",  # a running writer's
        f".out.{os.getpid()}.44444444.tmp": "file",  # ours
        ".out.old": "file", f".out.{dead}.tmp": "file", f".out.{dead}.XYZ12345.tmp": "file",
        f".other.{dead}.55555555.tmp": "file",  # not beside this target
    }
    for name, kind in names.items():
        if kind == "dir":
            (tmp_path / name).mkdir()
            (tmp_path / name / "part.csv").write_text("x")
        else:
            (tmp_path / name).write_text("x")
    gone = {f".out.{dead}.0123abcd.tmp", f".out.{dead}.89abcdef.tmp",
            f"..out.{dead}.00000000.tmp.{dead}.11111111.tmp"}
    assert {p.name for p in clean_stale(out)} == gone
    write_dir(out, "new")  # the next run; the old copy stays while out is missing
    assert (tmp_path / f".out.{dead}.22222222.old").is_dir()
    write_dir(out, "newer", force=True)  # out exists now: the dead writer's old copy goes
    assert set(leftovers(tmp_path)) == set(names) - gone - {f".out.{dead}.22222222.old"} | {"out"}


def test_a_killed_writer_leaves_a_temporary_the_next_run_removes(tmp_path):
    code = ("import os, signal, sys\n"
            "from swftools.atomic import atomic_dir, atomic_file\n"
            "with atomic_dir(sys.argv[1]) as d, atomic_file(sys.argv[2]) as f:\n"
            "    (d / 'x').write_text('partial'); f.write_text('partial')\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n")
    out, out_file = tmp_path / "out", tmp_path / "out.csv"
    child = subprocess.Popen([sys.executable, "-c", code, str(out), str(out_file)], cwd=ROOT)
    assert child.wait() == -9
    left = leftovers(tmp_path)  # .out.<pid>.<hex>.tmp and .out.csv.<pid>.<hex>.tmp
    assert len(left) == 2 and all(f".{child.pid}." in name for name in left)
    write_dir(out, "done")
    with atomic_file(out_file) as tmp:
        tmp.write_text("done")
    assert leftovers(tmp_path) == ["out", "out.csv"]


# ---------------------------------------------------------------------------------- the property

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(atomic_write_ops())
def test_sequences_of_writes_keep_every_rule(ops):
    """Any sequence of file/folder writes, with and without --force, under any umask, onto a
    target that may be a user folder or a link: a user's folder and a link's target are never
    changed, a refused write changes nothing, no temporary is left, modes follow the umask."""
    with tempfile.TemporaryDirectory() as name:
        root = Path(name)
        target, victim = root / "t", root / "victim"
        victim.mkdir()
        (victim / "keep.txt").write_text("keep")
        state = None  # what the target is: None, "file", "dir" (swftools's), "user", "link"
        for n, (op, force, mask) in enumerate(ops):
            if op in ("user", "link"):
                if state is not None:
                    continue
                if op == "user":
                    user_folder(target)
                else:
                    target.symlink_to(victim, target_is_directory=True)
                state = op
                continue
            before = snapshot(target)
            allowed = state is None or (force and state in ("link", op))
            try:
                with umask(mask):
                    if op == "file":
                        with atomic_file(target, force) as tmp:
                            tmp.write_text(str(n))
                    else:
                        write_dir(target, str(n), force)
            except UsageError:
                assert not allowed, (op, force, state)
                assert snapshot(target) == before
            else:
                assert allowed, (op, force, state)
                state = op
                made = target if op == "file" else target / "out.txt"
                assert made.read_text() == str(n)
                want = (0o666 if op == "file" else 0o777) & ~mask
                assert stat.S_IMODE(os.lstat(target).st_mode) == want
            assert leftovers(root) == sorted(p for p in ("t", "victim")
                                             if os.path.lexists(root / p))
            assert (victim / "keep.txt").read_text() == "keep" and len(list(victim.iterdir())) == 1
            if state == "user":
                assert (target / "thesis.tex").read_text() == "my thesis"


def snapshot(path: Path) -> object:
    if path.is_symlink():
        return ("link", os.readlink(path))
    if path.is_dir():
        return ("dir", sorted((p.name, p.read_bytes()) for p in path.iterdir()))
    if path.exists():
        return ("file", path.read_bytes())
    return None
