"""The package version, in a module that imports nothing, so that any layer
(model files, exporters, the command line) can read it without importing the
package's top level."""

__version__ = "0.1.0.dev0"
