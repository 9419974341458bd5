"""The small tmpfs of the disk-full suite (see disk_full.py) and what fills it: a filler file
and a hog that takes every page that frees up."""
import errno
import os
import subprocess
import threading

MiB = 1 << 20


class Tmpfs:
    """A tmpfs of `size_mb` at `path`: mounted here (mode "mount") or only inside the up-server's
    own mount namespace (mode "unshare"/"unshare-user"), reached through /proc/<pid>/root."""

    def __init__(self, path, size_mb):
        self.path, self.size_mb, self.mode, self.pid = path, size_mb, None, None
        os.makedirs(path, exist_ok=True)

    def _mount_cmd(self, size_mb=None):
        return ["mount", "-t", "tmpfs", "-o", f"size={size_mb or self.size_mb}m,mode=0755", "tmpfs", self.path]

    def setup(self, want):
        """Picks the first mode that works (`want` = auto, mount or unshare); None if none does."""
        self.why = []
        if want in ("auto", "mount"):
            if self._try(self._mount_cmd()):
                self.mode = "mount"
                return self.mode
        if want in ("auto", "unshare"):
            probe = " ".join(self._mount_cmd(1)) + " && test -w " + self.path
            for mode, flags in (("unshare", ["-m"]), ("unshare-user", ["-r", "-m"])):
                if self._try(["unshare", *flags, "sh", "-c", probe]):
                    self.mode, self.flags = mode, flags
                    return self.mode
        return None

    def _try(self, argv):
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as e:
            self.why.append(f"{argv[0]}: {e}")
            return False
        if r.returncode != 0:
            self.why.append(f"{' '.join(argv[:3])}: {r.stderr.strip()[:100]}")
        return r.returncode == 0

    def wrap(self, binary, work):
        """The program to start up-server with: itself, or a script that mounts the tmpfs in a new
        mount namespace and execs it (same pid: unshare and sh both exec)."""
        if self.mode == "mount":
            return binary
        script = os.path.join(work, "up-server-in-namespace")
        with open(script, "w") as f:
            f.write("#!/bin/sh\n"
                    f"exec unshare {' '.join(self.flags)} sh -c '"
                    f"{' '.join(self._mount_cmd())} && exec \"$0\" \"$@\"' {binary} \"$@\"\n")
        os.chmod(script, 0o755)
        return script

    def view(self):
        """Where this process sees the mount."""
        if self.mode == "mount":
            return self.path
        return f"/proc/{self.pid}/root{self.path}"

    def free(self):
        st = os.statvfs(self.view())
        return st.f_bavail * st.f_frsize

    def unmount(self):
        if self.mode == "mount":
            for argv in (["umount", self.path], ["umount", "-l", self.path]):
                if subprocess.run(argv, capture_output=True).returncode == 0:
                    self.mode = None
                    return


def write_filler(path, size):
    """Writes `size` bytes (stops early at ENOSPC); returns bytes written."""
    written = 0
    piece = b"\xa5" * MiB
    with open(path, "ab", buffering=0) as f:
        while written < size:
            n = min(MiB, size - written)
            try:
                written += f.write(piece[:n])
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                break
    return written


def top_up(path):
    """Appends to `path` until the file system refuses even one page: the disk is full."""
    written = 0
    with open(path, "ab", buffering=0) as f:
        for size in (MiB, 64 << 10, 4096):
            while True:
                try:
                    written += f.write(b"\x5a" * size)
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
                    break
    return written


class Hog(threading.Thread):
    """Keeps the disk full: takes every page that frees up (a failed upload's blob being removed)
    into its file, as another program on the same disk would, until stopped."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.taken, self.stop_event = path, 0, threading.Event()

    def run(self):
        while not self.stop_event.is_set():
            self.taken += top_up(self.path)
            self.stop_event.wait(0.01)
