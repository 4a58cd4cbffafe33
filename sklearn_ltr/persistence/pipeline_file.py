"""The Pipeline part of model files: the steps before the ranker, in skops format.

:mod:`sklearn_ltr.persistence` describes the file format (``format_version``
2) and calls these helpers; skops is imported only when a pipeline is saved
or loaded, so that single rankers need nothing beyond the package's own
requirements.
"""

import importlib
import sys

from .ranker_file import ModelFileError

__all__ = [
    "STEPS_MEMBER",
    "dump_steps",
    "import_skops",
    "load_steps",
    "skops_version",
    "split_pipeline",
]

STEPS_MEMBER = "pipeline_steps.skops"

# Besides scikit-learn's and those skops trusts by default (containers,
# arrays, ufuncs), the only types the steps may hold: a description of an
# array's element type (SimpleImputer and KBinsDiscretizer keep one), and
# the column selector of exclude_qid (two attributes and a __call__ that
# reads column names), neither of which runs code when built.
_SAFE_OTHER_TYPES = frozenset({"numpy.dtype", "sklearn_ltr.compose._TransformedColumns"})
# Functions are trusted from these packages only: score functions, kernels
# and distances, which compute on the arrays they are given. Elsewhere in
# scikit-learn are functions that read or write files or the network
# (sklearn.datasets), which a FunctionTransformer could call at predict time.
_FUNCTION_PACKAGES = ("sklearn.metrics", "sklearn.feature_selection")


def import_skops(action):
    """``skops.io``, or an ImportError that says how to install it.

    Parameters
    ----------
    action : str
        What needs skops, for the message (e.g. ``"Saving a Pipeline"``).
    """
    try:
        import skops.io
    except ImportError:
        raise ImportError(
            f"{action} needs the skops package, which stores the steps before the ranker "
            "without pickle: pip install skops. (Single rankers need no extra package.)"
        ) from None
    return skops.io


def skops_version():
    """The installed skops version, as text."""
    import skops

    return str(getattr(skops, "__version__", "unknown"))


def _resolve(type_name):
    """The object a skops type name refers to, if it is scikit-learn's; else None.

    Only scikit-learn's own modules are imported, and not its test modules.
    """
    module_name, _, attr = type_name.rpartition(".")
    if not module_name.startswith("sklearn.") or ".tests" in module_name:
        return None
    module = sys.modules.get(module_name)
    if module is None:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            return None
    return getattr(module, attr, None)


def _untrusted(type_names):
    """The names among ``type_names`` that load_model does not trust, sorted.

    Trusted: scikit-learn's classes (estimators and their helpers, built by
    skops without calling their constructors), functions of
    ``_FUNCTION_PACKAGES``, and ``_SAFE_OTHER_TYPES``.
    """
    refused = []
    for name in type_names:
        if name in _SAFE_OTHER_TYPES:
            continue
        obj = _resolve(name)
        if isinstance(obj, type):
            continue
        if callable(obj) and name.startswith(tuple(p + "." for p in _FUNCTION_PACKAGES)):
            continue
        refused.append(name)
    return sorted(refused)


def split_pipeline(pipeline, classes):
    """Step names, the steps before the ranker, and the ranker of a Pipeline.

    Parameters
    ----------
    pipeline : sklearn.pipeline.Pipeline
    classes : dict
        ``{name: class}`` of the rankers a model file can hold.

    Returns
    -------
    names : list of str
    steps : list
        The estimators (or ``"passthrough"`` / None) before the last step.
    ranker : estimator
        The last step.

    Raises
    ------
    ValueError
        If the steps are malformed or the last one is not one of ``classes``.
    """
    steps = pipeline.steps
    if not (
        isinstance(steps, list) and steps
        and all(isinstance(s, tuple) and len(s) == 2 and isinstance(s[0], str) for s in steps)
    ):
        raise ValueError(
            "save_model needs Pipeline.steps to be a non-empty list of (name, estimator) "
            f"tuples with str names; got {steps!r}."
        )
    names = [name for name, _ in steps]
    if len(set(names)) != len(names):
        raise ValueError(f"save_model needs unique Pipeline step names; got {names}.")
    ranker = steps[-1][1]
    if classes.get(type(ranker).__name__) is not type(ranker):
        raise ValueError(
            "save_model saves a Pipeline whose last step is one of "
            f"{', '.join(sorted(classes))}; its last step {names[-1]!r} is "
            f"{type(ranker).__name__}."
        )
    return names, [step for _, step in steps[:-1]], ranker


def dump_steps(names, steps):
    """The skops bytes of ``steps`` (a list), after checking each step's types.

    Parameters
    ----------
    names : list of str
        The names of ``steps``, for messages.
    steps : list
        The steps before the ranker.

    Returns
    -------
    data : bytes

    Raises
    ------
    ValueError
        If skops cannot store a step, or a step holds a type that
        :func:`load_steps` would refuse (so that every file written loads).
    ImportError
        If skops is not installed.
    """
    sio = import_skops("Saving a Pipeline")
    for name, step in zip(names, steps):
        try:
            types = sio.get_untrusted_types(data=sio.dumps(step))
        except Exception as exc:  # skops raises many kinds on objects it cannot store
            raise ValueError(
                f"Cannot save step {name!r} of the Pipeline: skops cannot store it "
                f"({type(exc).__name__}: {exc})."
            ) from None
        refused = _untrusted(types)
        if refused:
            raise ValueError(
                f"Cannot save step {name!r} of the Pipeline: it holds {', '.join(refused)}, "
                "and model files hold only scikit-learn's own transformers before the "
                "ranker, so that loading runs no code from elsewhere. Replace the step by "
                "a scikit-learn transformer, or save the whole pipeline with skops.io.dump "
                "and load it with skops.io.load(path, trusted=...) after reviewing "
                "skops.io.get_untrusted_types(file=path)."
            )
    return sio.dumps(list(steps))


def load_steps(data, n_steps):
    """The steps before the ranker, loaded from skops bytes without running code.

    Parameters
    ----------
    data : bytes
        The member written by :func:`dump_steps`.
    n_steps : int
        How many steps the file's JSON says there are.

    Returns
    -------
    steps : list

    Raises
    ------
    ModelFileError
        If skops cannot read ``data``, it holds a type that is not trusted
        (named in the message), or it is not a list of ``n_steps``
        transformers.
    ImportError
        If skops is not installed.
    """
    sio = import_skops("Loading a Pipeline")
    try:
        types = sio.get_untrusted_types(data=data)
    except Exception as exc:  # skops raises many kinds on damaged data
        raise ModelFileError(
            f"skops cannot read member {STEPS_MEMBER} ({type(exc).__name__}: {exc})"
        ) from None
    refused = _untrusted(types)
    if refused:
        raise ModelFileError(
            f"member {STEPS_MEMBER} holds types that are not scikit-learn's own, which "
            f"load_model does not load: {', '.join(refused)}"
        )
    try:
        steps = sio.loads(data, trusted=types)
    except Exception as exc:
        raise ModelFileError(
            f"skops cannot load member {STEPS_MEMBER} ({type(exc).__name__}: {exc})"
        ) from None
    if not isinstance(steps, list) or len(steps) != n_steps:
        raise ModelFileError(
            f"member {STEPS_MEMBER} must hold a list of the {n_steps} steps before the ranker"
        )
    for step in steps:
        passthrough = step is None or (isinstance(step, str) and step == "passthrough")
        if not passthrough and not (hasattr(step, "fit") and hasattr(step, "transform")):
            raise ModelFileError(
                f"member {STEPS_MEMBER} holds {type(step).__name__}, which is not a transformer"
            )
    return steps
