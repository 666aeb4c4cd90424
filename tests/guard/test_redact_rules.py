"""The shipped gitleaks rule set: every rule converts and compiles, and the fast paths
(keyword index, assignment-template anchoring, curl rules) find what the plain regex finds."""

from __future__ import annotations

import random
import re
import string
import tomllib
import warnings
from importlib import resources

import pytest

from hermes_memory_guard import _secret_rules as sr

# Counted from the upstream file (gitleaks v8.30.0): if an update changes them, read the
# new rules and update these numbers on purpose.
TOTAL_RULES = 222
EXCLUDED = 5
APPLIED = TOTAL_RULES - EXCLUDED
TEMPLATE_RULES = 100
CURL_RULES = 2


@pytest.fixture(scope="module")
def rules() -> sr.RuleSet:
    return sr.load_rules()


def _raw() -> dict[str, object]:
    text = resources.files("hermes_memory_guard").joinpath(sr.RULES_RESOURCE).read_text("utf-8")
    return tomllib.loads(text)


def test_rule_file_records_provenance() -> None:
    text = resources.files("hermes_memory_guard").joinpath(sr.RULES_RESOURCE).read_text("utf-8")
    head = text[:3000]
    assert "gitleaks v8.30.0" in head
    assert "6eaad039603a4de39fddd1cf5f727391efe9974e" in head
    assert "MIT License" in head
    assert "Copyright (c) 2019 Zachary Rice" in head


def test_every_rule_is_applied_or_excluded_with_a_reason(rules: sr.RuleSet) -> None:
    ids = [str(t["id"]) for t in _raw()["rules"]]  # type: ignore[index, union-attr]
    assert len(ids) == len(set(ids)) == TOTAL_RULES == rules.total
    applied = [r.rule_id for r in rules.rules]
    assert len(applied) == APPLIED
    assert set(rules.excluded) == set(sr.EXCLUDED_RULES)
    assert len(rules.excluded) == EXCLUDED
    assert sorted(applied + list(rules.excluded)) == sorted(ids)
    assert all(reason for reason in rules.excluded.values())


def test_every_rule_converts_and_compiles_without_warnings(rules: sr.RuleSet) -> None:
    compiled = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # FutureWarning on "[[" / "--" in classes would fail
        for rule in rules.rules:
            rule.compile()
            compiled += 1
    assert compiled == APPLIED
    assert sum(r.anchored for r in rules.rules) == TEMPLATE_RULES
    assert sum(r.after_curl for r in rules.rules) == CURL_RULES


def test_build_rejects_an_unlisted_path_rule() -> None:
    data = {"rules": [{"id": "x", "path": r"\.env$", "regex": "abc", "keywords": ["abc"]}]}
    with pytest.raises(sr.RuleConversionError, match="EXCLUDED_RULES"):
        sr.build_rule_set(data)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (r"\b(p8e-(?i)[a-z0-9]{32})", r"\b(p8e-(?i:[a-z0-9]{32}))"),
        (r"a(?i)b|c", r"a(?i:b)|(?i:c)"),
        (r"(x(?i)y|z)w", r"(x(?i:y)|(?i:z))w"),
        (r"(?i)abc", r"(?i:abc)"),
        (r"pat[[:alnum:]]{14}", r"pat[a-zA-Z0-9]{14}"),
        (r"a(?:\s|\z)", r"a(?:\s|\Z)"),
        (r"a(?:;|$)", r"a(?:;|\Z)"),
        (r"[$a]", r"[$a]"),
        (r"[a&&b]", r"[a&\&b]"),
        (r"[[a]", r"[\[a]"),
        (r"[]a]", r"[\]a]"),
        (r"(?-i:[Aa]pi)", r"(?-i:[Aa]pi)"),
    ],
)
def test_convert_regex(source: str, expected: str) -> None:
    assert sr.convert_regex(source) == expected
    re.compile(expected, sr.FLAGS)


def test_converted_mid_pattern_flag_means_what_re2_means() -> None:
    pattern = re.compile(sr.convert_regex(r"AB(?i)cd|ef"), sr.FLAGS)
    assert pattern.fullmatch("ABCD")
    assert pattern.fullmatch("EF")  # RE2: the flag reaches the next alternative
    assert not pattern.fullmatch("abcd")  # but not back before it


@pytest.mark.parametrize(
    "source", [r"\p{L}+", r"\Qa.b\E", r"(?s)a.b", r"(?m)^a$", r"[[:nope:]]", "(?=a)"]
)
def test_convert_regex_refuses_what_it_cannot_translate(source: str) -> None:
    with pytest.raises(sr.RuleConversionError):
        sr.convert_regex(source)


def test_shannon_entropy() -> None:
    assert sr.shannon_entropy("") == 0
    assert sr.shannon_entropy("aaaa") == 0
    assert sr.shannon_entropy("abcd") == pytest.approx(2.0)


# --- fast paths against the plain regex -------------------------------------------------------


def _value(rng: random.Random, rule: sr.SecretRule) -> str:
    """A value of a length/alphabet most template rules accept."""
    del rule
    return "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(40))


def _plain_secrets(rules: sr.RuleSet, rule: sr.SecretRule, text: str) -> set[str]:
    """What the whole converted regex finds with one finditer, through the same filters."""
    found = set()
    for match in rule.pattern.finditer(text):
        start, end = rule.secret_span(match)
        secret = text[start:end]
        if not secret or (rule.entropy and sr.shannon_entropy(secret) <= rule.entropy):
            continue
        lists = rules.global_allowlists + rule.allowlists
        line = text  # the texts below are one line
        if any(a.allows(secret, match.group(), line) for a in lists):
            continue
        found.add(secret)
    return found


def test_template_rules_find_what_the_whole_regex_finds(rules: sr.RuleSet) -> None:
    rng = random.Random(3)
    checked = 0
    for rule in rules.rules:
        if not rule.anchored:
            continue
        anchors = rule._anchors
        for anchor in anchors[:3]:
            for shape in ("{a}_api_key = '{v}'", "export {A}_TOKEN={v}", 'x "{a}.secret": "{v}" y'):
                text = shape.format(a=anchor, A=anchor.upper(), v=_value(rng, rule))
                fast = {s for _, s in rules.find(text) if _ == rule.rule_id}
                plain = _plain_secrets(rules, rule, text)
                # The fast path may extend a secret to the end of its token; compare prefixes.
                assert {p for p in plain if not any(f.startswith(p) for f in fast)} == set(), (
                    rule.rule_id,
                    text,
                )
                assert all(any(f.startswith(p) for p in plain) for f in fast), (rule.rule_id, text)
                checked += 1
    assert checked > TEMPLATE_RULES


def test_curl_rules_find_header_and_user_within_five_lines(rules: sr.RuleSet) -> None:
    token = "Zq8Wx7Ec6Rv5Tb4Yn3Um2"
    near = f'curl https://api.example \\\n  -X POST \\\n  -H "Authorization: Bearer {token}"'
    assert token in rules.find_secrets(near)
    far = (
        "curl https://api.example\n"
        + "\n".join(["x"] * 7)
        + f'\n -H "Authorization: Bearer {token}"'
    )
    assert token not in {s for r, s in rules.find(far) if r == "curl-auth-header"}
    assert "admin:Pq9Lm2Xz7Rt" in rules.find_secrets("curl -u admin:Pq9Lm2Xz7Rt https://x.example")


def test_keyword_index_selects_rules_like_plain_substring_checks(rules: sr.RuleSet) -> None:
    keywords = sorted({k for r in rules.rules for k in r.keywords})
    rng = random.Random(5)
    filler = ["the ", "a", "x", " ", "\n", "-", "_", ".", "e", "k", "s", "y", "中文"]
    for _ in range(400):
        parts = [
            rng.choice(keywords) if rng.random() < 0.3 else rng.choice(filler) for _ in range(12)
        ]
        lowered = "".join(parts).lower()
        expected = [
            r for r in rules.rules if not r.keywords or any(k in lowered for k in r.keywords)
        ]
        assert rules.candidates(lowered) == expected, lowered


def test_allowlists_apply(rules: sr.RuleSet) -> None:
    # aws-access-token allow-lists ids ending in EXAMPLE (AWS documentation keys).
    example = "AKIA" + "IOSFODNN7EXAMPLE"
    assert example not in {s for r, s in rules.find(f"id {example} ok") if r == "aws-access-token"}
    # generic-api-key stop-words / match allow-list: ordinary identifiers are not secrets.
    assert rules.find_secrets("primary_key = user_account_identifier_column") == set()


def test_a_truncated_token_is_extended_to_its_end(rules: sr.RuleSet) -> None:
    # gitleaks' gitlab-pat is glpat- plus exactly 20 characters; a longer token must not
    # keep a visible tail.
    token = "glpat-" + "Ab3dE5gH7jK9mN1pQ3sT5vW7"
    assert token in rules.find_secrets(f"token {token} end")
