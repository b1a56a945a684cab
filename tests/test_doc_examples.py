"""The README's and the docs' Python examples run, and say what they print.

Every ```pycon and ```python block of ``README.md`` and ``docs/*.md`` is collected:

- a block with ``>>>`` prompts runs as a doctest (``ELLIPSIS`` on: ``...`` in an expected
  output stands for what differs from run to run, such as a UUID made now);
- a block without prompts runs as a script (top-level ``await`` allowed), and fails if it
  raises.

Each block runs in a fresh namespace with a temporary directory as its working directory.
A block that needs more than the core says so in a marker comment on the line before it,
and is skipped only when that need cannot be met here:

- ``<!-- doctest: requires pydantic -->``: modules that must be importable;
- ``<!-- doctest: django models -->``: the block is the ``models.py`` of a Django app; it is
  imported by ``django.setup()`` in a child process with the app installed;
- ``<!-- doctest: daemon at PATH -->``: a UIAP daemon (all real but the network, which is an
  in-memory segment, with fast timers) listens on a fresh socket that replaces ``PATH`` in
  the block;
- ``<!-- doctest: netns with eth0, wlan0 -->``: the block runs as root in a network namespace
  of its own that has those interfaces (veth pairs, link-local IPv6 up), deleted afterwards;
  skipped where namespaces cannot be made.

Paths under ``/var/lib/`` in a block are moved into the temporary directory.

The ``>>>`` examples in the package's own docstrings run as doctests too.
"""

from __future__ import annotations

import ast
import asyncio
import doctest
import importlib
import inspect
import os
import re
import secrets
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"

_FENCE = re.compile(r"^```(pycon|python)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_MARKER = re.compile(r"<!-- doctest: (.+?) -->\n+$")
_KNOWN = re.compile(r"requires [\w, ]+|django models|daemon at \S+|netns with [\w, ]+")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    language: str
    source: str
    marker: str

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _blocks() -> list[Block]:
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            before = _MARKER.search(text, 0, match.start())
            marker = before.group(1) if before and before.end() == match.start() else ""
            line = text.count("\n", 0, match.start()) + 2
            found.append(Block(path, line, match.group(1), match.group(2), marker))
    return found


BLOCKS = _blocks()


def test_blocks_were_found() -> None:
    # README.md and docs/ hold both kinds; an empty collection would pass vacuously.
    assert {b.language for b in BLOCKS} == {"pycon", "python"}
    assert {b.path.name for b in BLOCKS} >= {"README.md", "encodings.md", "simulator.md"}


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.marker], ids=lambda b: b.name)
def test_every_marker_is_one_the_runner_knows(block: Block) -> None:
    assert _KNOWN.fullmatch(block.marker), f"{block.name}: unknown marker {block.marker!r}"


@pytest.fixture
def in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def namespace(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The globals of a fresh module, importable by name while the block runs (libraries
    such as SQLAlchemy resolve a class's annotations through ``sys.modules``)."""
    module = types.ModuleType("__doc_example__")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    return module.__dict__


def _run_doctest(block: Block, source: str, namespace: dict[str, Any]) -> None:
    parser = doctest.DocTestParser()
    test = parser.get_doctest(source, namespace, block.name, str(block.path), block.line - 1)
    assert test.examples, f"{block.name}: a pycon block without examples"
    output: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    result = runner.run(test, out=output.append)
    assert result.failed == 0, "".join(output)


def _run_script(block: Block, source: str, namespace: dict[str, Any]) -> None:
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    code = compile(source, block.name, "exec", flags=flags)
    result = eval(code, namespace)  # the repository's own documentation
    if inspect.iscoroutine(result):
        asyncio.run(result)


def _requirements(block: Block) -> None:
    if block.marker.startswith("requires "):
        for module in block.marker.removeprefix("requires ").split(","):
            pytest.importorskip(module.strip())


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.name)
def test_example_runs(block: Block, in_tmp_dir: Path, namespace: dict[str, Any]) -> None:
    _requirements(block)
    source = block.source.replace("/var/lib/", f"{in_tmp_dir}/var/lib/")
    if block.marker == "django models":
        _run_django_models(source, in_tmp_dir)
        return
    if block.marker.startswith("netns with "):
        interfaces = [name.strip() for name in block.marker.removeprefix("netns with ").split(",")]
        _run_in_namespace(source, interfaces, in_tmp_dir)
        return
    with _daemon_for(block, in_tmp_dir) as socket_path:
        if socket_path is not None:
            source = source.replace(block.marker.removeprefix("daemon at "), socket_path)
        if ">>>" in source:
            _run_doctest(block, source, namespace)
        else:
            assert block.language == "python", f"{block.name}: a pycon block without prompts"
            _run_script(block, source, namespace)


# --- Django: the block is an app's models.py --------------------------------------------------

_DJANGO_CHECK = """
import django
from django.conf import settings

settings.configure(INSTALLED_APPS=["docapp"], DEFAULT_AUTO_FIELD="django.db.models.AutoField")
django.setup()
from django.apps import apps

models = apps.get_app_config("docapp").get_models()
for model in models:
    default = model._meta.pk.default
    value = default() if callable(default) else default
    print(model.__name__, value.version)
"""


def _run_django_models(source: str, directory: Path) -> None:
    pytest.importorskip("django")
    app = directory / "docapp"
    app.mkdir()
    (app / "__init__.py").write_text("")
    (app / "models.py").write_text(source)
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(directory), str(SRC)])}
    done = subprocess.run(
        [sys.executable, "-c", _DJANGO_CHECK],
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    # Every model of the example has a primary key whose default makes a UUIDv7.
    assert done.stdout.split() and done.stdout.split()[1::2] == ["7"] * (
        len(done.stdout.split()) // 2
    )


# --- a daemon on an in-memory segment, in its own process (it installs signal handlers) -----

_DAEMON = """
import asyncio, sys
from uuidkit.daemon.config import DaemonConfig
from uuidkit.daemon.localsite import LocalSite
from uuidkit.daemon.main import Daemon

async def main() -> None:
    fast = dict(claim_period=0.02, claim_timeout=0.05)
    config = DaemonConfig(socket=sys.argv[1], state_dir=sys.argv[2], **fast)
    daemon = Daemon(config, node_factory=LocalSite().factory, environ={})
    task = asyncio.create_task(daemon.serve())
    await daemon.ready.wait()
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    daemon.stopped.set()
    await task

asyncio.run(main())
"""


def _daemon_for(block: Block, directory: Path) -> _DaemonContext:
    return _DaemonContext(directory if block.marker.startswith("daemon at ") else None)


class _DaemonContext:
    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.process: subprocess.Popen[str] | None = None

    def __enter__(self) -> str | None:
        if self.directory is None:
            return None
        socket_path = str(self.directory / "uiapd.sock")
        environ = {**os.environ, "PYTHONPATH": str(SRC)}
        self.process = subprocess.Popen(
            [sys.executable, "-c", _DAEMON, socket_path, str(self.directory / "state")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=environ,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "ready", "the daemon did not start"
        return socket_path

    def __exit__(self, *exc: object) -> None:
        if self.process is None:
            return
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()


# --- a network namespace of the block's own ------------------------------------------------

_SCRIPT = """
import ast, asyncio, inspect, sys
code = compile(open(sys.argv[1]).read(), sys.argv[1], "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
result = eval(code, {"__name__": "__main__"})
if inspect.iscoroutine(result):
    asyncio.run(result)
"""


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, f"ip {' '.join(args)}: {done.stderr}"


def _run_in_namespace(source: str, interfaces: list[str], directory: Path) -> None:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("network namespaces need root and iproute2 (CI runs as root)")
    namespace = f"ukdoc{os.getpid()}{secrets.token_hex(2)}"
    if subprocess.run(["ip", "netns", "add", namespace], capture_output=True).returncode != 0:
        pytest.skip("cannot create a network namespace here")
    try:
        in_ns = ["ip", "netns", "exec", namespace]
        sysctl = [
            "sysctl",
            "-qw",
            "net.ipv6.conf.all.accept_dad=0",
            "net.ipv6.conf.default.accept_dad=0",
        ]
        subprocess.run([*in_ns, *sysctl], check=True, timeout=30)
        _ip("-n", namespace, "link", "set", "lo", "up")
        for name in interfaces:  # each a veth whose peer stays in the namespace: a live link
            _ip("-n", namespace, "link", "add", name, "type", "veth", "peer", "name", f"{name}p")
            _ip("-n", namespace, "link", "set", f"{name}p", "up")
            _ip("-n", namespace, "link", "set", name, "up")
        script = directory / "example.py"
        script.write_text(source)
        environ = {**os.environ, "PYTHONPATH": str(SRC)}
        done = subprocess.run(
            [*in_ns, sys.executable, "-c", _SCRIPT, str(script)],
            env=environ,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
    finally:
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True)


# --- the examples in docstrings ------------------------------------------------------------

DOCSTRING_MODULES = sorted(
    ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
    for path in SRC.rglob("*.py")
    if ">>>" in path.read_text(encoding="utf-8")
)


def test_the_docstring_examples_include_the_simulators() -> None:
    assert "uuidkit.testing" in DOCSTRING_MODULES


@pytest.mark.parametrize("name", DOCSTRING_MODULES)
def test_docstring_examples_run(name: str, in_tmp_dir: Path) -> None:
    module = importlib.import_module(name)
    tests = [test for test in doctest.DocTestFinder().find(module) if test.examples]
    assert tests, f"{name} has '>>>' in its source but no doctest"
    for test in tests:
        if test.name == name:  # the module's own example starts, as a reader's, from nothing
            test.globs = {"__name__": name}
    output: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test, out=output.append)
    assert runner.summarize(verbose=False).failed == 0, "".join(output)
