"""No reST markup shows as literal text in the rendered documentation.

reST inline markup is recognised only at word boundaries: after "NDCG@" a
pair of double backquotes is not markup, and the page shows the backquotes.
Sphinx does not warn about that, so these tests render, with docutils alone,
every text that becomes a page: the reST files of doc/, the public
docstrings (through numpydoc, as the API reference shows them) and the text
blocks of the gallery examples, and look for markup left in the text.

Sphinx's own roles and directives are replaced by stand-ins: a role becomes
the literal text it names, a directive with reST content has its content
parsed, and any other directive (code, toctrees, autodoc) is dropped.
"""

import inspect
import re

import pytest
from _doc_sources import DOC, EXAMPLES, api_objects, gallery_text_blocks, rst_pages

docutils = pytest.importorskip("docutils")
pytest.importorskip("numpydoc")

from docutils import nodes  # noqa: E402
from docutils.core import publish_doctree  # noqa: E402
from docutils.parsers.rst import Directive, directives, roles  # noqa: E402
from numpydoc.docscrape_sphinx import get_doc_object  # noqa: E402

SPHINX_ROLES = (
    "func meth class attr mod obj data exc ref doc term any numref envvar option "
    "file samp kbd abbr command program dfn guilabel menuselection"
).split()
CONTENT_DIRECTIVES = "only seealso versionadded versionchanged deprecated glossary".split()
DROPPED_DIRECTIVES = (
    "code-block sourcecode literalinclude toctree autosummary automodule autoclass "
    "autofunction automethod autoattribute autodata currentmodule module highlight "
    "minigallery index tabularcolumns plot testcode testoutput doctest"
).split()


def _stub_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    target = re.sub(r"\s*<[^>]*>$", "", text).lstrip("~!")
    return [nodes.literal(rawtext, target)], []


class _AnyOptions(dict):
    def __missing__(self, key):
        return directives.unchanged


class _Dropped(Directive):
    has_content = True
    optional_arguments = 10
    final_argument_whitespace = True
    option_spec = _AnyOptions()

    def run(self):
        return []


class _Content(_Dropped):
    def run(self):
        node = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


def _register():
    for name in SPHINX_ROLES:
        roles.register_local_role(name, _stub_role)
        roles.register_local_role(f"py:{name}", _stub_role)
    for name in DROPPED_DIRECTIVES:
        directives.register_directive(name, _Dropped)
    for name in CONTENT_DIRECTIVES:
        directives.register_directive(name, _Content)


_register()

# Nodes whose text is shown as written.
_VERBATIM = (
    nodes.literal, nodes.literal_block, nodes.doctest_block, nodes.comment, nodes.raw,
    nodes.math, nodes.math_block, nodes.system_message,
)
# What markup looks like when it was not recognised.
LEAKED = re.compile(
    r"``|`[^`\s][^`]*`_?|\|[a-z]\w*\|_|:(?:py:)?(?:%s):" % "|".join(SPHINX_ROLES + ["math"])
)


def leaked_markup(text, source):
    """The passages of ``text`` (reST) that render with markup showing."""
    doctree = publish_doctree(
        ".. default-role:: literal\n\n" + text,
        source_path=str(source),
        settings_overrides={"report_level": 5, "halt_level": 5, "file_insertion_enabled": False},
    )
    found = []
    for node in doctree.findall(nodes.Text):
        if any(isinstance(parent, _VERBATIM) for parent in _ancestors(node)):
            continue
        for match in LEAKED.finditer(node.astext()):
            start = max(match.start() - 30, 0)
            found.append(node.astext()[start:match.end() + 30].replace("\n", " "))
    for node in doctree.findall(nodes.problematic):
        found.append(node.astext())
    return found


def _ancestors(node):
    while node is not None:
        yield node
        node = node.parent


# -- what is rendered -----------------------------------------------------------


def docstring_rst(obj):
    """The reST numpydoc makes of a docstring, as the API pages show it."""
    if inspect.ismodule(obj):
        return inspect.getdoc(obj) or ""
    what = "class" if inspect.isclass(obj) else "function"
    if isinstance(obj, property):
        what = "attribute"
    return str(get_doc_object(obj, what=what, config={"show_class_members": False}))


API = api_objects()


# -- the tests ----------------------------------------------------------------------


def test_the_check_finds_markup_that_does_not_render():
    assert leaked_markup("NDCG@``validation_ndcg_k``, the cutoff.", "t")
    assert leaked_markup("as in:func:`~sklearn_ltr.metrics.ndcg_score`.", "t")
    assert not leaked_markup("NDCG at ``validation_ndcg_k`` (:func:`ndcg_score`).", "t")
    assert not leaked_markup("NDCG@\\ ``validation_ndcg_k``, or `k`.", "t")


@pytest.mark.parametrize("page", rst_pages(), ids=lambda p: str(p.relative_to(DOC)))
def test_doc_pages_show_no_markup(page):
    found = leaked_markup(page.read_text(encoding="utf-8"), page)
    assert not found, "\n".join(found)


def test_the_api_reference_is_all_checked():
    for name in ("sklearn_ltr.LambdaMARTRanker", "sklearn_ltr.YetiRankRanker",
                 "sklearn_ltr.LambdaMARTRanker.fit", "sklearn_ltr.metrics.ndcg_score",
                 "sklearn_ltr.export"):
        assert name in API


@pytest.mark.parametrize("name", sorted(API))
def test_docstrings_show_no_markup(name):
    found = leaked_markup(docstring_rst(API[name]), name)
    assert not found, "\n".join(found)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_gallery_text_shows_no_markup(example):
    for block in gallery_text_blocks(example):
        found = leaked_markup(block, example)
        assert not found, "\n".join(found)
