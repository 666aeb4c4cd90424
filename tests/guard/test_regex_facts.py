"""The facts the scanner derives from its regexes, against what the regex engine does.

Small expressions are generated from the syntax the patterns use, and every string over a
small alphabet is matched at its start: each derived fact must hold for every match
(widths, how far the engine reads, spaces, leading and contained literals).
"""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_memory_guard import _regex_facts as facts
from hermes_memory_guard._threats import _EXTENT_MARGIN, _pattern_source

_ALPHABET = "aB "
_STRINGS = ["".join(p) for n in range(7) for p in itertools.product(_ALPHABET, repeat=n)]

_ATOMS = st.sampled_from(["a", "b", "ab", "B", r"\s", r"\S", ".", "[ab]", "[^a]", r"\w", " "])


def _quantified(inner: str) -> st.SearchStrategy[str]:
    return st.sampled_from(["", "?", "{2}", "{0,2}", "{1,3}?", "{0,2}+", "*", "+", "*?", "++"]).map(
        lambda q: f"(?:{inner}){q}" if q else inner
    )


_EXPR = st.recursive(
    _ATOMS,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3).map("".join),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: "(?:" + "|".join(xs) + ")"),
        inner.flatmap(_quantified),
        inner.map(lambda x: f"(?>{x})"),
        inner.map(lambda x: f"(?={x})"),
        inner.map(lambda x: f"(?!{x})"),
        st.sampled_from(["(?<![a-z0-9])", "(?<=a)", "(?m:^)", "$", r"\b"]),
    ),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(source=_EXPR)
def test_facts_hold_for_every_match(source: str) -> None:
    regex = re.compile(source, re.IGNORECASE)
    node = facts.parse(source)
    reads = facts.reads(node)
    spaces = facts.spaces(node)
    heads = facts.heads(node)
    groups = facts.literal_groups(node)
    exact = facts.exact(node)
    for text in _STRINGS:
        match = regex.match(text)
        if match is None:
            continue
        matched, probe = match.group(), text.lower()
        if reads is not None:
            assert len(matched) <= reads[0], (source, text)
        if spaces is not None:
            assert matched.count(" ") <= spaces, (source, text)
        if heads is not None:
            assert any(probe.startswith(h) for h in heads), (source, text, heads)
        if exact is not None and regex.fullmatch(text):
            assert probe in exact, (source, text)
        for literals, offset in groups:
            found = [probe.find(lit) for lit in literals if lit in probe]
            assert found, (source, text, literals)
            assert offset is None or min(found) <= offset, (source, text, literals, offset)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(source=_EXPR)
def test_reads_bound_what_the_engine_looks_at(source: str) -> None:
    # Changing a character beyond `reach` (or before `left`), with the scanner's margin for
    # the character an assertion tests past the last one read, never changes a match there.
    node = facts.parse(source)
    reads = facts.reads(node)
    if reads is None:
        return
    _width, reach, left = reads
    regex = re.compile(source, re.IGNORECASE)
    pad = 3 + _EXTENT_MARGIN
    for text in _STRINGS[::7]:
        base = "x" * pad + text + "x" * 8
        start = pad
        answer = regex.match(base, start)
        for position in [
            *range(0, max(0, start - left - _EXTENT_MARGIN)),
            *range(start + reach + _EXTENT_MARGIN, len(base)),
        ]:
            for other in "a ":
                changed = base[:position] + other + base[position + 1 :]
                again = regex.match(changed, start)
                assert (answer is None) == (again is None), (source, base, position)
                if answer is not None and again is not None:
                    assert answer.end() == again.end(), (source, base, position)


def test_collapsed_reads_a_whitespace_run_as_one_character() -> None:
    node = facts.collapsed(facts.parse(r"a\s+b\s*c\s{0,3}d"))
    assert facts.reads(node) == (9, 9, 0)
    assert facts.spaces(node) == 5


def test_boundary_led_needs_a_look_behind_refusing_every_letter_and_digit() -> None:
    assert facts.boundary_led(facts.parse(r"(?<![a-z0-9])x|(?<!\w)y"))
    assert not facts.boundary_led(facts.parse(r"(?<![a-y0-9])x"))
    assert not facts.boundary_led(facts.parse(r"(?<![a-z0-9])x|y"))
    assert not facts.boundary_led(facts.parse(r"(?<=[^a-z0-9])x"))


@pytest.mark.parametrize(
    "source", [r"(a)\1", r"(?(1)a|b)", "(?P<n>a)(?P=n)", "a)", "[ab", "*a", "(?#c)a"]
)
def test_syntax_outside_the_subset_is_refused(source: str) -> None:
    with pytest.raises(ValueError):
        facts.parse(source)


def test_every_threat_pattern_parses_and_its_literal_shape_is_known() -> None:
    for pid, _scope, source in _pattern_source():
        node = facts.parse(source)
        assert facts.reads(node) is None or facts.reads(node)[0] > 0, pid  # type: ignore[index]


def test_class_facts_space_letters_and_case() -> None:
    def char(source: str) -> facts.Char:
        node = facts.parse(source)
        assert isinstance(node, facts.Char)
        return node

    assert char(r"[\s\d-]").space and not char(r"[\s\d-]").cased
    assert char("[ab]").cased and not char("[ab]").space
    assert char(r"[^\w\s]").cased and not char(r"[^\w\s]").space
    assert char("[^a-z0-9]").space and not char("[^a-z0-9]").alnum
    assert char(r"\w").alnum and char("[a-z0-9_]").alnum and not char("[a-y0-9]").alnum
    assert not char("[\U000e0020-\U000e007e]").cased  # tag characters have no case
    assert char(".").space and char(".").alnum
