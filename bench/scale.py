#!/usr/bin/env python3
"""sandboxd at scale (run through bench/scale): for change sets of N new files (1,000 to a
directory, the directories new too), what the everyday verbs cost against what the same work
costs without sandboxd, and how much memory the daemon takes for it. Each comparison is
interleaved round by round, so that the noise of a shared machine hits both sides alike.

Two processes: the root parent stays root for what needs it (the daemon's peak RSS is reset
through /proc/PID/clear_refs; the upper layer lives in the 0700 state directory) and serves
those requests over a socket; its child drops to the bench user for good and runs everything
else. Both start their timed commands the same way (subprocess without a preexec hook, so by
vfork), and the root side times its own commands: the round trip over the socket is not in any
figure."""

import argparse
import ctypes
import datetime
import math
import os
import pwd
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # running the bench leaves no bytecode in the tree
from bench import drop_to, memory_mib, percentile  # noqa: E402  (bench.py is importable)

PER_DIR = 1000
# Inside a job the host is read-only and other homes (root's pyenv included) are hidden: the
# system's python3, never whatever PATH finds first.
PYTHON = "/usr/bin/python3"
# Writes N small files into the current directory, PER_DIR to a new directory. Run inside a job
# (the change set) and directly as the bench user (the plain copy, the floor's files): the same
# script both ways, so the two trees are identical.
MAKE_FILES = f"""
import os, sys
n = int(sys.argv[1])
for d in range((n + {PER_DIR} - 1) // {PER_DIR}):
    name = f"d{{d:04d}}"
    os.mkdir(name, 0o755)
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY)
    for i in range(d * {PER_DIR}, min(n, (d + 1) * {PER_DIR})):
        f = os.open(f"f{{i:07d}}.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=fd)
        os.write(f, f"file {{i}}\\n".encode())
        os.close(f)
    os.close(fd)
"""

RENAME_NOREPLACE = 1  # linux/fs.h


class Failed(Exception):
    """An operation that failed or ran out of time; its first line is what the row shows."""


def first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def directories(n):
    return math.ceil(n / PER_DIR)


def describe(argv):
    """The command and its verb, for a FAILED row: "sandboxctl commit", "diff -rqN"."""
    words = [os.path.basename(argv[0])] + [word for word in argv[1:] if word != "--no-ask-password"]
    shown = []
    for word in words[:3]:
        if "/" in word or "\n" in word:
            break
        shown.append(word)
    return " ".join(shown)


def run_timed(argv, cwd, timeout, ok=(0,)):
    """Milliseconds `argv` took, its output thrown away. Raises Failed on another exit status or
    past `timeout` seconds (subprocess kills it then)."""
    start = time.perf_counter()
    try:
        result = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise Failed(f"{describe(argv)}: no end after {timeout:g} s")
    elapsed = (time.perf_counter() - start) * 1000
    if result.returncode not in ok:
        raise Failed(f"{describe(argv)} exited {result.returncode}: {result.stderr.decode(errors='replace').strip()}")
    return elapsed


def count_in_output(argv, needle, cwd, timeout):
    """How often `needle` occurs in what `argv` prints, read in chunks: a million-entry change
    set is hundreds of MB as JSON, which need not be held at once."""
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd) as process:
        watchdog = threading.Timer(timeout, process.kill)
        watchdog.start()
        try:
            count, tail = 0, b""
            while chunk := process.stdout.read(1 << 20):
                data = tail + chunk
                count += data.count(needle)
                # Keep the last len(needle)-1 bytes: they may begin a match this chunk cut.
                tail = data[len(data) - len(needle) + 1:]
            error = process.stderr.read().decode(errors="replace").strip()
            process.wait()
        finally:
            watchdog.cancel()
    if process.returncode == -9:  # the watchdog's kill
        raise Failed(f"{describe(argv)}: no end after {timeout:g} s")
    if process.returncode != 0:
        raise Failed(f"{describe(argv)} exited {process.returncode}: {error}")
    return count


def count_tree(root):
    """(directories, files) directly below `root` and one level down: the shape MAKE_FILES makes."""
    dirs = files = 0
    with os.scandir(root) as top:
        for entry in top:
            if entry.is_dir(follow_symlinks=False):
                dirs += 1
                with os.scandir(entry.path) as inner:
                    files += sum(1 for _ in inner)
            else:
                files += 1
    return dirs, files


# ---------------------------------------------------------------------------------------------
# The root side.

def find_upper(args, sandbox, live):
    """The upper layer of root 0 of `sandbox` (layout.h): in the state directory, or where the
    root's file system is another one, in that file system's storage area TOP/.sandboxd."""
    candidates = [os.path.join(args.state_dir, "sandboxes", sandbox, "upper", "0")]
    top = os.path.realpath(live)
    while not os.path.ismount(top):
        top = os.path.dirname(top)
    candidates.append(os.path.join(top, ".sandboxd", "sandboxes", sandbox, "upper", "0"))
    for path in candidates:
        if os.path.isdir(path):
            return path
    raise Failed(f"no upper layer of sandbox {sandbox} in {' or '.join(candidates)}")


def settle(args):
    """Waits until the daemon's trash is empty: the layers of the sandboxes destroyed before are
    deleted in the background, which would otherwise weigh on the next size's figures (and holds
    memory while it runs: the RSS after is read once it is done). False when it is still not
    empty after --timeout (at 1,000,000, several million files)."""
    trash = os.path.join(args.state_dir, "trash")
    end = time.monotonic() + args.timeout
    while os.path.isdir(trash) and os.listdir(trash):
        if time.monotonic() >= end:
            return False
        time.sleep(0.1)
    time.sleep(0.3)  # and the daemon's own settling (memory given back when its workers idle)
    return True


def settled_rss(pid, seconds=15):
    """The daemon's RSS once it stops falling (2 s without a drop, at most `seconds`): it gives
    freed memory back when its worker pool falls idle, a moment after the last call."""
    end = time.monotonic() + seconds
    lowest, since = memory_mib(pid, "VmRSS"), time.monotonic()
    while time.monotonic() - since < 2 and time.monotonic() < end:
        time.sleep(0.25)
        rss = memory_mib(pid, "VmRSS")
        if rss < lowest - 0.05:
            lowest, since = rss, time.monotonic()
    return lowest


def serve(args, sock):
    """The root parent's loop: one request a line, one answer a line, until the child is done."""
    stream = sock.makefile("rw", buffering=1)
    for line in stream:
        words = line.split()
        try:
            if words[0] == "reset":
                # "5" resets the peak RSS (VmHWM) to the current RSS (proc(5), clear_refs).
                with open(f"/proc/{args.daemon_pid}/clear_refs", "w") as f:
                    f.write("5")
                answer = "ok"
            elif words[0] == "memory":
                answer = f"{memory_mib(args.daemon_pid, 'VmHWM')} {memory_mib(args.daemon_pid, 'VmRSS')}"
            elif words[0] == "settle":
                answer = "ok" if settle(args) else "trash-not-empty"
            elif words[0] == "rss":
                answer = f"{settled_rss(args.daemon_pid)}"
            elif words[0] == "find":
                upper = find_upper(args, words[1], words[2])
                answer = f"{run_timed(['find', upper], '/', args.timeout):.6f}"
            elif words[0] == "find-stat":
                # Each entry's mode read too (a stat each, as `changes` must: it shows modes).
                upper = find_upper(args, words[1], words[2])
                argv = ["find", upper, "-printf", "%m %p\\n"]
                answer = f"{run_timed(argv, '/', args.timeout):.6f}"
            else:
                answer = f"error: unknown request {words[0]}"
        except Exception as e:  # the child decides what a failure means for its rows
            answer = f"error: {first_line(e)}"
        stream.write(answer + "\n")


class Root:
    """The child's handle on the root parent."""

    def __init__(self, sock):
        self.stream = sock.makefile("rw", buffering=1)

    def ask(self, *words):
        self.stream.write(" ".join(words) + "\n")
        answer = self.stream.readline().strip()
        if not answer or answer.startswith("error: "):
            raise Failed(answer[len("error: "):] if answer else "the root side is gone")
        return answer


# ---------------------------------------------------------------------------------------------
# The bench user's side.

class Figures:
    """One size's samples by key, and the first error of each key that failed."""

    def __init__(self, n):
        self.n = n
        self.samples = {}
        self.errors = {}
        self.rounds = (0, 0, 0)  # (rounds, of warm reads, of runs)
        self.peak = self.after = None  # the daemon's RSS in MiB, once read
        self.trash_left = False  # the RSS after was read with the trash not yet emptied

    def add(self, key, value):
        self.samples.setdefault(key, []).append(value)

    def attempt(self, keys, action):
        """`action()`, or None when it failed: then each of `keys` (the figures it was for) is
        marked failed with the error's first line, and the bench goes on."""
        try:
            return action()
        except (Failed, OSError, subprocess.SubprocessError) as e:
            for key in keys:
                self.errors.setdefault(key, first_line(e))
            return None

    def p50(self, key):
        values = self.samples.get(key)
        return statistics.median(values) if values and key not in self.errors else None


class Scale:
    def __init__(self, args, user, root):
        self.args = args
        self.user = user
        self.root = root
        self.ctl = [args.sandboxctl, "--no-ask-password"]
        self.work = os.path.join(user.pw_dir, "scale")
        self.created = []  # every sandbox made and not yet destroyed
        self.libc = ctypes.CDLL("libc.so.6", use_errno=True)
        self.libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        self.libc.syncfs.argtypes = [ctypes.c_int]

    def timed(self, argv, ok=(0,)):
        return run_timed(argv, self.user.pw_dir, self.args.timeout, ok)

    def fresh_dir(self, name):
        path = os.path.join(self.work, name)
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        return path

    def create(self, live):
        result = subprocess.run(self.ctl + ["create", live], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=self.user.pw_dir,
                                timeout=self.args.timeout, check=False)
        if result.returncode != 0:
            raise Failed(f"sandboxctl create failed: {result.stderr.decode(errors='replace').strip()}")
        sandbox = result.stdout.decode().strip()
        self.created.append(sandbox)
        return sandbox

    def destroy(self, sandbox):
        self.created.remove(sandbox)
        self.timed(self.ctl + ["destroy", sandbox])

    def make_files_job(self, sandbox, live, n):
        return self.timed(self.ctl + ["run", "--cwd", live, sandbox, "--", PYTHON, "-c", MAKE_FILES, str(n)])

    def make_files_directly(self, path, n):
        start = time.perf_counter()
        try:
            subprocess.run([PYTHON, "-c", MAKE_FILES, str(n)], cwd=path, stderr=subprocess.PIPE, timeout=self.args.timeout, check=True)
        except subprocess.CalledProcessError as e:
            raise Failed(f"making {n} files in {path} failed: {e.stderr.decode(errors='replace').strip()}")
        return (time.perf_counter() - start) * 1000

    def check_changes(self, sandbox, n):
        """The change set holds what the job made, as text and as JSON, so no figure is that of a
        failure (an empty change set, an error printed quickly)."""
        expected = n + directories(n)
        shown = count_in_output(self.ctl + ["changes", sandbox], b"\n", self.user.pw_dir, self.args.timeout)
        if shown != expected:
            raise Failed(f"sandboxctl changes printed {shown} lines, not {expected}")
        shown = count_in_output(self.ctl + ["--json", "changes", sandbox], b'"path":', self.user.pw_dir, self.args.timeout)
        if shown != expected:
            raise Failed(f"sandboxctl --json changes printed {shown} changes, not {expected}")

    def check_tree(self, live, n, what, left_out=0):
        dirs, files = count_tree(live)
        if (dirs, files) != (directories(n), n - left_out):
            raise Failed(f"after {what} the live tree holds {dirs} directories and {files} files, "
                         f"not {directories(n)} and {n - left_out}")

    def rename_floor(self, source, live):
        """The true floor of committing the new files in `source` into the empty `live`: what a
        commit of added files comes down to on disk. A commit of the whole change set
        (CommitRunner::CommitWholeUpper) makes each new directory live (mkdirat, then its mode),
        moves each new file from the upper layer into place with one renameat2(RENAME_NOREPLACE)
        (commit_steps_apply.cpp, Place: no stage in between, the upper itself becomes the
        commit's backups with one rename of the layer), and ends with one syncfs of the live file
        system. So: the same mkdirs and renames, from a tree on the same file system, with the
        parent directories held open as the helper holds them, and one syncfs. The names are
        listed beforehand: knowing them is the change set's work, not the commit's."""
        plan = []
        for d in sorted(os.listdir(source)):
            plan.append((d, [name.encode() for name in sorted(os.listdir(os.path.join(source, d)))]))
        os.sync()  # the files' own writes are not the commit's (bench.py syncs before commits too)
        start = time.perf_counter()
        live_fd = os.open(live, os.O_RDONLY | os.O_DIRECTORY)
        source_fd = os.open(source, os.O_PATH | os.O_DIRECTORY)
        try:
            for d, names in plan:
                os.mkdir(d, 0o755, dir_fd=live_fd)
                src = os.open(d, os.O_PATH | os.O_DIRECTORY, dir_fd=source_fd)
                dst = os.open(d, os.O_PATH | os.O_DIRECTORY, dir_fd=live_fd)
                for name in names:
                    if self.libc.renameat2(src, name, dst, name, RENAME_NOREPLACE) != 0:
                        raise Failed(f"renameat2 {d}/{name.decode()}: {os.strerror(ctypes.get_errno())}")
                os.close(src)
                os.close(dst)
            if self.libc.syncfs(live_fd) != 0:
                raise Failed(f"syncfs: {os.strerror(ctypes.get_errno())}")
        finally:
            os.close(live_fd)
            os.close(source_fd)
        return (time.perf_counter() - start) * 1000

    def rounds(self, n):
        if self.args.rounds:
            return self.args.rounds
        return 7 if n <= 10000 else 3 if n <= 100000 else 1

    def measure(self, n):
        """Every figure of size `n`, in a Figures."""
        f = Figures(n)
        rounds = self.rounds(n)
        # Warm reads and runs are cheap next to making the change set: a few rounds even at 1M.
        warm_rounds = self.args.rounds or max(3, rounds)
        run_rounds = self.args.rounds or 7
        f.rounds = (rounds, warm_rounds, run_rounds)
        f.attempt(["memory"], lambda: (self.root.ask("settle"), self.root.ask("reset")))

        # COPY: a plain directory holding what each sandbox will hold, made by the same script.
        copy = self.fresh_dir(f"copy-{n}")
        f.attempt(["diff", "diff_plain", "direct"], lambda: f.add("direct", self.make_files_directly(copy, n)))
        if "diff" in f.errors:
            copy = None

        # The change sets read: one sandbox a round, each over an empty directory of its own
        # (two sandboxes may not overlay one directory). The first one stays for the warm reads
        # and the runs; all stay until the size is done, so that no background deletion of
        # their layers weighs on the figures.
        readable = []
        for r in range(rounds):
            live = self.fresh_dir(f"live-{n}-{r}")

            def one_round():
                sandbox = self.create(live)
                f.add("job", self.make_files_job(sandbox, live, n))
                f.add("cold", self.timed(self.ctl + ["changes", sandbox]))
                self.check_changes(sandbox, n)
                readable.append((sandbox, live))

            f.attempt(["cold"], one_round)
            if copy:
                # Plain `diff -rq` stops at a directory that only one side has (one line for
                # each, its files unread): -N makes it read the files under them too, as the
                # change set does. Both are shown; -N is the baseline.
                f.attempt(["diff"], lambda: f.add("diff", self.timed(["diff", "-rqN", live, copy], ok=(0, 1))))
                f.attempt(["diff_plain"], lambda: f.add("diff_plain", self.timed(["diff", "-rq", live, copy], ok=(0, 1))))

        if not readable:  # what failed there leaves nothing to read or run
            for key in ("warm", "json", "find", "find_stat", "run"):
                f.errors.setdefault(key, f.errors.get("cold", "no sandbox with the changes"))
        else:
            sandbox, live = readable[0]
            for _ in range(warm_rounds):
                f.attempt(["warm"], lambda: f.add("warm", self.timed(self.ctl + ["changes", sandbox])))
                f.attempt(["find"], lambda: f.add("find", float(self.root.ask("find", sandbox, live))))
                f.attempt(["find_stat"], lambda: f.add("find_stat", float(self.root.ask("find-stat", sandbox, live))))
                f.attempt(["json"], lambda: f.add("json", self.timed(self.ctl + ["--json", "changes", sandbox])))
            # A warm-up run, not counted, as bench.py's runs have warm-up rounds.
            f.attempt(["run"], lambda: self.timed(self.ctl + ["run", sandbox, "--", "/bin/true"]))
            for _ in range(run_rounds):
                f.attempt(["run"], lambda: f.add("run", self.timed(self.ctl + ["run", sandbox, "--", "/bin/true"])))

        # Commits: each consumes its change set, so each variant gets a fresh sandbox with the
        # same N changes, made the same way (job, then the change set read once), then the
        # floor on the same file system; interleaved round by round.
        for r in range(rounds):
            # commit_partial: one file rejected, so that the commit takes a part of the change
            # set (streamed through a stage) rather than the whole upper.
            for key, extra in (("commit", []), ("commit_include", ["--include", "*"]), ("commit_partial", [])):
                live = self.fresh_dir(f"commit-{n}")

                def one_commit():
                    sandbox = self.create(live)
                    try:
                        f.add("job", self.make_files_job(sandbox, live, n))
                        self.check_changes(sandbox, n)
                        if key == "commit_partial":
                            self.timed(self.ctl + ["reject", sandbox, "d0000/f0000000.txt"])
                        os.sync()
                        f.add(key, self.timed(self.ctl + ["commit", sandbox, "--all"] + extra))
                        self.check_tree(live, n, "the commit", left_out=1 if key == "commit_partial" else 0)
                    finally:
                        self.destroy(sandbox)

                f.attempt([key], one_commit)
                shutil.rmtree(live, ignore_errors=True)

            def one_floor(source):
                live = self.fresh_dir(f"floor-live-{n}")
                if source is None:
                    source = self.fresh_dir(f"floor-source-{n}")
                    f.add("direct", self.make_files_directly(source, n))
                f.add("floor", self.rename_floor(source, live))
                self.check_tree(live, n, "the rename floor")

            # COPY is read no more: the first floor moves its files (at 1M, making a tree is
            # what takes longest).
            f.attempt(["floor"], lambda: one_floor(copy if r == 0 else None))
            for name in (f"floor-source-{n}", f"floor-live-{n}", f"copy-{n}"):
                shutil.rmtree(os.path.join(self.work, name), ignore_errors=True)

        for sandbox, _ in readable:
            f.attempt(["destroy"], lambda: self.destroy(sandbox))
        for name in os.listdir(self.work):
            shutil.rmtree(os.path.join(self.work, name), ignore_errors=True)

        def memory():
            peak = float(self.root.ask("memory").split()[0])
            f.trash_left = self.root.ask("settle") != "ok"
            f.peak, f.after = peak, float(self.root.ask("rss"))

        f.attempt(["memory"], memory)
        return f

    def destroy_leftovers(self):
        for sandbox in list(self.created):
            try:
                self.destroy(sandbox)
            except Exception as e:
                print(f"could not destroy sandbox {sandbox}: {first_line(e)}", flush=True)


def row(name, f, key, baseline=None):
    """A row as bench.py prints them; `baseline` is a p50 (or None: no ratio)."""
    if key in f.errors or not f.samples.get(key):
        print(f"{name:<58} FAILED: {f.errors.get(key, 'no sample')}", flush=True)
        return
    values = f.samples[key]
    p50 = statistics.median(values)
    ratio = f"{p50 / baseline:6.2f}x" if baseline else "       "
    print(f"{name:<58} p50 {p50:8.2f}  p90 {percentile(values, 90):8.2f}  {ratio}", flush=True)


def ratio(f, key, base_p50):
    p50 = f.p50(key)
    return p50 / base_p50 if p50 is not None and base_p50 else None


def report(f, run_base):
    """Prints size `f.n`'s block; returns its ratios against each target's baseline."""
    n = f.n
    rounds, warm_rounds, run_rounds = f.rounds
    print(f"\n{n:,} changes ({n:,} files in {directories(n):,} "
          f"director{'y' if directories(n) == 1 else 'ies'}, all new); "
          f"{rounds} rounds, {warm_rounds} of warm reads, {run_rounds} of runs", flush=True)
    base_n, base_p50 = run_base
    row(f"sandboxctl run SANDBOX -- /bin/true ({'the baseline' if n == base_n else f'vs {base_n:,} changes'})",
        f, "run", base_p50)
    row("diff -rqN LIVE COPY (baseline of the first changes call)", f, "diff")
    row("sandboxctl changes >/dev/null, first call after the job", f, "cold", f.p50("diff"))
    row("find UPPER >/dev/null, as root (baseline of later calls)", f, "find")
    row("sandboxctl changes >/dev/null, later calls", f, "warm", f.p50("find"))
    row("find UPPER -printf '%m %p\\n' (a stat each; reference)", f, "find_stat")
    row("sandboxctl changes, later calls, vs find -printf", f, "warm", f.p50("find_stat"))
    row("sandboxctl --json changes >/dev/null, later calls", f, "json", f.p50("warm"))
    row("mkdir + renameat2 per entry + syncfs (true commit floor)", f, "floor")
    row("sandboxctl commit SANDBOX --all", f, "commit", f.p50("floor"))
    row("sandboxctl commit SANDBOX --all --include '*'", f, "commit_include", f.p50("commit"))
    row("sandboxctl commit SANDBOX --all, one file rejected (a part)", f, "commit_partial", f.p50("commit"))
    row("diff -rq LIVE COPY (reference; stops at new directories)", f, "diff_plain")
    row("the same script writing the files directly (reference)", f, "direct")
    row("sandboxctl run: the job writing the files (reference)", f, "job", f.p50("direct"))
    if "destroy" in f.errors:
        print(f"sandboxctl destroy: FAILED: {f.errors['destroy']}", flush=True)
    if "memory" in f.errors or f.peak is None:
        print(f"sandboxd RSS: FAILED: {f.errors.get('memory', 'not read')}", flush=True)
    else:
        print(f"sandboxd RSS: peak {f.peak:.1f} MiB during these operations (VmHWM, reset before them), "
              f"{f.after:.1f} MiB after (VmRSS, their sandboxes destroyed"
              f"{'; READ WHILE THE TRASH WAS STILL BEING EMPTIED' if f.trash_left else ''})", flush=True)
    return {
        "run": None if n == base_n else ratio(f, "run", base_p50),
        "cold": ratio(f, "cold", f.p50("diff")),
        "warm": ratio(f, "warm", f.p50("find")),
        "include": ratio(f, "commit_include", f.p50("commit")),
        "floor": ratio(f, "commit", f.p50("floor")),
    }


def summary(results, sizes, run_base, peaks):
    """One line a target: met when every size the issue names for it meets it; each measured
    size's figure is shown (those the target is not judged at in brackets, for reference: a
    change set of 10 costs what a call costs, not what its changes do)."""
    print("\nsummary", flush=True)
    targets = (
        ("run", f"run with 100,000 changes within 1.2x of {run_base[0]:,} changes", 1.2, (100000,)),
        ("cold", "first changes call at 100,000 within 1.5x of diff -rqN LIVE COPY", 1.5, (100000,)),
        ("warm", "later changes calls at 100,000 within 3x of find UPPER", 3.0, (100000,)),
        ("include", "commit --all --include '*' at 100,000 within 1.2x of commit --all", 1.2, (100000,)),
        ("floor", "commit --all at 10,000 and 100,000 within 2x of the renameat2 + syncfs floor", 2.0, (10000, 100000)),
    )
    for key, text, limit, judged_at in targets:
        figures = [(n, results[n][key]) for n in sizes if not (key == "run" and n == run_base[0])]
        judged = [(n, r) for n, r in figures if n in judged_at]
        shown = ", ".join((f"{n:,}: " if n in judged_at else f"[{n:,}: ") + ("FAILED" if r is None else f"{r:.2f}x") +
                          ("" if n in judged_at else "]") for n, r in figures)
        if not judged:
            print(f"  {text}: not measured (size not run{'; ' + shown if shown else ''})", flush=True)
            continue
        met = all(r is not None and r <= limit for _, r in judged)
        print(f"  {text}: {'met' if met else 'NOT met'} ({shown})", flush=True)
    text = "sandboxd peak RSS under 128 MiB at 1,000,000 changes"
    shown = ", ".join(f"{n:,}: " + ("FAILED" if peaks[n] is None else f"{peaks[n]:.1f} MiB") for n in sizes)
    if 1000000 not in sizes:
        print(f"  {text}: not measured (size not run; peaks {shown})", flush=True)
    else:
        met = peaks[1000000] is not None and peaks[1000000] < 128
        print(f"  {text}: {'met' if met else 'NOT met'} ({shown})", flush=True)


def bench(args, user, root):
    scale = Scale(args, user, root)
    shutil.rmtree(scale.work, ignore_errors=True)
    os.makedirs(scale.work)
    sizes = args.sizes
    results, peaks = {}, {}
    run_base = (sizes[0], None)
    try:
        for n in sizes:
            f = scale.measure(n)
            scale.destroy_leftovers()  # those of a round that failed half-way
            if n == sizes[0]:
                run_base = (n, f.p50("run"))
            results[n] = report(f, run_base)
            peaks[n] = f.peak
    finally:
        scale.destroy_leftovers()
        shutil.rmtree(scale.work, ignore_errors=True)
    summary(results, sizes, run_base, peaks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10, 1000, 10000, 100000, 1000000],
                        help="change set sizes (default: 10 1000 10000 100000 1000000)")
    parser.add_argument("--rounds", type=int, default=0,
                        help="rounds of every measurement at every size (default: 7 up to 10,000, 3 up to 100,000, then 1)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds one operation may take (default: 30 min)")
    parser.add_argument("--user", required=True)
    parser.add_argument("--sandboxctl", required=True)
    parser.add_argument("--daemon-pid", type=int, required=True)
    parser.add_argument("--state-dir", required=True, help="sandboxd's --state-dir (bench/scale: the private bus's state/)")
    args = parser.parse_args()
    args.sizes = sorted(set(args.sizes))  # the smallest first: it is the runs' baseline
    if os.geteuid() != 0:
        parser.error("needs root (run it through bench/scale)")
    user = pwd.getpwnam(args.user)
    uname = os.uname()
    print(f"sandboxd scale benchmark: nproc {len(os.sched_getaffinity(0))}, "
          f"{uname.sysname} {uname.release}, {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}", flush=True)
    print(f"sizes {' '.join(f'{n:,}' for n in args.sizes)}; times in ms; ratio: p50 over the p50 of the row "
          "above (or of the one named)", flush=True)

    parent, child = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        parent.close()
        status = 0
        try:
            drop_to(user)
            os.chdir(user.pw_dir)
            bench(args, user, Root(child))
        except BaseException:
            traceback.print_exc()
            status = 1
        finally:
            sys.stdout.flush()
            os._exit(status)
    child.close()
    serve(args, parent)
    _, status = os.waitpid(pid, 0)
    # The child removed its work tree; whatever it could not (a failure half-way) goes as root.
    shutil.rmtree(os.path.join(user.pw_dir, "scale"), ignore_errors=True)
    sys.exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
