"""Links to scikit-learn's documentation without intersphinx.

The build has no network, so intersphinx cannot download scikit-learn's
inventory. This extension resolves, at Sphinx's ``missing-reference`` event,
every Python reference to a ``sklearn.*`` object (``:class:``, ``:func:``,
``:meth:``, ``:mod:``, ...) that the build itself cannot resolve, to the page
scikit-learn's stable documentation has for it:

- a class or function: ``modules/generated/<dotted name>.html``;
- a method or attribute: its class's page, anchor ``#<dotted name>``;
- a module: ``api/<module>.html``.

Which of these a name is comes from importing it (scikit-learn is installed
wherever the documentation builds); a name that does not import is judged by
its spelling (a capitalised last part is a class, a capitalised part before
it makes the last a member). Names with a private part (``_column_transformer``)
are left unresolved: scikit-learn documents them under their public names.
"""

import importlib
import inspect

from docutils import nodes

BASE_URL = "https://scikit-learn.org/stable/"


def _import(dotted):
    """(object, parent) for a dotted name, or (None, None)."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        parent = None
        for attr in parts[i:]:
            parent = obj
            obj = getattr(obj, attr, None)
            if obj is None:
                return None, None
        return obj, parent
    return None, None


def sklearn_url(target):
    """The URL of scikit-learn's page for ``target``, or None.

    ``target`` is a dotted name as written in a reference, with any leading
    ``~`` or ``.`` already removed by Sphinx.
    """
    if not (target == "sklearn" or target.startswith("sklearn.")):
        return None
    parts = target.split(".")
    if any(part.startswith("_") for part in parts):
        return None
    obj, parent = _import(target)
    if obj is not None:
        if inspect.ismodule(obj):
            return f"{BASE_URL}api/{target}.html"
        if inspect.isclass(parent):
            owner = ".".join(parts[:-1])
            return f"{BASE_URL}modules/generated/{owner}.html#{target}"
        return f"{BASE_URL}modules/generated/{target}.html"
    # Not importable here (another scikit-learn version): go by the spelling.
    if len(parts) >= 3 and parts[-2][:1].isupper():
        owner = ".".join(parts[:-1])
        return f"{BASE_URL}modules/generated/{owner}.html#{target}"
    if len(parts) == 2 and not parts[-1][:1].isupper():
        return f"{BASE_URL}api/{target}.html"
    return f"{BASE_URL}modules/generated/{target}.html"


def _missing_reference(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    url = sklearn_url(node.get("reftarget", ""))
    if url is None:
        return None
    reference = nodes.reference("", "", internal=False, refuri=url,
                                reftitle=f"(in scikit-learn) {node['reftarget']}")
    reference.append(contnode)
    return reference


def setup(app):
    app.connect("missing-reference", _missing_reference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
