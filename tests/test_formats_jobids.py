"""Job identity (``swftools.formats.jobids``): one numbering rule for every reader."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from swftools.formats.jobids import number_jobs

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
