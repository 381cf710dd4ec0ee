"""One Spark session that the stage commands on a lake share: one JVM, started and warmed once.

Airflow runs each stage of an interval in its own task process. Alone, each would start Python,
import Spark, start a JVM and a session, and run its stage in a JVM that has compiled nothing
yet. With a shared session:

    offsetlake session start --lake L [--config C]                     # the DAG's setup task
    offsetlake ingest --lake L ...     # each stage's task: served by the session, if one is running
    offsetlake session stop --lake L                                   # the DAG's teardown task

``session start`` starts a server process for the lake (``python -m jobs.cli.shared_session``),
which builds the session with the settings given and then waits on a Unix socket that only its
user can open. A stage command (``run``, ``ingest`` ... ``publish``) on that lake hands its
arguments, working directory and environment to the server, prints what the stage prints and
exits with its exit code, as if it had run in its own process; the stage's log file is the same.
The lake's ``report`` is served too (it runs no Spark, but would import what the session has).
What Spark and Java print goes to the session's log (``<lake>/logs/session-<time>.log``).

The server runs one command at a time, in the order they arrive. It refuses a command whose
settings differ from its own (another ``--config`` file or content, ``--master`` or
``--delta-engine``) or whose code does (a new release installed, a dependency upgraded, since the
session started: its process runs the code it loaded then): that command runs in its own process,
as without a session, and the next ``session start`` replaces the session. A command whose
process ends before its stage does (a task killed by Airflow) has its Spark jobs cancelled, as if
its own process had been killed; the next run resumes from what the lake holds. The server ends
on ``session stop``, after ``--idle`` without a command (default PT30M, so a session whose
teardown never ran does not live on), or when its Spark context has stopped.

An interval's teardown may keep the session for the next interval instead of stopping it:

    offsetlake session release --lake L --idle PT2H   # kept for the next start, or stopped if due

``release`` stops a session that has served longer than ``--renew-after`` (default P1D: a process
lives a day of runs at most, then the next interval starts a fresh one); otherwise the session
waits up to ``--idle`` for the next command. With no session
running, or ``OFFSETLAKE_SHARED_SESSION=off``, every command runs in its own process.

The client side (:func:`delegate`) imports nothing but the standard library: a served command
starts in a fraction of the time a command that imports Spark does.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import io
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from jobs.cli.durations import iso_duration

# the project's packages a session runs (airflow_dags is read by Airflow, never by a session)
_PACKAGES = ("jobs", "pipelines", "schemas")
_PROJECT_ROOT = Path(__file__).resolve().parents[2]
# the commands a session serves: ``run`` and each stage (jobs.stages.runner.STAGE_NAMES), which
# must fit its settings and code; and the lake's report, which runs no Spark: its code alone
SERVED_COMMANDS = ("run", "ingest", "replay", "marts", "audit", "publish")
SERVED_BY_CODE_ALONE = ("report",)
OFF_VARIABLE = "OFFSETLAKE_SHARED_SESSION"
ACTIONS = ("start", "stop", "release", "status")
DEFAULT_IDLE = timedelta(minutes=30)
DEFAULT_RENEW_AFTER = timedelta(days=1)
START_TIMEOUT = timedelta(minutes=5)
REQUEST_TIMEOUT = 30  # seconds a connected client has to send its request
STATUS_TIMEOUT = 10  # seconds ``session status`` waits for a session serving a command
# variables of the client's environment a served command does not take: they describe the
# server's own JVM and Python workers, started already
_SERVER_OWN = ("PYSPARK_", "SPARK_", "JAVA_", "_JAVA_", "JDK_", "PYTHON")


class SessionError(RuntimeError):
    """A shared session could not be started or reached (the message says why)."""


def _lake_key(lake: str | Path) -> str:
    text = str(lake)
    return text if "://" in text else str(Path(text).resolve())


def runtime_dir() -> Path:
    """Where the sessions' sockets live: private to this user."""
    directory = Path(tempfile.gettempdir()) / f"offsetlake-sessions-{os.getuid()}"
    directory.mkdir(mode=0o700, exist_ok=True)
    if directory.stat().st_uid != os.getuid() or directory.stat().st_mode & 0o077:
        raise SessionError(f"{directory} must belong to this user alone (mode 700)")
    return directory


def socket_path(lake: str | Path) -> Path:
    """The socket of the session serving ``lake`` (a short name: socket paths are limited to ~100 bytes)."""
    return runtime_dir() / (hashlib.sha256(_lake_key(lake).encode()).hexdigest()[:20] + ".sock")


def code_version(root: Path = _PROJECT_ROOT) -> str:
    """A digest of the code a command runs: the project's packages under ``root`` (every source
    file's path and content) and the installed dependencies (each site-packages directory's last
    change, which an install, upgrade or removal makes), under this Python."""
    digest = hashlib.sha256(sys.version.encode())
    for package in _PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(f"\0{path.relative_to(root)}\0".encode() + path.read_bytes())
    for directory in sorted(p for p in sys.path if p.endswith("site-packages")):
        with contextlib.suppress(OSError):
            digest.update(f"\0{directory}\0{os.stat(directory).st_mtime_ns}".encode())
    return digest.hexdigest()


def fit(config: Path | None, master: str | None, delta_engine: str | None) -> dict[str, str | None]:
    """What a served command must equal the session in: the settings file (its path and content),
    the master, the Delta engine and the code (:func:`code_version`)."""
    digest = None
    if config is not None and Path(config).is_file():
        digest = hashlib.sha256(Path(config).read_bytes()).hexdigest()
    path = str(Path(config).resolve()) if config is not None else None
    return {"config": path, "config_sha256": digest, "master": master, "delta_engine": delta_engine,
            "code": code_version()}  # fmt: skip


def _options() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    parser.add_argument("--lake", type=Path)
    parser.add_argument("--config", type=Path)
    parser.add_argument("--master")
    parser.add_argument("--delta-engine")
    parser.add_argument("-h", "--help", action="store_true")
    return parser


# -- the protocol: one JSON object per line --------------------------------------------------


def _send(connection: socket.socket, message: dict) -> None:
    connection.sendall(json.dumps(message).encode() + b"\n")


def _messages(connection: socket.socket) -> Iterator[dict]:
    buffer = b""
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            return
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield json.loads(line)


def _connect(lake: str | Path, timeout: float | None = None) -> socket.socket | None:
    path = socket_path(lake)
    if not path.exists():
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(timeout)
    try:
        connection.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        connection.close()
        return None  # a session killed without its stop: its socket file stays, nothing listens
    return connection


def ask(lake: str | Path, message: dict, timeout: float | None = None) -> dict | None:
    """Send ``message`` to the lake's session and return its one answer (None: no session). A
    session answers after the command it is serving: one that does not within ``timeout`` seconds
    is a SessionError."""
    connection = _connect(lake, timeout)
    if connection is None:
        return None
    with connection:
        try:
            _send(connection, message)
            return next(_messages(connection), None)
        except TimeoutError:
            raise SessionError(
                f"the shared session of {lake} did not answer within {timeout:.0f}s: it is serving a command"
            ) from None


# -- the client: a stage command handed to the session ---------------------------------------


def _switched_off() -> bool:
    return os.environ.get(OFF_VARIABLE, "").lower() in ("off", "0", "false", "no")


def delegate(argv: list[str]) -> int | None:
    """Run the stage command ``argv`` in the lake's shared session; its exit code, or None when
    no session serves it (the caller runs it in this process)."""
    if _switched_off():
        return None
    words = [w for w in argv if w not in ("-v", "--verbose")]
    if not words or words[0] not in (*SERVED_COMMANDS, *SERVED_BY_CODE_ALONE):
        return None
    try:
        options, _ = _options().parse_known_args(words[1:])
    except argparse.ArgumentError:
        return None  # the command line's own parser says what is wrong
    if options.help or options.lake is None:
        return None
    connection = _connect(options.lake)
    if connection is None:
        return None
    with connection:
        _send(connection, {
            "kind": "run", "argv": argv, "program": sys.argv[0], "cwd": os.getcwd(), "env": dict(os.environ),
            "fit": {"code": code_version()} if words[0] in SERVED_BY_CODE_ALONE
                   else fit(options.config, options.master, options.delta_engine),
        })  # fmt: skip
        for message in _messages(connection):
            if message["kind"] == "refused":
                print(f"offsetlake: not in the lake's shared session ({message['reason']}); running here",
                      file=sys.stderr, flush=True)  # fmt: skip
                return None
            if message["kind"] == "output":
                stream = sys.stdout if message["stream"] == "stdout" else sys.stderr
                stream.write(message["text"])
                stream.flush()
            elif message["kind"] == "exit":
                return int(message["code"])
    print("offsetlake: the shared session ended before the command did; see the session's log "
          "under <lake>/logs/session-*.log", file=sys.stderr)  # fmt: skip
    return 1


# -- the server ------------------------------------------------------------------------------


class _Frames(io.TextIOBase):
    """A text stream whose writes go to the client as ``output`` messages (dropped once it is gone)."""

    def __init__(self, connection: socket.socket, stream: str, lock: threading.Lock):
        self._connection, self._stream, self._lock = connection, stream, lock
        self.gone = False

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return "utf-8"

    def write(self, text: str) -> int:
        if text and not self.gone:
            with self._lock:
                try:
                    _send(self._connection, {"kind": "output", "stream": self._stream, "text": text})
                except OSError:
                    self.gone = True
        return len(text)


def _client_gone(connection: socket.socket) -> bool:
    """True when the client has closed its end (it sends nothing after its request)."""
    readable, _, _ = select.select([connection], [], [], 0)
    if not readable:
        return False
    try:
        return connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


@contextlib.contextmanager
def _as_the_client(request: dict, connection: socket.socket) -> Iterator[None]:
    """The client's working directory, environment, program name and standard streams, for one command."""
    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    saved_streams = sys.stdout, sys.stderr
    lock = threading.Lock()
    try:
        os.environ.update({k: v for k, v in request["env"].items() if not k.startswith(_SERVER_OWN)})
        for key in set(saved_env) - set(request["env"]):
            if not key.startswith(_SERVER_OWN):
                del os.environ[key]
        os.chdir(request["cwd"])
        sys.argv = [request["program"], *request["argv"]]
        sys.stdout, sys.stderr = _Frames(connection, "stdout", lock), _Frames(connection, "stderr", lock)
        yield
    finally:
        sys.stdout, sys.stderr = saved_streams
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def _watch(connection: socket.socket, done: threading.Event, spark) -> None:
    """Cancel the command's Spark jobs if its client goes away before it ends: each job it
    starts from then on, until the command gives up."""
    while not done.wait(0.5):
        if _client_gone(connection):
            print(f"{datetime.now(UTC):%Y-%m-%d %H:%M:%S} the client went away: cancelling its Spark jobs",
                  file=sys.__stderr__, flush=True)  # fmt: skip
            while not done.wait(0.2):
                spark.sparkContext.cancelAllJobs()
            return


class Server:
    """The session's process: one command at a time from the socket, in one SparkSession."""

    def __init__(self, spec: dict):
        self.spec = spec
        self.fit = spec["fit"]
        self.started = time.time()
        self.served = 0
        self.spark = None

    def serve(self) -> int:
        lock_path = socket_path(self.spec["lake"]).with_suffix(".lock")
        with open(lock_path, "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                print("another session already serves this lake", file=sys.stderr)
                return 5
            self.spark = self._build_session()
            path = socket_path(self.spec["lake"])
            path.unlink(missing_ok=True)
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(str(path))
            os.chmod(path, 0o600)
            listener.listen(16)
            listener.settimeout(self.spec["idle_seconds"])
            print(f"serving {self.spec['lake']} on {path} (pid {os.getpid()})", file=sys.stderr, flush=True)
            try:
                return self._loop(listener)
            finally:
                listener.close()
                path.unlink(missing_ok=True)

    def _build_session(self):
        from jobs.cli.main import settings_options
        from jobs.cli.settings import settings_from
        from jobs.runtime.logs import configure_console
        from jobs.runtime.session import build_session

        configure_console(verbose=True, interactive=False)
        parser = argparse.ArgumentParser()
        settings_options(parser)
        args = parser.parse_args(self.spec["settings_argv"])
        settings = settings_from(args)
        self.fit = {**self.fit, "code": code_version()}  # the code this process loaded, as it starts
        # Not one interval's JVM: it serves the interval's stages and, kept, the intervals after, so
        # with ``jit = "auto"`` it compiles for throughput (docs/experiments.md, "The kept session
        # compiles fully"), and keeps the code Spark generates for the next interval's plans.
        return build_session(settings.spark, None, interval=None, kept=True)

    def _loop(self, listener: socket.socket) -> int:
        while True:
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                print("idle: stopping", file=sys.stderr, flush=True)
                return 0
            with connection:
                connection.settimeout(REQUEST_TIMEOUT)
                try:
                    request = next(_messages(connection), None)
                except (TimeoutError, ValueError):
                    continue  # not a client of ours
                connection.settimeout(None)
                if request is None:
                    continue
                if request["kind"] == "stop":
                    _send(connection, {"kind": "stopped", "pid": os.getpid(), "served": self.served})
                    return 0
                if request["kind"] == "status":
                    _send(connection, self.status())
                    continue
                if request["kind"] == "release":
                    if time.time() - self.started >= request["renew_after_seconds"]:
                        _send(connection, {"kind": "stopped", "pid": os.getpid(), "served": self.served})
                        return 0
                    listener.settimeout(request["idle_seconds"])
                    _send(connection, {**self.status(), "kind": "kept"})
                    continue
                self._run(request, connection)
            if self.spark.sparkContext._jsc.sc().isStopped():
                print("the Spark context has stopped: stopping", file=sys.stderr, flush=True)
                return 1

    def status(self) -> dict:
        return {"kind": "status", "pid": os.getpid(), "lake": self.spec["lake"], "fit": self.fit,
                "started": self.started, "served": self.served, "log": self.spec.get("log")}  # fmt: skip

    def _run(self, request: dict, connection: socket.socket) -> None:
        if _client_gone(connection):
            return  # its process ended while it waited for the command before it
        differs = sorted(k for k in {*request["fit"], "code"} if request["fit"].get(k) != self.fit.get(k))
        if differs:
            _send(
                connection,
                {
                    "kind": "refused",
                    "reason": f"its {' and '.join(differs)} {'differs' if len(differs) == 1 else 'differ'} from the session's",
                },
            )
            return
        from jobs.cli.main import main
        from jobs.runtime.logs import configure_console, detach_log_file

        print(f"{datetime.now(UTC):%Y-%m-%d %H:%M:%S} serving {request['argv']}", file=sys.stderr, flush=True)
        done = threading.Event()
        watcher = threading.Thread(target=_watch, args=(connection, done, self.spark), daemon=True)
        watcher.start()
        code = 1
        try:
            with _as_the_client(request, connection):
                try:
                    code = main(request["argv"])
                except SystemExit as exit_:
                    code = exit_.code if isinstance(exit_.code, int) else 1
                except BaseException:
                    traceback.print_exc()  # to the client, as its own process would have
        except Exception as error:  # the client's working directory is gone, say
            with contextlib.suppress(OSError):
                _send(connection, {"kind": "output", "stream": "stderr", "text": f"offsetlake: {error}\n"})
        finally:
            done.set()
            watcher.join()
            detach_log_file()
            configure_console(verbose=True, interactive=False)
        self.served += 1
        with contextlib.suppress(OSError):
            _send(connection, {"kind": "exit", "code": code})
        print(f"{datetime.now(UTC):%Y-%m-%d %H:%M:%S} exit code {code}", file=sys.stderr, flush=True)


# -- starting and stopping -------------------------------------------------------------------


def session_log(lake: str | Path, directory: Path | None) -> Path:
    """The session's own log: beside the runs' logs."""
    from jobs.runtime.logs import log_directory

    name = f"session-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{os.getpid()}.log"
    return (log_directory(_lake_key(lake), directory) / name).resolve()


def start(spec: dict, log: Path) -> dict:
    """Start a server for ``spec['lake']`` (unless one with the same settings runs) and wait until it
    serves; returns its status. A session with other settings is stopped first."""
    running = ask(spec["lake"], {"kind": "status"}, timeout=START_TIMEOUT.total_seconds())
    if running is not None:
        if running["fit"] == spec["fit"]:
            return {**running, "already_running": True}
        stop(spec["lake"])
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", "jobs.cli.shared_session", json.dumps({**spec, "log": str(log)})],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            cwd=runtime_dir(),  # not the caller's: an Airflow task's working directory ends with the task
            env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(_PROJECT_ROOT),
                                                                           os.environ.get("PYTHONPATH")]))},
        )  # fmt: skip
    deadline = time.monotonic() + START_TIMEOUT.total_seconds()
    while time.monotonic() < deadline:
        status = ask(spec["lake"], {"kind": "status"}, timeout=START_TIMEOUT.total_seconds())
        if status is not None:
            return {**status, "already_running": status["pid"] != child.pid}
        if child.poll() is not None:
            raise SessionError(f"the session did not start (exit code {child.returncode}); its log: {log}")
        time.sleep(0.2)
    child.kill()
    raise SessionError(f"the session did not start within {START_TIMEOUT}; its log: {log}")


def stop(lake: str | Path) -> dict | None:
    """Stop the lake's session after the command it is serving; its last status (None: none ran)."""
    return _end(lake, {"kind": "stop"})


def release(lake: str | Path, idle: timedelta, renew_after: timedelta) -> dict | None:
    """End an interval: the lake's session waits up to ``idle`` for the next command (its answer's
    kind is ``kept``), or stops if it has served ``renew_after`` or longer (``stopped``)."""
    request = {
        "kind": "release",
        "idle_seconds": idle.total_seconds(),
        "renew_after_seconds": renew_after.total_seconds(),
    }
    return _end(lake, request)


def _end(lake: str | Path, request: dict) -> dict | None:
    answer = ask(lake, request)
    if answer is None or answer["kind"] == "kept":
        return answer
    deadline = time.monotonic() + 30
    while socket_path(lake).exists() and time.monotonic() < deadline:
        time.sleep(0.1)  # the server removes its socket as it ends
    return answer


# -- the command: offsetlake session start|stop|status ---------------------------------------


def session_arguments(parser: argparse.ArgumentParser, settings_options) -> None:
    parser.add_argument("action", choices=ACTIONS,
                        help="start a session for the lake (or keep the one running), stop it, release it after an "
                        "interval (kept for the next one, unless due for renewal), or show it")  # fmt: skip
    parser.add_argument("--lake", type=Path, required=True, help="root of the Delta lake the stages write")
    parser.add_argument("--optional", action="store_true",
                        help="if the session cannot start, say why and exit 0: the stage commands then run in their own processes")  # fmt: skip
    parser.add_argument("--idle", type=iso_duration, default=DEFAULT_IDLE,
                        help="stop after this long without a command, ISO-8601 (default PT30M; with release: "
                        "until the next interval's first command)")  # fmt: skip
    parser.add_argument("--renew-after", type=iso_duration, default=DEFAULT_RENEW_AFTER,
                        help="release stops a session that has served this long, ISO-8601 (default P1D)")  # fmt: skip
    settings_options(parser)


def _served(commands: int) -> str:
    return f"{commands} command{'' if commands == 1 else 's'} served"


def _manage(args: argparse.Namespace) -> int:
    """``session stop``, ``release`` or ``status``: words to the running session alone."""
    if args.action in ("stop", "release"):
        answer = (
            release(args.lake, args.idle, args.renew_after) if args.action == "release" else stop(args.lake)
        )
        if answer is None:
            print(f"no shared session serves {args.lake}")
        elif answer["kind"] == "kept":
            print(f"kept the shared session of {args.lake} for the next interval (pid {answer['pid']}, "
                  f"{_served(answer['served'])}; it stops after {args.idle} without one)")  # fmt: skip
        else:
            print(
                f"stopped the shared session of {args.lake} (pid {answer['pid']}, {_served(answer['served'])})"
            )
        return 0
    try:
        status = ask(args.lake, {"kind": "status"}, timeout=STATUS_TIMEOUT)
    except SessionError as error:
        print(error)
        return 0
    if status is None:
        print(f"no shared session serves {args.lake}")
        return 3
    print(f"shared session of {status['lake']}: pid {status['pid']}, up {time.time() - status['started']:.0f}s, "
          f"{_served(status['served'])}; log {status['log']}")  # fmt: skip
    return 0


def _already_serving(status: dict) -> int:
    print(f"a shared session (pid {status['pid']}) already serves {status['lake']}; its log: {status['log']}")
    return 0


def quick(argv: list[str]) -> int | None:
    """``session stop|release|status``, and ``session start`` when a session of the same settings
    and code serves the lake already, with the standard library alone: an interval's setup and
    teardown tasks then import no Spark. None: the full command line handles ``argv`` (it also
    says what is wrong with it)."""
    words = [w for w in argv if w not in ("-v", "--verbose")]
    if len(words) < 2 or words[0] != "session" or _switched_off() or os.environ.get("PYSPARK_GATEWAY_PORT"):
        return None
    parser = _options()
    parser.add_argument("action", choices=ACTIONS)
    parser.add_argument("--idle", type=iso_duration, default=DEFAULT_IDLE)
    parser.add_argument("--renew-after", type=iso_duration, default=DEFAULT_RENEW_AFTER)
    parser.add_argument("--optional", action="store_true")
    try:
        args, unknown = parser.parse_known_args(words[1:])
    except argparse.ArgumentError:
        return None
    if unknown or args.help or args.lake is None or args.idle <= timedelta(0):
        return None
    if args.action != "start":
        return _manage(args)
    try:
        status = ask(args.lake, {"kind": "status"}, timeout=STATUS_TIMEOUT)
    except SessionError:
        return None
    if status is None or status["fit"] != fit(args.config, args.master, args.delta_engine):
        return None  # a session to start, or to replace: the full command checks the settings first
    return _already_serving(status)


def run_session(args: argparse.Namespace) -> int:
    from jobs.cli.settings import check_lake, settings_from
    from schemas.config import ConfigError

    if args.idle <= timedelta(0):
        raise ConfigError("--idle must be a positive duration, such as PT30M")
    if args.action != "start":
        return _manage(args)
    settings = settings_from(args)
    check_lake(args.lake)
    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        print("under spark-submit each stage keeps its own session: no shared session started")
        return 0
    if _switched_off():
        print(f"{OFF_VARIABLE} is off: no shared session started")
        return 0
    settings_argv = [*(["--config", str(Path(args.config).resolve())] if args.config else []),
                     *(["--master", args.master] if args.master else []),
                     *(["--delta-engine", args.delta_engine] if args.delta_engine else [])]  # fmt: skip
    spec = {
        "lake": _lake_key(args.lake), "fit": fit(args.config, args.master, args.delta_engine),
        "settings_argv": settings_argv, "idle_seconds": args.idle.total_seconds(),
    }  # fmt: skip
    try:
        status = start(spec, session_log(args.lake, settings.logs.directory))
    except SessionError as error:
        print(f"offsetlake: {error}", file=sys.stderr)
        if args.optional:
            print("offsetlake: the stage commands will run in their own processes", file=sys.stderr)
            return 0
        return 1
    if status["already_running"]:
        return _already_serving(status)
    print(f"a shared session (pid {status['pid']}) serves {status['lake']}; its log: {status['log']}")
    return 0


if __name__ == "__main__":
    sys.exit(Server(json.loads(sys.argv[1])).serve())
