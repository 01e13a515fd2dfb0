"""Runs numexpr's own test suite (numexpr.tests, pytest) with jitc.evaluate
in the place of numexpr.evaluate, and prints how many of its tests pass.

    python3 scripts/numexpr_suite.py [--target cpu|interp] [pytest arguments]

numexpr must be installed (scripts/install-deps.sh installs it), and jitc
importable (PYTHONPATH).  The suite's evaluate() calls go to jitc.evaluate
through a wrapper that drops numexpr's _frame_depth (jitc takes
sanitize, optimization, truediv and disable_cache where it has them, and
they change nothing there) and hands over the caller's
variables, which a wrapper's own frame would hide; validate() and
re_evaluate() go to jitc's the same way, where jitc has them.  The rest of
the suite (NumExpr, the thread settings) tests numexpr itself and runs as
it is.  The last line is "numexpr suite on TARGET: P passed, F failed, S
skipped of N".
"""
import sys

import pytest


def main(argv):
    target = None
    if argv[:1] == ["--target"]:
        target, argv = argv[1], argv[2:]
    import jitc
    import numexpr.tests.test_numexpr as suite
    takes_dicts = "local_dict" in (getattr(jitc.evaluate, "__text_signature__", None) or "")
    signature = getattr(jitc.evaluate, "__text_signature__", None) or ""
    takes_sanitize = "sanitize" in signature
    takes_context = "truediv" in signature  # optimization=, truediv=, disable_cache=

    def evaluate(ex, local_dict=None, global_dict=None, out=None, order="K",
                 casting="same_kind", optimization=None, truediv=None, sanitize=None,
                 _frame_depth=None, disable_cache=None, _jitc_function=jitc.evaluate, **names):
        caller = sys._getframe(1)
        if local_dict is None:
            local_dict = caller.f_locals
        if global_dict is None:
            global_dict = caller.f_globals
        if not takes_dicts:
            # A jitc.evaluate without local_dict (before numexpr's
            # arguments): run it from a frame whose variables are the dicts'.
            scope = dict(local_dict, _jitc_evaluate=jitc.evaluate, _ex=ex, _target=target,
                         _names=names)
            return eval("_jitc_evaluate(_ex, _target, **_names)", dict(global_dict), scope)
        if takes_sanitize:
            names["sanitize"] = sanitize
        if takes_context:
            for k, v in (("optimization", optimization), ("truediv", truediv),
                         ("disable_cache", disable_cache)):
                if v is not None:
                    names[k] = v
        return _jitc_function(ex, target=target, local_dict=local_dict,
                              global_dict=global_dict, out=out, order=order,
                              casting=casting, **names)

    def validate(ex, local_dict=None, global_dict=None, out=None, order="K", casting="same_kind",
                 _frame_depth=None, sanitize=None, **kwargs):
        caller = sys._getframe(1)
        return evaluate(ex, caller.f_locals if local_dict is None else local_dict,
                        caller.f_globals if global_dict is None else global_dict, out, order,
                        casting, sanitize=sanitize, _jitc_function=jitc.validate, **kwargs)

    def re_evaluate(local_dict=None, global_dict=None, _frame_depth=None):
        caller = sys._getframe(1)
        return jitc.re_evaluate(caller.f_locals if local_dict is None else local_dict,
                                caller.f_globals if global_dict is None else global_dict)

    class Counts:
        def __init__(self):
            self.n = {"passed": 0, "failed": 0, "skipped": 0}

        def pytest_collection_finish(self, session):
            suite.evaluate = evaluate
            if hasattr(jitc, "re_evaluate"):
                suite.validate, suite.re_evaluate = validate, re_evaluate

        def pytest_runtest_logreport(self, report):
            if report.when == "call" or report.outcome != "passed":
                self.n[report.outcome] += 1

    counts = Counts()
    pytest.main(["-q", "-p", "no:cacheprovider", "--pyargs", "numexpr.tests"] + argv,
                plugins=[counts])
    n = counts.n
    print("numexpr suite on %s: %d passed, %d failed, %d skipped of %d" % (
        target or jitc.default_target(), n["passed"], n["failed"], n["skipped"], sum(n.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
