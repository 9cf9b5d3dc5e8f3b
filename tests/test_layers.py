"""The package's floors: a module imports only from its own floor or the
floors below it (import-linter's ``layers`` contract in pyproject.toml, which
sees imports inside functions too), no two modules import each other through
any chain, and the top of pipeline/ stays a handful of floors."""

from __future__ import annotations

import contextlib
import io

import grimp
from importlinter.cli import lint_imports

from conftest import REPO


def test_every_import_goes_down_the_floors_of_pyproject():
    out = io.StringIO()
    with contextlib.chdir(REPO):
        with contextlib.redirect_stdout(out):
            code = lint_imports(config_filename=str(REPO / "pyproject.toml"), no_cache=True, no_logo=True)
    assert code == 0, out.getvalue()


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(root: str) -> None:
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                    break
                if child in on_stack:
                    low[module] = min(low[module], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[module])
                if low[module] == index[module]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_module_imports_itself_through_a_chain():
    graph = grimp.build_graph("pipeline", exclude_type_checking_imports=True, cache_dir=None)
    assert _cycles(graph) == []


def test_the_cycle_finder_sees_a_circle():
    graph = grimp.ImportGraph()
    for a, b in (("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d")):
        graph.add_import(importer=a, imported=b)
    assert _cycles(graph) == [["p.a", "p.b", "p.c"]]


def test_the_top_of_the_package_is_a_few_floors():
    top = sorted(p.name for p in (REPO / "pipeline").iterdir()
                 if p.name != "__pycache__" and (p.is_dir() or p.suffix == ".py"))
    assert len(top) <= 14, top
