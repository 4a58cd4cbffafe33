"""doc/sphinxext/sklearn_links.py: references to scikit-learn objects link to
scikit-learn's stable documentation (the build has no network for
intersphinx)."""

import re
import sys

import pytest
from _doc_sources import DOC, rst_pages

docutils = pytest.importorskip("docutils")
from docutils import nodes  # noqa: E402

sys.path.insert(0, str(DOC / "sphinxext"))
from sklearn_links import _missing_reference, sklearn_url  # noqa: E402

GENERATED = "https://scikit-learn.org/stable/modules/generated/"


@pytest.mark.parametrize("target, url", [
    ("sklearn.model_selection.GridSearchCV",
     GENERATED + "sklearn.model_selection.GridSearchCV.html"),
    ("sklearn.metrics.ndcg_score", GENERATED + "sklearn.metrics.ndcg_score.html"),
    ("sklearn.pipeline.Pipeline", GENERATED + "sklearn.pipeline.Pipeline.html"),
    ("sklearn.utils.Bunch", GENERATED + "sklearn.utils.Bunch.html"),
    ("sklearn.base.BaseEstimator.set_params",
     GENERATED + "sklearn.base.BaseEstimator.html#sklearn.base.BaseEstimator.set_params"),
    ("sklearn.pipeline.Pipeline.fit",
     GENERATED + "sklearn.pipeline.Pipeline.html#sklearn.pipeline.Pipeline.fit"),
    ("sklearn.metrics", "https://scikit-learn.org/stable/api/sklearn.metrics.html"),
])
def test_importable_names(target, url):
    assert sklearn_url(target) == url


def test_names_this_scikit_learn_lacks_go_by_their_spelling():
    assert sklearn_url("sklearn.model_selection.FutureSplitter") == (
        GENERATED + "sklearn.model_selection.FutureSplitter.html")
    assert sklearn_url("sklearn.model_selection.FutureSplitter.split") == (
        GENERATED + "sklearn.model_selection.FutureSplitter.html"
        "#sklearn.model_selection.FutureSplitter.split")
    assert sklearn_url("sklearn.metrics.future_score") == (
        GENERATED + "sklearn.metrics.future_score.html")


def test_other_and_private_names_are_left_alone():
    assert sklearn_url("sklearn_ltr.LambdaMARTRanker") is None
    assert sklearn_url("numpy.ndarray") is None
    assert sklearn_url("sklearnx.Thing") is None
    assert sklearn_url("sklearn.compose._column_transformer.make_column_selector") is None


def test_the_missing_reference_handler_makes_an_external_link():
    node = nodes.Element(refdomain="py", reftype="class",
                         reftarget="sklearn.model_selection.GroupKFold")
    contnode = nodes.literal("GroupKFold", "GroupKFold")
    link = _missing_reference(None, None, node, contnode)
    assert isinstance(link, nodes.reference)
    assert link["refuri"] == GENERATED + "sklearn.model_selection.GroupKFold.html"
    assert link.children == [contnode]
    other = nodes.Element(refdomain="py", reftype="class", reftarget="numpy.ndarray")
    assert _missing_reference(None, None, other, contnode) is None
    std = nodes.Element(refdomain="std", reftype="ref", reftarget="sklearn.x")
    assert _missing_reference(None, None, std, contnode) is None


def test_the_build_uses_the_extension():
    conf = (DOC / "conf.py").read_text(encoding="utf-8")
    assert '"sklearn_links"' in conf


def prose_lines(text):
    """The lines of a reST page outside literal and code blocks."""
    lines, in_code, indent = [], False, 0
    for line in text.splitlines():
        if in_code:
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                in_code = False
            else:
                continue
        if re.match(r"\s*\.\. (code-block|code|sourcecode)::", line) or (
                line.rstrip().endswith("::") and not re.match(r"\s*\.\. ", line)):
            in_code, indent = True, len(line) - len(line.lstrip())
        lines.append(line)
    return lines


def test_the_pages_link_scikit_learn_classes_they_name():
    """A scikit-learn class or function named alone in inline code is written
    as a reference, which the extension turns into a link."""
    import sklearn.compose
    import sklearn.model_selection
    import sklearn.pipeline
    import sklearn.preprocessing

    names = set()
    for module in (sklearn.model_selection, sklearn.pipeline, sklearn.preprocessing,
                   sklearn.compose):
        names.update(module.__all__)
    unlinked = []
    for page in rst_pages():
        for line in prose_lines(page.read_text(encoding="utf-8")):
            for name in re.findall(r"``(\w+)``", line):
                if name in names:
                    unlinked.append(f"{page.relative_to(DOC)}: ``{name}``")
    assert not unlinked, "\n".join(unlinked)
