"""A suite's run: its options, work directory, checks and notes, its summary line, and the
files it uploads."""
import argparse
import hashlib
import os
import random
import shutil
import sys
import tempfile
import time
import traceback

from .processes import bin_dir, install_cleanup


def log(suite, message):
    print(f"[{suite} {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def suite_arguments(doc, short_help):
    """The options every suite has: --short, --bin DIR, --seed S, --keep; add the suite's own."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", action="store_true", help=short_help)
    ap.add_argument("--bin", help="directory of up-server, biz-server, up-cli (default: the release build)")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    return ap


def short_or_full(args, **options):
    """Fills each option left unset (None) with its (short, full) default by --short."""
    for name, (short, full) in options.items():
        if getattr(args, name) is None:
            setattr(args, name, short if args.short else full)
    return args


class Suite:
    """One run of a suite: every child it starts is killed on exit (install_cleanup); `bins` the
    binaries under test; `with suite:` around its steps turns a harness crash into a failed check
    (never a pass); `finish` prints the summary line and removes or keeps the work dir."""

    def __init__(self, name, args, prefix):
        install_cleanup()
        self.name, self.args = name, args
        self.work = tempfile.mkdtemp(prefix=prefix)
        self.started = time.time()
        self.checks, self.notes = [], []
        self._bins = None

    @property
    def bins(self):
        """--bin DIR, $CHAOS_BIN, or the release build (built when missing)."""
        if self._bins is None:
            self._bins = bin_dir(self.args.bin)
        return self._bins

    def log(self, message):
        log(self.name, message)

    def check(self, name, ok):
        self.checks.append((name, bool(ok)))
        return bool(ok)

    def note(self, text):
        self.notes.append(text)

    def __enter__(self):
        return self

    def __exit__(self, kind, error, trace):
        if kind is None or issubclass(kind, (KeyboardInterrupt, SystemExit)):
            return False
        traceback.print_exception(kind, error, trace)
        self.check(f"harness error: {error!r}", False)
        return True

    def finish(self, extra=""):
        """The summary line (with duration and seed); the work dir kept on --keep or failure.
        Returns the exit status."""
        for note in self.notes:
            print(f"  note: {note}", flush=True)
        status = summary(self.name, self.checks,
                         extra + f" | {time.time() - self.started:.0f} s, seed {self.args.seed}")
        if self.args.keep or status:
            print(f"  work directory kept: {self.work}", flush=True)
        else:
            shutil.rmtree(self.work, ignore_errors=True)
        return status


def summary(suite, checks, extra=""):
    """`suite: PASS n/n checks passed; extra`, then one line per failed check. No checks is a FAIL:
    a suite that checked nothing proved nothing. Returns the exit status."""
    failed = [name for name, ok in checks if not ok]
    status = "FAIL" if failed or not checks else "PASS"
    print(f"{suite}: {status} {len(checks) - len(failed)}/{len(checks)} checks passed"
          + (f"; {extra}" if extra else ""), flush=True)
    for name in failed:
        print(f"  failed: {name}", flush=True)
    return 0 if status == "PASS" else 1


def note_skip(suite, why):
    """A suite that could not run here: scripts/test names it in its last line."""
    path = os.environ.get("UPGATE_SKIP_FILE")
    if path:
        with open(path, "a") as f:
            f.write(f"{suite} ({why})\n")


def make_file(path, size, seed):
    """`size` pseudo-random bytes from `seed` at `path`."""
    rnd = random.Random(seed)
    with open(path, "wb") as f:
        left = size
        while left > 0:
            n = min(left, 1 << 20)
            f.write(rnd.randbytes(n))
            left -= n
    return path


def sha1_file(path):
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for piece in iter(lambda: f.read(1 << 20), b""):
            h.update(piece)
    return h.hexdigest()
