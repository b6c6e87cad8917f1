"""run.sh takes the Debian archive from the machine's own apt configuration
(one-line sources.list entries and deb822 .sources files), never from a
name written in the repository. No download: `run.sh --mirror` prints what
it would use."""
import os
import subprocess
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parent / "run.sh"


def mirror(etc: Path, suite="bookworm", **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_DEBIAN")}
    env.update(CAIRN_APT_ETC=str(etc), CAIRN_DEBIAN_SUITE=suite, **extra)
    return subprocess.run([str(RUN), "--mirror"], env=env, capture_output=True, text=True)


@pytest.fixture
def etc(tmp_path):
    (tmp_path / "sources.list.d").mkdir()
    return tmp_path


def test_deb822_sources_file(etc):
    (etc / "sources.list.d" / "debian.sources").write_text(
        "# a comment\n"
        "Types: deb\nURIs: http://security.example/debian-security\n"
        "Suites: bookworm-security\nComponents: main\n\n"
        "Types: deb deb-src\nURIs: http://off.example/debian\nSuites: bookworm\n"
        "Components: main\nEnabled: no\n\n"
        "Types: deb\n# between fields\nURIs:\n http://archive.example/debian\n"
        "Suites: bookworm bookworm-updates\nComponents: main contrib\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
    r = mirror(etc)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "http://archive.example/debian bookworm\n"


def test_one_line_entries_with_options_and_comments(etc):
    (etc / "sources.list").write_text(
        "# deb http://commented.example/debian bookworm main\n"
        "deb http://other.example/debian trixie main\n"
        "deb http://contrib.example/debian bookworm contrib\n"
        "deb [arch=amd64 signed-by=/k.gpg] http://line.example/debian bookworm main # x\n")
    (etc / "sources.list.d" / "z.sources").write_text(
        "Types: deb\nURIs: http://later.example/debian\nSuites: bookworm\nComponents: main\n")
    r = mirror(etc)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "http://line.example/debian bookworm\n"    # sources.list comes first


def test_none_configured_names_the_fix(etc):
    (etc / "sources.list.d" / "x.list").write_text("deb http://other.example/debian trixie main\n")
    r = mirror(etc)
    assert r.returncode == 2
    assert "no archive for bookworm main" in r.stderr
    assert "set CAIRN_DEBIAN_MIRROR" in r.stderr


def test_environment_overrides_the_configuration(etc):
    r = mirror(etc, CAIRN_DEBIAN_MIRROR="http://chosen.example/debian")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "http://chosen.example/debian bookworm\n"
