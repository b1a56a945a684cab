"""The project speaks for itself: README, docs and docstrings point only inside the repository.

No pointer to a sibling directory (``../shared``), to a design file outside the repository,
to a tracker item (``issue 2``) or to a numbered example of an outside document; specs are
cited by name and section instead (``RFC 9562 §6.2``). Also: the README's examples say what a
reader expects of them.
"""

from __future__ import annotations

import re
import tomllib
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

import uuidkit

ROOT = Path(__file__).resolve().parent.parent

#: What points outside the repository, and why each is caught.
OUTSIDE = {
    r"\.\./shared": "a sibling directory that a clone does not have",
    r"/work/": "a path on one machine",
    r"DESIGN\.md": "the team's design notes, which are not shipped",
    r"\bissues? #?\d+": "a tracker item a reader cannot see",
    r"(?<!-)\bexamples? \d+(-\d+)?\b": "a numbered example of an outside document",
}


def _documents() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    files += sorted((ROOT / "src").rglob("*.py")) + sorted((ROOT / "src").rglob("*.c"))
    return [f for f in files if f.is_file()]


@pytest.mark.parametrize("pattern", list(OUTSIDE))
def test_nothing_points_outside_the_repository(pattern: str) -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()[:90]}"
        for path in _documents()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(pattern, line, re.IGNORECASE)
    ]
    assert not found, f"{OUTSIDE[pattern]}:\n" + "\n".join(found)


def test_the_check_would_catch_each_kind() -> None:
    for sample in (
        "see ../shared/x",
        "DESIGN.md",
        "issue 2",
        "Issues 4",
        "example 7",
        "examples 7-9",
    ):
        assert any(re.search(p, sample, re.IGNORECASE) for p in OUTSIDE), sample


def test_the_readme_uuid7_range_example_covers_the_whole_last_day() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    low_text, high_text = re.findall(
        r"uuidkit\.uuid7_range\(start, end\)\n\(UUID\('([0-9a-f-]+)'\), UUID\('([0-9a-f-]+)'\)\)",
        text,
    )[0]
    low, high = uuid.UUID(low_text), uuid.UUID(high_text)
    # Every UUIDv7 of January 2024 lies in [low, high], and none of February 1 does.
    assert low == uuidkit.uuid7_min(datetime(2024, 1, 1, tzinfo=UTC))
    assert uuidkit.uuid7_max(datetime(2024, 1, 31, 23, 59, 59, 999000, tzinfo=UTC)) <= high
    assert uuidkit.uuid7_min(datetime(2024, 2, 1, tzinfo=UTC)) > high


def test_the_license_matches_the_package_metadata() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert project["license"] == "MIT"  # an SPDX expression (PEP 639)
    assert project["license-files"] == ["LICENSE"]
    assert license_text.startswith("MIT License")
    assert "WITHOUT WARRANTY OF ANY KIND" in license_text


def _confusable_form(name: str) -> str:
    """PEP 503 normalisation, then the package index's confusable-name folding: separators
    dropped, and the look-alike characters l/i -> 1 and o -> 0."""
    folded = re.sub(r"[-_.]+", "", name.lower())
    return folded.replace("l", "1").replace("i", "1").replace("o", "0")


#: Distribution names already taken on the package index that a new name must not fold to
#: (checked by hand against the index when the name was chosen; see the README).
TAKEN = ["uuidkit", "uuid-kit", "uuid", "uuid6", "uuid7", "uuid-utils", "uuid-toolkit"]


def test_the_distribution_name_is_one_the_index_accepts() -> None:
    name = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]
    assert re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?", name)  # PEP 508
    assert _confusable_form(name) not in {_confusable_form(taken) for taken in TAKEN}
    assert _confusable_form("uuid-kit") == _confusable_form("uuidkit")  # why not "uuidkit"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"pip install {name}" in readme and "import uuidkit" in readme


#: Each step of .ci/run (a pattern of the command its ``step`` line runs) and how
#: docs/development.md, the contributors' page, names it.
CI_STEPS = [
    (r"^system_packages$", "installed once per machine"),
    (r"^pg18$", "`tools/build-postgresql18.sh`"),
    (r"^tools/build-debian-tree\.sh forky$", "`tools/build-debian-tree.sh forky`"),
    (r"^tools/build-cpython-ft\.sh$", "`tools/build-cpython-ft.sh`"),
    (r"^readme_install$", "the README's `pip install -e '.[test]'`, PySpark"),
    (r"^build$", "`-Wall -Wextra -Werror`"),
    (r"ruff check \.$", "`ruff check`"),
    (r"ruff format --check \.$", "`ruff format --check`"),
    (r"mypy --strict$", "`mypy --strict`"),
    (r"UUIDKIT_REQUIRE_SPEEDUPS=1 python3 -m pytest -q$", "the README's test command"),
    (r"UUIDKIT_PURE=1 python3 -m pytest -q$", "`UUIDKIT_PURE=1`"),
    (r"python3 -m pytest -q -m slow$", "(`-m slow`)"),
    (r"^\.ci/suite 3\.1[23]$", "`.ci/suite 3.12`, `.ci/suite 3.13`"),
    (r"^\.ci/forky 3\.1[45]$", "`.ci/forky 3.14`, `.ci/forky 3.15`"),
    (r"^\.ci/freethreaded$", "`.ci/freethreaded`"),
    (r"^\.ci/aarch64$", "`.ci/aarch64`"),
    (r"^\.ci/dist$", "`.ci/dist`"),
    (r"^\.ci/dist-aarch64\b", "`.ci/dist-aarch64`"),
    (r"bench/bench_db\.py --quick --no-plot$", "`bench/bench_db.py --quick --no-plot`"),
]


def _ci_steps() -> list[str]:
    """The command of each ``step "NAME" COMMAND...`` line of .ci/run."""
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8").replace("\\\n", " ")
    steps = []
    for line in text.splitlines():
        line = re.sub(r"\s+", " ", line).strip()
        if line.startswith("step "):
            steps.append(re.sub(r'^step "[^"]*" ', "", line))
    return steps


def test_the_contributors_page_describes_every_step_of_ci() -> None:
    page = re.sub(r"\s+", " ", (ROOT / "docs" / "development.md").read_text(encoding="utf-8"))
    steps = _ci_steps()
    assert len(steps) >= 15, steps
    unexplained = [c for c in steps if not any(re.search(p, c) for p, _ in CI_STEPS)]
    assert not unexplained, f"steps of .ci/run docs/development.md does not describe: {unexplained}"
    for pattern, phrase in CI_STEPS:
        if any(re.search(pattern, command) for command in steps):
            assert phrase in page, f"docs/development.md lacks {phrase!r}"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").replace("\\\n", " ")
    packages = re.search(r"ensure_debs ([^\n]*)", ci)
    assert packages, "no ensure_debs line in .ci/run"
    for package in re.sub(r"\s+", " ", packages[1]).split():
        name = {"openjdk-17-jre-headless": "Java 17", "etcd-server": "etcd"}.get(package, package)
        name = {"postgresql": "PostgreSQL", "gcc-aarch64-linux-gnu": "aarch64 cross-compiler"}.get(
            name, name
        )
        if package.startswith(("qemu", "binfmt")):
            name = "qemu"
        assert name in page, f"docs/development.md does not name the package {package}"


def test_the_readme_leaves_ci_to_the_contributors_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/development.md" in readme
    assert "CI (`.ci/run`" not in readme


def test_the_classifiers_name_every_python_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    tested = {"3.11"} | set(re.findall(r"\.ci/(?:suite|forky) (3\.\d+)", ci))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    named = {c.rsplit(" :: ", 1)[1] for c in project["classifiers"] if c.count(" :: ") == 2}
    assert tested <= named, f"CI runs {sorted(tested - named)}, which no classifier names"
    assert "Programming Language :: Python :: Free Threading :: 2 - Beta" in project["classifiers"]
    assert "tools/build-cpython-ft.sh" in ci or ".ci/freethreaded" in ci
