"""``rankscope workspaces prepare ID... | --all``: evaluate saved workspaces ahead of their first
open in the app and keep what that open would keep (the evaluation at the settings of each view
its links open, with every k's curves, and a large workspace's encoded tables), so that the
links open in seconds.

The app keeps both the first time it opens a workspace, and ``evaluate --save`` keeps them when
it saves; a workspace whose kept evaluation no longer applies (one saved by an older release:
the kept files name rankscope's version, or with ``RANKSCOPE_READ_ONLY`` set when it was opened)
would otherwise make its next opener wait for the whole evaluation (over a minute at 1M users x
4 models). Run this after upgrading rankscope, from a job or by hand."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from metrics_core.errors import InputError, input_error
from metrics_core.store.links import DEFAULT_PRESET, app_view, workspace_link

if TYPE_CHECKING:
    from metrics_core.engines.memory.dataset import Dataset
    from metrics_core.result import Evaluation
    from metrics_core.settings import Settings
    from metrics_core.store.catalog import SavedWorkspace, Store


def add_prepare_action(actions) -> None:
    prepare = actions.add_parser("prepare", help="evaluate workspaces ahead of their first open in the app (after "
                                                 "an upgrade: their links then open in seconds)")
    prepare.add_argument("ids", nargs="*", metavar="ID",
                         help="the workspaces' ids or names (rankscope workspaces list)")
    prepare.add_argument("--all", action="store_true", help="every live workspace")
    prepare.add_argument("--force", action="store_true", help="evaluate even a workspace whose evaluation is kept")


def run_prepare(args: argparse.Namespace) -> int:
    """Prepare each named workspace (or every live one): 0 when all are ready, 1 when one could
    not be read (each such workspace named on stderr with why; the others are still prepared)."""
    from metrics_core.store.catalog import Store

    if bool(args.ids) == bool(args.all):
        raise input_error("ID", "name the workspaces to prepare, or give --all (not both).",
                          "rankscope workspaces prepare ID [ID ...], or rankscope workspaces prepare --all")
    store = Store()
    store.require_writable()
    targets = store.workspaces() if args.all else [_found(store, name) for name in args.ids]
    failed = 0
    for saved in targets:
        try:
            done = prepare_workspace(store, saved, force=args.force)
        except InputError as error:
            failed += 1
            print(f"rankscope: {saved.name!r} ({saved.id}) was not prepared: {error.text('cli')}", file=sys.stderr)
            continue
        print(f"rankscope: {saved.name!r} ({saved.id}) " + ("prepared" if done else "was already prepared")
              + f"; open it in the app: {workspace_link(saved.id)}", file=sys.stderr)
    return 1 if failed else 0


def _found(store: Store, name_or_id: str) -> SavedWorkspace:
    """The live workspace named or numbered ``name_or_id`` (an earlier version's id: the version
    that replaced it, which is what its link opens)."""
    found = store.find_workspace(name_or_id)
    found = store.latest(found.id) if found is not None else None
    if found is None or not found.live:
        raise input_error("ID", f"no live workspace is named or numbered {name_or_id!r}.",
                          "rankscope workspaces list shows them (one in the trash: rankscope workspaces restore ID)")
    return found


def app_views(store: Store, saved: SavedWorkspace) -> list[tuple[Settings, str]]:
    """``(settings, preset)`` of each view the workspace's links open at: its bare link's (the
    default preset and settings, the first model as the primitive model), then each of its runs'
    that the app can show (the link ``evaluate --save`` printed names its settings; its preset is
    the first whose conventions the run's settings hold), newest first, without repeats, at most
    as many as the store keeps per workspace (:data:`~metrics_core.store.results.KEEP`)."""
    from metrics_core.settings import PRESETS, settings_for
    from metrics_core.store.results import KEEP
    from metrics_core.store.runs import runs_settings

    models = list(saved.models)
    views = [(app_view(settings_for(DEFAULT_PRESET), DEFAULT_PRESET, models)[0], DEFAULT_PRESET)]
    for settings in runs_settings(store, saved.id):
        for preset in (DEFAULT_PRESET, *(name for name in PRESETS if name != DEFAULT_PRESET)):
            view = app_view(settings, preset, models)
            if view is not None:
                if (view[0], preset) not in views:
                    views.append((view[0], preset))
                break
    return views[:KEEP]


def prepare_workspace(store: Store, saved: SavedWorkspace, force: bool = False) -> bool:
    """Evaluate ``saved`` at each of its :func:`app_views` and keep each for the app
    (:func:`keep_for_app`; the tables read once per list ordering); False when every one is kept
    already (and ``force`` is not given)."""
    from metrics_core.engines.memory.dataset import Dataset
    from metrics_core.inputs.encoded import evaluating_once
    from metrics_core.settings import encoding_for
    from metrics_core.store.results import results_key

    def kept(settings: Settings, encoding) -> bool:
        return (store.home / "results" / f"{results_key(saved.fingerprint, encoding, settings)}.json").exists()

    wanted = [(settings, encoding_for(preset)) for settings, preset in app_views(store, saved)]
    wanted = [view for view in wanted if force or not kept(*view)]
    if not wanted:
        return False
    store.verify(saved)  # (a damaged stored copy is refused as the app refuses it, naming the file)
    evaluating_once()
    orderings = list(dict.fromkeys(encoding for _, encoding in wanted))
    for encoding in reversed(orderings):  # (one encoded dataset is kept per workspace: the bare link's last)
        dataset = Dataset.from_recipe(saved, encoding)
        for settings in (settings for settings, chosen in wanted if chosen == encoding):
            keep_for_app(store, saved, settings, dataset, dataset.evaluate_all(settings, beyond_curves=True))
        del dataset
    return True


def keep_for_app(store: Store, saved: SavedWorkspace, settings: Settings, dataset: Dataset,
                 results: dict[str, Evaluation]) -> None:
    """Keep ``results`` (evaluated at ``settings``, the app's view of them, with their curves) for
    the app (:mod:`metrics_core.store.results`), and ``dataset`` too when it is large and holds
    every score (:mod:`metrics_core.store.encoded`): the workspace's link then opens on them
    without reading, encoding or evaluating its tables, on any page."""
    from metrics_core.store.encoded import encoded_key, save_dataset, worth_keeping
    from metrics_core.store.results import results_key, save_results

    encoding = next(iter(results.values())).encoding
    positions = {name: lists.positions for name, lists in dataset.lists.items()}
    save_results(store.home, results_key(saved.fingerprint, encoding, settings), results, positions)
    every_score = all(lists.scores is None or lists.scores.shape == lists.items.shape
                      for lists in dataset.lists.values())
    if every_score and worth_keeping(dataset):
        dataset.ready_to_keep()  # (kept with it: a reopened workspace's pages count and copy nothing)
        save_dataset(store.home, encoded_key(saved.fingerprint, encoding), dataset)
