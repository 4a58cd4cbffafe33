"""The boosting loop: objective -> gradients -> one tree -> updated scores.

It also keeps the fitted trees, predicts from them (all at once or staged),
runs early stopping on a validation set, and prints progress. It works on a
:class:`TrainingData`: binned rows in groups of contiguous rows, their
objective (an :class:`~.objective.Objective`, which also gives the group
offsets) and their raw scores, in this process (or, through an object with
the same methods, on Dask workers). Row subsampling and the training metric
take whole groups. Input validation, the validation split and binning are
the estimator's job, and so is the meaning of a group.
"""

import time

import numpy as np

from .._utils.groups import rows_of_groups
from .common import G_H_DTYPE, Y_DTYPE
from .ensemble import TreeEnsemble
from .grower import TreeGrower, _update_raw_predictions
from .node_rows import NodeRows
from .objective import Objective
from .predictor import _predict_binned, concatenate_trees, predict_raw
from .progress import ProgressLine

# tree_starts of an "ensemble" made of a single tree's node array.
_ONE_TREE = np.zeros(1, dtype=np.int64)

__all__ = ["Booster", "TrainingData", "constraints_of_binned_features"]


def constraints_of_binned_features(tree_params, feature_columns):
    """``tree_params`` with ``monotonic_cst`` and ``interaction_cst``, given
    per input column, restated per binned feature (``feature_columns``: the
    column of each; None if they are the columns)."""
    if feature_columns is None:
        return tree_params
    params = dict(tree_params)
    if params.get("monotonic_cst") is not None:
        params["monotonic_cst"] = np.asarray(params["monotonic_cst"])[feature_columns]
    if params.get("interaction_cst") is not None:
        params["interaction_cst"] = [
            frozenset(int(f) for f in np.flatnonzero(np.isin(feature_columns, sorted(group))))
            for group in params["interaction_cst"]
        ]
    return params


class Booster:
    """A growing ensemble of regression trees and the loop that grows it.

    Parameters
    ----------
    objective_name : str
        Name of the objective, kept for the record.
    baseline : float
        Raw score of the model with no trees.
    n_features : int
        Number of input columns.
    missing_values_bin_idx : int
        Bin index of missing values in binned data.

    Attributes
    ----------
    trees : list of ndarray of NODE_DTYPE
        The fitted trees, in order.
    train_scores, validation_scores : ndarray
        Metric of the model with 0, 1, 2, ... trees on the small training
        sample and on the validation set of the last :meth:`boost`, for
        every tree grown, including those early stopping dropped afterwards
        (so at least ``n_trees + 1`` entries); empty if it did not track
        them. Training scores of trees from an earlier warm-start fit that
        tracked none, or another metric, are NaN.
    train_metric : str or None
        ``name`` of the metric of ``train_scores`` (None if empty).
    """

    def __init__(self, *, objective_name, baseline, n_features, missing_values_bin_idx):
        self.objective_name = objective_name
        self.baseline = float(baseline)
        self.n_features = n_features
        self.missing_values_bin_idx = missing_values_bin_idx
        self.trees = []
        self.train_scores = np.zeros(0)
        self.validation_scores = np.zeros(0)
        self.train_metric = None
        self.phase_seconds = {}
        # Categories of each binned feature, None for numeric ones, and the
        # input column of each (None: feature f is column f): TreeEnsemble's
        # categories and feature_columns, set from the bin mapper by boost.
        self.categories = None
        self.feature_columns = None
        self._flat = None
        # The unnamed TreeEnsemble that predict reads, with the flat node
        # array it was made from: building the view checks every node, a
        # tenth of the time of scoring one query of 100 documents.
        self._prediction_view = None

    @property
    def n_trees(self):
        return len(self.trees)

    # -- prediction ---------------------------------------------------------

    def ensemble(self, feature_names=None, missing_in_training=None):
        """The fitted trees as a :class:`TreeEnsemble`, the neutral view that
        prediction, persistence, export and inspection read."""
        nodes, tree_starts = self._current_flat()
        return TreeEnsemble(
            nodes=nodes,
            tree_starts=tree_starts,
            baseline=self.baseline,
            n_features=self.n_features,
            feature_names=None if feature_names is None else tuple(feature_names),
            objective=self.objective_name,
            missing_in_training=(
                None if missing_in_training is None
                else np.array(missing_in_training, dtype=bool)
            ),
            categories=self.categories,
            feature_columns=self.feature_columns,
        )

    def _current_flat(self):
        """The trees as one node array and their starts, cached until a tree
        is added or removed."""
        if self._flat is None or self._flat[1].shape[0] != self.n_trees:
            self._flat = concatenate_trees(self.trees)
        return self._flat

    def __getstate__(self):
        # The prediction view is rebuilt on demand: pickles and skops files
        # hold the trees once, and no type beyond the booster's own.
        state = self.__dict__.copy()
        state["_prediction_view"] = None
        return state

    def predict(self, X):
        """Raw scores of ``X`` (dense or sparse, unbinned) from all trees.
        The view it reads is made once per set of trees."""
        view = self._prediction_view
        if view is None or view[0] is not self._current_flat():
            view = self._prediction_view = (self._flat, self.ensemble())
        return view[1].predict(X)

    def staged_predict(self, X):
        """Yield raw scores after each tree."""
        out = np.full(X.shape[0], self.baseline, dtype=Y_DTYPE)
        X = self.ensemble().encode(X)
        for tree in self.trees:
            out += predict_raw(tree, _ONE_TREE, X)
            yield out.copy()

    def feature_importances(self, importance_type="gain"):
        """Total positive split gain ("gain") or number of splits ("split")
        per feature, normalised to sum to one.

        A split of a symmetric tree is chosen for its level's summed gain,
        so with an L2 penalty one node's own gain may be negative; as in
        LightGBM, such a gain adds nothing (importances stay non-negative).
        """
        importances = np.zeros(self.n_features)
        for tree in self.trees:
            splits = tree[tree["is_leaf"] == 0]
            weights = np.maximum(splits["gain"], 0.0) if importance_type == "gain" else 1.0
            columns = splits["feature_idx"]
            if self.feature_columns is not None:
                columns = self.feature_columns[columns]
            np.add.at(importances, columns, weights)
        total = importances.sum()
        return importances / total if total > 0 else importances

    # -- training -----------------------------------------------------------

    def boost(
        self,
        training,
        *,
        n_iterations,
        bin_mapper,
        tree_params,
        learning_rate,
        max_features,
        subsample,
        random_seed,
        validation,
        metric,
        n_iter_no_change,
        tol,
        verbose,
        small_trainset_rows,
    ):
        """Add trees until ``n_iterations`` trees exist or early stopping fires.

        Parameters
        ----------
        training : TrainingData
            The training rows, their objective and their raw scores (or an
            object with the same methods whose rows live on Dask workers).
        n_iterations : int
            Total number of trees wanted, counting those already fitted.
        bin_mapper : BinMapper
            The fitted bin mapper (for the number of bins, missing values and
            the raw-value thresholds of splits).
        tree_params : dict
            Passed to the grower (leaves, depth, minimum leaf size, ...).
        learning_rate : float
            Shrinkage of leaf values.
        max_features : float
            Share of features each tree may use.
        subsample : float
            Share of the row groups each tree is grown on.
        random_seed : int
            Seeds the generators of each iteration, so a warm start continues
            with exactly the draws a single fit would have made.
        validation : tuple (X_binned_val, y_val, offsets_val) or None
            Validation rows for the metric and early stopping.
        metric : callable
            ``metric(y, raw_scores, offsets) -> float``, larger is better;
            its ``name`` and ``label`` name it in the summary and in the
            progress lines (``sklearn_ltr._rankers.early_stopping_metric``).
        n_iter_no_change : int or None
            Early stopping patience; None disables early stopping.
        tol : float
            Minimum improvement that counts.
        verbose : int
            Report progress if positive, through :class:`ProgressLine`: 1
            reports every iteration (one updating line on a terminal), N > 1
            every N-th iteration and the last, each on a line of its own.
        small_trainset_rows : int
            About how many training rows (whole groups) to score each
            iteration for ``train_scores``.
        """
        offsets = training.offsets
        n_groups = offsets.shape[0] - 1
        training.start_scores(self.baseline, self.trees)

        first_iteration = self.n_trees
        self.categories = bin_mapper.feature_categories()
        self.feature_columns = bin_mapper.wide_feature_columns()
        track = validation is not None or verbose
        if track:
            training.choose_small_trainset(small_trainset_rows, random_seed)
            # Entries past the trees kept belong to trees early stopping dropped.
            train_scores = (list(self.train_scores[:first_iteration + 1])
                            if self.train_metric == metric.name else [])
            if len(train_scores) != first_iteration + 1:
                # An earlier fit of this warm start recorded none, or scores of
                # another metric: NaN for its trees.
                train_scores = [np.nan] * first_iteration + [training.small_trainset_score(metric)]
        if validation is not None:
            # Entry i is the model with i trees. The trees a warm start already
            # has are scored again: an earlier fit may have had another
            # validation set, or none.
            X_val, y_val, offsets_val = validation
            raw_val = np.full(X_val.shape[0], self.baseline, dtype=Y_DTYPE)
            validation_scores = [metric(y_val, raw_val, offsets_val)]
            for nodes in self.trees:
                _add_binned_tree(nodes, X_val, raw_val, self.missing_values_bin_idx)
                validation_scores.append(metric(y_val, raw_val, offsets_val))

        # Columns, not binned features, are sampled: the blocks of a wide
        # categorical column come and go together.
        n_features = self.n_features
        n_allowed = max(1, int(np.ceil(max_features * n_features)))
        n_sampled_groups = max(1, int(np.ceil(subsample * n_groups)))
        all_features = np.ones(n_features, dtype=np.uint8)
        if self.feature_columns is not None:
            all_features = all_features[self.feature_columns]
        grower = TreeGrower(
            training.node_rows,
            bin_mapper.n_bins_non_missing_,
            self.missing_values_bin_idx,
            bin_thresholds=bin_mapper.bin_thresholds_,
            shrinkage=learning_rate,
            is_categorical=bin_mapper.is_categorical_,
            **constraints_of_binned_features(tree_params, self.feature_columns),
        )
        start_time = time.perf_counter()
        progress = ProgressLine(verbose) if verbose else None
        seconds = dict.fromkeys(("gradients", "grow", "score_update", "tracking"), 0.0)

        for iteration in range(first_iteration, n_iterations):
            tic = time.perf_counter()
            training.compute_gradients(iteration, random_seed)
            seconds["gradients"] += time.perf_counter() - tic

            feature_mask = all_features
            sample_indices = None
            if n_allowed < n_features or n_sampled_groups < n_groups:
                # Made only when it draws: a generator takes about 20 us to
                # seed, 1% of a 500-tree fit on the data we ship.
                rng = np.random.default_rng([random_seed, 2, iteration])
                if n_allowed < n_features:
                    feature_mask = np.zeros(n_features, dtype=np.uint8)
                    feature_mask[rng.choice(n_features, n_allowed, replace=False)] = 1
                    if self.feature_columns is not None:
                        feature_mask = feature_mask[self.feature_columns]
                if n_sampled_groups < n_groups:
                    groups = np.sort(rng.choice(n_groups, n_sampled_groups, replace=False))
                    sample_indices, _ = rows_of_groups(offsets, groups)

            tic = time.perf_counter()
            tree = grower.grow(
                training.gradients, training.hessians, sample_indices=sample_indices,
                feature_mask=feature_mask,
            )
            self.trees.append(tree.nodes)
            tac = time.perf_counter()
            training.add_tree(tree, sampled=sample_indices is not None)
            toc = time.perf_counter()
            seconds["grow"] += tac - tic
            seconds["score_update"] += toc - tac

            should_stop = False
            if track:
                train_scores.append(training.small_trainset_score(metric))
            if validation is not None:
                _add_binned_tree(tree.nodes, X_val, raw_val, self.missing_values_bin_idx)
                validation_scores.append(metric(y_val, raw_val, offsets_val))
                if n_iter_no_change is not None:
                    should_stop = _should_stop(validation_scores, n_iter_no_change, tol)
            seconds["tracking"] += time.perf_counter() - toc
            last = should_stop or iteration + 1 == n_iterations
            if verbose and (verbose == 1 or (iteration + 1) % verbose == 0 or last):
                elapsed = time.perf_counter() - start_time
                seconds_per_tree = elapsed / (iteration + 1 - first_iteration)
                line = (f"[{iteration + 1}/{n_iterations}] train {metric.label}: "
                        f"{train_scores[-1]:.5f}")
                if validation is not None:
                    line += f", validation {metric.label}: {validation_scores[-1]:.5f}"
                line += f", leaves: {int(tree.nodes['is_leaf'].sum())}"
                line += f", elapsed {elapsed:.2f}s, " + _time_left(
                    seconds_per_tree, 0 if should_stop else n_iterations - iteration - 1,
                    _patience_left(validation_scores, n_iter_no_change, tol)
                    if validation is not None and n_iter_no_change is not None else None,
                )
                progress.update(line)
            if should_stop:
                break

        self.phase_seconds = {
            "gradients": seconds["gradients"],
            "histograms": grower.time_histograms,
            "split_finding": grower.time_find_split,
            "partition": grower.time_partition,
            "tree_other": seconds["grow"] - grower.time_histograms - grower.time_find_split
            - grower.time_partition,
            "score_update": seconds["score_update"],
            "tracking": seconds["tracking"],
        }
        n_grown = self.n_trees
        if validation is not None and n_iter_no_change is not None:
            # Keep the trees up to the best validation score, as LightGBM does
            # with early stopping (its best_iteration), but at least one tree
            # and every tree a warm start already had: it only adds trees.
            first_candidate = max(first_iteration, 1)
            best = first_candidate + int(np.argmax(validation_scores[first_candidate:]))
            del self.trees[best:]
            self._flat = None
        self.train_scores = np.asarray(train_scores) if track else np.zeros(0)
        self.train_metric = metric.name if track else None
        self.validation_scores = np.asarray(validation_scores) if validation is not None else np.zeros(0)
        if verbose:
            progress.close(self._summary(n_grown, n_iterations, n_iter_no_change, tol, metric.name)
                           if validation is not None else None)

    def _summary(self, n_grown, n_iterations, n_iter_no_change, tol, metric_name):
        """Why boosting ended and which trees were kept (verbose output)."""
        best = self.validation_scores[self.n_trees]
        if n_iter_no_change is None:
            why = f"Reached n_estimators={n_iterations}"
        elif n_grown < n_iterations:
            why = (f"Stopped early after {n_grown} trees: the validation {metric_name} did not "
                   f"improve by more than tol={tol:g} in the last {n_iter_no_change} "
                   "iterations (n_iter_no_change)")
        else:
            why = f"Reached n_estimators={n_iterations} before early stopping fired"
        return (f"{why}. Kept {self.n_trees} trees: best validation {metric_name} {best:.5f} at "
                f"iteration {self.n_trees}.")


class TrainingData:
    """The training rows of a fit in this process, with their objective and
    raw scores: what :meth:`Booster.boost` needs besides the trees.

    A data-parallel fit passes :meth:`Booster.boost` an object with the same
    attributes and methods whose rows are spread over Dask workers
    (``sklearn_ltr.dask._shard``).

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8
        Training rows, binned, in the objective's groups.
    objective : Objective
        Gives the labels, the group offsets, and the gradients and hessians
        of the training rows (see :class:`~.objective.Objective` for the
        calls it gets each iteration). Its ``constant_hessian`` goes to the
        row store.
    missing_values_bin_idx : int
        Bin index of missing values.
    n_bins_non_missing : array-like of shape (n_features,), default=None
        The bin mapper's ``n_bins_non_missing_``, handed to
        :class:`~.node_rows.NodeRows` so that histograms clear only the bins
        in use.
    feature_columns : ndarray of shape (n_features,), dtype int64, default=None
        The bin mapper's ``feature_columns_`` if it has wide columns (their
        blocks' histograms are then built in one pass), else None.

    Attributes
    ----------
    node_rows : NodeRows
        The rows, grouped by node of the tree being grown.
    offsets : ndarray of shape (n_groups + 1,)
        Group offsets of the rows (the objective's).
    gradients, hessians : ndarray of shape (n_samples,), dtype float32
        Of the current iteration.
    raw_scores : ndarray of shape (n_samples,), dtype float64
        Raw scores of the current model.
    """

    def __init__(self, X_binned, objective, missing_values_bin_idx, n_bins_non_missing=None,
                 feature_columns=None):
        if not isinstance(objective, Objective):
            raise TypeError(
                f"objective must implement the Objective protocol, got "
                f"{type(objective).__name__}."
            )
        self.node_rows = NodeRows(X_binned, missing_values_bin_idx, n_bins_non_missing,
                                  constant_hessian=objective.constant_hessian,
                                  feature_columns=feature_columns)
        self.objective = objective
        self.offsets = objective.offsets
        n_samples = self.node_rows.n_samples
        self.gradients = np.empty(n_samples, dtype=G_H_DTYPE)
        self.hessians = np.empty(n_samples, dtype=G_H_DTYPE)
        self.raw_scores = np.empty(n_samples, dtype=Y_DTYPE)

    def start_scores(self, baseline, trees):
        """Set the raw scores to those of ``baseline`` plus ``trees``."""
        self.raw_scores[:] = baseline
        for nodes in trees:
            self._add_binned_predictions(nodes)

    def _add_binned_predictions(self, nodes):
        rows = self.node_rows
        _add_binned_tree(nodes, rows.X_binned, self.raw_scores, rows.missing_values_bin_idx)

    def compute_gradients(self, iteration, random_seed, rng=None, shared=False):
        """Fill ``gradients`` and ``hessians`` for tree ``iteration``.

        The objective's random draws (XE-NDCG's gamma) come from a generator
        of their own, seeded by ``(random_seed, iteration)``, so that they do
        not shift the draws of column and group sampling. ``rng`` replaces
        that generator (a Dask worker passes one that keeps its own rows'
        share of the draws of the whole training set).

        Then the objective updates its own estimates from its
        :meth:`~.objective.Objective.iteration_statistics`,
        unless ``shared``: a Dask worker returns them instead, for the client
        to add up over all workers and pass to :meth:`end_iteration`.

        Returns
        -------
        statistics : ndarray or None
            With ``shared``, the objective's statistics of these rows.
        """
        objective = self.objective
        # Counting the trees kept from a warm start makes an iteration-
        # dependent objective continue its schedule, not restart it.
        objective.set_iteration(iteration)
        if rng is None:
            rng = objective_generator(random_seed, iteration)
        objective.prepare_iteration(rng)
        objective.gradient_hessian(self.raw_scores, self.gradients, self.hessians)
        statistics = objective.iteration_statistics()
        if shared or statistics is None:
            return statistics
        objective.end_iteration(statistics)
        return None

    def end_iteration(self, statistics):
        """Pass the objective its statistics summed over all training rows."""
        self.objective.end_iteration(statistics)

    def fitted_attributes(self):
        """The estimator attributes the objective learned (name -> value)."""
        return self.objective.fitted_attributes()

    def add_tree(self, tree, sampled):
        """Add a grown tree's values to the raw scores."""
        if sampled:
            # Rows outside the sample were not partitioned by the grower.
            self._add_binned_predictions(tree.nodes)
        else:
            _update_raw_predictions(self.raw_scores, tree.partitioned_indices,
                                    tree.leaf_starts, tree.leaf_stops, tree.leaf_values)

    def choose_small_trainset(self, max_rows, random_seed):
        """Choose the whole groups that :meth:`small_trainset_score` scores;
        return how many."""
        return self.use_small_trainset(small_trainset_groups(self.offsets, max_rows, random_seed))

    def use_small_trainset(self, groups):
        """Score these groups (sorted indices) in :meth:`small_trainset_score`;
        return how many."""
        self._small_rows, self._small_offsets = rows_of_groups(self.offsets, groups)
        return groups.shape[0]

    def small_trainset_score(self, metric):
        """The metric of the current raw scores on the small training sample."""
        rows = self._small_rows
        return metric(self.objective.y[rows], self.raw_scores[rows], self._small_offsets)


def _add_binned_tree(nodes, X_binned, out, missing_values_bin_idx):
    """Add one tree's predictions on binned rows to ``out`` in place."""
    _predict_binned(nodes, _ONE_TREE, X_binned, out, missing_values_bin_idx)


def objective_generator(random_seed, iteration):
    """The generator of an objective's random draws for tree ``iteration``."""
    return np.random.default_rng([random_seed, 5, iteration])


def _patience_left(scores, n_iter_no_change, tol):
    """Iterations without any improvement that early stopping still needs
    before it fires: :func:`_should_stop` on the scores followed by ever
    worse ones."""
    extended = list(scores)
    for waited in range(n_iter_no_change + 1):
        if _should_stop(extended, n_iter_no_change, tol):
            return waited
        extended.append(-np.inf)
    return n_iter_no_change


def _time_left(seconds_per_tree, trees_left, patience_left):
    """The time-left part of a progress line: with early stopping, the range
    between stopping as soon as it can and growing every tree."""
    most = trees_left * seconds_per_tree
    if patience_left is None or patience_left >= trees_left:
        return f"left ~{most:.2f}s"
    least = patience_left * seconds_per_tree
    return f"left {least:.2f}-{most:.2f}s (early stopping may end it sooner)"


def _should_stop(scores, n_iter_no_change, tol):
    """True if none of the last ``n_iter_no_change`` scores beat the one before
    them by more than ``tol`` (scikit-learn's rule, larger is better)."""
    if len(scores) <= n_iter_no_change:
        return False
    reference = scores[-(n_iter_no_change + 1)] + tol
    return not any(score > reference for score in scores[-n_iter_no_change:])


def small_trainset_groups(offsets, max_rows, seed):
    """Whole groups drawn at random until about ``max_rows`` rows (sorted
    group indices)."""
    n_groups = offsets.shape[0] - 1
    sizes = np.diff(offsets)
    if sizes.sum() <= max_rows:
        groups = np.arange(n_groups)
    else:
        permuted = np.random.default_rng([seed, 3]).permutation(n_groups)
        n_keep = max(1, int(np.searchsorted(np.cumsum(sizes[permuted]), max_rows)))
        groups = np.sort(permuted[:n_keep])
    return groups
