"""Links to the app carry the settings it offers: a command line run at other settings links to
the app at those settings, and a run at a setting the app cannot set has no view (issue #43)."""

from __future__ import annotations

from dataclasses import replace

from metrics_core import Settings, settings_for
from metrics_core.store.links import LINKED_SETTINGS, app_view, workspace_link

MODELS = ["svd", "popular"]


def test_default_settings_link_to_the_workspace_alone(monkeypatch):
    monkeypatch.delenv("RANKSCOPE_APP_URL", raising=False)
    shown, parameters = app_view(Settings(), None, MODELS)
    assert parameters == {} and shown == Settings(primitive_model="svd")
    assert workspace_link("ab12", parameters) == "http://localhost:8501/?ws=ab12"


def test_other_settings_are_named_in_the_link(monkeypatch):
    monkeypatch.setenv("RANKSCOPE_APP_URL", "https://rankscope.example.org/")
    chosen = Settings(k=20, gain="exponential", primitive_model="popular")
    shown, parameters = app_view(chosen, "rankscope", MODELS)
    assert shown == chosen and parameters == {"k": "20", "gain": "exponential", "primitive_model": "popular"}
    assert workspace_link("ab12", parameters) == ("https://rankscope.example.org/?ws=ab12&k=20&gain=exponential"
                                                  "&primitive_model=popular")


def test_a_preset_is_named_with_every_linked_setting_that_differs_from_the_defaults():
    trec = settings_for("trec_eval")
    shown, parameters = app_view(trec, "trec_eval", MODELS)
    assert parameters["preset"] == "trec_eval" and parameters["ap_denominator"] == "relevant"
    assert shown == replace(trec, primitive_model="svd")
    rebuilt = replace(settings_for("trec_eval"), **{n: type(getattr(Settings(), n))(parameters[n]) if n in parameters
                                                   else getattr(Settings(), n) for n in LINKED_SETTINGS
                                                   if n != "primitive_model"}, primitive_model="svd")
    assert rebuilt == shown  # what the app builds from the link: the preset, the link's values, defaults


def test_a_setting_the_app_cannot_set_has_no_view():
    assert app_view(Settings(ndcg_ideal="all_relevant"), None, MODELS) is None
    assert app_view(Settings(gain=((0.0, 0.0), (1.0, 3.0))), None, MODELS) is None


def test_the_app_offers_every_linked_setting_with_the_library_default():
    from dashboard.state import DEFAULTS, Key

    keys = {v for k, v in vars(Key).items() if k.isupper()}
    assert set(LINKED_SETTINGS) <= keys
    assert all(DEFAULTS[n] == getattr(Settings(), n) for n in LINKED_SETTINGS if n != "primitive_model")
