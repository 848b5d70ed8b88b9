"""Job identity (``swftools.formats.jobids``): one numbering rule for every reader."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import pytest

from swftools.formats.jobids import number_jobs, plain_id

ids = st.one_of(st.integers(0, 10 ** 12).map(str),
                st.from_regex(r"[0-9]{1,6}(_[0-9]{1,3}|\+[0-9]|\[[0-9]{0,3}\])?(\.[a-z\[\]_0-9]{1,8})?",
                              fullmatch=True))
times = st.one_of(st.none(), st.integers(0, 50))


@given(st.lists(st.tuples(ids, times), max_size=30))
def test_numbering_is_a_stable_permutation_in_submit_order(rows):
    source, submit = [r[0] for r in rows], [r[1] for r in rows]
    job_ids, kept = number_jobs(source, submit)
    plain = all(s.isdigit() for s in source) and len(set(map(int, source))) == len(source)
    if plain:
        assert kept is None and job_ids == [int(s) for s in source]
        return
    assert kept == source
    assert sorted(job_ids) == list(range(1, len(rows) + 1))
    order = sorted(range(len(rows)), key=lambda i: (submit[i] is None, submit[i] or 0, i))
    assert [job_ids[i] for i in order] == list(range(1, len(rows) + 1))
    assert number_jobs(source, submit) == (job_ids, kept)  # deterministic


def test_examples():
    assert number_jobs(["5", "3"], [2, 1]) == ([5, 3], None)
    assert number_jobs(["5", "5"], [2, 1]) == ([2, 1], ["5", "5"])  # repeated: renumbered
    assert number_jobs(["7[1]", "7[0]", "8"], [None, 3, 3]) == ([3, 1, 2], ["7[1]", "7[0]", "8"])
    assert number_jobs([], []) == ([], None)
    assert number_jobs(["٣"], [1]) == ([1], ["٣"])  # a non-ASCII digit is not a plain id


def test_plain_ids_up_to_the_int64_safe_length():
    """18 digits is a plain id, 19 is not (job ids are int64; found by mutation testing)."""
    assert plain_id("9" * 18) == int("9" * 18)
    assert plain_id("9" * 19) is None
    assert plain_id("") is None


def test_renumbered_ids_are_python_ints_and_the_mismatch_is_named():
    job_ids, source = number_jobs(["1_1", "1_2"], [20, 10])
    assert job_ids == [2, 1] and all(type(j) is int for j in job_ids)
    assert source == ["1_1", "1_2"]
    with pytest.raises(ValueError, match="2 job ids but 1 submit times"):
        number_jobs(["1", "2"], [0])
