"""The estimator classes that model files may name.

A model file names the class of its ranker; :func:`sklearn_ltr.load_model`
looks the name up here and never imports what a file names. Estimator modules
add their classes with :func:`register_model_class`, so that
:mod:`sklearn_ltr.persistence` reads the registry instead of importing the
estimators (which use persistence in ``save_model``).
"""

__all__ = ["model_classes", "register_model_class"]

_CLASSES = {}


def register_model_class(cls):
    """Let :func:`~sklearn_ltr.save_model` and :func:`~sklearn_ltr.load_model`
    handle instances of exactly ``cls`` (not of its subclasses).

    Parameters
    ----------
    cls : type
        A ranker class with the fitted state that
        :mod:`sklearn_ltr.persistence` writes (``_booster``, ``_bin_mapper``,
        ...). Usable as a class decorator.

    Returns
    -------
    cls : type
        ``cls`` itself.

    Raises
    ------
    ValueError
        If another class of the same name is registered: files name classes
        by their bare name.
    """
    known = _CLASSES.get(cls.__name__)
    if known is not None and known is not cls:
        raise ValueError(
            f"Cannot register {cls.__module__}.{cls.__qualname__}: model files name classes "
            f"by their name, and {known.__module__}.{known.__qualname__} is already "
            f"registered as {cls.__name__!r}."
        )
    _CLASSES[cls.__name__] = cls
    return cls


def model_classes():
    """The loadable classes.

    Returns
    -------
    classes : dict
        ``{class name: class}``, a copy.
    """
    return dict(_CLASSES)
