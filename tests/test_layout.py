"""The package's layout holds: imports run one way (cli -> products -> engine -> kernels).

Every import between readalign's own modules is read from the source, at module
level and inside functions alike, so an import moved into a function to dodge
a circle is caught too. docs/ARCHITECTURE.md explains the floors.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[1]

FLOORS = {
    "readalign.kernels": 0, "readalign.errors": 0, "readalign._version": 0,
    "readalign.runtime": 1,
    "readalign.engine": 2, "readalign.io": 2,
    "readalign.words": 3, "readalign.bam": 3, "readalign.dbsearch": 3,
    "readalign.api": 4,
    "readalign.cli": 5, "readalign.__main__": 6, "readalign": 6,
}
"""Each package's floor: a module may import only from its own package or a lower floor."""


def _modules() -> dict[str, Path]:
    found = {}
    for base, prefix in ((ROOT / "readalign", "readalign"), (ROOT / "kernels", "readalign.kernels")):
        for path in base.rglob("*.py"):
            parts = path.relative_to(base).with_suffix("").parts
            name = ".".join((prefix, *parts))
            found[name.removesuffix(".__init__")] = path
    return found


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Modules of the package that ``name`` imports, wherever in the file."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                out.add(full if full in known else target)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m in known and m != name}


def _floor(module: str) -> tuple[str, int]:
    for prefix in sorted(FLOORS, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return prefix, FLOORS[prefix]
    raise AssertionError(f"{module}: no floor in FLOORS (add its package)")


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    return {name: _imports(name, path, set(mods)) for name, path in mods.items()}


def test_every_module_has_a_floor():
    for name in _graph():
        _floor(name)


def test_imports_go_down_never_up():
    wrong = []
    for name, deps in _graph().items():
        home, floor = _floor(name)
        for dep in deps:
            dep_home, dep_floor = _floor(dep)
            if dep_home != home and dep_floor >= floor and home != "readalign":
                wrong.append(f"{name} -> {dep}")
    assert not wrong, "imports against the layout:\n" + "\n".join(sorted(wrong))


def test_no_import_circles():
    graph = _graph()
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return path[path.index(dep):] + [dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            raise AssertionError("import circle: " + " -> ".join(cycle))


def test_the_check_sees_a_circle(tmp_path):
    """The graph reader finds imports inside functions (what a dodged circle looks like)."""
    mod = tmp_path / "m.py"
    mod.write_text("def f():\n    from .engine import batching\n")
    assert _imports("readalign.m", mod, {"readalign.engine.batching"}) == {"readalign.engine.batching"}


def test_the_list_fast_path_is_entered_through_its_package():
    """Outside ``engine/pylists`` a module imports the package (its entry point,
    ``read_in_place``, and the ``StringRows`` it returns), never the modules inside it."""
    package = "readalign.engine.pylists"
    wrong = [f"{name} -> {dep}" for name, deps in _graph().items()
             if not name.startswith(package) for dep in deps if dep.startswith(package + ".")]
    assert not wrong, "imports past the list fast path's entry point:\n" + "\n".join(sorted(wrong))


def test_the_gpu_pipeline_knows_no_kernel():
    """``engine/gpu/pipeline.py`` runs the steps object it is handed: it imports no kernel
    module and neither kind of steps (the batching layer picks them)."""
    steps = {"readalign.engine.gpu.edit", "readalign.engine.gpu.scored"}
    wrong = sorted(dep for dep in _graph()["readalign.engine.gpu.pipeline"]
                   if dep in steps or dep.startswith("readalign.kernels"))
    assert not wrong, wrong
