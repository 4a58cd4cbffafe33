"""The modules of the package, read from its directory (for the tests that
check every module: layering, compiled kernels)."""

import os

import sklearn_ltr

PACKAGE_DIR = os.path.dirname(sklearn_ltr.__file__)


def package_modules():
    """{dotted module name: (path, is_package)} of every module of the package."""
    found = {}
    for directory, _, files in os.walk(PACKAGE_DIR):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            parts = os.path.relpath(path, os.path.dirname(PACKAGE_DIR))[:-3].split(os.sep)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            found[".".join(parts)] = (path, is_package)
    return found
