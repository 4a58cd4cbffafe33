"""Export fitted rankers to the formats that serving engines read.

:func:`export_model` writes a fitted ranker of ours (also one read by
:func:`~sklearn_ltr.load_model`) in one of these formats:

- ``"lightgbm"``: LightGBM's model text (``lightgbm.Booster(model_file=...)``);
- ``"lightgbm-json"``: LightGBM's ``dump_model()`` JSON (what Vespa reads);
- ``"xgboost"``: XGBoost's JSON model (``xgboost.Booster(model_file=...)``);
- ``"xgboost-dump"``: the Elasticsearch/OpenSearch LTR plugin's
  ``model/xgboost+json`` definition;
- ``"ranklib"``: RankLib's ensemble text (the LTR plugin's ``model/ranklib``);
- ``"solr"``: Solr's ``MultipleAdditiveTreesModel`` JSON;
- ``"onnx"``: ONNX with the ``ai.onnx.ml`` tree-ensemble operator.

:func:`to_lightgbm` and :func:`to_xgboost` return the library's own
``Booster``. Every format is one module here over the same neutral view of a
fitted model (:class:`~sklearn_ltr._gbdt.ensemble.TreeEnsemble`); the user
guide page "Serving and explaining a ranker" gives each engine's comparison
rule, precision and missing-value handling.

Categorical splits (a ranker fitted with ``categorical_features``) are
written as the engine's own set splits by ``"lightgbm"``, ``"lightgbm-json"``,
``"xgboost"`` and ``"onnx"``, with every value the split does not list
(NaN, negative, rare and unseen categories) on the split's missing-value
side, as in the ranker; ``"xgboost-dump"``, ``"ranklib"`` and ``"solr"``
have threshold splits only and refuse such a model. The engine must be fed
the integer category codes that the ranker reads (for a pandas ``category``
column, the position of each value among its categories in fit).
"""

import importlib
import inspect
import os

from .._rankers.base import fitted_tree_ensemble

__all__ = ["FORMATS", "export_model", "to_lightgbm", "to_xgboost"]

# format -> (module in this package, function(ensemble, **options) -> str or bytes)
_WRITERS = {
    "lightgbm": ("_lightgbm", "model_text"),
    "lightgbm-json": ("_lightgbm", "dump_model_json"),
    "xgboost": ("_xgboost", "model_json"),
    "xgboost-dump": ("_xgboost_dump", "plugin_definition"),
    "ranklib": ("_ranklib", "ensemble_text"),
    "solr": ("_solr", "model_json"),
    "onnx": ("_onnx", "model_bytes"),
}
FORMATS = tuple(_WRITERS)


def _writer(format):
    if format not in _WRITERS:
        raise ValueError(f"format must be one of {', '.join(map(repr, FORMATS))}; got {format!r}.")
    module, function = _WRITERS[format]
    return getattr(importlib.import_module(f".{module}", __name__), function)


def _with_feature_names(ensemble, feature_names):
    if feature_names is None:
        return ensemble
    names = [str(n) for n in feature_names] if not isinstance(feature_names, str) else None
    if names is None or len(names) != ensemble.n_features:
        raise ValueError(
            f"feature_names must be {ensemble.n_features} strings, one per feature the model "
            f"was fitted on; got {feature_names!r}."
        )
    if len(set(names)) != len(names):
        duplicates = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"feature_names must be unique; {duplicates} appear more than once.")
    from dataclasses import replace

    return replace(ensemble, feature_names=tuple(names))


def export_model(model, path, format, *, feature_names=None, **options):
    """Write a fitted ranker in a serving engine's format.

    The exported model gives the ranker's raw score (``predict``); for a
    :class:`~sklearn_ltr.CalibratedRanker` the probability is the sigmoid of
    it (after Platt scaling if fitted), which the engine applies itself (see
    the user guide).

    Parameters
    ----------
    model : LambdaMARTRanker, XENDCGRanker, ListNetRanker, YetiRankRanker or CalibratedRanker
        A fitted ranker, or one read by :func:`~sklearn_ltr.load_model`.
    path : str, path-like or binary file object
        Where to write the model.
    format : str
        One of :data:`FORMATS`: ``"lightgbm"``, ``"lightgbm-json"``,
        ``"xgboost"``, ``"xgboost-dump"``, ``"ranklib"``, ``"solr"``,
        ``"onnx"``.
    feature_names : list of str, default=None
        Names written for the features, in column order (for example the
        names of the LTR plugin's feature set). Defaults to the column names
        seen in fit, else ``f0, f1, ...``.
    **options
        Options of the format; a format refuses options it does not take.
        ``missing_as`` (``"ranklib"``, ``"solr"``, ``"xgboost-dump"``): the
        value the engine puts in place of a missing feature. RankLib cannot
        route missing values, so a model that learned where they go needs
        ``missing_as=0.0`` (the value RankLib reads). For ``"xgboost-dump"``
        and ``"solr"``, which can route them in recent engine versions, it
        chooses the form older engines read, where a missing feature is
        ``v``. The exported model then scores a row with missing values as
        ours scores it with NaN replaced by ``v``.
        ``name`` (``"solr"``): the model's name in Solr's model store.
        ``comparison`` (``"lightgbm-json"``): ``"<"`` (Vespa's rule, the
        default) or ``"<="`` (LightGBM's own dump).
        ``dtype`` (``"onnx"``): ``"float32"`` (default) or ``"float64"``.

    Raises
    ------
    ValueError
        If the format is unknown, an option does not fit it, or the model
        uses something the format cannot express (the message names the
        format and the reason).
    """
    write = _writer(format)
    ensemble = _with_feature_names(
        fitted_tree_ensemble(model, caller="export_model"), feature_names
    )
    accepted = [
        p.name for p in inspect.signature(write).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ValueError(
            f"format {format!r} takes the options {accepted or 'none'}; got {unknown}."
        )
    content = write(ensemble, **options)
    data = content.encode("utf-8") if isinstance(content, str) else content
    if isinstance(path, (str, os.PathLike)):
        with open(path, "wb") as f:
            f.write(data)
    else:
        path.write(data)


def to_lightgbm(model, *, feature_names=None):
    """The ranker as a ``lightgbm.Booster`` that predicts its raw scores.

    Parameters
    ----------
    model : LambdaMARTRanker, XENDCGRanker, ListNetRanker, YetiRankRanker or CalibratedRanker
        A fitted ranker.
    feature_names : list of str, default=None
        As in :func:`export_model`.

    Returns
    -------
    booster : lightgbm.Booster
    """
    from ._lightgbm import booster

    return booster(_with_feature_names(fitted_tree_ensemble(model, caller="to_lightgbm"),
                                       feature_names))


def to_xgboost(model, *, feature_names=None):
    """The ranker as an ``xgboost.Booster`` that predicts its raw scores
    (``output_margin``), comparing in float32 as XGBoost does.

    Parameters
    ----------
    model : LambdaMARTRanker, XENDCGRanker, ListNetRanker, YetiRankRanker or CalibratedRanker
        A fitted ranker.
    feature_names : list of str, default=None
        As in :func:`export_model`.

    Returns
    -------
    booster : xgboost.Booster
    """
    from ._xgboost import booster

    return booster(_with_feature_names(fitted_tree_ensemble(model, caller="to_xgboost"),
                                       feature_names))
