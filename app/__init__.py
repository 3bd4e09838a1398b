"""chainrule's HTTP server: the JSON API, Graphviz layout and export, and the page."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("chainrule")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0.0.0"
