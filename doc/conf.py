"""Sphinx configuration of the sklearn-ltr documentation.

Build with ``python -m sphinx -W --keep-going -b html doc doc/_build/html``
from the repository root. The example gallery runs every ``examples/plot_*.py``
script, and the benchmark pages are generated at every build from the
Markdown reports in ``benchmarks/results/`` (see ``sphinxext/results_pages.py``).
"""

import os
import sys
from pathlib import Path

DOC_DIR = Path(__file__).resolve().parent
REPO_DIR = DOC_DIR.parent

# The package itself (for a build from a source checkout that is not
# installed) and the small local extensions.
sys.path.insert(0, str(REPO_DIR))
sys.path.insert(0, str(DOC_DIR / "sphinxext"))

# The gallery runs inside this process on machines that are often shared:
# with one numba thread per fit the examples' timings do not collapse when
# other processes hold the cores (the models are bit-identical on any number
# of threads, so the figures do not change). Override by setting the variable.
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
# No display: matplotlib draws to files only.
os.environ.setdefault("MPLBACKEND", "agg")

import sklearn_ltr  # noqa: E402
from results_pages import write_results_pages  # noqa: E402

project = "sklearn-ltr"
author = "the sklearn-ltr developers"
copyright = "the sklearn-ltr developers"
release = sklearn_ltr.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    # Links to scikit-learn's documentation (no intersphinx: no network).
    "sklearn_links",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "auto_examples/*.ipynb"]
default_role = "literal"

# -- API reference ---------------------------------------------------------
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": True}
autodoc_typehints = "none"
# Methods are listed by the autosummary class template, not by numpydoc
# (numpydoc's member tables would point at pages that do not exist).
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True

# -- Markdown (benchmark reports) ------------------------------------------
myst_heading_anchors = 3
write_results_pages(REPO_DIR / "benchmarks" / "results", DOC_DIR / "benchmarks" / "generated")

# -- Example gallery -------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(REPO_DIR / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    # Named by string so the configuration stays picklable (Sphinx warns,
    # and -W fails, on functions defined here).
    "within_subsection_order": "gallery_hooks.ReadingOrder",
    "reset_modules": ("matplotlib", "gallery_hooks.reset_sklearn_config"),
    "doc_module": ("sklearn_ltr",),
    "backreferences_dir": "gen_modules/backreferences",
    "reference_url": {"sklearn_ltr": None},
    "image_scrapers": ("matplotlib",),
    "remove_config_comments": True,
    "min_reported_time": 0,
    "download_all_examples": False,
}

# -- HTML --------------------------------------------------------------------
try:
    import pydata_sphinx_theme  # noqa: F401

    html_theme = "pydata_sphinx_theme"
    html_theme_options = {
        "navigation_with_keys": False,
        "show_toc_level": 2,
        "secondary_sidebar_items": ["page-toc"],
    }
except ImportError:  # the theme is in the doc extra; fall back to Sphinx's default
    html_theme = "alabaster"
    html_theme_options = {}
html_title = f"sklearn-ltr {release}"
html_static_path = []
html_show_sourcelink = False
