"""The app's process-wide cache: its settings from the environment."""

from __future__ import annotations

import pytest

MIB = 2**20


@pytest.mark.parametrize("value", ["lots", "-5", "nan"])
def test_cache_settings_that_are_not_numbers_fall_back_to_their_defaults(monkeypatch, value):
    """The app must start whatever the environment says (it crashed on import before)."""
    from dashboard.cache import default_budget_mb, from_environment

    for name in ("RANKSCOPE_CACHE_MB", "RANKSCOPE_CACHE_TTL", "RANKSCOPE_CACHE_ORPHAN_SECONDS"):
        monkeypatch.setenv(name, value)
    cache = from_environment()
    assert (cache.max_bytes, cache.ttl, cache.orphan_seconds) == (int(default_budget_mb() * MIB), 900, 30)
