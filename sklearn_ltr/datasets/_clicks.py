"""Click logs simulated from graded relevance labels with classic click models.

Each session shows the top documents of a query in the order of a
"production" ranker and draws clicks from a position-based, cascade or
dynamic Bayesian network model. All sessions of a batch of equally sized
queries are drawn at once as arrays of shape (queries, sessions, documents),
so that hundreds of thousands of sessions take seconds.
"""

import numbers

import numpy as np
from sklearn.utils import Bunch, check_random_state

from .._utils.queries import check_qid, group_queries

__all__ = ["simulate_clicks"]

_MODELS = ("pbm", "cascade", "dbn")
# Cells (queries x sessions x documents) drawn per batch: large enough that
# NumPy's per-call overhead vanishes, small enough that the few temporary
# arrays of a batch stay in the tens of megabytes.
_BATCH_CELLS = 1 << 19


def _check_positive_int(value, name, *, allow_none=False):
    if allow_none and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        extra = " or None" if allow_none else ""
        raise ValueError(f"{name} must be a positive integer{extra}; got {value!r}.")
    return int(value)


def _check_probability(value, name):
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not 0.0 <= float(value) <= 1.0
    ):
        raise ValueError(f"{name} must be a probability in [0, 1]; got {value!r}.")
    return float(value)


def _check_per_label(values, name):
    """A 1-d float array of per-label probabilities, ``values[label]``."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be an array-like of probabilities, one per label "
            f"({name}[y] for label y); got {values!r}."
        ) from None
    if array.ndim != 1 or array.shape[0] == 0:
        raise ValueError(
            f"{name} must be a non-empty 1-d array of probabilities, one per label "
            f"({name}[y] for label y); got shape {array.shape}."
        )
    if np.isnan(array).any():
        raise ValueError(f"{name} contains NaN; every label needs a probability.")
    if array.min() < 0.0 or array.max() > 1.0:
        raise ValueError(
            f"{name} must hold probabilities in [0, 1]; got values from "
            f"{array.min()!r} to {array.max()!r}."
        )
    return array


def _check_labels(y):
    """Graded labels as int64, or a ValueError naming ``y``."""
    if hasattr(y, "to_numpy"):
        y = y.to_numpy()
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(
            f"y must be a 1-d array with one relevance label per row; got shape {y.shape}."
        )
    if y.dtype.kind == "b":
        return y.astype(np.int64)
    if y.dtype.kind not in "iuf":
        raise ValueError(
            f"y must hold integer relevance labels (0, 1, 2, ...); got dtype {y.dtype}."
        )
    if y.dtype.kind == "f":
        if np.isnan(y).any():
            raise ValueError(
                f"y contains NaN (row {int(np.flatnonzero(np.isnan(y))[0])}); "
                "every row needs a relevance label."
            )
        fractional = np.flatnonzero(~np.isfinite(y) | (y != np.round(y)))
        if fractional.size:
            i = int(fractional[0])
            raise ValueError(
                f"y must hold integer relevance labels (0, 1, 2, ...); got {y[i].item()!r} "
                f"at row {i}. Round or bin graded labels before simulating clicks."
            )
    if y.size and y.min() < 0:
        i = int(np.argmin(y))
        raise ValueError(
            f"y must hold non-negative relevance labels; got {y[i].item()!r} at row {i}."
        )
    return y.astype(np.int64)


def _check_labels_fit(y, table, name):
    if y.size and y.max() >= table.shape[0]:
        raise ValueError(
            f"y holds label {int(y.max())} but {name} has {table.shape[0]} entries "
            f"(labels 0 to {table.shape[0] - 1}); give {name} one probability for "
            "every label that occurs."
        )


def _gain_ratio(y, max_label):
    """``(2**y - 1) / (2**max_label - 1)``, without overflow for large labels."""
    if max_label == 0:
        return np.zeros(y.shape[0])
    ln2 = np.log(2.0)
    yf = y.astype(np.float64)
    return np.exp2(yf - max_label) * -np.expm1(-yf * ln2) / -np.expm1(-max_label * ln2)


def _batches(sizes, n_sessions):
    """(size, query indices, first session, end session) blocks of equal-size queries."""
    for n in np.unique(sizes):
        queries = np.flatnonzero(sizes == n)
        per_query = n_sessions * int(n)
        if per_query <= _BATCH_CELLS:
            step = _BATCH_CELLS // per_query
            for start in range(0, queries.shape[0], step):
                yield int(n), queries[start : start + step], 0, n_sessions
        else:
            step = max(1, _BATCH_CELLS // int(n))
            for q in queries:
                for s0 in range(0, n_sessions, step):
                    yield int(n), np.array([q]), s0, min(n_sessions, s0 + step)


def _draw_clicks(rng, model, a, s, eta, continuation, all_satisfied):
    """Clicks (bool) for attractiveness ``a`` and satisfaction ``s`` of shape
    (queries, sessions, shown), position along the last axis."""
    shape = a.shape
    if model == "pbm":
        examination = np.arange(1, shape[-1] + 1, dtype=np.float64) ** -float(eta)
        return rng.random(shape) < examination * a
    attractive = rng.random(shape) < a
    # The cascade model is the DBN with certain satisfaction and continuation;
    # drawing nothing for those makes the two give the same log for one seed.
    stops = attractive if all_satisfied else attractive & (rng.random(shape) < s)
    goes_on = ~stops
    if continuation < 1.0:
        goes_on &= rng.random(shape) < continuation
    examined = np.ones(shape, dtype=bool)
    np.logical_and.accumulate(goes_on[..., :-1], axis=-1, out=examined[..., 1:])
    return examined & attractive


def simulate_clicks(
    y,
    qid,
    *,
    scores=None,
    model="pbm",
    n_sessions=10,
    k=10,
    eta=1.0,
    attractiveness=None,
    click_noise=None,
    max_label=None,
    satisfaction=None,
    continuation=1.0,
    score_noise=0.0,
    random_state=None,
):
    """Simulate a click log from graded relevance labels.

    Every query gets ``n_sessions`` sessions. A session shows the query's
    top ``k`` documents in the order of a production ranker (``scores``,
    perturbed per session by ``score_noise``, or a random permutation), and a
    simulated user clicks on them following a click model. The log has one
    entry per shown document: train a ranker on the clicks with
    ``X[log.row], log.click, qid=log.session``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Graded relevance labels: non-negative integers (floats holding
        integers are accepted).
    qid : array-like of shape (n_samples,)
        Query id of every row. Rows of a query need not be sorted or
        contiguous.
    scores : array-like of shape (n_samples,), default=None
        Scores of the production ranker: each session shows the documents of
        a query by decreasing score (ties in row order). None shows each
        session a uniformly random permutation of the query's documents.
    model : {"pbm", "cascade", "dbn"}, default="pbm"
        Click model.

        - ``"pbm"``, position-based model: the document at rank ``r`` is
          clicked with probability ``(1 / r)**eta * attractiveness(y)``,
          independently of the other ranks.
        - ``"cascade"``: the user reads from rank 1 down, clicks a document
          with probability ``attractiveness(y)`` and leaves after the first
          click; without a click, the user reads to the end of the list.
        - ``"dbn"``, dynamic Bayesian network: rank 1 is examined; an
          examined document is clicked with probability
          ``attractiveness(y)``; after a click the user is satisfied with
          probability ``satisfaction(y)`` and leaves; a user who is not
          satisfied (no click, or a click without satisfaction) examines the
          next rank with probability ``continuation``. ``"cascade"`` is
          ``"dbn"`` with ``satisfaction`` 1 for every label and
          ``continuation=1``.
    n_sessions : int, default=10
        Sessions per query.
    k : int or None, default=10
        Documents shown per session (all of a query's documents if it has
        fewer). None shows all.
    eta : float, default=1.0
        Severity of the position bias of ``"pbm"``: rank ``r`` is examined
        with probability ``(1 / r)**eta``; 0 means no position bias. At
        least 0. Only for ``model="pbm"``.
    attractiveness : array-like of shape (n_labels,), default=None
        Click probability of an examined document of each label,
        ``attractiveness[y]``, for example ``[0.05, 0.3, 0.5, 0.7, 0.95]``
        for labels 0 to 4. None means ``click_noise + (1 - click_noise) *
        (2**y - 1) / (2**max_label - 1)`` (``click_noise`` if ``max_label``
        is 0).
    click_noise : float in [0, 1], default=None
        Click probability of an examined document of label 0 under the
        default ``attractiveness``; None means 0.1. Must stay None when
        ``attractiveness`` is given.
    max_label : int, default=None
        The highest possible label, for the default ``attractiveness`` and
        ``satisfaction``; None means ``y.max()``. Labels above it are an
        error.
    satisfaction : array-like of shape (n_labels,), default=None
        Probability that a click on a document of each label satisfies the
        user, ``satisfaction[y]``. None means ``(2**y - 1) / (2**max_label -
        1)`` (0 if ``max_label`` is 0). Only for ``model="dbn"``.
    continuation : float in [0, 1], default=1.0
        Probability that a user who is not satisfied examines the next rank
        (gamma of the DBN). Only for ``model="dbn"``.
    score_noise : float, default=0.0
        Standard deviation of Gaussian noise added to ``scores``, drawn anew
        for every session, so that sessions of a query show different
        orders. At least 0; needs ``scores``.
    random_state : int, RandomState instance or None, default=None
        Seed. The same integer always gives the same log.

    Returns
    -------
    log : :class:`~sklearn.utils.Bunch`
        One entry per shown document, ordered by session, then position:

        row : ndarray of shape (n_impressions,), dtype int64
            Index of the shown document in the input rows.
        session : ndarray of shape (n_impressions,), dtype int64
            Session id, ``0 .. n_queries * n_sessions - 1``. The sessions of
            a query are consecutive; queries come in sorted ``qid`` order.
        qid : ndarray of shape (n_impressions,)
            The query id of the row, with the dtype of ``qid``.
        position : ndarray of shape (n_impressions,), dtype int64
            Displayed rank, starting at 1.
        click : ndarray of shape (n_impressions,), dtype int64
            1 for a click, 0 otherwise.

    Notes
    -----
    The default attractiveness is the graded click-noise model of Ai et al.
    (2018), after the noisy clicks of Joachims et al. (2017): it rises
    linearly with the exponential gain ``2**y - 1``, from ``click_noise``
    for label 0 to 1 for ``max_label``. Methods that correct the position
    bias of the clicks (such as Hu et al.'s unbiased LambdaMART) also need
    the rank at which each document was shown: ``log.position``.

    References
    ----------
    T. Joachims, A. Swaminathan and T. Schnabel. Unbiased Learning-to-Rank
    with Biased Feedback. WSDM 2017 (position-based examination
    ``(1 / r)**eta``).

    N. Craswell, O. Zoeter, M. Taylor and B. Ramsey. An Experimental
    Comparison of Click Position-Bias Models. WSDM 2008 (cascade model).

    O. Chapelle and Y. Zhang. A Dynamic Bayesian Network Click Model for Web
    Search Ranking. WWW 2009.

    Q. Ai, K. Bi, C. Luo, J. Guo and W. B. Croft. Unbiased Learning to Rank
    with Unbiased Propensity Estimation. SIGIR 2018 (click noise).

    Z. Hu, Y. Wang, Q. Peng and H. Li. Unbiased LambdaMART: An Unbiased
    Pairwise Learning-to-Rank Algorithm. WWW 2019.

    Examples
    --------
    >>> from sklearn_ltr import LambdaMARTRanker
    >>> from sklearn_ltr.datasets import make_ranking, simulate_clicks
    >>> X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=5,
    ...                          random_state=0)
    >>> log = simulate_clicks(y, qid, n_sessions=5, k=5, random_state=0)
    >>> sorted(log)
    ['click', 'position', 'qid', 'row', 'session']
    >>> log.position[:10]
    array([1, 2, 3, 4, 5, 1, 2, 3, 4, 5])
    >>> int(log.session.max()) + 1   # 20 queries x 5 sessions
    100
    >>> ranker = LambdaMARTRanker(n_estimators=10, random_state=0)
    >>> ranker = ranker.fit(X[log.row], log.click, qid=log.session)

    A cascade log of 200 sessions per query, shown by a noisy production
    ranker and with seed 004's attractiveness per label:

    >>> log = simulate_clicks(y, qid, scores=y, score_noise=1.0, model="cascade",
    ...                       n_sessions=200, attractiveness=[.05, .3, .5, .7, .95],
    ...                       random_state=0)
    >>> import numpy as np
    >>> clicks_per_session = np.bincount(log.session, weights=log.click)
    >>> bool(clicks_per_session.max() <= 1)   # the cascade user leaves after a click
    True
    """
    if model not in _MODELS:
        raise ValueError(f"model must be one of {', '.join(map(repr, _MODELS))}; got {model!r}.")
    if model != "pbm" and not (isinstance(eta, numbers.Real) and eta == 1.0):
        raise ValueError(
            f"eta={eta!r} only applies to model='pbm' (the position bias of the "
            f"position-based model); with model={model!r}, leave eta at its default."
        )
    if model != "dbn":
        for name, value, default in (
            ("satisfaction", satisfaction, None),
            ("continuation", continuation, 1.0),
        ):
            if (value is not None) if default is None else not (
                isinstance(value, numbers.Real) and value == default
            ):
                raise ValueError(
                    f"{name} only applies to model='dbn'; with model={model!r}, leave "
                    f"{name} at its default ({default!r}), or use model='dbn'."
                )
    n_sessions = _check_positive_int(n_sessions, "n_sessions")
    k = _check_positive_int(k, "k", allow_none=True)
    if isinstance(eta, bool) or not isinstance(eta, numbers.Real) or not 0 <= eta < np.inf:
        raise ValueError(f"eta must be a finite number >= 0; got {eta!r}.")
    continuation = _check_probability(continuation, "continuation")
    if (
        isinstance(score_noise, bool)
        or not isinstance(score_noise, numbers.Real)
        or not 0 <= score_noise < np.inf
    ):
        raise ValueError(f"score_noise must be a finite number >= 0; got {score_noise!r}.")

    y = _check_labels(y)
    n_samples = y.shape[0]
    qid = check_qid(qid, n_samples)
    if scores is not None:
        if hasattr(scores, "to_numpy"):
            scores = scores.to_numpy()
        try:
            scores = np.asarray(scores, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("scores must be numeric, one score per row.") from None
        if scores.ndim != 1 or scores.shape[0] != n_samples:
            raise ValueError(
                f"scores must have one score per row: shape ({n_samples},); got shape "
                f"{scores.shape}."
            )
        if np.isnan(scores).any():
            raise ValueError("scores contains NaN; every row needs a score.")
    elif score_noise > 0:
        raise ValueError(
            f"score_noise={score_noise!r} perturbs scores, but scores=None already "
            "shows every session a random permutation; pass scores or leave "
            "score_noise=0."
        )

    if max_label is None:
        max_label = int(y.max()) if n_samples else 0
    else:
        if (
            isinstance(max_label, bool)
            or not isinstance(max_label, numbers.Integral)
            or max_label < 0
        ):
            raise ValueError(f"max_label must be a non-negative integer; got {max_label!r}.")
        max_label = int(max_label)
        if n_samples and y.max() > max_label:
            raise ValueError(
                f"y holds label {int(y.max())} > max_label={max_label}; raise "
                "max_label or leave it None (the highest label in y)."
            )

    if attractiveness is None:
        click_noise = 0.1 if click_noise is None else _check_probability(
            click_noise, "click_noise"
        )
        attract = click_noise + (1.0 - click_noise) * _gain_ratio(y, max_label)
        np.clip(attract, 0.0, 1.0, out=attract)
    else:
        if click_noise is not None:
            raise ValueError(
                "click_noise only applies to the default attractiveness; with an "
                "attractiveness array, put the noise in the array (attractiveness[0] "
                "is the click probability of a label-0 document) and leave "
                "click_noise=None."
            )
        table = _check_per_label(attractiveness, "attractiveness")
        _check_labels_fit(y, table, "attractiveness")
        attract = table[y]
    satisfy = None
    all_satisfied = True
    if model == "dbn":
        if satisfaction is None:
            satisfy = _gain_ratio(y, max_label)
        else:
            table = _check_per_label(satisfaction, "satisfaction")
            _check_labels_fit(y, table, "satisfaction")
            satisfy = table[y]
        all_satisfied = bool(np.all(satisfy >= 1.0))
    else:
        continuation = 1.0

    rng = np.random.default_rng(check_random_state(random_state).randint(np.iinfo(np.int32).max))
    order, offsets, unique_qids = group_queries(qid)
    sizes = np.diff(offsets)
    shown = sizes if k is None else np.minimum(sizes, k)
    per_query = shown * n_sessions
    starts = np.concatenate(([0], np.cumsum(per_query)))
    n_impressions = int(starts[-1])
    row = np.empty(n_impressions, dtype=np.int64)
    click = np.empty(n_impressions, dtype=np.int64)

    for n, queries, s0, s1 in _batches(sizes, n_sessions):
        m = n if k is None else min(n, k)
        n_q, n_s = queries.shape[0], s1 - s0
        rows = order[offsets[queries][:, None] + np.arange(n)]  # (n_q, n), input order
        if scores is None:
            # Independent uniform keys sort into a uniform random permutation.
            top = np.argsort(rng.random((n_q, n_s, n)), axis=-1)[..., :m]
        elif score_noise > 0:
            keys = scores[rows][:, None, :] + score_noise * rng.standard_normal((n_q, n_s, n))
            top = np.argsort(-keys, axis=-1, kind="stable")[..., :m]
        else:
            top = np.argsort(-scores[rows], axis=-1, kind="stable")[:, None, :m]
            top = np.broadcast_to(top, (n_q, n_s, m))
        shown_rows = rows[np.arange(n_q)[:, None, None], top]
        clicked = _draw_clicks(
            rng, model, attract[shown_rows],
            None if satisfy is None else satisfy[shown_rows],
            eta, continuation, all_satisfied,
        )
        dest = (
            starts[queries][:, None, None]
            + np.arange(s0, s1)[None, :, None] * m
            + np.arange(m)[None, None, :]
        )
        row[dest] = shown_rows
        click[dest] = clicked

    query_of = np.repeat(np.arange(sizes.shape[0]), per_query)
    session = np.repeat(np.arange(sizes.shape[0] * n_sessions, dtype=np.int64),
                        np.repeat(shown, n_sessions))
    first = np.concatenate(([0], np.cumsum(np.repeat(shown, n_sessions))[:-1]))
    position = np.arange(n_impressions, dtype=np.int64) - first[session] + 1
    return Bunch(
        row=row, session=session, qid=unique_qids[query_of], position=position, click=click
    )
