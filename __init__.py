"""chainrule: reverse-mode autodiff made visible. The repository's root is the import package:
engine/ is chainrule.engine, app/ is chainrule.app."""
