"""What the rendered documentation says to a reader, checked on its sources:
no project-tracker language, links to rendered pages instead of repository
paths, and every ranker where the rankers are listed (in the README too)."""

import inspect
import re

import pytest
from _doc_sources import (
    DOC,
    EXAMPLES,
    RESULTS,
    ROOT,
    api_objects,
    gallery_text_blocks,
    rst_pages,
)

import sklearn_ltr

API = api_objects()


def rendered_texts():
    """(name, text) of everything that becomes a page or part of one."""
    texts = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in rst_pages()]
    texts += [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in RESULTS]
    for example in EXAMPLES:
        texts.append((str(example.relative_to(ROOT)), "\n".join(gallery_text_blocks(example))))
    for name, obj in sorted(API.items()):
        texts.append((name, inspect.getdoc(obj) or ""))
    return texts


TEXTS = rendered_texts()
IDS = [name for name, _ in TEXTS]

# How the project's tracker talks: issue numbers, their items and their
# acceptance criteria. A reader of the documentation has none of them.
TRACKER = re.compile(
    r"\bissues? #?\d+|\bthe issue\b|\bitem \d+\b|\bacceptance (?:lines?|checks?)\b|\(#\d+\)",
    flags=re.IGNORECASE,
)


def test_the_tracker_pattern():
    for text in ("Cold start (issue 16, item 10)", "(issue 17)", "the goal of issue #20",
                 "Verdicts on the acceptance lines", "as the issue wants"):
        assert TRACKER.search(text), text
    assert not TRACKER.search("XGBoost issue tracker aside, the ranker issues a warning")


@pytest.mark.parametrize("name, text", TEXTS, ids=IDS)
def test_no_tracker_language(name, text):
    found = [m.group(0) for m in TRACKER.finditer(text)]
    assert not found, f"{name}: {found}"


@pytest.mark.parametrize("report", RESULTS, ids=lambda p: p.name)
def test_benchmark_page_titles_say_what_they_measure(report):
    """A report's first heading is its page's title in the navigation."""
    title = report.read_text(encoding="utf-8").splitlines()[0]
    assert title.startswith("# ")
    assert not TRACKER.search(title)
    assert not re.search(r"\(#?\d+\)$", title)


# Repository paths that have a rendered page: the benchmark reports (one
# page each, doc/benchmarks/generated/) and the test files (none, and no
# reader needs them).
REPORT_PATH = re.compile(r"benchmarks/results/\w+\.md|\btests/\w+\.py")


@pytest.mark.parametrize("name, text", [t for t in TEXTS if not t[0].startswith("benchmarks/")],
                         ids=[i for i in IDS if not i.startswith("benchmarks/")])
def test_pages_link_rendered_pages_not_repository_files(name, text):
    found = REPORT_PATH.findall(text)
    assert not found, f"{name} names {found}; link the page (:doc:) instead"


def test_doc_links_to_benchmark_reports_exist():
    for name, text in TEXTS:
        for target in re.findall(r":doc:`[^`<]*?<?(/benchmarks/generated/[\w]+)>?`", text):
            report = ROOT / "benchmarks" / "results" / (target.rsplit("/", 1)[1] + ".md")
            assert report.exists(), f"{name} links {target}"


# -- the rankers ------------------------------------------------------------------

RANKERS = sorted(
    name for name in sklearn_ltr.__all__
    if inspect.isclass(getattr(sklearn_ltr, name)) and name.endswith("Ranker")
)
README = ROOT / "README.md"


def prose_paragraphs(text):
    """The paragraphs of a reST or Markdown text outside code blocks."""
    text = re.sub(r"(?ms)^```.*?^```", "", text)
    return [p for p in re.split(r"\n\s*\n", text)
            if p.strip() and not p.startswith("    ") and "::\n" not in p]


def test_the_package_has_five_rankers():
    assert RANKERS == ["CalibratedRanker", "LambdaMARTRanker", "ListNetRanker",
                       "XENDCGRanker", "YetiRankRanker"]


READERS_TEXTS = TEXTS + [("README.md", README.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("name, text", READERS_TEXTS, ids=[n for n, _ in READERS_TEXTS])
def test_no_text_counts_four_rankers(name, text):
    assert not re.search(r"\b(?:all )?four (?:of the )?rankers\b", text, flags=re.I), name


@pytest.mark.parametrize(
    "name, text",
    [t for t in READERS_TEXTS if not t[0].startswith("benchmarks/")],
    ids=[n for n, _ in READERS_TEXTS if not n.startswith("benchmarks/")],
)
def test_a_paragraph_that_lists_rankers_lists_them_all(name, text):
    """Four ranker classes named together read as the list of the rankers;
    it must be complete. (An example comparing three is not such a list.)"""
    pattern = re.compile(r"\b(%s)\b" % "|".join(RANKERS))
    for paragraph in prose_paragraphs(text):
        named = set(pattern.findall(paragraph))
        if len(named) >= 4:
            assert named == set(RANKERS), (
                f"{name}: a paragraph names {sorted(named)}, without "
                f"{sorted(set(RANKERS) - named)}:\n{paragraph}"
            )


# -- navigation ------------------------------------------------------------------------


def page_title(path):
    """The first section title of a reST page (the one navigation shows)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for above, line, below in zip(lines, lines[1:], lines[2:]):
        if line.strip() and re.fullmatch(r"(=+|-+)", below.strip() or "x") and \
                len(below.strip()) >= len(line.strip()):
            return line.strip()
    raise AssertionError(f"{path} has no title")


def user_guide_pages():
    index = (DOC / "user_guide" / "index.rst").read_text(encoding="utf-8")
    toctree = index.split(".. toctree::", 1)[1]
    names = re.findall(r"^   (\w+)$", toctree, flags=re.M)
    return [DOC / "user_guide" / f"{name}.rst" for name in names]


def test_position_bias_correction_is_in_the_navigation():
    """The user guide's sidebar lists page titles; correcting position bias
    is a section of the clicks page, so that page's title names it."""
    pages = {page.stem: page_title(page) for page in user_guide_pages()}
    assert "clicks" in pages
    assert "position bias" in pages["clicks"].lower()
    assert "clicks" in pages["clicks"].lower()
    text = (DOC / "user_guide" / "clicks.rst").read_text(encoding="utf-8")
    assert ".. _position_bias:\n\nCorrecting position bias\n====" in text
