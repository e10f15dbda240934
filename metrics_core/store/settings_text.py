"""How a run's settings are written in the catalog (JSON) and read back."""

from __future__ import annotations

from dataclasses import asdict

from metrics_core.jsonable import dumps
from metrics_core.settings import Settings


def settings_json(settings: Settings) -> str:
    """The settings as JSON; custom gains as [grade, gain] pairs (JSON keys are text)."""
    values = asdict(settings)
    if isinstance(values.get("gain"), dict):
        values["gain"] = sorted(values["gain"].items())
    return dumps(values)


def settings_of(values: dict) -> Settings:
    """Settings from their JSON values; fields this version does not know are left out."""
    values = dict(values)
    if isinstance(values.get("gain"), list):
        values["gain"] = {grade: gain for grade, gain in values["gain"]}
    known = set(Settings.__dataclass_fields__)
    return Settings(**{k: v for k, v in values.items() if k in known and k != "preset"})
