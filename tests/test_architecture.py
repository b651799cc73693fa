"""The layout follows the data flow (README's Layout): import-linter's layers (pyproject.toml),
no import circle between modules (imports inside functions count), small modules, and few
modules directly in operators_lib/."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 600
# Modules over MAX_LINES (none now; a module that grows over it is split).
OVER_MAX: set[str] = set()


def test_layers_contract_is_kept():
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(lint), "--no-cache"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]


def _circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(
                        child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.append(m)
                    if m == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circle():
    sys.path.insert(0, str(REPO))
    graph = grimp.build_graph("operators_lib", "jobs", include_external_packages=False)
    assert _circles(graph) == []


def test_the_circle_finder_finds_a_circle():
    graph = grimp.ImportGraph()
    for a, b in (("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d")):
        graph.add_import(importer=a, imported=b)
    assert _circles(graph) == [["p.a", "p.b", "p.c"]]


def test_modules_are_small_and_few_at_the_top():
    package = REPO / "operators_lib"
    sizes = {str(p.relative_to(package)): len(p.read_text().splitlines())
             for p in package.rglob("*.py")}
    over = {name for name, n in sizes.items() if n > MAX_LINES}
    assert over <= OVER_MAX, f"modules over {MAX_LINES} lines: {sorted(over - OVER_MAX)}"
    assert over == OVER_MAX, f"no longer over {MAX_LINES} lines: {sorted(OVER_MAX - over)}"
    top = [p.name for p in package.glob("*.py")]
    assert len(top) <= 12, sorted(top)


def test_the_list_of_checks_is_current():
    """tests/CHECKS.txt lists every test id and every corpus case's test: a moved, renamed or
    dropped check shows in its diff (regenerate: PYTHONPATH=. python tests/list_checks.py)."""
    from tests.list_checks import render

    now = render()
    assert "cases in no test id: none" in now, now.splitlines()[2]
    assert (REPO / "tests" / "CHECKS.txt").read_text() == now, (
        "tests/CHECKS.txt is stale: PYTHONPATH=. python tests/list_checks.py")


# Each step of a run, in one place (runs/lifecycle.py), and the state primitives they wrap: a
# state command's stream and sweep too go through them (a sweep run, Steps.SWEEP).
STEPS = {f"operators_lib.runs.{module}.{step}" for module, step in (
    ("staging", "stage"), ("streaming", "offer"), ("streaming", "stream"),
    ("streaming", "materialize"), ("checking", "parity"), ("publishing", "publish"),
    ("recording", "record"))} | {f"operators_lib.state.lifecycle.{primitive}" for primitive in (
        "stage", "offer", "offer_sweep", "stream", "record_run")}
ENTRY = "operators_lib.runs.lifecycle.run"
# What jobs/ may import of runs/: the entry point, the spec, the query config, the hotspot
# rule (measure-skew: not a run), the quality gate (it reads a run's outputs: not a run), the
# state commands whose stream is a sweep run (through the entry point).
JOBS_MAY_IMPORT = {"operators_lib.runs.lifecycle", "operators_lib.runs.spec",
                   "operators_lib.runs.query_config", "operators_lib.runs.hotspot",
                   "operators_lib.runs.gating", "operators_lib.runs.compaction",
                   "operators_lib.runs.verify"}


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def _calls_and_imports(path: Path) -> tuple[list[str], set[str]]:
    """The dotted names a module calls (resolved through its imports, also those inside
    functions, and its own top-level functions) and the modules it imports from."""
    tree = ast.parse(path.read_text())
    module = _module_name(path)
    names = {node.name: f"{module}.{node.name}" for node in tree.body
             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0])
                imported.add(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                package = REPO / node.module.replace(".", "/")
                imported.add(f"{node.module}.{alias.name}"
                             if (package / f"{alias.name}.py").exists() else node.module)
    calls = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func, attrs = node.func, []
        while isinstance(func, ast.Attribute):
            attrs.insert(0, func.attr)
            func = func.value
        if isinstance(func, ast.Name) and func.id in names:
            calls.append(".".join([names[func.id], *attrs]))
    return calls, imported


def _code() -> list[Path]:
    return sorted([*(REPO / "operators_lib").rglob("*.py"), *(REPO / "jobs").glob("*.py")])


def test_each_step_of_a_run_has_one_call_site():
    sites = {step: [] for step in STEPS}
    for path in _code():
        for call in _calls_and_imports(path)[0]:
            if call in sites:
                sites[call].append(str(path.relative_to(REPO)))
    assert {step: len(where) for step, where in sites.items()} == dict.fromkeys(STEPS, 1), sites


def test_jobs_reach_runs_through_the_one_entry_point():
    for name in ("cli.py", "twinflow_job.py"):
        calls, _ = _calls_and_imports(REPO / "jobs" / name)
        assert ENTRY in calls, name
    for path in (REPO / "jobs").glob("*.py"):
        runs = {m for m in _calls_and_imports(path)[1] if m.startswith("operators_lib.runs")}
        assert runs <= JOBS_MAY_IMPORT, (path.name, runs)
