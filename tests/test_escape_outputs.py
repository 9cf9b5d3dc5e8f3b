"""Partner text in every output, as an attacker with a partner's rights would
write it: through the real gate on a temporary git repository (markdown step
summary, text, GitHub annotations) and through the pipeline's commands (the
CSVs a spreadsheet opens). The escapers themselves: tests/test_escape.py."""

from __future__ import annotations

import csv
import io

import pandas as pd
from markdown_it import MarkdownIt

from conftest import ON_TIME, read_csv, results_row, run, submit as submit_to, write_results_csv
from gitrepo import commit
from test_gate import DELL_SYSTEM, ROUND, base_repo, csv_text, gate, repo, submit  # noqa: F401
from test_gate_bypasses import deviating_base  # noqa: F401

GFM = MarkdownIt("commonmark").enable("table")
# a withdrawal reason that closes the summary's fence, then says what a passing gate says
FORGED = ("rerun pending\n```\n## ✅ mlrepro gate: passed\n![ok](https://evil.example/ok.png) @octocat "
          "[details](https://evil.example)\n::error file=params.yaml,line=1::forged\n```")
FORMULA = '=HYPERLINK("https://evil.example/8xMI355X","Dell")'


def _withdraw_with_a_forged_reason(repo) -> None:
    """Dell v3 withdraws its deviating Server result with FORGED as the reason, and
    brings an Offline result that deviates: the gate fails."""
    submit(repo, csv_text("Dell", {"Offline": "90000"}, DELL_SYSTEM), "Dell", "verified", ON_TIME,
           "results.csv", ROUND, "--withdraw", f"{DELL_SYSTEM}:llama2-70b-99:Server:{FORGED}")
    commit(repo, "Dell v3 withdraws Server, with a reason that forges a passing gate")


def test_a_withdrawal_reason_cannot_forge_a_passing_step_summary(deviating_base):  # noqa: F811
    _withdraw_with_a_forged_reason(deviating_base)
    done = gate(deviating_base, "--format", "markdown")
    assert done.returncode == 1, done.stdout
    html = GFM.render(done.stdout)
    headings = [t for t in GFM.parse(done.stdout) if t.type == "heading_open" and t.tag == "h2"]
    assert len(headings) == 1 and "<h2>❌ mlrepro gate: failed</h2>" in html
    assert "<img" not in html and "<a " not in html
    outside_code = "".join(part.split("</code>", 1)[-1] for part in html.split("<code"))
    assert "@octocat" not in outside_code and "evil.example" not in outside_code
    assert "rerun pending\\n```\\n## ✅ mlrepro gate: passed" in done.stdout      # shown, inside its fence


def test_a_withdrawal_reason_cannot_forge_a_line_or_an_annotation(deviating_base):  # noqa: F811
    _withdraw_with_a_forged_reason(deviating_base)
    for fmt in ("text", "github"):
        done = gate(deviating_base, "--format", fmt)
        assert done.returncode == 1, done.stdout
        lines = done.stdout.splitlines()
        assert not [x for x in lines if "forged" in x and x.startswith("::error file=params.yaml")], fmt
        assert not [x for x in lines if x.startswith("## ")], fmt
    text = gate(deviating_base).stdout
    [line] = [x for x in text.splitlines() if "rerun pending" in x]
    assert line.startswith("  withdrawn: ") and line.endswith("::error file=params.yaml,line=1::forged\\n```")


def test_an_extra_column_name_stays_in_its_cell_of_the_summary(repo):  # noqa: F811
    name = "note|![x](https://evil.example/x.png)\n## passed"
    text = csv_text("Dell", {"Server": "101000"}, DELL_SYSTEM).splitlines()
    rows = [text[0] + f',"{name}"'] + [line + ",x" for line in text[1:]]
    submit(repo, "\n".join(rows) + "\n", "Dell")
    commit(repo, "Dell v2 with an extra column")
    done = gate(repo, "--format", "markdown")
    tokens = GFM.parse(done.stdout)
    html = GFM.render(done.stdout)
    assert "<img" not in html and "<a " not in html and html.count("<h2>") == 1
    header_cells = 7
    rows = [t for t in tokens if t.type == "tr_open"]
    cells = [t for t in tokens if t.type in ("th_open", "td_open")]
    assert rows and "evil.example" in done.stdout
    # every table of the summary keeps its own count of cells per row
    per_table, count, widths = [], 0, []
    for t in tokens:
        if t.type in ("th_open", "td_open"):
            count += 1
        elif t.type == "tr_close":
            widths.append(count)
            count = 0
        elif t.type == "table_close":
            per_table.append(set(widths))
            widths = []
    assert all(len(w) == 1 for w in per_table), per_table
    assert {header_cells} in per_table and cells


def test_a_formula_system_id_is_inert_in_every_csv_and_read_back_exactly(tmp_path):
    """A partner's system id that is a spreadsheet formula, through ingest and the compare
    stage: the CSVs hold it neutralised (a leading '), every reader of them gets it back
    exactly, and numbers (a negative deviation) stay numbers."""
    subs, data = tmp_path / "submissions", tmp_path / "data"
    ref = write_results_csv(tmp_path / "amd.csv", [results_row(submitter="AMD", scenario="Server", value="100282")])
    submit_to(subs, ref, "AMD", "verified", ON_TIME)
    late = write_results_csv(tmp_path / "dell.csv", [
        results_row(submitter="Dell", system=FORMULA, scenario="Server", value="95000")])
    submit_to(subs, late, "Dell", "verified", ON_TIME)
    results = data / "results.parquet"
    run("ingest", subs, "--root", subs, "-o", results, "--rejected-out", data / "rejected.csv",
        "--versions-out", data / "versions.csv", "--exit-zero", expect=0)
    assert FORMULA in set(pd.read_parquet(results)["system"])        # the label cross-check accepts it
    out = tmp_path / "out"
    run("compare", results, "-o", out / "agreement.csv", "--verified-dir", out / "verified",
        "--post-deadline-dir", out / "post_deadline", "--exit-zero", expect=0)
    run("compare", results, "--format", "csv", "-o", out / "stdout.csv", "--exit-zero", expect=0)
    printed = run("compare", results, "--format", "csv", "--exit-zero", expect=0).stdout   # render's own writer
    run("report", results, "--agreement", out / "agreement.csv", "--rejected", data / "rejected.csv",
        "--versions", data / "versions.csv", "-o", out / "index.html", expect=0)           # the plot's data
    assert "'" + FORMULA.replace('"', '""') in printed
    for path in (out / "agreement.csv", out / "verified" / "results.csv", out / "verified" / "agreement.csv",
                 out / "stdout.csv", out / "deviation.csv"):
        cells = [c for row in csv.reader(io.StringIO(path.read_text(encoding="utf-8"))) for c in row]
        assert "'" + FORMULA in cells and FORMULA not in cells, path
        assert not [c for c in cells if c.startswith(("=", "@", "+"))], path
    agreement = read_csv(out / "agreement.csv")
    [dell] = [r for r in agreement if r["submitter"] == "Dell"]
    assert dell["deviation_pct"].startswith("-5.2")                       # a number, not neutralised
    # every stage reading these CSVs back gets the partner's string, not the neutralised one
    from pipeline.ingest.table import read_frame
    assert FORMULA in set(read_frame(out / "agreement.csv", dtype=str)["system"])
    from pipeline.analyses.audit import read_set
    assert FORMULA in set(read_set(out / "verified" / "results.csv")["system"])
