"""When no round is open: the maintainer opens the next one as docs/maintainer.md
says ("Open the next round"), then a partner follows docs/partner.md into it,
and the version ends verified. In a fresh copy of the project (a git repository
on main), with the commands as the docs print them, at today's date: every
shipped round's deadline has passed, so the made-up round v9.1 is open from
yesterday to a deadline 60 days ahead."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import yaml

from conftest import REPO
from test_docs import _env, fresh_copy

ROUND = "v9.1"
TEMPLATE = (REPO / "docs" / "templates" / "results.csv").read_text(encoding="utf-8")
# the newest shipped rules have llama2-70b-99.9, not -99: the partner's results are of the round's models
PARTNER_CSV = TEMPLATE.replace("llama2-70b-99,", "llama2-70b-99.9,")
REFERENCE_CSV = (PARTNER_CSV.replace("ExamplePartner", "AMD").replace("ExampleServer_8xMI355X", "8xMI355X_2xEPYC_9575F")
                 .replace(",102750,", ",103480,").replace(",99120,", ",100282,"))


def sh(work: Path, command: str, expect: int = 0) -> str:
    # the copy's .venv is the project's (an editable install reading the project's schemas/):
    # MLREPRO_SCHEMAS points it at the copy's, as a clone's own install reads its own
    env = {**_env(work), "MLREPRO_SCHEMAS": str(work / "schemas")}
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", command], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == expect, f"{command}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


def newest_rules(work: Path) -> str:
    rounds = yaml.safe_load((work / "schemas" / "rounds.yaml").read_text(encoding="utf-8"))["rounds"]
    return max(rounds, key=lambda name: tuple(int(n) for n in name[1:].split(".")))


def open_the_round(work: Path) -> None:
    """docs/maintainer.md, "Open the next round", steps 1 to 4."""
    now = datetime.now(timezone.utc).replace(microsecond=0)
    rounds_file = work / "schemas" / "rounds.yaml"
    newest = newest_rules(work)
    rounds_file.write_text(rounds_file.read_text(encoding="utf-8") + (
        f"  {ROUND}:\n"
        f'    opens: "{(now - timedelta(days=1)).isoformat()}"\n'
        f'    submission_deadline: "{(now + timedelta(days=60)).isoformat()}"\n'
        f'    publication_date: "{(now + timedelta(days=90)).date().isoformat()}"\n'
        "    estimated:\n      submission_deadline: true\n      publication_date: true\n"
        "    note: a made-up next round for the test of opening one\n"), encoding="utf-8")
    rules = yaml.safe_load((work / "schemas" / "rules" / f"{newest}.yaml").read_text(encoding="utf-8"))
    rules["round"] = ROUND
    (work / "schemas" / "rules" / f"{ROUND}.yaml").write_text(yaml.safe_dump(rules, sort_keys=False), encoding="utf-8")
    (work.parent / "amd.csv").write_text(REFERENCE_CSV, encoding="utf-8")
    sealed = sh(work, f"mlrepro submit ../amd.csv --submitter AMD --round {ROUND}")
    assert f"created submissions/{ROUND}/AMD/v1 (verified)" in sealed
    sh(work, f'git add schemas submissions/{ROUND}/AMD && git commit -q -m "open {ROUND}"')


def test_a_made_up_next_round_is_opened_and_a_partner_submits_into_it_verified(tmp_path):
    work = fresh_copy(tmp_path)
    # before: every deadline has passed, and the next round is a usage error naming the rounds
    refused = sh(work, f"mlrepro submit docs/templates/results.csv --submitter ExamplePartner --round {ROUND} "
                       "--dry-run", expect=2)
    assert f"--round {ROUND}: no round of that name in schemas/rounds.yaml; known: " in refused
    open_the_round(work)
    assert yaml.safe_load((work / "schemas" / "rounds.yaml").read_text(encoding="utf-8"))["rounds"][ROUND]
    # the partner's journey (docs/partner.md), into the new round
    (work.parent / "results.csv").write_text(PARTNER_CSV, encoding="utf-8")
    dry = sh(work, f"mlrepro submit ../results.csv --submitter ExamplePartner --round {ROUND} --dry-run")
    assert "dry run, nothing sealed: submit would seal it verified" in dry
    sealed = sh(work, f"mlrepro submit ../results.csv --submitter ExamplePartner --round {ROUND}")
    assert f"created submissions/{ROUND}/ExamplePartner/v1 (verified)" in sealed
    sh(work, f"git checkout -q -b ExamplePartner-{ROUND} && git add submissions/{ROUND}/ExamplePartner && "
             f'git commit -q -m "ExamplePartner: {ROUND} results"')
    gate = json.loads(sh(work, "mlrepro gate --base main --format json"))
    assert (gate["summary"]["verdict"], gate["summary"]["errors"]) == ("pass", 0), gate["findings"]
    assert [(r["verdict"], r["label"]) for r in gate["rows"]] == [("agree", "verified"), ("agree", "verified")]
    text = sh(work, "mlrepro gate --base main")
    assert text.rstrip().endswith("gate: passed: 1 version(s), 2 result(s), 2 agree, 0 deviate, 0 error(s)")
    assert "unverified" not in text
