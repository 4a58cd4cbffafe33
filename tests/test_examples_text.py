"""The gallery examples' text agrees with their code, checked on the scripts
(without running them): a setting the text quotes as ``name=value`` is one
the code uses, and the early-stopping example's counts read as English."""

import ast
import re

import pytest
from _doc_sources import EXAMPLES, ROOT, gallery_text_blocks

EARLY_STOPPING = ROOT / "examples" / "plot_early_stopping.py"


def keyword_values(tree):
    """{keyword: set of constant values} of the calls in a module."""
    values = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg and isinstance(node.value, ast.Constant):
            values.setdefault(node.arg, set()).add(node.value.value)
    return values


def quoted_settings(text):
    """(name, value) of every ``name=value`` with a number the text quotes."""
    return [(name, float(value))
            for name, value in re.findall(r"``(\w+)=([-+]?\d[\d.e+-]*)``", text)]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_settings_quoted_in_the_text_are_those_of_the_code(example):
    tree = ast.parse(example.read_text(encoding="utf-8"))
    used = keyword_values(tree)
    text = "\n".join(gallery_text_blocks(example))
    for name, value in quoted_settings(text):
        if name in used:
            assert value in used[name], (
                f"the text says {name}={value:g}; the code uses {sorted(used[name])}"
            )


def test_the_early_stopping_text_names_the_patience_the_code_tries():
    source = EARLY_STOPPING.read_text(encoding="utf-8")
    tree = ast.parse(source)
    text = "\n".join(gallery_text_blocks(EARLY_STOPPING))
    (settings,) = [ast.literal_eval(node.value) for node in ast.walk(tree)
                   if isinstance(node, ast.Assign)
                   and getattr(node.targets[0], "id", None) == "settings"]
    patiences = {n_iter_no_change for n_iter_no_change, _ in settings}
    patiences |= keyword_values(tree)["n_iter_no_change"]
    stated = [int(n) for n in re.findall(r"patience of (\d+)", text)]
    stated += [int(n) for n in re.findall(r"``n_iter_no_change``\s+is (\d+)", text)]
    assert stated
    assert set(stated) <= patiences


def test_the_early_stopping_counts_of_trees_are_pluralised():
    tree = ast.parse(EARLY_STOPPING.read_text(encoding="utf-8"))
    (helper,) = [node for node in tree.body
                 if isinstance(node, ast.FunctionDef) and node.name == "trees"]
    # Outside the helper, no f-string puts a number before a fixed "trees":
    # "1 trees" would print.
    in_helper = {id(node) for node in ast.walk(helper)}
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and id(node) not in in_helper:
            for value, following in zip(node.values, node.values[1:]):
                if isinstance(value, ast.FormattedValue) and isinstance(following, ast.Constant):
                    assert not re.match(r"\s+trees\b", following.value), ast.unparse(node)
    namespace = {}
    exec(compile(ast.Module([helper], type_ignores=[]), str(EARLY_STOPPING), "exec"), namespace)
    assert namespace["trees"](1) == "1 tree"
    assert namespace["trees"](42) == "42 trees"
