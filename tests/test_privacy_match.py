"""The leak audit's matcher: term kinds, what is searchable, the one-pass pattern, hex runs."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from swftools.privacy.match import (
    COMMON_JOB_NAMES,
    MIN_HEX_RUN,
    Matcher,
    Term,
    archive_words,
    key_terms,
    unsearchable_reason,
    vocabulary,
)
from swftools.resources import load_json

from .strategies import trie_word_sets


def _hits(text: str | bytes, *terms: Term, **kw) -> list[tuple[int, str, str]]:
    data = text.encode() if isinstance(text, str) else text
    return [(h.offset, str(h.term.text), h.match) for h in Matcher(terms).scan(data, **kw)]


# --- terms -----------------------------------------------------------------------------------

def test_describe_names_the_kind_or_uses_the_label():
    assert Term("tanaka", "user").describe() == "user name 'tanaka'"
    assert Term("lab", "group").describe() == "group name 'lab'"
    assert Term("gpu01", "host").describe() == "host name 'gpu01'"
    assert Term("x_1.sh", "job").describe() == "job name 'x_1.sh'"
    assert Term("sato", "name").describe() == "name 'sato'"
    assert Term(b"k", "key", "the key").describe() == "the key"


def test_vocabulary_holds_schema_words_and_site_queues():
    words = vocabulary()
    for f in load_json("jobs.schema.json")["fields"]:
        assert f["name"].split("_")[0].lower() in words
    for q in load_json("sites/aaic.json")["queues"]:
        assert q["name"].lower() in words
    assert {"user", "localhost", "login"} <= words
    assert "tanaka" not in words


def test_archive_words_hold_template_and_writer_words_of_four_letters_or_more():
    words = archive_words()
    assert vocabulary() <= words
    assert {"schemas", "sha256sums", "frictionless", "citation"} <= words
    assert all(w == w.lower() for w in words)
    assert not {w for w in words - vocabulary() if len(w) < 4}


# --- what is searchable ----------------------------------------------------------------------

@pytest.mark.parametrize("term, reason", [
    (Term("1017", "user"), "numeric-only: numbers occur in every job column"),
    (Term("QUEUE", "group"), "a word every archive contains"),
    (Term("x1", "job"), "a job name shorter than 4 characters: ordinary text"),
    (Term("ab1", "job"), "a job name shorter than 4 characters: ordinary text"),
    (Term("analysis", "job"), "a job name of letters only: ordinary text"),
    (Term("Python3", "job"), "a common command name"),
    (Term("run.sh", "job"), "a common command name"),
    (Term("ab12", "job"), None),
    (Term("train_resnet50", "job"), None),
    (Term("ab1", "user"), None),
    (Term("analysis", "user"), None),
    (Term(b"1234", "key"), None),
    (Term("1234", "key"), None),
])
def test_unsearchable_reason(term, reason):
    assert unsearchable_reason(term) == reason


def test_unsearchable_terms_are_listed_not_searched():
    matcher = Matcher([Term("analysis", "job"), Term("run-42.sh", "job")])
    assert [t.text for t in matcher.terms] == ["run-42.sh"]
    assert matcher.unsearchable == [(Term("analysis", "job"),
                                     "a job name of letters only: ordinary text")]
    assert _hits("analysis run-42.sh", *matcher.unsearchable[0][:1], Term("run-42.sh", "job")) == [
        (9, "run-42.sh", "token")]
    assert "run.sh" in COMMON_JOB_NAMES


def test_blank_and_repeated_terms_are_dropped():
    matcher = Matcher([Term("  ", "user"), Term("", "user"), Term("tanaka", "user"),
                       Term("tanaka", "user")])
    assert matcher.terms == [Term("tanaka", "user")]
    assert matcher.unsearchable == []
    assert _hits("tanaka", Term("tanaka", "user"), Term("tanaka", "user")) == [
        (0, "tanaka", "token")]


def test_empty_matcher_is_false_and_finds_nothing():
    matcher = Matcher([Term("1017", "user")])
    assert not matcher
    assert matcher.max_term_bytes == 0
    assert matcher.scan(b"1017 user") == []
    assert Matcher([Term("abc", "user")])


def test_max_term_bytes_is_the_longest_searched_form():
    assert Matcher([Term("ab", "user"), Term("tanaka", "user")]).max_term_bytes == 6
    assert Matcher([Term("ab", "user")]).max_term_bytes == 2
    escaped = len(json.dumps("田中")) - 2  # \u7530\u4e2d is longer than the UTF-8 bytes
    assert Matcher([Term("田中", "user")]).max_term_bytes == escaped


# --- substring and token terms ---------------------------------------------------------------

def test_three_characters_match_inside_words_two_only_as_tokens():
    assert _hits("xabcx abc", Term("abc", "user")) == [(1, "abc", "substring"), (6, "abc", "token")]
    assert _hits("xabx ab", Term("ab", "user")) == [(5, "ab", "token")]


def test_job_names_match_only_as_whole_tokens_whatever_their_length():
    term = Term("train_resnet50", "job")
    assert _hits("my_train_resnet50 train_resnet50", term) == [(18, "train_resnet50", "token")]


def test_token_boundaries_at_both_ends_of_the_data():
    term = Term("ab", "user")
    assert _hits("ab", term) == [(0, "ab", "token")]
    assert _hits("ab-ab", term) == [(0, "ab", "token"), (3, "ab", "token")]
    assert _hits("abc", Term("abc", "user")) == [(0, "abc", "token")]
    assert _hits("-abc", Term("abc", "user")) == [(1, "abc", "token")]
    assert _hits("abc-", Term("abc", "user")) == [(0, "abc", "token")]
    assert _hits("abc_", Term("abc", "user")) == [(0, "abc", "substring")]
    assert _hits("_abc", Term("abc", "user")) == [(1, "abc", "substring")]


def test_hits_of_both_kinds_are_sorted_by_offset():
    hits = _hits("ab zzzq ab zzzq", Term("ab", "user"), Term("zzzq", "host"))
    assert hits == [(0, "ab", "token"), (3, "zzzq", "token"), (8, "ab", "token"),
                    (11, "zzzq", "token")]


def test_tokens_only_keeps_whole_substring_terms_and_token_terms():
    assert _hits(b"\x00ab xtanakax tanaka", Term("ab", "user"), Term("tanaka", "user"),
                 tokens_only=True) == [(1, "ab", "token"), (13, "tanaka", "token")]


def test_one_form_shared_by_two_terms_reports_both():
    hits = _hits("sato", Term("sato", "user"), Term("sato", "group"))
    assert hits == [(0, "sato", "token"), (0, "sato", "token")]
    assert [h.term.kind for h in Matcher([Term("sato", "user"), Term("sato", "group")]).scan(
        b"sato")] == ["user", "group"]


def test_quote_in_a_name_is_searched_json_escaped_too():
    term = Term('o"brien', "user")
    assert _hits(json.dumps({"u": 'o"brien'}), term) == [(7, 'o"brien', "token")]


@given(trie_word_sets, st.text("xyz", max_size=12))
def test_scan_finds_the_leftmost_longest_terms(words, text):
    """The one-pass pattern against a brute-force reading: at each position the longest term
    that starts there, then on after it (letters that are neither hex nor pseudonym prefixes)."""
    expected, i = [], 0
    while i < len(text):
        found = max((w for w in words if text.startswith(w, i)), key=len, default=None)
        if found is None:
            i += 1
            continue
        expected.append((i, found))
        i += len(found)
    matcher = Matcher([Term(w, "host") for w in words])
    assert [(h.offset, h.term.text) for h in matcher.scan(text.encode())] == expected


# --- scan_lines and found_in -----------------------------------------------------------------

def test_scan_lines_counts_lines_from_first_line():
    matcher = Matcher([Term("tanaka", "user")])
    data = b"tanaka\n\nx tanaka tanaka\ny\ntanaka"
    assert [line for line, _ in matcher.scan_lines(data)] == [1, 3, 3, 5]
    assert [line for line, _ in matcher.scan_lines(data, 10)] == [10, 12, 12, 14]
    assert [line for line, _ in matcher.scan_lines(b"xtanakax\ntanaka", tokens_only=True)] == [2]


def test_found_in():
    matcher = Matcher([Term("tanaka", "user"), Term("ab", "user")])
    assert matcher.found_in("by TANAKA")
    assert matcher.found_in("ab")
    assert not matcher.found_in("about a lab")
    assert Matcher([Term("\udce9x1", "user")]).found_in("a \udce9x1")


# --- archive words ---------------------------------------------------------------------------

def test_name_inside_an_archive_word_is_skipped_but_not_inside_other_words():
    chem = Term("chem", "group")
    assert _hits("schemas", chem) == []
    assert _hits("schemasx", chem) == [(1, "chem", "substring")]
    assert _hits("xschemas", chem) == [(2, "chem", "substring")]
    assert _hits("schemas_", chem) == [(1, "chem", "substring")]
    assert _hits("schem\xe9as".encode(), chem) == [(1, "chem", "substring")]


# --- hex runs (digests and pseudonyms) -------------------------------------------------------

@pytest.mark.parametrize("left, right, skipped", [
    ("", "0" * (MIN_HEX_RUN - 3), True),       # exactly 16 with the 3-byte name
    ("", "0" * (MIN_HEX_RUN - 4), False),      # 15
    ("0" * (MIN_HEX_RUN - 3), "", True),
    ("0" * (MIN_HEX_RUN - 4), "", False),
    ("0" * 6, "0" * 7, True),
    ("0" * 6, "0" * 6, False),
])
def test_a_hex_name_inside_a_run_of_16_hex_digits_is_skipped(left, right, skipped):
    text = f"x {left}abe{right} x"
    assert (_hits(text, Term("abe", "user")) == []) == skipped


def test_a_pseudonym_prefix_counts_with_its_hex_run():
    # u + 15 hex digits: the name "u3f" starts at the prefix, the run after it is 15 long
    run = "3f" + "0" * (MIN_HEX_RUN - 3)
    assert _hits(f" u{run} ", Term("u3f", "user")) == [(1, "u3f", "substring")]
    assert _hits(f" u{run}0 ", Term("u3f", "user")) == []
    # a prefix letter inside the run is not a hex digit: the run ends before it
    assert _hits(f" {'0' * 13}u3f ", Term("u3f", "user")) == [(14, "u3f", "substring")]
    assert _hits(f" {'0' * 13}abe ", Term("abe", "user")) == []


def test_a_name_with_a_non_hex_byte_is_never_in_a_hex_run():
    assert _hits("0" * 20 + "abz" + "0" * 20, Term("abz", "user")) == [(20, "abz", "substring")]
    assert _hits("0" * 20 + "gab" + "0" * 20, Term("gab", "user")) == []  # g + 22 hex digits
    # a prefix letter starts the run: hex digits before it do not count
    assert _hits("0" * 20 + "gab ", Term("gab", "user")) == [(20, "gab", "substring")]


def test_a_key_is_reported_even_inside_a_hex_run():
    key = bytes(range(32))
    hits = Matcher(key_terms(key)).scan(b"sha: " + key.hex().encode() + b"00")
    assert [h.term.label for h in hits] == ["the anonymization key (hex)"]


# --- the key -----------------------------------------------------------------------------------

def test_key_terms_lists_each_distinct_form_once():
    key = b"\xfb\xff" + b"k" * 30   # base64 with + and /, padded
    terms = key_terms(key)
    forms = {t.label: t.text for t in terms}
    assert forms == {
        "the anonymization key (raw bytes)": key,
        "the anonymization key (hex)": key.hex().encode(),
        "the anonymization key (base64)": base64.b64encode(key),
        "the anonymization key (base64 without padding)": base64.b64encode(key).rstrip(b"="),
        "the anonymization key (URL-safe base64)": base64.urlsafe_b64encode(key),
        "the anonymization key (URL-safe base64 without padding)":
            base64.urlsafe_b64encode(key).rstrip(b"="),
    }
    assert all(t.kind == "key" for t in terms)
    same = key_terms(b"k" * 33)  # no padding, nothing URL-specific: two forms only
    assert [t.label for t in same] == ["the anonymization key (raw bytes)",
                                       "the anonymization key (hex)",
                                       "the anonymization key (base64)"]


def test_a_short_key_form_is_found_inside_words():
    hits = Matcher(key_terms(b"k")).scan(b"xkx")
    assert [(h.offset, h.match) for h in hits] == [(1, "substring")]


def test_prefix_terms_with_several_continuations():
    terms = [Term(w, "host") for w in ("xyz", "xyzx", "xyzy", "xyy")]
    assert _hits("xyz xyzx xyzyx xyy xyzz", *terms) == [
        (0, "xyz", "token"), (4, "xyzx", "token"), (9, "xyzy", "substring"),
        (15, "xyy", "token"), (19, "xyz", "substring")]


def test_a_skipped_hit_does_not_end_the_scan():
    assert _hits("schemas 0000000000000abe tanaka", Term("chem", "group"), Term("abe", "user"),
                 Term("tanaka", "user")) == [(25, "tanaka", "token")]


def test_scan_lines_reports_substring_hits_and_counts_a_leading_newline():
    matcher = Matcher([Term("tanaka", "user")])
    assert [(line, h.match) for line, h in matcher.scan_lines(b"\nxtanakax")] == [(2, "substring")]


def test_key_forms_keep_a_trailing_x():
    key = b"k" * 32 + b"\x17"  # 33 bytes: base64 without padding, ending in "X"
    assert base64.b64encode(key).endswith(b"X")
    assert [t.text for t in key_terms(key)] == [key, key.hex().encode(), base64.b64encode(key)]


def test_the_archive_word_and_hex_run_checks_work_far_into_the_data():
    pad = " " * 70
    assert _hits(pad + "schemas", Term("chem", "group")) == []
    assert _hits(pad + "0" * 13 + "abe", Term("abe", "user")) == []
    assert _hits(pad + "abe" + "0" * 13, Term("abe", "user")) == []


def test_hex_runs_at_the_edges_of_the_data():
    assert _hits("0" * 13 + "abe", Term("abe", "user")) == []
    # a run never wraps around from the start of the data to its end
    assert _hits("abe" + "0" * 12 + " 0", Term("abe", "user")) == [(0, "abe", "substring")]
    # nor steps over a byte that is no hex digit
    assert _hits("0" * 12 + "z0abe", Term("abe", "user")) == [(14, "abe", "substring")]
