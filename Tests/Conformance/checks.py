"""What every conformance script shares: one line per check, a last line "N passed, M failed"
(the Swift tests that run these scripts read it), and the suites' helpers from scripts/lib.

    from checks import check, summary, free_port
    check("the SDK verifies our token", ok, detail)
    return summary()        # prints the last line; 1 if a check failed, else 0
"""
import os
import sys

# scripts/lib/harness: the suites' helpers (these scripts run from Tests/Conformance, outside scripts/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "lib"))
from harness.processes import free_port  # noqa: E402,F401 - re-exported for the scripts

results = []


def check(name, ok, detail=""):
    """Records one check and prints it: "PASS name" or "FAIL name  -- detail"."""
    results.append(bool(ok))
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f"  -- {detail}"), flush=True)


def summary():
    """Prints "N passed, M failed" and returns the exit status: 1 if any check failed (or none ran)."""
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed", flush=True)
    return 1 if failed or not results else 0
