"""The texts that become pages of the documentation, for the tests of
test_doc_*.py: the reST files of doc/, the benchmark reports, the gallery
examples' text, and the docstrings the API reference renders."""

import ast
import importlib
import inspect
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "doc"
EXAMPLES = sorted((ROOT / "examples").glob("plot_*.py"))
RESULTS = sorted((ROOT / "benchmarks" / "results").glob("*.md"))


def rst_pages():
    """The hand-written reST pages (not Sphinx's or the gallery's output)."""
    skip = {"_build", "auto_examples", "generated", "gen_modules"}
    return sorted(
        p for p in DOC.rglob("*.rst")
        if not skip & set(p.relative_to(DOC).parts) and p.name != "sg_execution_times.rst"
    )


def gallery_text_blocks(path):
    """The reST that sphinx-gallery renders from an example as text: its
    docstring and the comment blocks that start with a ``# %%`` line."""
    source = path.read_text(encoding="utf-8")
    blocks = [ast.get_docstring(ast.parse(source), clean=True) or ""]
    lines = source.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# %%"):
            block = []
            for following in lines[i + 1:]:
                if not following.startswith("#"):
                    break
                block.append(following[2:] if following.startswith("# ") else following[1:])
            blocks.append("\n".join(block))
    return blocks


def api_objects():
    """Every module, class, function and method the API reference renders,
    by dotted name: what doc/api.rst lists, and the public members of its
    classes that the package defines (autodoc shows inherited members too)."""
    text = (DOC / "api.rst").read_text(encoding="utf-8")
    names, module = [], None
    for line in text.splitlines():
        if m := re.match(r"\.\. automodule:: (\S+)", line):
            names.append(m.group(1))
        elif m := re.match(r"\.\. currentmodule:: (\S+)", line):
            module = m.group(1)
        elif m := re.match(r"   ([A-Za-z_]\w*)$", line):
            names.append(f"{module}.{m.group(1)}")
    objects = {}
    for name in names:
        try:
            obj = importlib.import_module(name)
        except ImportError:
            module_name, attr = name.rsplit(".", 1)
            obj = getattr(importlib.import_module(module_name), attr)
        objects[name] = obj
        if inspect.isclass(obj):
            for member_name, member in inspect.getmembers(obj):
                if member_name.startswith("_"):
                    continue
                owner = next(c for c in obj.__mro__ if member_name in vars(c))
                if owner.__module__.startswith("sklearn_ltr") and getattr(member, "__doc__", None):
                    objects[f"{name}.{member_name}"] = getattr(obj, member_name)
    return objects
