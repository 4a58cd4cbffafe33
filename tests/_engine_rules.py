"""Engines that cannot run here, as small evaluators written from their source.

Each ``*_scores`` function reads an exported file as the engine's parser
does and scores rows by the engine's rule, in float32 where the engine uses
Java floats (comparisons, Solr's threshold slack, the order and type of the
tree sum). Each ``check_*`` function asserts what the engine's parser
requires of the file. The rule each line follows is cited with its source
file and method; ``rule=`` lets a test swap in a wrong comparison to show
the tests can fail.

They return ``(scores, outputs)``: float32 scores and each tree's output
(n_rows, n_trees) in float32, for comparing leaf decisions.
"""

import json
import math
import re
import xml.dom.minidom

import numpy as np

_F32 = np.float32


def _java_float(text):
    # Float.parseFloat; the checkers require every number to be an exact
    # float32, for which going through double as here is exact.
    with np.errstate(over="ignore"):
        return _F32(float(text))


def _outputs(roots, X32, rule, n_rows):
    """Leaf value each row reaches in each tree: nodes are ``(value,)`` or
    ``(feature, threshold, left, right, extra)``; ``rule(x, node)`` says
    which rows go left."""
    out = np.zeros((n_rows, len(roots)), dtype=_F32)
    for t, root in enumerate(roots):
        stack = [(root, np.arange(n_rows))]
        while stack:
            node, rows = stack.pop()
            if len(node) == 1:
                out[rows, t] = node[0]
                continue
            left = rule(X32[rows, node[0]], node)
            stack += [(node[2], rows[left]), (node[3], rows[~left])]
    return out


# -- Elasticsearch/OpenSearch LTR plugin, model/xgboost+json ----------------

def plugin_rule(x, node):
    # NaiveAdditiveDecisionTree.Split.eval (o19s/elasticsearch-learning-to-rank,
    # src/main/java/com/o19s/es/ltr/ranker/dectree/NaiveAdditiveDecisionTree.java):
    # NaN -> the child whose id is `missing`; else left (yes) iff threshold > x.
    return np.where(np.isnan(x), node[4], node[1] > x)


def xgboost_plugin_scores(text, feature_names, X, *, missing=np.nan, rule=plugin_rule):
    """Scores of the plugin's NaiveAdditiveDecisionTree for a definition.

    ``missing`` is what the feature vector holds for a missing (NaN) input:
    NaN in SparseFeatureVector (o19s >= v1.5.9, OpenSearch >= 3.2), 0.0 in
    the older DenseFeatureVector.
    """
    doc = json.loads(text)
    # XGBoostJsonParser.XGBoostDefinition.parse: an array of trees, or an
    # object with "splits" and an optional "objective".
    trees = doc["splits"] if isinstance(doc, dict) else doc
    objective = doc.get("objective", "reg:linear") if isinstance(doc, dict) else "reg:linear"

    def node(d):  # SplitParserState.toNode: children[0] is yes, [1] is no
        if "leaf" in d:
            return (_java_float(d["leaf"]),)
        return (feature_names.index(d["split"]), _java_float(d["split_condition"]),
                node(d["children"][0]), node(d["children"][1]), d["missing"] == d["yes"])

    X32 = np.where(np.isnan(X), missing, X).astype(_F32)
    out = _outputs([node(t) for t in trees], X32, rule, X.shape[0])
    # NaiveAdditiveDecisionTree.score: float sum += weight (1F) * tree output.
    score = np.zeros(X.shape[0], dtype=_F32)
    for t in range(out.shape[1]):
        score = score + _F32(1.0) * out[:, t]
    if objective in ("binary:logistic", "reg:logistic"):  # Normalizers SIGMOID
        score = (1 / (1 + np.exp(-score.astype(np.float64)))).astype(_F32)
    return score, out


def check_xgboost_plugin(text, feature_names):
    """What XGBoostJsonParser.SplitParserState.parse requires."""
    doc = json.loads(text)
    trees = doc["splits"] if isinstance(doc, dict) else doc
    if isinstance(doc, dict):
        assert set(doc) <= {"splits", "objective"}  # ObjectParser rejects others
        assert doc.get("objective", "reg:linear") in (
            "binary:logitraw", "rank:ndcg", "rank:map", "rank:pairwise", "reg:linear",
            "binary:logistic", "reg:logistic")
    assert isinstance(trees, list) and trees, "at least one tree"

    def walk(d, depth, ids):
        assert isinstance(d["nodeid"], int) and d["nodeid"] not in ids
        ids.add(d["nodeid"])
        if "leaf" in d:  # leafHasAllFields
            assert set(d) == {"nodeid", "leaf"} and _exact_float(d["leaf"])
            return
        # splitHasAllFields, splitHasValidChildren; `missing` is unboxed into
        # an int by Split's constructor, so o19s fails without it.
        assert set(d) == {"nodeid", "depth", "split", "split_condition", "yes", "no",
                          "missing", "children"}
        assert d["depth"] == depth and d["split"] in feature_names  # set.hasFeature
        assert _exact_float(d["split_condition"])
        assert len(d["children"]) == 2 and d["missing"] in (d["yes"], d["no"])
        assert [c["nodeid"] for c in d["children"]] == [d["yes"], d["no"]]
        for child in d["children"]:
            walk(child, depth + 1, ids)

    for tree in trees:
        walk(tree, 0, set())


def _exact_float(value):
    """A JSON number that Java reads as a float without rounding (or
    overflowing to an infinity on purpose)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    with np.errstate(over="ignore"):
        return math.isinf(float(_F32(value))) or float(_F32(value)) == value


# -- RankLib (RankyMcRankFace), model/ranklib ---------------------------------

def ranklib_rule(x, node):
    # ciir/umass/edu/learning/tree/Split.java, eval: left iff value <= threshold.
    return x <= node[1]


def _ranklib_dom(text):
    # LambdaMART.loadFromString -> ModelLineProducer.parse: lines starting
    # with '#' dropped, the others trimmed and joined without separator.
    joined = "".join(line.strip() for line in text.splitlines()
                     if line.strip() and not line.strip().startswith("#"))
    return xml.dom.minidom.parseString(joined)


def ranklib_scores(text, X, *, rule=ranklib_rule):
    """Scores of RankLib's Ensemble.eval as the plugin calls it."""
    trees, weights = [], []
    for tree in _ranklib_dom(text).getElementsByTagName("tree"):  # Ensemble(String)
        trees.append(_ranklib_node(tree.firstChild))
        weights.append(_java_float(tree.getAttribute("weight")))
    # DenseProgramaticDataPoint.getFeatureValue: an unknown (NaN) value is 0.
    X32 = np.where(np.isnan(X), 0.0, X).astype(_F32)
    out = _outputs(trees, X32, rule, X.shape[0])
    # Ensemble.eval: float s += tree.eval(dp) (a double) * weight, so the
    # product and the sum are double and the result is rounded to float.
    score = np.zeros(X.shape[0], dtype=_F32)
    for t, w in enumerate(weights):
        score = (score.astype(np.float64) + out[:, t].astype(np.float64) * np.float64(w))
        score = score.astype(_F32)
    return score, out


def _ranklib_node(split):
    # Ensemble.create: a <split> whose first child is <feature> holds
    # feature, threshold, left split, right split, by position.
    kids = split.childNodes
    if kids[0].nodeName.lower() == "feature":
        fid = int(kids[0].firstChild.nodeValue.strip())
        return (fid - 1, _java_float(kids[1].firstChild.nodeValue.strip()),
                _ranklib_node(kids[2]), _ranklib_node(kids[3]), None)
    return (_java_float(kids[0].firstChild.nodeValue.strip()),)


def check_ranklib(text, n_features):
    """What RankerFactory.loadRankerFromString and Ensemble(String) require."""
    first = text.splitlines()[0]
    # loadRankerFromString: the first line, "## " removed, names the ranker;
    # LambdaMART and MART are the ones read into an Ensemble.
    assert first.replace("## ", "").strip().upper() in ("LAMBDAMART", "MART")
    dom = _ranklib_dom(text)
    assert dom.documentElement.tagName == "ensemble"
    trees = dom.getElementsByTagName("tree")
    assert [int(t.getAttribute("id")) for t in trees] == list(range(1, len(trees) + 1))

    def walk(split):
        assert split.nodeType == split.ELEMENT_NODE and split.tagName == "split"
        kids = split.childNodes  # only elements: the DOM walk counts by position
        assert all(k.nodeType == k.ELEMENT_NODE for k in kids)
        if [k.tagName for k in kids] == ["output"]:
            assert _exact_float(float(kids[0].firstChild.nodeValue))
            return
        assert [k.tagName for k in kids] == ["feature", "threshold", "split", "split"]
        assert [k.getAttribute("pos") for k in kids[2:]] == ["left", "right"]
        fid = int(kids[0].firstChild.nodeValue.strip())
        # DenseProgramaticDataPoint: ids 1..n (1-based); 0 is never a feature.
        assert 1 <= fid <= n_features
        threshold = kids[1].firstChild.nodeValue.strip()
        assert threshold in ("Infinity", "-Infinity") or _exact_float(float(threshold))
        walk(kids[2])
        walk(kids[3])

    for tree in trees:
        assert _exact_float(float(tree.getAttribute("weight")))
        assert len(tree.childNodes) == 1  # Ensemble reads tree.getFirstChild()
        walk(tree.firstChild)


# -- Solr, MultipleAdditiveTreesModel -----------------------------------------

SOLR_SLACK = _F32(1e-6)  # RegressionTreeNode.NODE_SPLIT_SLACK


def solr_rule(x, node):
    # solr/modules/ltr/src/java/org/apache/solr/ltr/model/MultipleAdditiveTreesModel.java:
    # scoreNode: left iff x <= threshold; scoreNodeWithNullSupport: x <= t
    # left, x > t right, else (NaN) the `missing` branch ("left" or not).
    return (x <= node[1]) | (np.isnan(x) & (node[4] == "left"))


def solr_scores(text, X, *, default_value=0.0, slack=SOLR_SLACK, rule=solr_rule):
    """Scores of Solr's MultipleAdditiveTreesModel.score.

    ``default_value`` is the features' ``defaultValue`` in the feature
    store, which a missing feature gets
    (LTRScoringQuery.ModelWeight.makeNormalizedFeaturesAndScore).
    """
    doc = json.loads(text)
    index = {f["name"]: i for i, f in enumerate(doc["features"])}  # fname2index
    null_support = doc["params"].get("isNullSameAsZero", True) is False

    def node(d):
        if "feature" not in d:  # RegressionTreeNode.isLeaf
            return (_java_float(d.get("value", "0")),)
        # setThreshold: Float.parseFloat(threshold) + NODE_SPLIT_SLACK, in float.
        with np.errstate(over="ignore"):
            threshold = _F32(_java_float(d["threshold"]) + slack)
        return (index[d["feature"]], threshold, node(d["left"]), node(d["right"]),
                d.get("missing") if null_support else "right")

    trees = doc["params"]["trees"]
    X32 = np.where(np.isnan(X), default_value, X).astype(_F32)
    out = _outputs([node(t["root"]) for t in trees], X32, rule, X.shape[0])
    score = np.zeros(X.shape[0], dtype=_F32)
    for t, tree in enumerate(trees):  # score: float sum of weight * tree value
        score = score + _java_float(tree["weight"]) * out[:, t]
    return score, out


def check_solr(text):
    """What Solr's model store and MultipleAdditiveTreesModel.validate require."""
    doc = json.loads(text)
    assert doc["class"] == "org.apache.solr.ltr.model.MultipleAdditiveTreesModel"
    assert isinstance(doc["name"], str) and doc["name"]
    names = [f["name"] for f in doc["features"]]
    # LTRScoringModel.validate: features present, no duplicates.
    assert names and len(set(names)) == len(names)
    assert all(set(f) == {"name"} for f in doc["features"])
    params = doc["params"]
    # invokeSetters: every key needs a setter; isNullSameAsZero is a boolean.
    assert set(params) <= {"trees", "isNullSameAsZero"}
    null_support = params.get("isNullSameAsZero", True) is False
    assert params.get("isNullSameAsZero", True) in (True, False)

    def number(s):  # setters take the strings (SOLR-10963) to Float.parseFloat
        return isinstance(s, str) and re.fullmatch(r"-?(Infinity|\d+(\.\d*)?([eE][-+]?\d+)?)", s) \
            and (s.endswith("Infinity") or _exact_float(float(s)))

    def walk(d):
        if "feature" not in d:  # validate: a leaf has no children
            assert set(d) == {"value"} and number(d["value"])
            return
        keys = {"feature", "threshold", "left", "right"} | ({"missing"} if null_support else set())
        assert set(d) == keys and d["feature"] in names and number(d["threshold"])
        if null_support:  # scoreNodeWithNullSupport switches on it
            assert d["missing"] in ("left", "right")
        walk(d["left"])
        walk(d["right"])

    assert params["trees"]
    for tree in params["trees"]:
        assert set(tree) == {"weight", "root"} and number(tree["weight"])
        walk(tree["root"])
