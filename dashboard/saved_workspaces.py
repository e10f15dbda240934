"""The Data page's saved workspaces: the list (open, rename, delete), "save the current
workspace as…", and adding or replacing one model's file in an open saved workspace."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from dashboard import components, state
from dashboard.text import plain
from dashboard.uploads import TYPES, stored_upload
from dashboard.workspace import Workspace, save
from metrics_core import InputError
from metrics_core.engines.memory.dataset import model_name
from metrics_core.store import SavedWorkspace, Store
from metrics_core.store.catalog import trash_days

REPLACE_GENERATION = "_replace_generation"
REPLACED = "_replaced"  # the confirmation shown after a model was added or replaced


def table_of(saved: list[SavedWorkspace]) -> pd.DataFrame:
    return pd.DataFrame({
        "name": [w.name for w in saved],
        "models": [", ".join(w.models) for w in saved],
        "users": [w.user_count for w in saved],
        "rows": [w.rows for w in saved],
        "saved": [pd.Timestamp(w.updated).tz_convert(None) for w in saved],
        "id": [w.id for w in saved],
    })


def manage(store: Store, current: Workspace) -> None:
    st.subheader("Saved workspaces")
    st.caption("Everyone who can open this server sees, opens, renames and deletes every saved workspace "
               "(see the README's \"Who can see what\"); deleted ones stay in the trash below for "
               f"{trash_days():g} days.")
    saved = store.workspaces()
    if saved:
        st.dataframe(table_of(saved), hide_index=True, width="stretch",
                     column_config={"saved": st.column_config.DatetimeColumn("saved (UTC)", format="YYYY-MM-DD HH:mm"),
                                    "users": st.column_config.NumberColumn(format="%d")})
        names = {w.id: w.name for w in saved}
        left, right = st.columns([3, 2], vertical_alignment="bottom")
        chosen = left.selectbox("Workspace", list(names), format_func=names.get, key="saved_choice",
                                index=list(names).index(current.id) if current.id in names else 0)
        opened, renamed, deleted = right.columns(3, vertical_alignment="bottom")
        if opened.button("Open", icon=":material/folder_open:", width="stretch"):
            _act(lambda: state.use_workspace(Workspace.from_saved(store.verify(store.workspace(chosen)))))
        if not store.read_only:
            with renamed.popover("Rename", icon=":material/edit:", width="stretch"):
                new_name = st.text_input("New name", names[chosen], key=f"rename_{chosen}")
                if st.button("Rename", key="rename_confirm"):
                    _act(lambda: _follow(store.rename_workspace(chosen, new_name), current))
            with deleted.popover("Delete", icon=":material/delete:", width="stretch"):
                st.markdown(f"Move **{plain(names[chosen])}** to the trash? It can be restored for {trash_days():g} "
                            "days; its runs stay in the history.")
                if st.button("Move to the trash", type="primary", key="delete_confirm"):
                    _act(lambda: _follow(store.delete_workspace(chosen), current))
    else:
        st.caption(f"No saved workspaces yet in {plain(store.home)}.")
    if store.read_only:
        return
    trash(store, current)
    with st.expander("Save the current workspace as…"):
        name = st.text_input("Name", value="" if current.id else current.label.split(":")[0], key="save_as_name")
        if st.button("Save", icon=":material/save:", key="save_as"):
            _act(lambda: state.use_workspace(save(current, store, name, len(state.dataset().users))))


def trash(store: Store, current: Workspace) -> None:
    """The workspaces in the trash, each restorable (under "NAME (restored)" when NAME is taken)."""
    deleted = store.trash()
    if not deleted:
        return
    with st.expander(f"Trash ({len(deleted)})", icon=":material/delete:"):
        st.dataframe(pd.DataFrame({"name": [w.name for w in deleted], "models": [", ".join(w.models) for w in deleted],
                                   "deleted (UTC)": [components.when(w.deleted) for w in deleted],
                                   "id": [w.id for w in deleted]}), hide_index=True, width="stretch")
        names = {w.id: f"{w.name} (deleted {components.when(w.deleted)})" for w in deleted}
        chosen = st.selectbox("Workspace in the trash", list(names), format_func=names.get, key="trash_choice")
        if st.button("Restore", icon=":material/restore_from_trash:", key="restore_confirm"):
            _act(lambda: state.use_workspace(Workspace.from_saved(store.restore_workspace(chosen))))


def _follow(changed: SavedWorkspace, current: Workspace) -> None:
    """After a rename or a delete: the open workspace gets its new name or (moved to the trash)
    the app goes back to the demo."""
    from dashboard.workspace import demo_workspace

    if current.id == changed.id:
        state.use_workspace(Workspace.from_saved(changed) if changed.live else demo_workspace())


def _act(action) -> None:
    """Do ``action`` (a change to the store and the session); show its error as a message, or
    rerun to show the change."""
    try:
        action()
    except InputError as error:
        components.show_error(error)
        return
    st.rerun()


def add_or_replace_model(store: Store, current: Workspace) -> None:
    """One model's file, added to or replacing a model in the open saved workspace (the other
    files stay as they are: nothing is uploaded again)."""
    generation = st.session_state.setdefault(REPLACE_GENERATION, 0)
    if REPLACED in st.session_state:
        st.success(plain(st.session_state.pop(REPLACED)), icon=":material/check_circle:")
    with st.expander(f"Add or replace a model in {plain(current.label)}"):
        upload = st.file_uploader("Recommendations of one model", type=TYPES, key=f"replace_{generation}")
        if upload is None:
            return
        options = [*current.models, "(a new model)"]
        target = st.selectbox("Replace", options, index=len(options) - 1, key="replace_target")
        name = st.text_input("New model's name", model_name(upload.name, "model"), key="replace_name",
                             disabled=target != "(a new model)")
        model = name.strip() if target == "(a new model)" else target
        replacing = target != "(a new model)"
        confirmed = not replacing or st.checkbox(
            f"Replace the file of {plain(target)} ({plain(current.models[target].name)}) with {plain(upload.name)}",
            key=f"replace_confirmed_{generation}",
            help="The workspace is saved as a new version with this file; links to the current version keep "
                 "opening the old file.")
        if st.button("Add to the workspace" if not replacing else f"Replace {target}", type="primary",
                     disabled=not confirmed):
            try:
                table, _ = stored_upload(store, upload, "recommendations")
                candidate = replace(current, models={**current.models, model: table}, id=None, _fingerprint=None)
                dataset = state.dataset_of(candidate)  # checked before the saved workspace changes
                saved = store.replace_model(current.id, model, table.path.stem, len(dataset.users))
            except InputError as error:
                components.show_error(error)
                return
            state.use_workspace(Workspace.from_saved(saved))
            st.session_state[REPLACE_GENERATION] = generation + 1
            change = f"replaced {model} ({current.models[model].name} → {upload.name})" if replacing else \
                f"added {model} ({upload.name})"
            st.session_state[REPLACED] = (f"{change[0].upper()}{change[1:]}: saved as a new version of {saved.name}; "
                                          "the previous version's link still opens it as it was.")
            st.rerun()
