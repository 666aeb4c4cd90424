"""hermes_memory_core._coerce: YAML/env values to typed settings, errors as message fragments."""

from __future__ import annotations

import math

import pytest

from hermes_memory_core._coerce import (
    as_bool,
    as_float,
    as_int,
    as_non_negative_float,
    as_non_negative_int,
    as_positive_float,
    as_positive_int,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (True, True),
        (False, False),
        (1, True),
        (0, False),
        (-3, True),
        ("yes", True),
        (" On ", True),
        ("Y", True),
        ("1", True),
        ("no", False),
        ("OFF", False),
        ("n", False),
        ("0", False),
        ("", False),
        ("  ", False),
    ],
)
def test_as_bool_accepts_words_and_numbers(raw, expected):
    assert as_bool(raw) is expected


@pytest.mark.parametrize("raw", ["maybe", 1.0, None, [], "はい"])
def test_as_bool_refuses_other_values(raw):
    with pytest.raises(ValueError, match=r"^must be true or false$"):
        as_bool(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(7, 7), (-2, -2), (3.0, 3), ("20000", 20000), (" 20_000 ", 20000), ("-4", -4)],
)
def test_as_int_accepts_whole_numbers(raw, expected):
    value = as_int(raw)
    assert value == expected and type(value) is int


@pytest.mark.parametrize("raw", [True, 1.5, "lots", "1.0", None, [1], "", "x"])
def test_as_int_refuses_other_values(raw):
    with pytest.raises(ValueError, match=r"^must be an integer$"):
        as_int(raw)


def test_int_ranges_have_their_own_messages():
    assert as_positive_int("5") == 5
    assert as_non_negative_int(0) == 0
    with pytest.raises(ValueError, match=r"^must be a positive integer$"):
        as_positive_int(0)
    with pytest.raises(ValueError, match=r"^must be zero or a positive integer$"):
        as_non_negative_int(-1)
    with pytest.raises(ValueError, match=r"^must be an integer$"):
        as_positive_int("five")


def test_as_float_accepts_numbers_and_numeric_strings():
    assert as_float(2) == 2.0 and type(as_float(2)) is float
    assert as_float(" 2.5 ") == 2.5
    assert as_float("-1e3") == -1000.0
    assert math.isinf(as_float("inf"))
    for bad in (True, "soon", None, [1.0], {"a": 1}):
        with pytest.raises(ValueError, match=r"^must be a number$"):
            as_float(bad)
    with pytest.raises(ValueError, match=r"^must be a number of seconds$"):
        as_float("soon", unit="seconds")


def test_positive_float_refuses_zero_negative_nan_and_infinity():
    assert as_positive_float("0.25") == 0.25
    for bad in (0, -1.0, "nan", float("inf")):
        with pytest.raises(ValueError, match=r"^must be a positive number$"):
            as_positive_float(bad)
    with pytest.raises(ValueError, match=r"^must be a positive number of seconds$"):
        as_positive_float(0, unit="seconds")
    with pytest.raises(ValueError, match=r"^must be a number of seconds$"):
        as_positive_float(False, unit="seconds")


def test_non_negative_float_allows_zero_and_infinity_but_not_nan():
    assert as_non_negative_float(0) == 0.0
    assert math.isinf(as_non_negative_float("inf"))
    for bad in (-0.5, "nan"):
        with pytest.raises(ValueError, match=r"^must be a non-negative number$"):
            as_non_negative_float(bad)
    with pytest.raises(ValueError, match=r"^must be a non-negative number of seconds$"):
        as_non_negative_float(-1, unit="seconds")
