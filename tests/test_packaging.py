"""The wheel holds every module of the library and the app (a sub-package left out of the build
would install a command that cannot start: metrics_core.cli was one)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_holds_every_module(tmp_path):
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps",
                           "-q", "-w", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = tmp_path.glob("rankscope-*.whl")
    from metrics_core import __version__

    assert wheel.name.startswith(f"rankscope-{__version__}-")  # (the version is written once, in the package)
    inside = set(zipfile.ZipFile(wheel).namelist())
    wanted = {str(path.relative_to(ROOT)) for folder in ("metrics_core", "dashboard")
              for path in (ROOT / folder).rglob("*.py") if "__pycache__" not in path.parts}
    assert wanted - inside == set()
    assert "dashboard/streamlit.toml" in inside  # (rankscope app's Streamlit settings)
    assert any(name.endswith("entry_points.txt") for name in inside)
