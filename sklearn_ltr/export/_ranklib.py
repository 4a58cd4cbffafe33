"""RankLib's tree-ensemble text: a LambdaMART model file, which the LTR
plugin serves as ``model/ranklib``.

The plugin hands the text to RankLib (its fork o19s/RankyMcRankFace,
``ciir.umass.edu.learning.RankerFactory.loadRankerFromString``): the first
line names the ranker (``## LambdaMART``); ``LambdaMART.loadFromString``
drops the lines that start with ``#``, trims the others and joins them
(``ciir/umass/edu/parsing/ModelLineProducer.java``), and the
``Ensemble(String)`` constructor (``ciir/umass/edu/learning/tree/Ensemble.java``)
reads ``<ensemble>`` of ``<tree id weight>``, each holding one ``<split>``:
either ``<feature>``, ``<threshold>`` and two ``<split>`` children, left
then right, in that order, or ``<output>``. Numbers go through
``Float.parseFloat``. ``Split.eval`` sends a row left iff
``x <= threshold`` in float32, and ``Ensemble.eval`` adds
``output * weight`` (computed in double) to a float sum, tree by tree.
Feature ids are 1-based: the plugin's ``DenseProgramaticDataPoint`` puts
feature ``i`` of the feature set at id ``i + 1`` and gives a missing (or
NaN) feature 0.0.

Written here: feature ``i`` (0-based column) as id ``i + 1``, each threshold
as :func:`~sklearn_ltr.export._float32.floor32` of ours (so every float32
input takes our branch), weights 1 (our leaf values already carry the
learning rate), and the baseline as a first tree that is a single leaf.
Sums are float32, so scores agree with ours to about 1e-7 relative per tree.

RankLib has no missing values, so a model that learned where they go is
refused unless ``missing_as=0.0`` (see :mod:`sklearn_ltr.export._walk`).
RankLib's splits are thresholds only: a model with categorical splits is
refused.
"""

from ._categorical import refuse_categorical_splits
from ._float32 import floor32
from ._walk import check_missing_as, fold_tree, java_float, refuse_learned_missing

__all__ = ["ensemble_text"]

# What RankLib (and the plugin) reads for a missing feature.
_ENGINE_MISSING = 0.0


def ensemble_text(ensemble, *, missing_as=None):
    """The model as a RankLib LambdaMART model file.

    Parameters
    ----------
    ensemble : TreeEnsemble
    missing_as : float, default=None
        Must be 0.0 (what RankLib reads for a missing feature) to export a
        model that learned where missing values go; the exported model then
        scores a missing value as ours scores 0.0.

    Returns
    -------
    str
    """
    refuse_categorical_splits(ensemble, "ranklib")
    v = check_missing_as(missing_as, "ranklib")
    if v is None:
        refuse_learned_missing(ensemble, "ranklib", _ENGINE_MISSING)
    elif v != _ENGINE_MISSING:
        raise ValueError(
            f"format 'ranklib': RankLib reads 0.0 for a missing feature, so missing_as "
            f"must be 0.0; got {missing_as!r}."
        )

    def leaf(row, node, depth):
        return [f"<output> {java_float(row['value'])} </output>"]

    def split(row, node, depth, left, right):
        # One tag a line: RankLib joins trimmed lines, so no text lands
        # between tags, which its DOM walk does not expect.
        return [
            f"<feature> {int(ensemble.column_of(row['feature_idx'])) + 1} </feature>",
            f"<threshold> {java_float(floor32(row['num_threshold']))} </threshold>",
            '<split pos="left">', *("\t" + line for line in left), "</split>",
            '<split pos="right">', *("\t" + line for line in right), "</split>",
        ]

    bodies = [leaf({"value": ensemble.baseline}, 0, 0)]
    bodies += [fold_tree(tree, leaf, split) for tree in ensemble.trees()]
    lines = [
        "## LambdaMART",
        f"## No. of trees = {len(bodies)} (the first holds the baseline score)",
        "## Written by sklearn-ltr; weights are 1, outputs carry the learning rate",
        "<ensemble>",
    ]
    for k, body in enumerate(bodies):
        lines += [f'\t<tree id="{k + 1}" weight="1.0">', "\t\t<split>",
                  *("\t\t\t" + line for line in body), "\t\t</split>", "\t</tree>"]
    lines.append("</ensemble>")
    return "\n".join(lines) + "\n"
