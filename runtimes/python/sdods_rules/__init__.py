"""sdods rule engine, Python runtime (spec/v1): load bundles, manifests and expressions, evaluate
them, compile source rulesets, and speak the engine protocol (`python -m sdods_rules engine`)."""

from __future__ import annotations

__version__ = "1.0.0a2"  # PEP 440 form of the engine release line 1.0.0-alpha.2

from .api import evaluate, evaluate_expression, load  # noqa: E402
from .expr import Diagnostic, EvalError, LoadError  # noqa: E402
from .ruleset import RequestError, RuleSet, compile_source  # noqa: E402

__all__ = [
    "__version__",
    "load",
    "evaluate",
    "evaluate_expression",
    "compile_source",
    "RuleSet",
    "Diagnostic",
    "LoadError",
    "EvalError",
    "RequestError",
]
