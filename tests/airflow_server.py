"""A real Airflow on the loopback interface: PostgreSQL (Debian's) as its metadata database, and
its API server, scheduler and DAG processor with the LocalExecutor, each a process of its own,
as a deployment runs them. What ``dag.test()`` cannot show runs here: runs the scheduler creates
(scheduled on a timetable, triggered by an Asset event, triggered by hand without a logical
date), tasks in worker processes that parse the DAG files themselves, the task SDK's context.

    with RealAirflow(directory, env) as airflow:   # env: TWINFLOW_HOME, TWINFLOW_QUERIES, ...
        airflow.unpause("twinflow_q")
        run = airflow.wait_for_run("twinflow_q")
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.cluster import free_port, stop

REPO = Path(__file__).resolve().parents[1]
READY_S = 120
ENDED = {"success", "failed"}


def _pg_bin(name: str) -> str:
    """A PostgreSQL server program (Debian keeps them off the PATH, per major version)."""
    found = shutil.which(name) or max(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                                      default=None, key=lambda p: int(p.split("/")[4]))
    if not found:
        raise RuntimeError(f"PostgreSQL's {name} not found: bootstrap.sh test installs "
                           "postgresql (apt-get install postgresql)")
    return found


class PostgreSQL:
    """A throw-away PostgreSQL server (trust authentication, no fsync) on a free port. The
    server refuses to run as root: as root it runs as the ``postgres`` user, in a directory of
    its own."""

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="twinflow-pg-"))
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> None:
        proc = subprocess.run([*self.as_user, *args], capture_output=True, text=True)
        if proc.returncode:
            raise RuntimeError(f"{args[0]} failed: {proc.stdout}{proc.stderr}")

    def __enter__(self) -> str:
        data = self.dir / "data"
        self._run(_pg_bin("initdb"), "-D", str(data), "-U", "airflow", "--auth=trust",
                  "-E", "UTF8")
        self._run(_pg_bin("pg_ctl"), "-D", str(data), "-w", "-l", str(self.dir / "log"),
                  "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 "
                        "-c fsync=off -c full_page_writes=off", "start")
        self._run(_pg_bin("createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "airflow",
                  "airflow")
        return f"postgresql+psycopg2://airflow@127.0.0.1:{self.port}/airflow"

    def __exit__(self, *exc: object) -> None:
        subprocess.run([*self.as_user, _pg_bin("pg_ctl"), "-D", str(self.dir / "data"), "-m",
                        "immediate", "stop"], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


class StatsD:
    """A StatsD server on a loopback UDP port: the metrics lines it received with ``prefix``
    (Airflow's own, sent all along, are dropped)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix.encode()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.5)
        self.port = self.sock.getsockname()[1]
        self.lines: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._receive, daemon=True)

    def _receive(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                continue
            self.lines += [line.decode() for line in data.split(b"\n")
                           if line.startswith(self.prefix)]

    def __enter__(self) -> StatsD:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


class RealAirflow:
    """Airflow's API server, scheduler and DAG processor over ``dags/`` with the LocalExecutor
    and PostgreSQL; ``env`` goes to every process (and so to the tasks), ``processor_env``
    to the DAG processor only (over ``env``); ``python``: the environment's (default this
    one's), ``dags``: the DAGs folder (default the checkout's ``dags/``)."""

    def __init__(self, directory: Path, env: dict[str, str],
                 processor_env: dict[str, str] | None = None, python: str = sys.executable,
                 dags: Path = REPO / "dags") -> None:
        self.dir = directory
        self.python = python
        self.dags = dags
        self.processor_env = processor_env or {}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.extra = env
        self.procs: list[subprocess.Popen] = []
        self.postgres = PostgreSQL()
        self.env: dict[str, str] = {}
        self._token = ""

    def _env(self, database: str) -> dict[str, str]:
        venv = str(Path(self.python).parent)
        return {**os.environ, **self.extra,
                "PATH": venv + os.pathsep + os.environ.get("PATH", ""),
                "AIRFLOW_HOME": str(self.dir / "home"),
                "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": database,
                "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
                "AIRFLOW__CORE__PARALLELISM": "4",
                "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
                "AIRFLOW__CORE__DAGS_FOLDER": str(self.dags),
                "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{self.url}/execution/",
                # one secret for every component: the tasks' tokens are signed with it
                "AIRFLOW__API_AUTH__JWT_SECRET": os.urandom(24).hex(),
                "AIRFLOW__CORE__AUTH_MANAGER": "airflow.api_fastapi.auth.managers."
                                               "simple.simple_auth_manager.SimpleAuthManager",
                "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
                # a test waits on the scheduler: it looks often; the DAG files are parsed when
                # the DAG processor starts, and not again every 30 s (a parse costs CPU)
                "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "1",
                "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "600"}

    def __enter__(self) -> RealAirflow:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.env = env = self._env(self.postgres.__enter__())
        try:
            # (run from its own directory: ``python -m`` puts the working directory first on
            # sys.path, and this checkout's packages are not those of the environment)
            migrate = subprocess.run([self.python, "-m", "airflow", "db", "migrate"],
                                     env=env, capture_output=True, text=True, cwd=self.dir)
            if migrate.returncode:
                raise RuntimeError(f"airflow db migrate failed: {migrate.stderr[-2000:]}")
            for name, *args in (("api-server", "--host", "127.0.0.1", "--port", str(self.port),
                                 "--workers", "1"),
                                ("scheduler",), ("dag-processor",)):
                with open(self.dir / f"{name}.log", "wb") as log:
                    self.procs.append(subprocess.Popen(
                        [self.python, "-m", "airflow", name, *args], stdout=log,
                        env={**env, **self.processor_env} if name == "dag-processor" else env,
                        stderr=subprocess.STDOUT, start_new_session=True, cwd=self.dir))
            self._wait_healthy()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + READY_S
        while True:
            try:
                health = self._get("/api/v2/monitor/health")
                if all(health[c]["status"] == "healthy" for c in ("scheduler", "dag_processor")):
                    return
            except OSError:
                pass
            if time.monotonic() > deadline or any(p.poll() is not None for p in self.procs):
                raise RuntimeError(f"Airflow did not start: see the logs in {self.dir}")
            time.sleep(1)

    def __exit__(self, *exc: object) -> None:
        stop(self.procs, timeout=30)
        self.procs.clear()
        self.postgres.__exit__()

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        """``airflow ARGS`` as an operator types it, against this Airflow's database."""
        return subprocess.run([self.python, "-m", "airflow", *args], env=self.env,
                              capture_output=True, text=True, timeout=120, cwd=self.dir)

    # -- the REST API (v2) ------------------------------------------------------------------
    def _call(self, method: str, path: str, body: dict | None = None) -> dict:
        if not self._token and method != "GET":
            self._token = self._get("/auth/token")["access_token"]
        req = urllib.request.Request(
            self.url + path, method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Content-Type": "application/json",
                     **({"Authorization": f"Bearer {self._token}"} if self._token else {})})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read() or b"{}")

    def _get(self, path: str) -> dict:
        return self._call("GET", path)

    def page(self, path: str) -> tuple[int, str]:
        """A page the API server serves (a plugin's), as a signed-in user reads it: its status
        and text."""
        self._token = self._token or self._get("/auth/token")["access_token"]
        req = urllib.request.Request(self.url + path,
                                     headers={"Authorization": f"Bearer {self._token}"})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def wait_for_dag(self, dag_id: str, timeout: float = 120) -> None:
        """Until the DAG processor has parsed ``dag_id`` into the database."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._get(f"/api/v2/dags/{dag_id}")
                return
            except urllib.error.HTTPError as e:
                if e.code != 404 or time.monotonic() > deadline:
                    raise
            time.sleep(1)

    def dag(self, dag_id: str) -> dict:
        return self._get(f"/api/v2/dags/{dag_id}")

    def unpause(self, dag_id: str) -> None:
        self.wait_for_dag(dag_id)
        self._call("PATCH", f"/api/v2/dags/{dag_id}", {"is_paused": False})

    def pool(self, name: str, slots: int) -> None:
        self._call("POST", "/api/v2/pools", {"name": name, "slots": slots})

    def pause(self, dag_id: str) -> None:
        self._call("PATCH", f"/api/v2/dags/{dag_id}", {"is_paused": True})

    def trigger(self, dag_id: str, conf: dict | None = None) -> str:
        """A manual run without a logical date, as the UI's trigger makes one; its run id."""
        self.unpause(dag_id)
        run = self._call("POST", f"/api/v2/dags/{dag_id}/dagRuns",
                         {"logical_date": None, "conf": conf or {}})
        return run["dag_run_id"]

    def runs(self, dag_id: str) -> list[dict]:
        return self._get(f"/api/v2/dags/{dag_id}/dagRuns?order_by=run_after")["dag_runs"]

    def task_states(self, dag_id: str, run_id: str) -> dict[str, str]:
        tis = self._get(f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances")
        return {t["task_id"]: t["state"] for t in tis["task_instances"]}

    def tries(self, dag_id: str, run_id: str, task_id: str) -> list[dict]:
        """Each try of a task instance, the first first."""
        return self._get(f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}/"
                         "tries")["task_instances"]

    def task_log(self, dag_id: str, run_id: str, task_id: str, try_number: int) -> str:
        """A try's log, as the worker wrote it."""
        return (self.dir / "home" / "logs" / f"dag_id={dag_id}" / f"run_id={run_id}" /
                f"task_id={task_id}" / f"attempt={try_number}.log").read_text()

    def wait_for_run(self, dag_id: str, run_id: str | None = None, timeout: float = 300
                     ) -> dict:
        """The run ``run_id`` (or the DAG's first) once it has ended."""
        deadline = time.monotonic() + timeout
        while True:
            runs = [r for r in self.runs(dag_id) if run_id in (None, r["dag_run_id"])]
            if runs and runs[0]["state"] in ENDED:
                return runs[0]
            if time.monotonic() > deadline:
                raise TimeoutError(f"{dag_id}: no run ended in {timeout} s: {runs}; the logs "
                                   f"are in {self.dir}")
            time.sleep(2)
