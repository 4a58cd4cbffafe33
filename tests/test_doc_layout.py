"""The rendered documentation fits a 1280 px wide browser window.

With the pydata theme at 1280 px the text column of a page is 624 px wide
(measured in Chromium, sidebars on both sides). A table wider than that
hides its last columns behind a horizontal scroll bar. These tests estimate
the width from the reST sources, without building the documentation.
"""

import ast
import re

import pytest
from _doc_sources import DOC, EXAMPLES, rst_pages


# -- tables -------------------------------------------------------------------

# The text column's width, and what its contents take, in CSS pixels (the
# theme's 16 px body text and 14 px inline code; measured in Chromium on the
# built pages: the estimate below was within 12 px of the browser's minimum
# table width for each table measured).
TEXT_COLUMN = 620
CODE_CHAR = 8.43  # one character of 14 px monospace
TEXT_CHAR = 9.0  # a wide average character of 16 px sans-serif
CODE_BOX = 10  # padding and border of an inline literal
CELL_PADDING = 16

_ROLE = re.compile(r":(\w+):`(~?)([^`<]*?)(?:\s*<[^>]*>)?`")


def _unbreakable_width(cell):
    """Width of the widest run of a table cell that a browser cannot wrap.

    Lines wrap at spaces only: a name in inline code (``"lightgbm-json"``,
    ``lightgbm.Booster(model_file=...)``) stays whole, and so does
    punctuation attached to it.
    """

    def role(match):
        name, tilde, target = match.groups()
        shown = target.rsplit(".", 1)[-1] if tilde else target
        if name in ("func", "meth"):
            shown += "()"
        return shown if name in ("ref", "doc") else f"``{shown}``"

    text = _ROLE.sub(role, " ".join(cell.split()))
    widths, current = [], 0.0
    for part in re.split(r"(``.+?``)", text):
        is_code = len(part) > 4 and part.startswith("``") and part.endswith("``")
        words = part[2:-2].split(" ") if is_code else part.split(" ")
        for i, word in enumerate(words):
            if i:
                widths.append(current)
                current = 0.0
            current += len(word) * (CODE_CHAR if is_code else TEXT_CHAR)
            if is_code:
                current += CODE_BOX / 2 * ((i == 0) + (i == len(words) - 1))
    widths.append(current)
    return max(widths)


def list_tables(text):
    """The rows (lists of cell texts) of every ``list-table`` in ``text``."""
    tables = []
    pattern = r"^( *)\.\. list-table::.*\n((?:\1   :.*\n)*)\n((?:\1   .*\n|\n)+)"
    for match in re.finditer(pattern, text, flags=re.M):
        indent = len(match.group(1)) + 3
        rows = []
        for line in match.group(3).splitlines():
            if not line.strip():
                continue
            line = line[indent:]
            if line.startswith("* - "):
                rows.append([line[4:]])
            elif line.startswith("  - "):
                rows[-1].append(line[4:])
            else:
                rows[-1][-1] += " " + line.strip()
        tables.append(rows)
    return tables


def min_table_width(rows):
    """The narrowest the browser can make a table: each column as wide as
    its widest unbreakable run, plus the cells' padding."""
    columns = {}
    for row in rows:
        for j, cell in enumerate(row):
            columns[j] = max(columns.get(j, 0.0), _unbreakable_width(cell))
    return sum(width + CELL_PADDING for width in columns.values())


RST_PAGES = rst_pages()


def test_the_width_estimate_matches_the_browser():
    """A table as Chromium laid it out at 1280 px: the formats table
    of the serving page before it was shortened (796 px, its fourth column
    behind a scroll bar)."""
    before = """\
.. list-table::
   :header-rows: 1

   * - ``format``
     - read by
     - comparison, precision
     - missing values (NaN)
   * - ``"lightgbm-json"``
     - ``lightgbm.Booster(model_file=...)``; :func:`~sklearn_ltr.export.to_lightgbm`
     - ``x < T``, float32: ``T`` is the float32 that sends every float32 ``x``
     - routed as ours (``missing_type=NaN``, ``default_left``)
   * - ``"onnx"``
     - onnxruntime (``ai.onnx.ml`` tree ensemble), input ``"X"``
     - ``x <= T``, float32 (default) or float64 (``dtype="float64"``)
     - routed as ours
"""
    (rows,) = list_tables(before)
    assert min_table_width(rows) == pytest.approx(796, abs=15)
    assert min_table_width(rows) > TEXT_COLUMN


@pytest.mark.parametrize("page", RST_PAGES, ids=lambda p: str(p.relative_to(DOC)))
def test_every_table_fits_the_text_column(page):
    for rows in list_tables(page.read_text(encoding="utf-8")):
        width = min_table_width(rows)
        assert width <= TEXT_COLUMN, (
            f"a table starting {rows[0][0]!r} needs {width:.0f} px; shorten its "
            "longest names in inline code"
        )


# -- code blocks ----------------------------------------------------------------

# Characters of code that fit a code block of the text column: 70 at 1280 px
# (14 px monospace in DejaVu Sans Mono, Menlo, Source Code Pro; measured in
# Chromium: a line of 71 characters overflows the 622 px block). Longer lines
# are cut at the right edge, behind the block's scroll bar.
CODE_WIDTH = 70

_CODE_START = re.compile(r"^( *)(?:\.\. (?:code-block|code|sourcecode)::.*|(?!\.\. ).*::)\s*$")


def rst_code_blocks(text):
    """(line number, lines) of each literal block of a reST page: the body of
    a code-block directive or the indented block after a line ending in
    ``::``, without the block's indentation."""
    lines = text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        match = _CODE_START.match(lines[i])
        if not match:
            i += 1
            continue
        indent = len(match.group(1))
        j = i + 1
        body = []
        while j < len(lines) and (
            not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent
        ):
            body.append(lines[j])
            j += 1
        while body and re.match(r"\s+:[\w-]+:", body[0]):  # directive options
            body.pop(0)
        code = [line for line in body if line.strip()]
        if code:
            base = min(len(line) - len(line.lstrip()) for line in code)
            blocks.append((i + 1, [line[base:] for line in code]))
        i = j
    return blocks


def gallery_code_lines(path):
    """(line number, line) of the lines of an example that the gallery shows
    as code: all but the module docstring and the text blocks (the comment
    lines right after a ``# %%`` line)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    first = ast.parse("\n".join(lines)).body[0]
    skip = set(range(first.end_lineno)) if isinstance(first, ast.Expr) else set()
    for i, line in enumerate(lines):
        if line.startswith("# %%"):
            skip.add(i)
            j = i + 1
            while j < len(lines) and lines[j].startswith("#"):
                skip.add(j)
                j += 1
    return [(i + 1, line) for i, line in enumerate(lines) if i not in skip]


def test_code_blocks_are_found():
    page = """\
Text::

    short
    python -m sklearn_ltr export ranker.model --format lightgbm -o ranker.txt

.. code-block:: python
   :caption: c

    x = 1

.. toctree::

   not code
"""
    blocks = rst_code_blocks(page)
    assert [lines for _, lines in blocks] == [
        ["short", "python -m sklearn_ltr export ranker.model --format lightgbm -o ranker.txt"],
        ["x = 1"],
    ]


@pytest.mark.parametrize("page", RST_PAGES, ids=lambda p: str(p.relative_to(DOC)))
def test_code_block_lines_fit_the_text_column(page):
    long = [
        f"line {start}: {line}"
        for start, lines in rst_code_blocks(page.read_text(encoding="utf-8"))
        for line in lines
        if len(line) > CODE_WIDTH
    ]
    assert not long, f"code lines over {CODE_WIDTH} characters:\n" + "\n".join(long)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_gallery_code_lines_fit_the_text_column(example):
    long = [f"line {n}: {line}" for n, line in gallery_code_lines(example) if len(line) > CODE_WIDTH]
    assert not long, f"code lines over {CODE_WIDTH} characters:\n" + "\n".join(long)
