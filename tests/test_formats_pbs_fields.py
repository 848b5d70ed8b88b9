"""The PBS record grammars (``swftools/formats/pbs/fields.py``) at their edges: what each
parser refuses says what it expected (the reader shows it as the error's "expected"), the digit
limits on both sides, and the forms the round-trip properties do not draw."""

from __future__ import annotations

import pytest

from swftools.formats.pbs import fields as fx


@pytest.mark.parametrize("parse,text,expected", [
    (fx.parse_record_time, "3/1/2023 10:00:00", fx.RECORD_TIME_EXPECTED),
    (fx.parse_record_time, "13/45/2023 10:00:00", fx.RECORD_TIME_EXPECTED),
    (fx.parse_duration, "a:00:00", fx.DURATION_EXPECTED),
    (fx.parse_duration, "1:60:00", fx.DURATION_EXPECTED),
    (fx.parse_epoch, "12x", fx.EPOCH_EXPECTED),
    (fx.parse_epoch, "\uff11\uff12", fx.EPOCH_EXPECTED),  # fullwidth digits
    (fx.parse_epoch, "1" * 19, fx.EPOCH_EXPECTED),
    (fx.parse_exit_status, "ok", fx.EXIT_EXPECTED),
    (fx.parse_select, "2:ncpus", fx.SELECT_EXPECTED),
    (fx.parse_select, "2:ncpus=8:ncpus=4", fx.SELECT_EXPECTED),
    (fx.parse_nodes, "-1", fx.NODES_EXPECTED),
    (fx.parse_nodes, "2:ppn=4:ppn=8", fx.NODES_EXPECTED),
    (fx.parse_nodes, "2:ppn=x", fx.NODES_EXPECTED),
    (fx.exec_host_shape, "/0", fx.EXEC_HOST_EXPECTED),
    (fx.exec_host_shape, "n1/x", fx.EXEC_HOST_EXPECTED),
    (fx.exec_host_shape, "n1/5-3", fx.EXEC_HOST_EXPECTED),
    (lambda text: fx.chunk_total(fx.parse_select(text), "ngpus"), "2:ngpus=4gb",
     "ngpus: a whole number"),
])
def test_a_refused_value_says_what_was_expected(parse, text, expected):
    with pytest.raises(ValueError) as info:
        parse(text)
    assert str(info.value) == expected


def test_an_epoch_has_at_most_18_digits():
    assert fx.parse_epoch("1" * 18) == int("1" * 18)
    assert fx.parse_epoch("0") is None


def test_a_select_chunk_without_a_count_counts_once_and_a_bare_count_is_a_chunk():
    assert fx.parse_select("ncpus=4+2:ngpus=1") == [(1, {"ncpus": "4"}), (2, {"ngpus": "1"})]
    assert fx.parse_select("2") == [(2, {})]


def test_torque_host_names_and_node_properties_may_be_upper_case():
    assert fx.parse_nodes("Node01:ppn=4+2:K80:gpus=1") == [(1, {"ncpus": "4"}),
                                                           (2, {"ngpus": "1"})]


def test_a_slot_range_of_one_slot():
    assert fx.exec_host_shape("n1/3-3+n2/0") == (2, 2)


@pytest.mark.parametrize("text,attributes", [
    ("a=1  b=2 ", {"a": "1", "b": "2"}),  # runs of spaces between pairs
    ('jobname=" my job" x=1', {"jobname": " my job", "x": "1"}),  # a quote opened alone
    ('account="" x=1', {"account": "", "x": "1"}),  # an empty quoted value
    ('a="b c', {"a": '"b c'}),  # an unclosed quote: as written
])
def test_attribute_spacing_and_quotes(text, attributes):
    assert fx.parse_attributes(text) == attributes
