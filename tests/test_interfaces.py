"""The written interfaces between layers: the objective protocols and the row
store protocol, their implementations, and the engine's independence from
ranking.

- every registered objective implements :class:`Objective` (the engine's)
  and :class:`TrainingObjective` (the estimators'), member by member and
  signature by signature, and its ``constant_hessian`` tells the truth;
- the booster calls the hooks unconditionally, in the documented order, and
  runs on an objective that knows nothing of ranking (least squares);
- a declared constant hessian gives the trees of the general histograms;
- both row stores implement :class:`RowStore`, and the grower takes nothing
  else;
- the engine imports no module about queries or ranking.
"""

import ast
import inspect
import os
from typing import Generic, Protocol

import numpy as np
import pytest

import sklearn_ltr
from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr._gbdt import booster as booster_module
from sklearn_ltr._gbdt import compiled_grower
from sklearn_ltr._gbdt import node_rows as node_rows_module
from sklearn_ltr._gbdt.binning import BinMapper
from sklearn_ltr._gbdt.booster import Booster, TrainingData
from sklearn_ltr._gbdt.common import G_H_DTYPE
from sklearn_ltr._gbdt.grower import TreeGrower
from sklearn_ltr._gbdt.node_rows import NodeRows, RowStore
from sklearn_ltr._gbdt.objective import Objective
from sklearn_ltr._objectives import OBJECTIVES, TrainingObjective
from sklearn_ltr.dask._shard import DistributedNodeRows

SIZES = [3, 7, 1, 10, 5, 8]
OFFSETS = np.concatenate([[0], np.cumsum(SIZES)])
N = int(OFFSETS[-1])
LABELS = np.random.default_rng(0).integers(0, 5, N).astype(float)
WEIGHTS = np.repeat(np.random.default_rng(1).uniform(0.5, 2.0, len(SIZES)), SIZES)
POSITIONS = np.concatenate([np.arange(1, s + 1) for s in SIZES])

# Objectives whose labels must lie in [0, 1].
UNIT_LABELS = {"sigmoid", "softmax", "sigmoid+softmax", "rcr"}
# Parameters an objective needs beyond labels and offsets.
REQUIRED = {"lambdarank_unbiased": dict(position=POSITIONS),
            "lambdarank_ipw": dict(position=POSITIONS,
                                   propensity=1.0 / np.arange(1, max(SIZES) + 1)),
            "lambdarank_additive": dict(position=POSITIONS, learning_rate=0.1)}
# Each registered objective with its defaults, plus the variants that change
# what its hessians are.
CASES = [(name, {}) for name in OBJECTIVES] + [
    ("lambdarank_multi", dict(leaf_estimation="gradient")),
    ("lambdarank_multi", dict(leaf_estimation="gradient", sample_weight=WEIGHTS)),
    ("lambdarank_multi", dict(leaf_estimation="gradient", lambda_schedule="linear",
                              schedule_eta=0.1)),
    ("lambdarank_multi", dict(y_secondary=(np.arange(N) % 3) / 2.0, secondary_weight=0.3)),
    ("xendcg", dict(sample_weight=WEIGHTS)),
]
CASE_IDS = [name + "".join(f"-{k}" for k in params) for name, params in CASES]


def _make(name, params=None):
    params = dict(params or {})
    y = LABELS / 4.0 if name in UNIT_LABELS else LABELS
    if name in ("lambdarank_unbiased", "lambdarank_ipw", "lambdarank_additive"):
        y = (LABELS > 2).astype(float)  # clicks
    weight = params.pop("sample_weight", None)
    return OBJECTIVES[name](y, OFFSETS, weight, **REQUIRED.get(name, {}), **params)


def _protocol_members(protocol):
    """(data attribute names, method names) a protocol declares, its bases'
    included."""
    data, methods = set(), set()
    for cls in protocol.__mro__:
        if cls in (Protocol, Generic, object) or not getattr(cls, "_is_protocol", False):
            continue
        data.update(getattr(cls, "__annotations__", {}))
        methods.update(name for name, value in vars(cls).items()
                       if not name.startswith("_")
                       and (inspect.isfunction(value) or isinstance(value, classmethod)))
    return data - methods, methods


def _parameters(function):
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


def _assert_implements(obj, protocol):
    """``obj`` has every member of ``protocol``, and each method takes the
    protocol's parameters (names, kinds, defaults, in order); it may add
    parameters after them only if they have defaults."""
    assert isinstance(obj, protocol)
    data, methods = _protocol_members(protocol)
    for name in data:
        assert hasattr(obj, name), name
    for name in methods:
        expected = _parameters(getattr(protocol, name))
        actual = _parameters(getattr(type(obj), name))
        assert actual[:len(expected)] == expected, (type(obj).__name__, name)
        for extra_name, kind, default in actual[len(expected):]:
            assert kind == inspect.Parameter.VAR_KEYWORD or default is not inspect.Parameter.empty, (
                type(obj).__name__, name, extra_name)


def _hessians(objective, n_iterations=3):
    """Hessians of a few iterations on random scores, the hooks called as the
    booster calls them."""
    rng = np.random.default_rng(2)
    out = []
    for m in range(n_iterations):
        grad, hess = np.empty(N, dtype=G_H_DTYPE), np.empty(N, dtype=G_H_DTYPE)
        objective.set_iteration(m)
        objective.prepare_iteration(np.random.default_rng([0, m]))
        objective.gradient_hessian(rng.normal(size=N), grad, hess)
        statistics = objective.iteration_statistics()
        if statistics is not None:
            objective.end_iteration(statistics)
        out.append(hess)
    return np.concatenate(out)


def _declaration_holds(objective):
    """A declared constant hessian is every hessian; an undeclared one is not
    (hessians differ), so no objective leaves the faster histograms unused."""
    hessians = _hessians(objective)
    if objective.constant_hessian is None:
        return np.unique(hessians).size > 1
    return bool(np.all(hessians == np.float32(objective.constant_hessian)))


# -- objectives -------------------------------------------------------------------


def test_every_registered_objective_has_a_case():
    assert {name for name, _ in CASES} == set(OBJECTIVES)


@pytest.mark.parametrize("name, params", CASES, ids=CASE_IDS)
def test_objective_implements_the_protocols(name, params):
    objective = _make(name, params)
    _assert_implements(objective, Objective)
    _assert_implements(objective, TrainingObjective)
    assert objective.name == name
    assert objective.y.dtype == np.float64 and objective.y.shape == (N,)
    assert objective.offsets.dtype == np.int64
    np.testing.assert_array_equal(objective.offsets, OFFSETS)
    assert objective.constant_hessian is None or (
        isinstance(objective.constant_hessian, float) and objective.constant_hessian > 0)


@pytest.mark.parametrize("name, params", CASES, ids=CASE_IDS)
def test_declared_constant_hessian_is_true(name, params):
    assert _declaration_holds(_make(name, params))


def test_gradient_leaves_declare_a_constant_hessian_only_without_weights():
    assert _make("lambdarank_multi", dict(leaf_estimation="gradient")).constant_hessian == 1.0
    weighted = dict(leaf_estimation="gradient", sample_weight=WEIGHTS)
    assert _make("lambdarank_multi", weighted).constant_hessian is None


def test_the_declaration_check_can_fail():
    # A false declaration, and a missing one, are both caught.
    wrong = _make("lambdarank")
    wrong.constant_hessian = 1.0
    assert not _declaration_holds(wrong)
    missing = _make("lambdarank_multi", dict(leaf_estimation="gradient"))
    missing.constant_hessian = None
    assert not _declaration_holds(missing)


def test_the_signature_check_can_fail():
    class MissingHook:
        y, offsets, constant_hessian = LABELS, OFFSETS, None

        def prepare_iteration(self, rng):
            pass

        def gradient_hessian(self, raw_scores, grad_out, hess_out):
            pass

        def iteration_statistics(self):
            return None

        def end_iteration(self, statistics):
            pass

        def fitted_attributes(self):
            return {}

    assert not isinstance(MissingHook(), Objective)

    class RenamedParameter(MissingHook):
        def set_iteration(self, tree):
            pass

    assert isinstance(RenamedParameter(), Objective)
    with pytest.raises(AssertionError, match="set_iteration"):
        _assert_implements(RenamedParameter(), Objective)


def test_training_data_rejects_an_objective_without_the_protocol():
    class NoHooks:
        y, offsets, constant_hessian = LABELS, OFFSETS, None

    with pytest.raises(TypeError, match="Objective protocol"):
        TrainingData(np.zeros((N, 2), dtype=np.uint8), NoHooks(), 255)


# -- the booster on an objective that knows nothing of ranking -------------------------


class _LeastSquares:
    """Half the squared error, each row its own group; records the hooks'
    calls."""

    def __init__(self, y, constant_hessian):
        self.y = y
        self.offsets = np.arange(y.shape[0] + 1, dtype=np.int64)
        self.constant_hessian = constant_hessian
        self.calls = []

    def set_iteration(self, iteration):
        self.calls.append(("set_iteration", iteration))

    def prepare_iteration(self, rng):
        self.calls.append(("prepare_iteration",))

    def gradient_hessian(self, raw_scores, grad_out, hess_out):
        self.calls.append(("gradient_hessian",))
        grad_out[:] = raw_scores - self.y
        hess_out[:] = 1.0

    def iteration_statistics(self):
        self.calls.append(("iteration_statistics",))
        return None

    def end_iteration(self, statistics):
        self.calls.append(("end_iteration",))

    def fitted_attributes(self):
        return {}


def _boost_least_squares(constant_hessian, n_trees=4, subsample=1.0):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 4))
    y = X[:, 0] + np.where(X[:, 1] > 0, 2.0, 0.0) + 0.1 * rng.normal(size=600)
    mapper = BinMapper(max_bins=31, random_state=0).fit(X)
    objective = _LeastSquares(y, constant_hessian)
    _assert_implements(objective, Objective)
    booster = Booster(objective_name="least_squares", baseline=0.0, n_features=4,
                      missing_values_bin_idx=mapper.missing_values_bin_idx_)
    booster.boost(
        TrainingData(mapper.transform(X), objective, mapper.missing_values_bin_idx_,
                     mapper.n_bins_non_missing_),
        n_iterations=n_trees, bin_mapper=mapper,
        tree_params=dict(max_leaf_nodes=8, min_samples_leaf=10), learning_rate=0.5,
        max_features=1.0, subsample=subsample, random_seed=0, validation=None, metric=None,
        n_iter_no_change=None, tol=0.0, verbose=0, small_trainset_rows=100,
    )
    return booster, objective, X, y


def test_booster_calls_every_hook_in_order_and_fits_least_squares():
    booster, objective, X, y = _boost_least_squares(None)
    per_tree = [("prepare_iteration",), ("gradient_hessian",), ("iteration_statistics",)]
    assert objective.calls == [call for m in range(4)
                               for call in [("set_iteration", m)] + per_tree]
    # Half the mean squared error from the baseline 0, then after four trees.
    assert np.mean((booster.predict(X) - y) ** 2) < 0.2 * np.mean(y ** 2)


@pytest.mark.parametrize("subsample", [1.0, 0.5])
def test_declared_constant_hessian_gives_the_general_trees(subsample, monkeypatch):
    calls = []
    kernel = node_rows_module._build_histogram_root_const
    constant_kernel = node_rows_module._build_histogram_const

    def spy_root(*args):
        calls.append("root")
        return kernel(*args)

    def spy_node(*args):
        calls.append("node")
        return constant_kernel(*args)

    # The trees' own histograms are built by the compiled loop, which is
    # given the constant hessian or None.
    grow_tree = compiled_grower.grow_tree

    def spy_loop(rows, *args):
        calls.append(("loop", rows.const_hessian))
        return grow_tree(rows, *args)

    monkeypatch.setattr(node_rows_module, "_build_histogram_root_const", spy_root)
    monkeypatch.setattr(node_rows_module, "_build_histogram_const", spy_node)
    monkeypatch.setattr(compiled_grower, "grow_tree", spy_loop)
    declared, _, X, _ = _boost_least_squares(1.0, subsample=subsample)
    # The constant-hessian kernels built the histograms: the first tree's
    # search for features that cannot split, then every tree's.
    assert calls[0] == "root" and calls[1:] == [("loop", 1.0)] * 4
    calls.clear()
    general, _, _, _ = _boost_least_squares(None, subsample=subsample)
    assert calls == [("loop", None)] * 4
    assert len(declared.trees) == len(general.trees) == 4
    for a, b in zip(declared.trees, general.trees):
        for field in a.dtype.names:  # field by field: NaN thresholds compare equal
            np.testing.assert_array_equal(a[field], b[field], err_msg=field)


def test_gradient_leaves_reach_the_constant_hessian_histograms(monkeypatch):
    X = np.random.default_rng(4).normal(size=(200, 3))
    y = np.random.default_rng(5).integers(0, 3, 200)
    qid = np.repeat(np.arange(20), 10)
    made = []

    def node_rows(*args, constant_hessian=None, **kwargs):
        made.append(constant_hessian)
        return NodeRows(*args, constant_hessian=constant_hessian, **kwargs)

    monkeypatch.setattr(booster_module, "NodeRows", node_rows)
    LambdaMARTRanker(n_estimators=2, leaf_estimation="gradient").fit(X, y, qid=qid)
    LambdaMARTRanker(n_estimators=2).fit(X, y, qid=qid)
    assert made == [1.0, None]


# -- row stores ---------------------------------------------------------------------


def _node_rows():
    Xb = np.asfortranarray(np.random.default_rng(6).integers(0, 8, (50, 3)).astype(np.uint8))
    return NodeRows(Xb, 8)


def test_node_rows_implements_the_row_store():
    _assert_implements(_node_rows(), RowStore)


def test_distributed_node_rows_implements_the_row_store():
    rows = DistributedNodeRows([], 0, 3, np.zeros(0, np.int64), np.zeros(0, np.int64))
    _assert_implements(rows, RowStore)


def test_grower_takes_a_row_store_only():
    Xb = _node_rows().X_binned
    with pytest.raises(TypeError, match="RowStore"):
        TreeGrower(Xb, np.full(3, 8), 8)

    class NoLeaves:
        n_samples, n_features, time_histograms, time_partition = 50, 3, 0.0, 0.0

        def start(self, gradients, hessians, sample_indices, feature_mask):
            pass

        def root_histogram(self, hist):
            pass

        def split(self, node_id, feature, left_bins, left_id, right_id, histogram_of=-1,
                  hist=None):
            pass

    with pytest.raises(TypeError, match="RowStore"):
        TreeGrower(NoLeaves(), np.full(3, 8), 8)
    TreeGrower(_node_rows(), np.full(3, 8), 8)


# -- the engine knows nothing of ranking -----------------------------------------------


def test_engine_imports_nothing_about_queries_or_ranking():
    engine = os.path.join(os.path.dirname(sklearn_ltr.__file__), "_gbdt")
    imported = set()
    for name in os.listdir(engine):
        if name.endswith(".py"):
            with open(os.path.join(engine, name), encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level:
                    imported.add("." * node.level + (node.module or ""))
                elif isinstance(node, ast.Import):
                    imported.update(alias.name for alias in node.names)
    outside = {m for m in imported if m.startswith("..") or m.startswith("sklearn_ltr")}
    assert outside  # the scan found the engine's imports of utilities
    about_ranking = {m for m in outside
                     if any(word in m for word in ("quer", "rank", "objectives", "metrics"))}
    assert about_ranking == set()
