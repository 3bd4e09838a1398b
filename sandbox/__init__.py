"""chainrule's sandbox: the Python that runs a learner's code in the learner's own browser
(Pyodide, in a Web Worker: static/js/sandbox/worker.js) and reads the Value graph it leaves.

The server never imports this package and never runs what it runs; it serves these files (with
the engine's, GET /sandbox/python.zip) for the worker to load. Tests run it under CPython.
"""
