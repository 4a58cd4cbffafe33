"""Signatures and docstrings of every ranker, the Dask ones included.

- the shared parameters (those of ``BaseGBRanker.__init__``) are in every
  ranker's ``__init__``, last and in the base class's order, with the base
  class's defaults (deliberate differences are listed in
  DELIBERATE_DIFFERENCES with their reason);
- every parameter given to ``__init__`` is stored as given (scikit-learn's
  ``get_params`` and ``clone`` rely on it; with defaults in the base class a
  parameter a ranker forgot to pass on would otherwise be silently ignored);
- the docstring's Parameters section (read by numpydoc) lists exactly the
  signature's parameters, in signature order, each with the signature's
  default;
- every ranker has a Dask twin with the same signature.
"""

import ast
import inspect
import re

import pytest
from conftest import RANKER_IDS, RANKERS

from sklearn_ltr._rankers.base import BaseGBRanker

docscrape = pytest.importorskip("numpydoc.docscrape")

try:
    import sklearn_ltr.dask as ltr_dask
except ImportError:  # dask or distributed not installed
    ltr_dask = None

DASK_RANKERS = () if ltr_dask is None else tuple(
    obj for obj in (getattr(ltr_dask, name) for name in ltr_dask.__all__)
    if isinstance(obj, type) and issubclass(obj, BaseGBRanker)
)
ALL_RANKERS = RANKERS + DASK_RANKERS
ALL_IDS = RANKER_IDS + [cls.__name__ for cls in DASK_RANKERS]

# {(ranker class name, shared parameter): why its default differs from the
# base class's}; an entry must name a real difference.
_SYMMETRIC_YETIRANK = ("symmetric trees, as CatBoost grows for YetiRank, rank better with "
                      "this loss (benchmarks/results/quality_all_rankers.md)")
_L2_YETIRANK = ("an L2 penalty of 1 keeps YetiRank's symmetric trees from overfitting at high "
                "tree counts (benchmarks/results/quality_all_rankers.md)")
DELIBERATE_DIFFERENCES = {
    ("YetiRankRanker", "grow_policy"): _SYMMETRIC_YETIRANK,
    ("DaskYetiRankRanker", "grow_policy"): _SYMMETRIC_YETIRANK,
    ("YetiRankRanker", "l2_regularization"): _L2_YETIRANK,
    ("DaskYetiRankRanker", "l2_regularization"): _L2_YETIRANK,
}


def _parameters(function):
    """Parameters of ``function`` (an ``__init__``) other than self."""
    return [p for p in inspect.signature(function).parameters.values() if p.name != "self"]


SHARED = _parameters(BaseGBRanker.__init__)


def _documented(cls):
    """The Parameters section of ``cls``'s docstring, one (name, type) per
    name (numpydoc reads ``a, b : int`` as one entry)."""
    return [(name.strip(), entry.type)
            for entry in docscrape.ClassDoc(cls)["Parameters"]
            for name in entry.name.split(",")]


def test_the_base_class_gives_every_shared_parameter_a_default():
    assert SHARED, "BaseGBRanker.__init__ has no parameters"
    for p in SHARED:
        assert p.kind is p.KEYWORD_ONLY, p.name
        assert p.default is not p.empty, f"BaseGBRanker.__init__ gives {p.name} no default"


@pytest.mark.parametrize("cls", ALL_RANKERS, ids=ALL_IDS)
def test_shared_parameters_come_last_with_the_base_defaults(cls):
    own = _parameters(cls.__init__)
    assert all(p.kind is p.KEYWORD_ONLY for p in own), "parameters must be keyword-only"
    names = [p.name for p in own]
    assert names[-len(SHARED):] == [p.name for p in SHARED]
    defaults = {p.name: p.default for p in own}
    for p in SHARED:
        key = (cls.__name__, p.name)
        if key in DELIBERATE_DIFFERENCES:
            assert defaults[p.name] != p.default, f"{key} is listed as different but is not"
        else:
            assert (type(defaults[p.name]), defaults[p.name]) == (type(p.default), p.default), (
                f"{cls.__name__}({p.name}={defaults[p.name]!r}) but BaseGBRanker has "
                f"{p.default!r}: list it in DELIBERATE_DIFFERENCES with the reason if meant"
            )


def test_the_deliberate_differences_name_rankers_and_shared_parameters():
    names = {cls.__name__ for cls in ALL_RANKERS}
    shared = {p.name for p in SHARED}
    for ranker, parameter in DELIBERATE_DIFFERENCES:
        assert ranker in names and parameter in shared, (ranker, parameter)


@pytest.mark.parametrize("cls", ALL_RANKERS, ids=ALL_IDS)
def test_every_parameter_is_stored_as_given(cls):
    given = {p.name: object() for p in _parameters(cls.__init__)}
    stored = cls(**given).get_params(deep=False)
    for name, value in given.items():
        assert stored[name] is value, f"{cls.__name__}.__init__ does not store {name} as given"


@pytest.mark.parametrize("cls", ALL_RANKERS, ids=ALL_IDS)
def test_the_docstring_lists_the_signature_in_order(cls):
    documented = [name for name, _ in _documented(cls)]
    signature = [p.name for p in _parameters(cls.__init__)]
    missing = [name for name in signature if name not in documented]
    extra = [name for name in documented if name not in signature]
    assert not missing and not extra, f"undocumented: {missing}; not parameters: {extra}"
    assert documented == signature


@pytest.mark.parametrize("cls", ALL_RANKERS, ids=ALL_IDS)
def test_the_documented_defaults_are_the_signature_defaults(cls):
    defaults = {p.name: p.default for p in _parameters(cls.__init__)}
    for name, type_line in _documented(cls):
        found = re.search(r"default=(.+)$", type_line)
        assert found, f"{cls.__name__}: {name} ({type_line!r}) names no default"
        documented = ast.literal_eval(found.group(1))
        assert (type(documented), documented) == (type(defaults[name]), defaults[name]), (
            f"{cls.__name__}: {name} documented with default={found.group(1)}, "
            f"signature has {defaults[name]!r}"
        )


def test_every_ranker_has_a_dask_twin_with_its_signature():
    if ltr_dask is None:
        pytest.skip("sklearn_ltr.dask needs dask and distributed (pip install sklearn-ltr[dask])")
    twins = {cls._local_class: cls for cls in DASK_RANKERS}
    assert set(twins) == set(RANKERS)
    for local, twin in twins.items():
        assert issubclass(twin, local)
        assert inspect.signature(twin.__init__) == inspect.signature(local.__init__), twin
