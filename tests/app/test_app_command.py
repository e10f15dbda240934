"""``rankscope app`` starts the app from the installed package (issue #47): outside the clone, with
its store at --home and the demo written under it, on the app's own Streamlit settings (the same
as .streamlit/config.toml); without Streamlit it says which extra to install."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from browsing import CHROMIUM, ROOT, free_port, summary_in_chromium, wait_until_serving

from metrics_core.cli.app import streamlit_flags


def test_the_packaged_settings_are_the_clone_s():
    packaged = tomllib.loads((ROOT / "dashboard" / "streamlit.toml").read_text())
    assert packaged == tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    flags = streamlit_flags(ROOT / "dashboard" / "streamlit.toml")
    pairs = dict(zip(flags[::2], flags[1::2], strict=True))
    assert pairs["--client.toolbarMode"] == "minimal" and pairs["--server.maxUploadSize"] == "500"
    assert pairs["--server.headless"] == "true"


def test_without_streamlit_the_command_names_the_extra(tmp_path):
    probe = ("import sys\nsys.modules['streamlit'] = None\nfrom metrics_core.cli import main\n"
             "sys.exit(main(['app', '--port', '8599']))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and "pip install 'rankscope[app]'" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no system Chromium")
def test_rankscope_app_serves_the_demo_from_anywhere(tmp_path):
    port = free_port()
    environment = {**os.environ, "RANKSCOPE_DEMO_DIR": str(tmp_path / "demo")}
    server = subprocess.Popen([sys.executable, "-m", "metrics_core", "app", "--port", str(port), "--home",
                               str(tmp_path / "store")], cwd=tmp_path, env=environment, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_serving(url, server)
        assert summary_in_chromium(url) == 0  # (no Deploy button)
        assert (tmp_path / "demo" / "ground_truth.csv").exists()  # (written under the chosen folder, not the clone)
        assert (tmp_path / "store").is_dir()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(20)
