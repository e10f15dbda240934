"""Links to the app: ``$RANKSCOPE_APP_URL/?ws=ID`` and the settings such a link can carry.

The app's sidebar offers the preset and the settings in :data:`LINKED_SETTINGS` (its session keys
carry these names, and a link's query parameters set them); every other setting is the preset's.
:func:`app_view` says whether the app can show an evaluation at given settings and with which
link: a command line run at ``--k 20 --gain exponential`` links to ``?ws=ID&k=20&gain=exponential``,
and a run at a setting the app has no control for (``--ndcg-ideal all_relevant``) cannot be
shown as it is (the app opens the workspace at its own settings).
"""

from __future__ import annotations

import os
from dataclasses import fields, replace
from urllib.parse import urlencode

from metrics_core.settings import Settings, settings_for

APP_URL_VARIABLE = "RANKSCOPE_APP_URL"
DEFAULT_PRESET = "rankscope"
LINKED_SETTINGS = ("k", "beta", "rbp_p", "ap_denominator", "gain", "users_without_relevant", "users_without_list",
                   "similarity", "novelty_unknown", "primitive_model", "primitive_scale")
_DEFAULTS = {f.name: f.default for f in fields(Settings)}


def workspace_link(workspace_id: str, parameters: dict[str, str] | None = None) -> str:
    """The app's link to a saved workspace, with ``parameters`` after ``ws`` (default address: the
    one ``make run`` serves)."""
    base = os.environ.get(APP_URL_VARIABLE, "http://localhost:8501").rstrip("/")
    return f"{base}/?{urlencode({'ws': workspace_id, **(parameters or {})})}"


def app_view(settings: Settings, preset: str | None, models: list[str]) -> tuple[Settings, dict[str, str]] | None:
    """``(the settings the app evaluates at, the link's parameters)`` for an evaluation at
    ``settings`` with ``preset``, or None when the app cannot reproduce them.

    The app starts from the preset, puts the linked settings on top (each the link's value, else
    its default) and takes the first model as the primitive model unless one is chosen: the
    link names each linked setting that is not its default, and the preset unless it is
    rankscope's. A setting outside :data:`LINKED_SETTINGS` that differs from the preset's, or a
    value a link cannot spell (a table of gains), has no view."""
    preset = preset or DEFAULT_PRESET
    primitive = settings.primitive_model or models[0]
    wanted = replace(settings, primitive_model=primitive)
    chosen = {name: getattr(wanted, name) for name in LINKED_SETTINGS}
    chosen["primitive_model"] = primitive
    shown = replace(settings_for(preset), **chosen)
    if shown != wanted or not all(isinstance(v, str | int | float) for v in chosen.values()):
        return None
    parameters = {"preset": preset} if preset != DEFAULT_PRESET else {}
    parameters |= {name: str(value) for name, value in chosen.items()
                   if value != _DEFAULTS[name] and not (name == "primitive_model" and value == models[0])}
    return shown, parameters
