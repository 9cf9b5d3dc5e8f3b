"""No command opens a network connection.

Each command runs as a subprocess whose ``sitecustomize`` (on PYTHONPATH,
from a temporary folder) replaces ``socket.socket.connect``/``connect_ex``/
``sendto``, ``socket.create_connection``, ``getaddrinfo`` and
``gethostbyname`` with functions that record the attempt and raise. Local
IPC (AF_UNIX sockets, as multiprocessing uses) is let through. Every
subprocess proves the guard was active by writing a marker; the test then
checks exit codes, that no attempt was recorded and that "NETWORK-BLOCKED"
appears nowhere in the output. The eight commands run in parallel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import gitrepo
from conftest import REPO, run

MLREPRO = Path(sys.executable).parent / "mlrepro"
SITECUSTOMIZE = textwrap.dedent('''
    """Test guard: refuse every network connection, record every attempt."""
    import os
    import socket

    _LOG = os.environ["MLREPRO_NET_LOG"]
    with open(_LOG + ".loaded", "a", encoding="utf-8") as fh:
        fh.write(f"{os.getpid()}\\n")


    def _record(what, args):
        with open(_LOG, "a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()} {what} {args!r}\\n")
        raise OSError(f"NETWORK-BLOCKED by the no-network test: {what} {args!r}")


    def _method(name):
        original = getattr(socket.socket, name)

        def guarded(self, *args):
            if self.family == getattr(socket, "AF_UNIX", None):
                return original(self, *args)
            return _record(f"socket.{name}", args)
        return guarded


    for _name in ("connect", "connect_ex", "sendto"):
        setattr(socket.socket, _name, _method(_name))


    def _function(name):
        def guarded(*args, **kwargs):
            return _record(name, args)
        return guarded


    for _name in ("create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex"):
        setattr(socket, _name, _function(_name))
''')


def test_no_command_opens_a_network_connection(tmp_path):
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    log = tmp_path / "network.log"

    # inputs, made in-process
    subs = REPO / "submissions"
    results, agreement = tmp_path / "results.csv", tmp_path / "agreement.csv"
    verified, post = tmp_path / "verified.csv", tmp_path / "post.csv"
    versions = tmp_path / "versions.csv"
    run("ingest", subs, "--root", subs, "-o", results, "--versions-out", versions, expect=0)
    run("partition", results, "--verified-out", verified, "--post-deadline-out", post, expect=0)
    repo = tmp_path / "repo"
    shutil.copytree(subs, repo / "submissions")
    gitrepo.base_then_branch(repo, "No Network", "change")
    source = tmp_path / "results-dell.csv"
    lines = (REPO / "tests" / "data" / "results-dell.csv").read_text(encoding="utf-8").splitlines()
    # the rows within ±4% of AMD's official v6.0 references, so that the gate passes
    source.write_text("\n".join(line for line in lines if "Interactive" not in line) + "\n", encoding="utf-8")
    run("submit", source, "--submitter", "Dell", "--round", "v6.0", "--status", "post-deadline",
        "--submitted-at", "2026-03-20T10:00:00+00:00", "--root", repo / "submissions", expect=0)

    params = REPO / "params.yaml"
    commands = {   # name: (arguments, working folder, expected exit code)
        "ingest": (["ingest", subs, "--root", subs, "-o", tmp_path / "again.parquet"], tmp_path, 0),
        "validate": (["validate", subs, "--root", subs], tmp_path, 0),
        "compare": (["compare", results, "-o", agreement, "--params", params], tmp_path, 1),
        "partition": (["partition", results, "--verified-out", tmp_path / "v2.csv",
                       "--post-deadline-out", tmp_path / "p2.csv"], tmp_path, 0),
        "gate": (["gate", "--base", "main", "--format", "json"], repo, 0),   # policy: the base's
        "claims": (["claims", REPO / "claims.yaml", results, "--params", params], tmp_path, 1),
        "scaling": (["scaling", results, "--params", params], tmp_path, 0),
        "audit": (["audit", verified, post, "-o", tmp_path / "audit", "--versions", versions],
                  tmp_path, 0),
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "MLREPRO_"))}
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(guard), env.get("PYTHONPATH")])),
               MLREPRO_NET_LOG=str(log), DVC_NO_ANALYTICS="1")
    # loopback only: should the guard fail, nothing leaves the machine
    probe = subprocess.run([sys.executable, "-c", "import socket; socket.create_connection(('127.0.0.1', 9), 1)"],
                           env=env, capture_output=True, text=True)    # the guard itself works
    assert probe.returncode != 0 and "NETWORK-BLOCKED" in probe.stderr and log.exists()
    log.unlink()
    running = {name: subprocess.Popen([str(MLREPRO), *map(str, args)], cwd=cwd, env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for name, (args, cwd, _) in commands.items()}
    outcomes = {name: (proc.wait(timeout=300), *proc.communicate()) for name, proc in running.items()}

    loaded = (tmp_path / "network.log.loaded").read_text(encoding="utf-8").split()
    assert len(loaded) >= len(commands), "the guard did not load in every command"
    for name, (code, out, err) in outcomes.items():
        assert "Traceback" not in err, (name, err)
        assert "NETWORK-BLOCKED" not in out + err, (name, out, err)
        assert "network" not in err.lower(), (name, err)       # no library's own network error either
        assert code == commands[name][2], (name, code, out[-2000:], err[-2000:])
    assert not log.exists(), log.read_text(encoding="utf-8")
