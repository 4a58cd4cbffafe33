"""The package's layers, read from the source: imports run one way only
(utilities -> engine -> objectives, metrics, datasets -> estimators ->
persistence, export, inspection, dask -> command line), imports inside
functions included, and no module takes part in an import cycle."""

import ast

import pytest
from _package_modules import package_modules

# The layer of each top-level part of the package. A part may import parts of
# its own layer or of lower ones, never of a higher one.
LAYERS = {
    "_version": 0, "exceptions": 0, "_utils": 0,
    "_gbdt": 1,
    "_objectives": 2, "metrics": 2, "datasets": 2,
    "_rankers": 3, "calibration": 3, "compose": 3,
    "persistence": 4, "export": 4, "inspection": 4, "dask": 4,
    "cli": 5, "__main__": 5, "__init__": 6,
}

MODULES = package_modules()


def _imports(module):
    """The package's modules that ``module`` imports anywhere in its code."""
    path, is_package = MODULES[module]
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    here = module.split(".") if is_package else module.split(".")[:-1]
    targets = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # ``from package import name`` imports the module package.name
            # when there is one, else the package itself.
            names = [f"{source}.{a.name}" if f"{source}.{a.name}" in MODULES else source
                     for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name.startswith("sklearn_ltr") and name != module:
                targets.add(name)
    return targets


GRAPH = {module: _imports(module) for module in MODULES}


def _part(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_part_of_the_package_has_a_layer():
    assert {_part(m) for m in MODULES} == set(LAYERS)


def test_the_top_level_holds_only_public_modules_and_layer_packages():
    top = {_part(m) for m in MODULES if m.count(".") == 1 and not MODULES[m][1]}
    assert top == {"__main__", "_version", "calibration", "compose", "exceptions", "inspection"}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_never_reach_a_higher_layer(module):
    upward = sorted(t for t in GRAPH[module] if LAYERS[_part(t)] > LAYERS[_part(module)])
    assert not upward, f"{module} (layer {LAYERS[_part(module)]}) imports {upward}"


def _cycle(graph):
    """One cycle of ``graph`` as a list of nodes, or None."""
    state = {}
    for start in sorted(graph):
        if start in state:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        state[start] = "open"
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = "done"
                stack.pop()
                path.pop()
            elif state.get(child) == "open":
                return path[path.index(child):] + [child]
            elif child not in state:
                state[child] = "open"
                stack.append((child, iter(sorted(graph.get(child, ())))))
                path.append(child)
    return None


def test_no_module_takes_part_in_an_import_cycle():
    assert _cycle(GRAPH) is None, " -> ".join(_cycle(GRAPH))


def test_the_parts_of_one_layer_import_each_other_one_way_only():
    parts = {}
    for module, targets in GRAPH.items():
        parts.setdefault(_part(module), set()).update(
            _part(t) for t in targets if _part(t) != _part(module))
    assert _cycle(parts) is None, " -> ".join(_cycle(parts))


def test_the_cycle_finder_finds_cycles():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_import_reader_sees_imports_inside_functions():
    # persistence's reader imports the registry at module level, and the
    # rankers' base module imports its file writer: both are seen.
    assert "sklearn_ltr._rankers.registry" in GRAPH["sklearn_ltr.persistence.ranker_file"]
    assert "sklearn_ltr._rankers.model_file" in GRAPH["sklearn_ltr._rankers.base"]
    # An import inside a function: the CLI reads the registry in _make_estimator.
    assert "sklearn_ltr._rankers.registry" in GRAPH["sklearn_ltr.cli.inputs"]
