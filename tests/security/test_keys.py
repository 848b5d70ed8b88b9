"""Issue 29: weak keys, readable key files and the ``key_id`` oracle.

The reproduced attack: a 16-byte low-entropy key was accepted without a word, and the published
``key_id`` (``HMAC(key, "swftools-key-id")[:12]``) let anyone test a guess offline; the key was
recovered in 1,579 guesses, then every pseudonym reversed."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from swftools import table as jt
from swftools.cli import app
from swftools.errors import InputError, UsageError
from swftools.privacy import keys
from swftools.privacy.pseudonyms import anonymize, load_key, pseudonym

runner = CliRunner()
GOOD_KEY = b"k3Y-for-security-tests:9f2c1e7a05b8d4-swftools"  # 47 bytes, irregular
RAW_SACCT = ("JobID|JobIDRaw|User|Group|Partition|Submit|Start|End|State|ElapsedRaw|AllocTRES\n"
             "7|7|alice|lab|gpu|2020-01-01T00:00:00|2020-01-01T00:01:00|2020-01-01T00:02:00|"
             "COMPLETED|60|gres/gpu=1,node=1\n")


def _old_key_id(key: bytes) -> str:
    """The fingerprint swftools published before issue 29."""
    return hmac.new(key, b"swftools-key-id", hashlib.sha256).hexdigest()[:12]


def _key_file(tmp_path: Path, content: bytes, mode: int = 0o600, name: str = "anon.key") -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    path.chmod(mode)
    return path


def _cli(*args) -> object:
    return runner.invoke(app, [str(a) for a in args])


# --- weak keys are refused -------------------------------------------------------------------

def test_the_reproduced_16_byte_low_entropy_key_is_refused(tmp_path):
    path = _key_file(tmp_path, b"site2019site2019\n")
    with pytest.raises(InputError) as info:
        load_key(path)
    message = str(info.value)
    assert message.startswith(f"{path}: the anonymization key is too short (16 bytes")
    assert "swftools anonymize --new-key" in message


@pytest.mark.parametrize("key, why", [
    (b"0" * 64, "only 1 distinct byte"),
    (b"passwordpasswordpasswordpassword", "only 7 distinct byte"),
    (b"0123456789abcdef0123456789abcdef", "a 16-byte pattern repeated"),
    (b"Tr0ub4dor&3Tr0ub4dor&3Tr0ub4dor&3", "a 11-byte pattern repeated"),
])
def test_regular_keys_of_32_bytes_or_more_are_refused(tmp_path, key, why):
    with pytest.raises(InputError, match=why):
        load_key(_key_file(tmp_path, key))


def test_a_weak_key_in_the_environment_is_refused(monkeypatch):
    monkeypatch.setenv("SWFTOOLS_ANON_KEY", "0123456789abcdef")
    with pytest.raises(InputError, match="environment variable SWFTOOLS_ANON_KEY: .*too short"):
        load_key()


def test_cli_refuses_a_weak_key_and_writes_nothing(tmp_path):
    raw = tmp_path / "jobs.sacct"
    raw.write_text(RAW_SACCT)
    key = _key_file(tmp_path, b"site2019site2019")
    result = _cli("anonymize", raw, "--out", tmp_path / "out.swf", "--key-file", key)
    assert result.exit_code == 1 and "too short (16 bytes" in result.stderr
    assert "swftools anonymize --new-key" in result.stderr
    assert not (tmp_path / "out.swf").exists()


def test_keys_from_a_random_source_are_accepted():
    import secrets

    for _ in range(200):
        assert keys.weakness(secrets.token_hex(32).encode()) is None


@given(st.binary(max_size=80), st.sampled_from([b"", b"\n", b" \r\n", b"\t"]))
def test_check_key_trims_and_refuses_exactly_the_weak_keys(key, pad):
    try:
        got = keys.check_key(pad + key + pad, "k")
    except InputError as err:
        assert key.strip() == b"" or keys.weakness(key.strip()) in str(err)
    else:
        assert got == key.strip() and keys.weakness(got) is None


@given(st.binary(min_size=1, max_size=keys.MIN_KEY_BYTES - 1))
def test_any_key_under_32_bytes_is_refused(key):
    assert keys.weakness(key).startswith("too short")


@given(st.binary(min_size=1, max_size=16), st.integers(2, 40), st.data())
def test_any_repeated_pattern_is_refused(unit, times, data):
    key = (unit * times)[: max(keys.MIN_KEY_BYTES, len(unit) * 2)]
    if len(key) < len(unit) * 2:
        return
    assert keys.weakness(key) is not None


@given(st.binary(max_size=40))
def test_the_period_is_the_smallest_one(key):
    expected = next((p for p in range(1, len(key) + 1)
                     if all(key[i] == key[i + p] for i in range(len(key) - p))), 0)
    assert keys._period(key) == expected


# --- a key file others can read warns ---------------------------------------------------------

def test_a_0666_key_file_warns_on_stderr(tmp_path):
    raw = tmp_path / "jobs.sacct"
    raw.write_text(RAW_SACCT)
    key = _key_file(tmp_path, GOOD_KEY, mode=0o666)
    result = _cli("anonymize", raw, "--out", tmp_path / "out.swf", "--key-file", key)
    assert result.exit_code == 0, result.output
    assert (f"swftools: warning: key file {key} can be read by group or others (mode 0666); "
            f"restrict it with `chmod 600 {key}`") in result.stderr


@pytest.mark.parametrize("mode, warns", [(0o600, False), (0o400, False), (0o640, True),
                                         (0o604, True)])
def test_the_warning_is_about_group_and_other_bits(tmp_path, mode, warns):
    seen: list[str] = []
    assert load_key(_key_file(tmp_path, GOOD_KEY, mode=mode), warn=seen.append) == GOOD_KEY
    assert bool(seen) is warns


def test_a_key_file_that_is_no_regular_file_is_refused(tmp_path):
    with pytest.raises(InputError, match="not a regular file"):
        load_key(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):  # and does not hang
        load_key(fifo)


# --- new keys ------------------------------------------------------------------------------

def test_new_key_is_0600_random_and_256_bits(tmp_path):
    old = os.umask(0)  # a permissive umask must not widen the file
    try:
        first = _cli("anonymize", "--new-key", tmp_path / "a.key")
        second = _cli("anonymize", "--new-key", tmp_path / "b.key")
    finally:
        os.umask(old)
    assert first.exit_code == 0 and second.exit_code == 0, first.output + second.output
    a, b = (tmp_path / "a.key").read_bytes(), (tmp_path / "b.key").read_bytes()
    assert re.fullmatch(rb"[0-9a-f]{64}\n", a) and a != b
    for name in ("a.key", "b.key"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o600
    seen: list[str] = []
    assert load_key(tmp_path / "a.key", warn=seen.append) == a.strip() and not seen


def test_new_key_never_overwrites_without_force(tmp_path):
    path = _key_file(tmp_path, GOOD_KEY)
    result = _cli("anonymize", "--new-key", path)
    assert result.exit_code == 2 and "exists; give --force" in result.stderr
    assert path.read_bytes() == GOOD_KEY
    assert _cli("anonymize", "--new-key", path, "--force").exit_code == 0
    assert path.read_bytes() != GOOD_KEY and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["anon.key"]  # no temporary file left


def test_new_key_does_not_follow_a_symlink(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("user data\n")
    link = tmp_path / "new.key"
    link.symlink_to(victim)
    with pytest.raises(UsageError, match="exists"):
        keys.new_key(link)
    keys.new_key(link, force=True)  # replaces the link itself
    assert victim.read_text() == "user data\n" and not link.is_symlink()
    assert stat.S_IMODE(link.stat().st_mode) == 0o600


@pytest.mark.parametrize("key, period", [
    (b"aaacdefghiaaaacdefghiaaaacdefghiaaaacd", 11),    # "aaacdefghia" repeated
    (b"aaaacdefghijaaaaacdefghijaaaaacdefg", 13)])      # "aaaacdefghija" repeated
def test_a_pattern_that_starts_with_a_repeated_byte_is_found(key, period):
    """The period search falls back through the pattern's own repeats (aaa, then aaaa)."""
    with pytest.raises(InputError, match=f"a {period}-byte pattern repeated"):
        keys.check_key(key, "test")


def _refusal(path) -> InputError:
    with pytest.raises(InputError) as info:
        load_key(path, warn=lambda message: None)
    return info.value


def test_every_refused_key_file_is_named_with_the_hint(tmp_path):
    cases = {_key_file(tmp_path, b"  \n", name="blank.key"): "the anonymization key is empty",
             tmp_path / "missing.key": "key file does not exist",
             _key_file(tmp_path, GOOD_KEY) / "x": "cannot open the key file: Not a directory",
             tmp_path: "key file is not a regular file"}
    for path, message in cases.items():
        error = _refusal(path)
        assert (error.path, error.message, error.expected) == (str(path), message,
                                                               keys.KEY_HINT), path


def test_a_key_file_of_64_kib_is_read_whole_and_one_byte_more_is_refused(tmp_path):
    import secrets

    body = secrets.token_hex(32768).encode()  # 65,536 bytes, a random key
    assert load_key(_key_file(tmp_path, body, name="big.key")) == body
    path = _key_file(tmp_path, body + b"0", name="bigger.key")
    error = _refusal(path)
    assert (error.path, error.message, error.expected) == (
        str(path), "key file is 65,537 bytes, not a key", "a key file of at most 65,536 bytes")


def test_a_failed_write_leaves_no_key_file(tmp_path, monkeypatch):
    """A full disk while the key is written: a clear error and no partial key file."""
    import errno

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(keys.os, "write", full)
    for force in (False, True):
        path = tmp_path / "new.key"
        with pytest.raises(UsageError) as info:
            keys.new_key(path, force=force)
        assert str(info.value) == (f"--new-key {path}: cannot write the key file: "
                                   "No space left on device")
        assert list(tmp_path.iterdir()) == []


def test_new_key_refuses_a_folder_an_existing_file_and_a_missing_folder(tmp_path):
    """Each refusal says what is wrong with the path (a folder, a file there, no folder)."""
    with pytest.raises(UsageError) as info:
        keys.new_key(tmp_path)
    assert str(info.value) == f"--new-key {tmp_path}: is a directory; give a file name"
    path = _key_file(tmp_path, GOOD_KEY)
    with pytest.raises(UsageError) as info:
        keys.new_key(path)
    assert str(info.value) == (f"--new-key {path}: the file exists; give --force to replace it "
                               "(pseudonyms made with the old key will no longer line up)")
    missing = tmp_path / "no-such-folder" / "k"
    with pytest.raises(UsageError) as info:
        keys.new_key(missing)
    assert str(info.value) == (f"--new-key {missing}: cannot create the key file: "
                               "No such file or directory")


def test_warnings_go_to_stderr_with_the_program_name(tmp_path, capsys):
    load_key(ephemeral=True)
    path = _key_file(tmp_path, GOOD_KEY, mode=0o644)
    load_key(path)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"swftools: {keys.EPHEMERAL_WARNING}\n"
                            f"swftools: {keys.READABLE_WARNING.format(path=path, mode=0o644)}\n")


def test_new_key_is_alone_on_the_command_line(tmp_path):
    result = _cli("anonymize", "in.sacct", "--new-key", tmp_path / "k")
    assert result.exit_code == 2 and "drop SOURCE" in result.stderr
    assert not (tmp_path / "k").exists()


# --- no key oracle is published ---------------------------------------------------------------

def _guessable_keys(n: int = 2000) -> list[bytes]:
    """A dictionary like the reproduced attack's: site name + year, padded."""
    return [f"aaic{year}".encode() * 2 for year in range(2000, 2000 + n)]


def test_key_id_is_no_longer_an_oracle(tmp_path):
    # 1. The reproduced key (16 bytes, from a small dictionary) cannot be used at all ...
    secret = _guessable_keys()[1579]
    with pytest.raises(InputError, match="too short"):
        load_key(_key_file(tmp_path, secret))
    # 2. ... and a release publishes nothing computed from the key alone: the old attack
    #    (guess, compare the published key_id) has nothing to compare with.
    key = GOOD_KEY
    table = jt.from_columns({"job_id": [1, 2], "user": ["alice", "bob"], "group": ["a", "b"]},
                            {"source_file": "raw.csv"})
    out = anonymize(table, key).table
    meta = jt.get_metadata(out)
    assert "key_id" not in meta["anonymization"]
    published = json.dumps(meta) + "".join(str(v) for v in out.column("user").to_pylist())
    assert _old_key_id(key) not in published
    found = [g for g in _guessable_keys() + [key] if _old_key_id(g) in published]
    assert found == []
    # the pseudonyms are still the documented HMAC of the name (a key holder can check them)
    assert out.column("user").to_pylist() == [pseudonym("alice", key, "user"),
                                               pseudonym("bob", key, "user")]


def test_the_example_key_is_a_valid_key():
    root = Path(__file__).resolve().parents[2]
    key = (root / "archive" / "example-key.txt").read_bytes().strip()
    assert keys.weakness(key) is None
    package = json.loads((root / "archive" / "example" / "datapackage.json").read_text())
    assert "key_id" not in json.dumps(package)


def test_eight_distinct_byte_values_are_enough_and_seven_are_not():
    eight = b"dcfhbaheddhhgcdcgabcaeaehggghcfb"  # 32 irregular bytes of 8 values
    assert keys.check_key(eight, "test") == eight
    with pytest.raises(InputError, match="only 7 distinct byte values"):
        keys.check_key(eight.replace(b"h", b"a"), "test")


def test_a_key_in_the_environment_may_hold_any_byte(monkeypatch):
    """A non-UTF-8 byte reaches os.environ as a surrogate and the key as the same byte."""
    key = GOOD_KEY + b"\xff"
    monkeypatch.setenv("SWFTOOLS_ANON_KEY", key.decode("utf-8", "surrogateescape"))
    assert load_key() == key


def test_the_refusals_of_load_key_say_what_to_give(tmp_path, monkeypatch):
    with pytest.raises(UsageError) as info:
        load_key(tmp_path / "k", ephemeral=True)
    assert str(info.value) == "--key-file and --ephemeral-key contradict each other; give one"
    monkeypatch.delenv("SWFTOOLS_ANON_KEY", raising=False)
    with pytest.raises(UsageError) as info:
        load_key()
    assert str(info.value) == (
        "no anonymization key: give --key-file FILE or set SWFTOOLS_ANON_KEY (or --ephemeral-key "
        "for a throw-away run whose pseudonyms are not stable; make a key with `swftools "
        "anonymize --new-key FILE`)")
