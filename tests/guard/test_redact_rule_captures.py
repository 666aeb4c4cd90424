"""Every gitleaks rule captures the usable value of what it matches.

For each applied rule a sample is generated from the rule's own regex (`rule_samples`): the
rule must find it, masking what the rule reports as the secret must leave none of the
sample's random credential material visible (a capture group holding a fragment, such as
upstream's Teams-webhook GUID piece, fails here), `scrub_secrets` must not leave any of it
either, and a near miss — the credential one character short — is not flagged by the rule.
"""

from __future__ import annotations

import random

import pytest
from rule_samples import Sample, generate

from hermes_memory_guard import _secret_rules as sr
from hermes_memory_guard import scrub_secrets

RULES = sr.load_rules()
SEEDS = 80
WINDOW = 6


def _with_keyword(rule: sr.SecretRule, sample: Sample) -> Sample:
    """Put a keyword in front when the regex alone does not spell one (the rule is gated)."""
    if not rule.keywords or any(k in sample.text.lower() for k in rule.keywords):
        return sample
    lead = f"{rule.keywords[0]}: "
    return Sample(
        lead + sample.text,
        [(a + len(lead), b + len(lead)) for a, b in sample.secret_runs],
        None if sample.near_miss is None else lead + sample.near_miss,
    )


def _findings(rule: sr.SecretRule, text: str) -> list[str]:
    return [secret for rule_id, secret in RULES.find(text) if rule_id == rule.rule_id]


def _sample(rule: sr.SecretRule) -> tuple[Sample, list[str]]:
    for seed in range(SEEDS):
        sample = _with_keyword(rule, generate(rule.pattern, random.Random(seed)))
        found = _findings(rule, sample.text)
        if found:
            return sample, found
    pytest.fail(f"no generated sample of {rule.rule_id} is found by the rule: add one")


def _visible(sample: Sample, masked: str) -> list[str]:
    """Pieces of the sample's credential material still present in ``masked``."""
    left: list[str] = []
    for start, end in sample.secret_runs:
        run = sample.text[start:end]
        width = min(WINDOW, len(run))
        left += [
            run[i : i + width] for i in range(len(run) - width + 1) if run[i : i + width] in masked
        ]
    return left


def test_every_applied_rule_is_checked() -> None:
    assert len(RULES.rules) == RULES.total - len(RULES.excluded) == 217
    assert set(sr.WHOLE_MATCH_RULES) <= {rule.rule_id for rule in RULES.rules}


@pytest.mark.parametrize("rule", RULES.rules, ids=[rule.rule_id for rule in RULES.rules])
def test_rule_captures_the_usable_value(rule: sr.SecretRule) -> None:
    sample, found = _sample(rule)
    by_rule = sample.text
    for secret in sorted(found, key=len, reverse=True):
        by_rule = by_rule.replace(secret, "[redacted]")
    assert _visible(sample, by_rule) == [], (sample.text, found)
    masked = scrub_secrets(sample.text)
    assert _visible(sample, masked) == [], (sample.text, masked)
    if rule.keywords and sample.near_miss is not None:
        assert _findings(rule, sample.near_miss) == [], sample.near_miss


def test_teams_webhook_rule_masks_the_whole_url() -> None:
    (rule,) = [r for r in RULES.rules if r.rule_id == "microsoft-teams-webhook"]
    url = (
        "https://acme.webhook.office.com/webhookb2/0a1b2c3d-0a1b-0a1b-0a1b-0a1b2c3d4e5f"
        "@9f8e7d6c-9f8e-9f8e-9f8e-9f8e7d6c5b4a/IncomingWebhook/0123456789abcdef0123456789abcdef"
        "/11112222-3333-4444-5555-666677778888"
    )
    assert _findings(rule, f"post to {url} now") == [url]


def test_a_generated_vendor_key_is_not_an_identifier() -> None:
    key = "live_pub_8fc9fb6494384932af3bda6fe8102c0"
    assert key not in scrub_secrets(f"lob_key = {key}")
    # A snake_case name is still not a secret.
    assert scrub_secrets("partition key: customer_id_region_v2") == (
        "partition key: customer_id_region_v2"
    )
