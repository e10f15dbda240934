"""A throw-away PostgreSQL server for the tests of the store's PostgreSQL catalog: a cluster made
with ``initdb`` in a temporary folder and started with ``pg_ctl`` on a free port, as a user other
than root (PostgreSQL refuses to run as root: under root the cluster belongs to ``postgres``, or
``nobody``). Each test gets its own schema (the URL's search path), so tests never see each
other's catalog. Skips, with the reason, where no server binary exists."""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

USER = "rankscope"


def server_binaries() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl`` (on the PATH, or Debian's versioned folder)."""
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(versions[-1]).parent if versions else None


def _as_owner(command: list[str], owner: str | None) -> list[str]:
    return ["runuser", "-u", owner, "--", *command] if owner else command


def _owner() -> str | None:
    """The user the server runs as: None (this one) unless this is root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    pytest.skip("running as root with neither a postgres nor a nobody user to run PostgreSQL as")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A running throw-away cluster; :meth:`fresh_url` makes an empty schema and its URL."""

    def __init__(self):
        binaries = server_binaries()
        if binaries is None or not (binaries / "pg_ctl").exists():
            pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql")
        pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[postgresql]'")
        self.owner = _owner()
        self.folder = Path(tempfile.mkdtemp(prefix="rankscope-pg-"))
        if self.owner:
            record = pwd.getpwnam(self.owner)
            os.chown(self.folder, record.pw_uid, record.pw_gid)
        self.port = _free_port()
        data, log = self.folder / "data", self.folder / "server.log"
        self.pg_ctl = str(binaries / "pg_ctl")
        subprocess.run(_as_owner([str(binaries / "initdb"), "-D", str(data), "-U", USER, "--auth=trust",
                                  "-E", "UTF8", "--no-sync"], self.owner),
                       check=True, capture_output=True, cwd=self.folder)  # (a folder the owner may enter)
        options = (f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        started = subprocess.run(_as_owner([self.pg_ctl, "-D", str(data), "-o", options, "-l", str(log), "-w",
                                            "start"], self.owner), capture_output=True, text=True,
                                 cwd=self.folder)
        if started.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {started.stderr}\n{log.read_text() if log.exists() else ''}")
        self.data = data
        self.url = f"postgresql://{USER}@127.0.0.1:{self.port}/postgres"

    def fresh_url(self) -> str:
        """An empty schema of its own, and the URL whose search path is that schema."""
        import psycopg

        schema = f"t_{secrets.token_hex(6)}"
        with psycopg.connect(self.url, autocommit=True) as connection:
            connection.execute(f"CREATE SCHEMA {schema}")
        return f"{self.url}?options=-csearch_path%3D{schema}"

    def stop(self) -> None:
        subprocess.run(_as_owner([self.pg_ctl, "-D", str(self.data), "-m", "immediate", "stop"], self.owner),
                       capture_output=True, cwd=self.folder)
        shutil.rmtree(self.folder, ignore_errors=True)
