"""How the gradient-boosted rankers check and prepare their inputs.

:class:`RankerInputMixin` holds the methods of
:class:`~sklearn_ltr._rankers.base.BaseGBRanker` that turn what the caller passes into
what the fit and prediction code takes: ``X`` checked against the fitted
features, the training ``X``, ``y``, ``qid`` and ``sample_weight`` (pandas
category columns encoded, labels checked, a missing ``qid`` handled), and the
validation set of ``fit``. The rankers override the hooks ``_gain_table``,
``_checked_labels`` and ``_validation_set_used_otherwise``.
"""

import numpy as np
from sklearn.utils.validation import _check_sample_weight, _num_samples, validate_data

from .._gbdt.common import X_DTYPE, Y_DTYPE
from .._utils.queries import check_per_row_weights, check_qid, resolve_qid, warn_one_query
from .categorical_input import categorical_mask, encode_pandas_categories, pandas_categories
from .input_checks import check_2d, check_labels, check_no_text_labels, check_numeric_columns

__all__ = ["RankerInputMixin"]


_FLOAT_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


class RankerInputMixin:
    """Input checks and preparation of :class:`~sklearn_ltr._rankers.base.BaseGBRanker`.

    The methods read the estimator's parameters (``categorical_features``,
    ``early_stopping``) and its ``_adds_to_fitted_model``.
    """

    # NaN means missing; +-inf are the largest and smallest values, which
    # binning (thresholds are finite) and prediction (x <= threshold) both
    # order correctly, as LightGBM does.
    def _validate_X(self, X, *, name="X", allow_empty=True):
        """Check X against the fitted features. Scoring an empty batch is not
        an error; a validation set without rows is."""
        if (type(X) is np.ndarray and X.ndim == 2 and X.dtype in _FLOAT_DTYPES
                and X.shape[0] > 0 and X.shape[1] == getattr(self, "n_features_in_", -1)
                and not hasattr(self, "feature_names_in_")):
            # What validate_data would return unchanged: a float array of the
            # fitted width, for a ranker fitted without feature names. Its
            # checks cost as much as scoring a query with 50 trees.
            return X
        check_2d(X, name)
        self._check_category_frame_names(X)
        X = encode_pandas_categories(X, getattr(self, "_pandas_categories", {}), name)
        check_numeric_columns(X, name)
        if not allow_empty and _num_samples(X) == 0:
            raise ValueError(f"{name} has no rows; a validation set needs at least one query.")
        return validate_data(
            self,
            X,
            reset=False,
            accept_sparse=("csr", "csc"),
            dtype=[X_DTYPE, np.float32],
            ensure_all_finite=False,
            ensure_min_samples=0,
        )

    def _gain_table(self):
        """The checked ``label_gain`` table of a ranker that has one, else
        None (gains ``2**y - 1``)."""
        return None

    def _checked_labels(self, y, name="y"):
        """Labels as the objective needs them (finite and non-negative here)."""
        return check_labels(y, name=name, label_gain=self._gain_table())

    def _check_category_frame_names(self, X):
        """scikit-learn's check of a frame's column names against fit's,
        before the category columns, which are read by position, are
        encoded: a missing or moved column would otherwise fail there,
        with an IndexError or advice about the wrong column."""
        if getattr(self, "_pandas_categories", None) and hasattr(X, "columns"):
            validate_data(self, X, reset=False, skip_check_array=True)

    def _prepare_training_data(self, X, y, qid, sample_weight):
        X, qid = resolve_qid(X, qid)
        check_2d(X, "X")
        warm = self._adds_to_fitted_model()
        if warm:
            self._check_category_frame_names(X)
        category_columns = self._pandas_categories if warm else pandas_categories(X)
        X = encode_pandas_categories(X, category_columns)
        check_numeric_columns(X, "X")
        # Before validate_data, which would read "1.5" as 1.5.
        check_no_text_labels(y, "y")
        if _num_samples(X) == 0:
            raise ValueError("X has no rows; fit needs at least one query with one row.")
        if hasattr(X, "columns") and X.shape[1] == 0:
            raise ValueError("X has no feature columns (its 'qid' column is not a feature).")
        # A warm start checks X against the fitted columns and leaves them
        # alone, so a refused X does not spoil the model.
        X, y = validate_data(
            self,
            X,
            y,
            reset=not self._adds_to_fitted_model(),
            accept_sparse=("csr", "csc"),
            dtype=[X_DTYPE, np.float32],
            ensure_all_finite=False,
            y_numeric=True,
        )
        y = self._checked_labels(y)
        if not warm:
            self._pandas_categories = category_columns
            self.is_categorical_ = categorical_mask(
                self.categorical_features, X.shape[1],
                getattr(self, "feature_names_in_", None), category_columns)
        n_samples = X.shape[0]
        if qid is None:
            # Frames above: _fit, fit, scikit-learn's _fit_context, the keyword
            # check of BaseGBRanker.__init_subclass__, then the caller.
            warn_one_query(f"{type(self).__name__}.fit", n_samples, X=X, stacklevel=7)
            qid = np.zeros(n_samples, dtype=np.int64)
        qid = check_qid(qid, n_samples)
        if sample_weight is not None:
            check_per_row_weights(sample_weight, qid)
            sample_weight = _check_sample_weight(sample_weight, X, dtype=Y_DTYPE)
        return X, y, qid, sample_weight

    def _validation_set_used_otherwise(self):
        """True if ``fit`` uses ``X_val`` for more than early stopping."""
        return False

    def _check_validation_arguments(self, X_val, y_val, qid_val):
        """Refuse validation arguments that ``fit`` would ignore."""
        if X_val is None:
            if y_val is not None or qid_val is not None:
                raise ValueError("y_val or qid_val was given without X_val.")
        elif self.early_stopping is False and not self._validation_set_used_otherwise():
            raise ValueError(
                "X_val was given but early_stopping=False, so it would not be used. Set "
                "early_stopping=True (or 'auto'), or leave out X_val, y_val and qid_val."
            )

    def _prepare_validation_data(self, X_val, y_val, qid_val, n_training_queries):
        X_val, qid_val = resolve_qid(X_val, qid_val)
        if y_val is None:
            raise ValueError("X_val was given without y_val; pass both (and qid_val).")
        X_val = self._validate_X(X_val, name="X_val", allow_empty=False)
        y_val = self._checked_labels(y_val, name="y_val")
        if y_val.shape[0] != X_val.shape[0]:
            raise ValueError(
                f"y_val has {y_val.shape[0]} labels but X_val has {X_val.shape[0]} rows."
            )
        n_val = X_val.shape[0]
        if qid_val is None:
            if n_training_queries > 1 and self.early_stopping is not False:
                raise ValueError(
                    f"qid_val is required: the training data has {n_training_queries} "
                    "queries, and without qid_val all validation rows would be scored as "
                    "one query. Pass qid_val, or give X_val a 'qid' column."
                )
            qid_val = np.zeros(n_val, dtype=np.int64)
        qid_val = check_qid(qid_val, n_val, name="qid_val")
        return X_val, y_val, qid_val
