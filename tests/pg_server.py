"""A real PostgreSQL server for the team tests: one per pytest(-xdist) worker, a database per test.

Debian's ``postgresql`` package (``/usr/lib/postgresql/<version>/bin``) or any
``initdb`` on ``PATH`` is used. ``initdb`` refuses to run as root, so as root the
cluster belongs to the ``postgres`` user (``runuser``) and lives in a temporary
folder that user owns. The server listens on a free 127.0.0.1 port (password
authentication, scram-sha-256) and on a unix socket in its own folder, with
``fsync`` off (tests, not durability). It is stopped when the worker ends.

Where no server can be had (no binaries, no ``postgres`` user when root,
``initdb`` failing), the fixtures skip with the reason.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

SUPERUSER = "adx_super"
SUPER_PASSWORD = "super-" + uuid.uuid4().hex[:12]


class Unavailable(Exception):
    """No PostgreSQL server can be started here (the message says why)."""


def _bindir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    if found:
        return Path(found[0]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    raise Unavailable("PostgreSQL is not installed (no initdb; apt-get install postgresql)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    base: Path
    port: int
    process: subprocess.Popen[bytes]
    as_postgres: bool

    def url(
        self, user: str = SUPERUSER, password: str = SUPER_PASSWORD, db: str = "postgres"
    ) -> str:
        return f"postgresql://{user}:{password}@127.0.0.1:{self.port}/{db}"

    def stop(self) -> None:
        if self.process.poll() is None:
            # fast shutdown, to the whole group: with runuser in front, postgres is its child;
            # a durable server's shutdown checkpoint can take a while (a benchmark's GBs)
            self._signal(signal.SIGINT)
            try:
                self.process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.process.wait()
        shutil.rmtree(self.base, ignore_errors=True)

    def _signal(self, sig: int) -> None:
        try:
            os.killpg(self.process.pid, sig)  # started in its own session: pgid == pid
        except OSError:
            self.process.send_signal(sig)


def _run_as(cmd: list[str], as_postgres: bool) -> subprocess.CompletedProcess[bytes]:
    if as_postgres:
        cmd = ["runuser", "-u", "postgres", "--", *cmd]
    return subprocess.run(cmd, capture_output=True, check=False, timeout=120)


def start_server(
    *, durable: bool = False, base_dir: Path | None = None, extra: tuple[str, ...] = ()
) -> Server:
    """initdb + postgres in a fresh temporary folder; raises :class:`Unavailable`.

    ``durable`` (the benchmark) keeps PostgreSQL's defaults for fsync and commits and
    gives it 256 MB of shared buffers; tests turn durability off. ``base_dir``: where
    the temporary folder goes (default: the system's). ``extra``: more ``name=value``
    server settings (a benchmark's ``shared_preload_libraries=pg_stat_statements``).
    """
    bindir = _bindir()
    as_postgres = os.geteuid() == 0
    if as_postgres:
        try:
            import pwd

            owner = pwd.getpwnam("postgres")
        except KeyError:
            raise Unavailable("running as root and there is no 'postgres' user") from None
        if shutil.which("runuser") is None:
            raise Unavailable("running as root and runuser is missing")
    base = Path(tempfile.mkdtemp(prefix="adx-pg-", dir=base_dir))
    data, sock = base / "data", base / "sock"
    sock.mkdir()
    pwfile = base / "pw"
    pwfile.write_text(SUPER_PASSWORD + "\n")
    if as_postgres:
        for path in (base, sock, pwfile):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    init = _run_as(
        [
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            SUPERUSER,
            f"--pwfile={pwfile}",
            "--auth-local=scram-sha-256",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        ],
        as_postgres,
    )
    if init.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        raise Unavailable("initdb failed: " + init.stderr.decode(errors="replace").strip()[-300:])
    for attempt in range(5):
        port = _free_port()
        settings = (
            ["shared_buffers=256MB", "maintenance_work_mem=256MB", "max_wal_size=4GB"]
            if durable
            else [
                "fsync=off",
                "synchronous_commit=off",
                "full_page_writes=off",
                "shared_buffers=32MB",
            ]
        )
        cmd = [str(bindir / "postgres"), "-D", str(data), "-p", str(port), "-k", str(sock)]
        for setting in ("listen_addresses=127.0.0.1", "max_connections=60", *settings, *extra):
            cmd += ["-c", setting]
        if as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        log = open(base / f"server-{attempt}.log", "wb")  # noqa: SIM115 - the server owns it
        process = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return Server(base, port, process, as_postgres)
            except OSError:
                time.sleep(0.05)
        if process.poll() is None:
            process.kill()
            process.wait()
    text = (base / "server-4.log").read_text(errors="replace")[-300:]
    shutil.rmtree(base, ignore_errors=True)
    raise Unavailable(f"postgres did not start: {text.strip()}")


def create_database(server: Server) -> str:
    """A fresh database (with pg_trgm) for one test; returns its name."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(server.url(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name


def drop_database(server: Server, name: str) -> None:
    import psycopg

    with psycopg.connect(server.url(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
