"""A throwaway PostgreSQL cluster on a private unix socket, for tests and benchmarks.

:func:`start_cluster` runs ``initdb`` into a new private temporary directory (``mkdtemp``:
mode 0700, unpredictable name) and starts the server with ``pg_ctl`` listening only on a
unix socket inside that directory (``listen_addresses=''``), so it never touches a port or
another cluster. :meth:`Cluster.stop` stops it and deletes the directory, which it created.

PostgreSQL refuses to run as root; when the caller is root the cluster's commands run as
the ``postgres`` system user (Debian's ``postgresql`` package creates it) through
``runuser``, and the directory is handed to that user. The server binaries are found in
``/usr/lib/postgresql/<major>/bin`` (Debian's layout; the highest major wins) or on ``PATH``,
unless the caller names their directory (``bin_dir``: a server built from source, such as the
PostgreSQL 18 that ``tools/build-postgresql18.sh`` installs into a cached prefix).

Server settings are passed as ``-c name=value`` (``settings``): the benchmark uses it for a
small ``shared_buffers``; tests use ``fsync=off``.

References: PostgreSQL documentation "initdb", "pg_ctl", "Connections and Authentication".
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

__all__ = ["Cluster", "ClusterUnavailable", "find_bin_dir", "start_cluster"]

_PORT: Final = 5432
_START_TIMEOUT_S: Final = 60


class ClusterUnavailable(RuntimeError):
    """No PostgreSQL server can be started here (the reason is the message).

    References: RFC 9562 §6.13.
    """


@dataclass
class Cluster:
    """A running throwaway cluster: connect with :meth:`dsn` or :meth:`url`.

    References: RFC 9562 §6.13 (DBMS and database considerations: what the database tests check).
    """

    directory: Path
    bin_dir: Path
    user: str
    port: int = _PORT
    run_as: list[str] = field(default_factory=list)

    @property
    def socket_dir(self) -> Path:
        return self.directory

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    def dsn(self, dbname: str = "postgres") -> str:
        """A libpq connection string (psycopg)."""
        return f"host={self.socket_dir} port={self.port} user={self.user} dbname={dbname}"

    def url(self, driver: str = "postgresql+psycopg", dbname: str = "postgres") -> str:
        """A URL for SQLAlchemy (``postgresql+psycopg``) or asyncpg (``postgresql``)."""
        return f"{driver}://{self.user}@/{dbname}?host={self.socket_dir}&port={self.port}"

    def stop_server(self) -> None:
        """Stop the server (fast shutdown), keeping its data for :meth:`start_server`."""
        _run([*self.run_as, str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir),
              "-m", "fast", "-w", "stop"], check=False)  # fmt: skip

    def start_server(self, settings: dict[str, str] | None = None) -> None:
        """Start the server again after :meth:`stop_server`."""
        _start(self, settings or {})

    def server_pids(self) -> list[int]:
        """The postmaster's process ID and its children's (the backends)."""
        postmaster = int((self.data_dir / "postmaster.pid").read_text().split()[0])
        pids = [postmaster]
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == postmaster:
                pids.append(int(stat.parent.name))
        return pids

    def stop(self) -> None:
        """Stop the server (fast shutdown) and delete the cluster's directory."""
        if self.data_dir.exists():
            _run([*self.run_as, str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir),
                  "-m", "fast", "-w", "stop"], check=False)  # fmt: skip
        shutil.rmtree(self.directory, ignore_errors=True)


def find_bin_dir() -> Path | None:
    """The directory of ``pg_ctl`` and ``initdb``: Debian's newest major, else ``PATH``.

    References: RFC 9562 §6.13.
    """
    candidates = sorted(
        (Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")),
        key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0,
    )
    for directory in reversed(candidates):
        if (directory / "initdb").exists():
            return directory
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path and shutil.which("initdb") else None


def start_cluster(
    settings: dict[str, str] | None = None, *, bin_dir: Path | None = None
) -> Cluster:
    """Create and start a cluster; raises :class:`ClusterUnavailable` if that cannot be done.

    ``bin_dir`` is the directory of the server's ``initdb`` and ``pg_ctl``; by default
    :func:`find_bin_dir`'s.

    References: PostgreSQL documentation "initdb", "pg_ctl".
    """
    if bin_dir is None:
        bin_dir = find_bin_dir()
        if bin_dir is None:
            raise ClusterUnavailable("no pg_ctl/initdb under /usr/lib/postgresql/*/bin or on PATH")
    elif not ((bin_dir / "pg_ctl").exists() and (bin_dir / "initdb").exists()):
        raise ClusterUnavailable(f"no pg_ctl and initdb in {bin_dir}")
    run_as, owner = _identity()
    directory = Path(tempfile.mkdtemp(prefix="uuidkit-pg-"))
    if owner is not None:
        os.chown(directory, owner.pw_uid, owner.pw_gid)
    user = owner.pw_name if owner is not None else pwd.getpwuid(os.getuid()).pw_name
    cluster = Cluster(directory=directory, bin_dir=bin_dir, user=user, run_as=run_as)
    try:
        _initdb(cluster)
        _start(cluster, settings or {})
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _identity() -> tuple[list[str], pwd.struct_passwd | None]:
    if os.geteuid() != 0:
        return [], None
    try:
        owner = pwd.getpwnam("postgres")
    except KeyError:
        raise ClusterUnavailable("running as root and there is no 'postgres' user") from None
    runuser = shutil.which("runuser")
    if runuser is None:
        raise ClusterUnavailable("running as root and runuser is not installed")
    return [runuser, "-u", "postgres", "--"], owner


def _initdb(cluster: Cluster) -> None:
    command = [*cluster.run_as, str(cluster.bin_dir / "initdb"), "-D", str(cluster.data_dir),
               "-U", cluster.user, "--auth=trust", "--encoding=UTF8", "--no-locale",
               "--no-sync"]  # fmt: skip
    result = _run(command, check=False)
    if result.returncode != 0:
        raise ClusterUnavailable(f"initdb failed: {result.stderr.strip()[-500:]}")


def _start(cluster: Cluster, settings: dict[str, str]) -> None:
    options = [f"-k {cluster.socket_dir}", "-c listen_addresses=''", f"-p {cluster.port}"]
    options += [f"-c {name}={value}" for name, value in settings.items()]
    command = [*cluster.run_as, str(cluster.bin_dir / "pg_ctl"), "-D", str(cluster.data_dir),
               "-l", str(cluster.directory / "server.log"), "-o", " ".join(options),
               "-t", str(_START_TIMEOUT_S), "-w", "start"]  # fmt: skip
    result = _run(command, check=False)
    if result.returncode != 0:
        log = cluster.directory / "server.log"
        tail = log.read_text(errors="replace")[-800:] if log.exists() else result.stderr
        raise ClusterUnavailable(f"pg_ctl start failed: {tail.strip()}")


def _run(command: list[str], *, check: bool) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, capture_output=True, text=True, check=check, timeout=_START_TIMEOUT_S + 30, cwd="/"
    )
