"""chainrule in Python and Jupyter: traces of programs and of Value graphs, the widget."""
