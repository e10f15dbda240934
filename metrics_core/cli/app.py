"""``rankscope app``: the app from an installed package (``pip install 'rankscope[app]'``), no
clone needed. It runs ``streamlit run`` on the installed ``dashboard/app.py`` (by
``dashboard/serve.py``, which loads the code every session needs first) with the app's own
Streamlit settings (``dashboard/streamlit.toml``, passed as flags), its store at ``--home`` (or
``RANKSCOPE_HOME``) and its demo workspace written under the store on first use. The library
never imports the app: the command finds its files and starts Streamlit in a process of its own."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tomllib
from pathlib import Path

from metrics_core.cli.arguments import at_least
from metrics_core.errors import input_error


def add_app_command(commands) -> None:
    app = commands.add_parser("app", help="start the app (pip install 'rankscope[app]')")
    app.add_argument("--port", type=at_least(1), default=8501, help="the port it listens on (default 8501)")
    app.add_argument("--address", default="127.0.0.1",
                     help="the address it listens on (default 127.0.0.1: this machine only; 0.0.0.0 behind a proxy "
                          "with authentication lets colleagues in: the app has no login)")
    app.add_argument("--home", metavar="DIR", help="the store's folder (default RANKSCOPE_HOME, else .rankscope)")


def streamlit_flags(config: Path) -> list[str]:
    """``--section.key value`` for every setting of a Streamlit config file."""
    settings = tomllib.loads(config.read_text(encoding="utf-8"))
    return [flag for section, values in settings.items() for key, value in values.items()
            for flag in (f"--{section}.{key}", str(value).lower() if isinstance(value, bool) else str(value))]


def _found(name: str):
    """The module's spec without importing it (None when it is not installed)."""
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):  # (ValueError: a module set to None in sys.modules)
        return None


def run_app(args: argparse.Namespace) -> int:
    app, streamlit = _found("dashboard"), _found("streamlit")
    if app is None or app.origin is None or streamlit is None:
        raise input_error("app", "the app is not installed with this rankscope (it needs Streamlit and Altair).",
                          "pip install 'rankscope[app]', then run rankscope app again.")
    folder = Path(app.origin).parent
    environment = {**os.environ, "MALLOC_ARENA_MAX": "2"}  # (memory a closed session freed goes back: docs/app.md)
    if args.home:
        environment["RANKSCOPE_HOME"] = str(Path(args.home).resolve())
    print(f"rankscope: the app at http://{args.address}:{args.port} (store: "
          f"{environment.get('RANKSCOPE_HOME', '.rankscope')}); Ctrl+C stops it", file=sys.stderr, flush=True)
    command = [sys.executable, str(folder / "serve.py"),  # (streamlit run app.py, the code loaded first)
               *streamlit_flags(folder / "streamlit.toml"), "--server.port", str(args.port),
               "--server.address", args.address]
    sys.stderr.flush()
    os.execve(sys.executable, command, environment)  # (this process becomes the server: Ctrl+C stops it)
