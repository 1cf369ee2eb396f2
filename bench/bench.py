#!/usr/bin/env python3
"""sandboxd benchmarks (run through bench/run). Every comparison is interleaved in one run, so
that the noise of a shared machine hits both sides alike; medians and ratios are printed."""

import argparse
import ctypes
import os
import pwd
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BWRAP_BARE = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
              "--unshare-net", "--unshare-pid", "--", "/bin/true"]


def drop_to(user):
    """The client side runs as the bench user for good: every child is then started with vfork
    (no preexec hook), so process start-up costs the same for bwrap and for sandboxctl."""
    os.setgroups(os.getgrouplist(user.pw_name, user.pw_gid))
    os.setgid(user.pw_gid)
    os.setuid(user.pw_uid)
    os.environ["HOME"] = user.pw_dir


def timed(argv, user, capture=False, may_fail=False):
    start = time.perf_counter()
    result = subprocess.run(argv, stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                            stderr=subprocess.PIPE, cwd=user.pw_dir, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if result.returncode != 0 and not may_fail:
        raise SystemExit(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr.decode()}")
    return elapsed, (result.stdout.decode() if capture else "")


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def make_tree(root, files):
    if os.path.isdir(root) and len(os.listdir(root)) > 0:
        return
    os.makedirs(root, exist_ok=True)
    per_dir = 1000
    for i in range(files):
        d = os.path.join(root, f"d{i // per_dir:04d}")
        if i % per_dir == 0:
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{i:06d}.txt"), "w") as f:
            f.write(f"file {i}\n")


def bench_create_run_destroy(args, user, work):
    project = os.path.join(work, "crd")
    os.makedirs(project, exist_ok=True)
    ctl = args.sandboxctl
    names = ("bare", "total", "create", "run", "destroy", "client")
    times = {name: [] for name in names}
    for i in range(args.rounds + 3):
        b, _ = timed(BWRAP_BARE, user)
        start = time.perf_counter()
        c, out = timed([ctl, "--no-ask-password", "create", project], user, capture=True)
        sandbox = out.strip()
        r, _ = timed([ctl, "--no-ask-password", "run", sandbox, "--", "/bin/true"], user)
        d, _ = timed([ctl, "--no-ask-password", "destroy", sandbox], user)
        o = (time.perf_counter() - start) * 1000
        # The start-up floor of one client process (dynamic loading of sdbus-c++, libsystemd
        # and their libraries), which each of the three verbs pays.
        v, _ = timed([ctl, "--version"], user)
        if i >= 3:  # warm-up rounds are not counted
            for name, value in zip(names, (b, o, c, r, d, v)):
                times[name].append(value)
    return times


def bench_polkit_check(args, user):
    """What polkit's answer about creating a sandbox costs: `pkcheck` of the create action for
    this process, less `pkcheck --list-temp` (its start-up, its bus connection and its proxy of
    polkit's authority, with one call that checks nothing). Interleaved."""
    times = {"check": [], "start": []}
    check = ["pkcheck", "--action-id", "org.sandboxd.sandbox1.create", "--process", str(os.getpid())]
    for i in range(args.rounds + 3):
        c, _ = timed(check, user)
        v, _ = timed(["pkcheck", "--list-temp"], user, may_fail=True)  # no login session: it says so
        if i >= 3:
            times["check"].append(c)
            times["start"].append(v)
    return times


def bench_mount_pair(rounds):
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    base = tempfile.mkdtemp(prefix="sbx-mount-")
    for d in ("l", "u", "w", "m"):
        os.mkdir(os.path.join(base, d))
    opts = f"lowerdir={base}/l,upperdir={base}/u,workdir={base}/w".encode()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        if libc.mount(b"overlay", f"{base}/m".encode(), b"overlay", 0, opts) != 0:
            raise SystemExit(f"mount failed: {os.strerror(ctypes.get_errno())}")
        libc.umount2(f"{base}/m".encode(), 0)
        times.append((time.perf_counter() - start) * 1000)
    shutil.rmtree(base)
    return times


def bench_changes(args, user, work):
    ctl = args.sandboxctl
    results = {}
    sandboxes = {}
    for files in (1000, 100000):
        root = os.path.join(work, f"tree{files}")
        make_tree(root, files)
        _, out = timed([ctl, "--no-ask-password", "create", root], user, capture=True)
        sandboxes[files] = out.strip()
        script = "for i in 0 1 2 3 4 5 6 7 8 9; do echo changed >> d0000/f00000$i.txt; done"
        timed([ctl, "--no-ask-password", "run", "--cwd", root, sandboxes[files], "--", "sh", "-c", script], user)
        _, listing = timed([ctl, "changes", sandboxes[files]], user, capture=True)
        if len(listing.splitlines()) != 10:
            raise SystemExit(f"expected 10 changes in the {files}-file root, got:\n{listing}")
        results[files] = []
    for i in range(args.rounds + 3):
        for files in (1000, 100000):
            t, _ = timed([ctl, "changes", sandboxes[files]], user, capture=True)
            if i >= 3:
                results[files].append(t)
    for files in (1000, 100000):
        timed([ctl, "--no-ask-password", "destroy", sandboxes[files]], user)
    return results


WRITE_100K = """
import os, time
start = time.perf_counter()
for d in range(100):
    os.mkdir(f"out{d:03d}")
    for f in range(1000):
        fd = os.open(f"out{d:03d}/f{f:04d}.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, b"generated file\\n")
        os.close(fd)
print(f"{(time.perf_counter() - start) * 1000:.1f}")
"""


WRITE_N = """
import os, sys
n = int(sys.argv[1])
for d in range((n + 999) // 1000):
    os.mkdir(f"gen{d:03d}")
    for f in range(min(1000, n - d * 1000)):
        fd = os.open(f"gen{d:03d}/f{f:04d}.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, b"generated file\\n")
        os.close(fd)
"""

SETTLE_SIZES = (10, 100000, 200000)


def daemon_cpu_ms(pid):
    """CPU time the daemon has used, its ended threads' too (a job's end is settled on the job's
    own thread, gone by the time anyone looks): /proc/PID/stat's utime + stime, in clock ticks."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def wait_quiet(pid):
    """Returns once the daemon is quiet (no tick of CPU in 100 ms): a job's end is settled after
    its caller hears of it."""
    last = daemon_cpu_ms(pid)
    for _ in range(200):
        time.sleep(0.1)
        now = daemon_cpu_ms(pid)
        if now == last:
            return
        last = now


def bench_settle(args, user, work):
    """Sandboxes holding 10, 100,000 and 200,000 changes (new files a job made), then `run --
    /bin/true` in each, interleaved: the daemon's CPU for each run and its settling, and the
    wall time of runs that follow each other without pause."""
    ctl = args.sandboxctl
    sandboxes = {}
    cpu = {n: [] for n in SETTLE_SIZES}
    wall = {n: [] for n in SETTLE_SIZES}
    batch = 10  # the CPU clock ticks in 10 ms: each figure is a batch's mean
    try:
        for n in SETTLE_SIZES:
            project = os.path.join(work, f"settle{n}")
            os.makedirs(project, exist_ok=True)
            _, out = timed([ctl, "--no-ask-password", "create", project], user, capture=True)
            sandboxes[n] = out.strip()
            timed([ctl, "--no-ask-password", "run", "--cwd", project, sandboxes[n], "--", "python3", "-c", WRITE_N, str(n)], user)
            timed([ctl, "--no-ask-password", "run", sandboxes[n], "--", "/bin/true"], user)  # the feed learns the change set
            wait_quiet(args.daemon_pid)
        for i in range(max(3, args.rounds // batch) + 1):
            for n in SETTLE_SIZES:
                before = daemon_cpu_ms(args.daemon_pid)
                for _ in range(batch):
                    timed([ctl, "--no-ask-password", "run", sandboxes[n], "--", "/bin/true"], user)
                    wait_quiet(args.daemon_pid)
                if i >= 1:
                    cpu[n].append((daemon_cpu_ms(args.daemon_pid) - before) / batch)
        for i in range(args.rounds + 3):
            for n in SETTLE_SIZES:
                for _ in range(3):  # back to back: each run's settling beside the next
                    t, _ = timed([ctl, "--no-ask-password", "run", sandboxes[n], "--", "/bin/true"], user)
                    if i >= 3:
                        wall[n].append(t)
    finally:
        for sandbox in sandboxes.values():
            timed([ctl, "--no-ask-password", "destroy", sandbox], user)
    return cpu, wall


def bench_feed(args, user, work):
    """A job writing 100,000 files (100 directories of 1,000, as a code generator or a checkout
    would), with the live change feed and without it (run --no-live-feed), interleaved, each
    round in a fresh sandbox. Timed twice: sandboxctl run as a whole (the feed's last
    announcement comes before the job's end) and the job's own loop (what it felt)."""
    ctl = args.sandboxctl
    project = os.path.join(work, "feed")
    os.makedirs(project, exist_ok=True)
    times = {"off": [], "on": [], "off_job": [], "on_job": []}
    for i in range(args.commit_rounds + 1):
        for side in ("off", "on"):
            _, out = timed([ctl, "--no-ask-password", "create", project], user, capture=True)
            sandbox = out.strip()
            try:
                flags = ["--no-live-feed"] if side == "off" else []
                t, printed = timed([ctl, "--no-ask-password", "run", "--cwd", project, *flags, sandbox,
                                    "python3", "-c", WRITE_100K], user, capture=True)
                if i >= 1:  # the first round warms the caches
                    times[side].append(t)
                    times[side + "_job"].append(float(printed.strip()))
            finally:
                timed([ctl, "--no-ask-password", "destroy", sandbox], user)
    return times


def fill(root, names, text):
    for name in names:
        with open(os.path.join(root, name), "w") as f:
            f.write(f"{text} {name}\n")


def time_copy_baselines(times, staged, live, replaced, user):
    """`cp -a` and `rsync -a` of `staged` over a fresh `live` holding `replaced`, into
    times["cp"] and times["rsync"]."""
    for tool, argv in (("cp", ["cp", "-a", staged + "/.", live + "/"]), ("rsync", ["rsync", "-a", staged + "/", live + "/"])):
        shutil.rmtree(live)
        os.makedirs(live)
        fill(live, replaced, "live")
        os.sync()
        t, _ = timed(argv, user)
        times[tool].append(t)


LIBC = ctypes.CDLL(None, use_errno=True)
RENAME_EXCHANGE = 2
AT_FDCWD = -100


def exchange(a, b):
    if LIBC.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), f"renameat2 {a} {b}")


def syncfs(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if LIBC.syncfs(fd) != 0:
            raise OSError(ctypes.get_errno(), f"syncfs {path}")
    finally:
        os.close(fd)


def bench_commit(args, user, work, files):
    """Commit of `files` small files, a third new and two thirds replacing live ones, against the
    same files exchanged or renamed into place and synced (the floor), `cp -a` and `rsync -a`,
    interleaved."""
    ctl = args.sandboxctl
    replaced = [f"f{i:06d}" for i in range(files * 2 // 3)]
    added = [f"n{i:06d}" for i in range(files - len(replaced))]
    times = {"commit": [], "rename": [], "safe": [], "cp": [], "rsync": []}
    for _ in range(args.commit_rounds):
        base = os.path.join(work, f"commit{files}")
        shutil.rmtree(base, ignore_errors=True)
        live, staged = os.path.join(base, "live"), os.path.join(base, "staged")
        for d in (live, staged):
            os.makedirs(d)
        fill(live, replaced, "live")
        fill(staged, replaced + added, "new")
        # sandboxd: the same new files written by a job, then committed.
        _, out = timed([ctl, "--no-ask-password", "create", live], user, capture=True)
        sandbox = out.strip()
        job = f"cp -a {staged}/. {live}/"
        timed([ctl, "--no-ask-password", "run", sandbox, "--", "sh", "-c", job], user)
        os.sync()
        t, _ = timed([ctl, "--no-ask-password", "commit", sandbox, "--all"], user)
        times["commit"].append(t)
        timed([ctl, "--no-ask-password", "destroy", sandbox], user)
        # The floor (issue 41): what a commit that can be undone must do at the least. Each
        # replaced file exchanged with its staged copy (renameat2 RENAME_EXCHANGE: the live one
        # is kept, as a backup), each new one renamed in, then syncfs of the file system.
        shutil.rmtree(live)
        os.makedirs(live)
        fill(live, replaced, "live")
        os.sync()
        start = time.perf_counter()
        for name in replaced:
            exchange(os.path.join(staged, name), os.path.join(live, name))
        for name in added:
            os.rename(os.path.join(staged, name), os.path.join(live, name))
        syncfs(live)
        times["rename"].append((time.perf_counter() - start) * 1000)
        fill(staged, replaced + added, "new")
        if args.commit_floor:
            times["safe"].append(time_commit_floor(args.commit_floor, base, live, staged, replaced))
            fill(staged, replaced + added, "new")
        time_copy_baselines(times, staged, live, replaced, user)
        shutil.rmtree(base)
    return times


def time_commit_floor(program, base, live, staged, replaced):
    """bench/commit_floor.cpp over the same files: what a commit that survives a kill and can be
    undone must do at the least. The replaced files carry the overlay's two marks and a second
    name in an index, as a copy-up leaves them."""
    shutil.rmtree(live)
    os.makedirs(live)
    fill(live, replaced, "live")
    index = os.path.join(base, "index")
    shutil.rmtree(index, ignore_errors=True)
    os.makedirs(index)
    for name in replaced:
        path = os.path.join(staged, name)
        os.setxattr(path, "user.overlay.origin", b"\x00\xfb\x21\x01\x00" + os.urandom(24), follow_symlinks=False)
        os.setxattr(path, "user.overlay.nlink", b"U+0", follow_symlinks=False)
        os.link(path, os.path.join(index, name))
    journal = os.path.join(base, "journal.db")
    os.sync()
    out = subprocess.run([program, live, staged, index, journal], check=True, capture_output=True, text=True).stdout
    return float(out)


def bench_landing(args, user, work, files):
    """Commit of `files` small files (a third new, two thirds replacing live ones) to a root on a
    file system without a storage area, which goes through a landing area (copies, journaled
    renames, backups copied back to the state directory), against `cp -a` of the same files
    from the state directory's file system onto that one (the copy floor) and `rsync -a`."""
    ctl = args.sandboxctl
    replaced = [f"f{i:06d}" for i in range(files * 2 // 3)]
    added = [f"n{i:06d}" for i in range(files - len(replaced))]
    times = {"commit": [], "cp": [], "rsync": []}
    staged = os.path.join(work, f"landing-staged{files}")
    shutil.rmtree(staged, ignore_errors=True)
    os.makedirs(staged)
    fill(staged, replaced + added, "new")
    live = os.path.join(args.landing_dir, f"live{files}")
    for _ in range(args.commit_rounds):
        shutil.rmtree(live, ignore_errors=True)
        os.makedirs(live)
        fill(live, replaced, "live")
        _, out = timed([ctl, "--no-ask-password", "create", live], user, capture=True)
        sandbox = out.strip()
        timed([ctl, "--no-ask-password", "run", sandbox, "--", "sh", "-c", f"cp -a {staged}/. {live}/"], user)
        os.sync()
        t, _ = timed([ctl, "--no-ask-password", "commit", sandbox, "--all"], user)
        times["commit"].append(t)
        timed([ctl, "--no-ask-password", "destroy", sandbox], user)
        time_copy_baselines(times, staged, live, replaced, user)
    shutil.rmtree(live, ignore_errors=True)
    shutil.rmtree(staged, ignore_errors=True)
    return times


def bench_suspend(args, user, work, files=10000):
    """Suspend and resume of a sandbox whose upper holds `files` small files in 10 directories,
    against `tar --zstd` writing and extracting the same files (each extraction, like a resume,
    into a directory emptied just before)."""
    ctl = args.sandboxctl
    project = os.path.join(work, "suspend")
    shutil.rmtree(project, ignore_errors=True)
    os.makedirs(project)
    script = (f"i=0; while [ $i -lt {files} ]; do d=d$((i % 10)); [ -d $d ] || mkdir $d; "
              "echo \"file $i\" > $d/f$i; i=$((i+1)); done")
    same = os.path.join(work, "suspend-same")
    shutil.rmtree(same, ignore_errors=True)
    os.makedirs(same)
    subprocess.run(["sh", "-c", script], cwd=same, check=True)
    archive = os.path.join(work, "suspend.tar.zst")
    extracted = os.path.join(work, "suspend-extracted")
    _, out = timed([ctl, "--no-ask-password", "create", project], user, capture=True)
    sandbox = out.strip()
    times = {"suspend": [], "resume": [], "tar_c": [], "tar_x": []}
    try:
        timed([ctl, "--no-ask-password", "run", sandbox, "--", "sh", "-c", script], user)
        for _ in range(args.commit_rounds):
            os.sync()
            t, _ = timed([ctl, "--no-ask-password", "suspend", sandbox], user)
            times["suspend"].append(t)
            t, _ = timed([ctl, "--no-ask-password", "resume", sandbox], user)
            times["resume"].append(t)
            if os.path.exists(archive):
                os.remove(archive)
            os.sync()
            t, _ = timed(["tar", "--zstd", "-cf", archive, "-C", same, "."], user)
            times["tar_c"].append(t)
            shutil.rmtree(extracted, ignore_errors=True)
            os.makedirs(extracted)
            t, _ = timed(["tar", "--zstd", "-xf", archive, "-C", extracted], user)
            times["tar_x"].append(t)
    finally:
        timed([ctl, "--no-ask-password", "destroy", sandbox], user)
        shutil.rmtree(same, ignore_errors=True)
        shutil.rmtree(extracted, ignore_errors=True)
    return times


def bench_many(args, user, work, count=1000):
    """`count` sandboxes over as many small directories: each create timed, the daemon's RSS
    with all of them, and `list` with all of them; then they are destroyed."""
    ctl = args.sandboxctl
    base = os.path.join(work, "many")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    creates, lists, ids = [], [], []
    rss_before = memory_mib(args.daemon_pid, "VmRSS") if args.daemon_pid else float("nan")
    try:
        for i in range(count):
            project = os.path.join(base, f"p{i:04d}")
            os.makedirs(project)
            with open(os.path.join(project, "f.txt"), "w") as f:
                f.write(f"project {i}\n")
            t, out = timed([ctl, "--no-ask-password", "create", project], user, capture=True)
            creates.append(t)
            ids.append(out.strip())
        rss = memory_mib(args.daemon_pid, "VmRSS") if args.daemon_pid else float("nan")
        for _ in range(args.rounds):
            t, _ = timed([ctl, "list"], user)
            lists.append(t)
    finally:
        for sandbox in ids:
            subprocess.run([ctl, "destroy", sandbox], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        shutil.rmtree(base, ignore_errors=True)
    return {"create": creates, "list": lists, "rss": rss, "rss_before": rss_before}


def bench_big_file(args, user, work):
    """Commit of one 2 GiB file against a commit of one small file (O(1): a rename either way),
    the rename floor of the same file, and cp -a of it (a byte copy)."""
    ctl = args.sandboxctl
    times = {"big": [], "small": [], "rename": [], "cp": []}
    base = os.path.join(work, "bigfile")
    for _ in range(args.commit_rounds):
        shutil.rmtree(base, ignore_errors=True)
        os.makedirs(base)
        for name, script in (("big", "dd if=/dev/zero of=big bs=1M count=2048 status=none"), ("small", "echo small > small")):
            _, out = timed([ctl, "--no-ask-password", "create", base], user, capture=True)
            sandbox = out.strip()
            timed([ctl, "--no-ask-password", "run", sandbox, "--", "sh", "-c", script], user)
            os.sync()
            t, _ = timed([ctl, "--no-ask-password", "commit", sandbox, "--all"], user)
            times[name].append(t)
            timed([ctl, "--no-ask-password", "destroy", sandbox], user)
        os.makedirs(os.path.join(base, "moved"))
        os.sync()
        start = time.perf_counter()
        os.rename(os.path.join(base, "big"), os.path.join(base, "moved", "big"))
        times["rename"].append((time.perf_counter() - start) * 1000)
        t, _ = timed(["cp", "-a", os.path.join(base, "moved", "big"), os.path.join(base, "copy")], user)
        times["cp"].append(t)
    shutil.rmtree(base, ignore_errors=True)
    return times


def bench_decide(args, user, work):
    """approve of a 1 GiB file while a job of the sandbox runs (the decision is bound to the
    file's SHA-256, digested by the owner's helper: approval.h) against the same approve with no
    job running (its fingerprint alone), and `openssl dgst -sha256` of a copy of the file (the
    floor of digesting it with the library sandboxd uses). Interleaved per round."""
    import signal
    ctl = args.sandboxctl
    base = os.path.join(work, "decide")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    _, out = timed([ctl, "--no-ask-password", "create", base], user, capture=True)
    sandbox = out.strip()
    timed([ctl, "--no-ask-password", "run", sandbox, "--", "sh", "-c", "head -c 1073741824 /dev/urandom > big"], user)
    copy = os.path.join(work, "decide-copy")
    with open(copy, "wb") as f:
        subprocess.run([ctl, "--no-ask-password", "run", sandbox, "--", "cat", "big"], stdout=f, check=True)
    times = {"bound": [], "idle": [], "sha": []}
    for _ in range(max(args.commit_rounds, 5)):
        job = subprocess.Popen([ctl, "--no-ask-password", "run", sandbox, "--", "sleep", "600"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
        t, _ = timed([ctl, "--no-ask-password", "approve", sandbox, "big"], user)
        times["bound"].append(t)
        job.send_signal(signal.SIGINT)  # sandboxctl run cancels its job on Ctrl-C
        job.wait()
        t, _ = timed([ctl, "--no-ask-password", "approve", sandbox, "big"], user)
        times["idle"].append(t)
        t, _ = timed(["openssl", "dgst", "-sha256", copy], user)
        times["sha"].append(t)
    timed([ctl, "--no-ask-password", "destroy", sandbox], user)
    os.remove(copy)
    shutil.rmtree(base, ignore_errors=True)
    return times


def bench_edited_file(args, user, work):
    """Commit of a live file the job edited in place, 1 GiB against one byte: the same size with one
    byte rewritten, so whether it changed takes its content, not its size; and `run -- true` in
    each sandbox afterwards. Both exchange one name with the live one. Every sandbox has a
    directory of its own and is destroyed at the end: the removal of a destroyed sandbox's
    1 GiB copy (in the background) would otherwise weigh on the next commit's syncfs."""
    ctl = args.sandboxctl
    base = os.path.join(work, "edited")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    block = os.urandom(1 << 20)
    times = {"big": [], "small": [], "run_big": [], "run_small": []}
    made = []
    try:
        for r in range(args.commit_rounds):
            for name, size in (("small", 1), ("big", 1 << 30)):
                root = os.path.join(base, f"{name}-{r}")
                os.makedirs(root)
                path = os.path.join(root, name)
                with open(path, "wb") as f:
                    for _ in range(size >> 20):
                        f.write(block)
                    f.write(b"s" * (size & ((1 << 20) - 1)))
                at = size // 2
                with open(path, "rb") as f:
                    f.seek(at)
                    byte = (f.read(1)[0] + 1) % 256  # a byte other than the one there
                os.sync()
                _, out = timed([ctl, "--no-ask-password", "create", root], user, capture=True)
                sandbox = out.strip()
                made.append(sandbox)
                script = f"printf '\\{byte:03o}' | dd of={name} bs=1 seek={at} conv=notrunc status=none"
                timed([ctl, "--no-ask-password", "run", sandbox, "--", "sh", "-c", script], user)
                _, listed = timed([ctl, "--no-ask-password", "changes", sandbox], user, capture=True)
                if listed != f"M {name}\n":
                    raise SystemExit(f"the job's edit of {name} is not the one change: {listed!r}")
                t, _ = timed([ctl, "--no-ask-password", "run", sandbox, "--", "/bin/true"], user)
                times[f"run_{name}"].append(t)
                timed([ctl, "--no-ask-password", "changes", sandbox], user)  # that run's end taken in
                os.sync()
                t, _ = timed([ctl, "--no-ask-password", "commit", sandbox, "--all"], user)
                times[name].append(t)
                with open(path, "rb") as f:
                    f.seek(at)
                    if f.read(1)[0] != byte:
                        raise SystemExit(f"the commit did not put the edit of {name} live")
    finally:
        for sandbox in made:
            timed([ctl, "--no-ask-password", "destroy", sandbox], user)
        shutil.rmtree(base, ignore_errors=True)
    return times


def bench_try(args, user, work):
    """`sandboxctl try -y -- /bin/true` in a small project, interleaved with the bare bwrap run."""
    project = os.path.join(work, "try")
    os.makedirs(project, exist_ok=True)
    fill(project, ["a.txt", "b.txt"], "try")
    times = {"try": [], "bare": []}
    for i in range(args.rounds + 3):
        b, _ = timed(BWRAP_BARE, user)
        start = time.perf_counter()
        result = subprocess.run([args.sandboxctl, "--no-ask-password", "try", "-y", "--", "/bin/true"], cwd=project,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        t = (time.perf_counter() - start) * 1000
        if result.returncode != 0:
            raise SystemExit(f"sandboxctl try failed ({result.returncode}): {result.stderr.decode()}")
        if i >= 3:
            times["try"].append(t)
            times["bare"].append(b)
    return times


def first_byte_ms(argv, user):
    """Milliseconds from starting `argv` until its first byte of output arrives (then it is
    waited for): what a caller streaming a job's output waits before seeing anything."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=user.pw_dir)
    first = process.stdout.read(1)
    elapsed = (time.perf_counter() - start) * 1000
    process.stdout.read()
    if process.wait() != 0 or not first:
        raise SystemExit(f"{' '.join(argv)} failed ({process.returncode}): {process.stderr.read().decode()}")
    return elapsed


def capture_job_bwrap(args, user, work):
    """As root, before the bench drops to its user: the bwrap command line and options of a real
    job (a `true` in a sandbox of the bench user's), read by strace from the daemon's parked job
    starter as it becomes bwrap (bwrap reads its options from fd 4 and closes it). Run by hand as
    the user (bench_run), with the same options but the daemon's status and block fds, it is the
    floor of `sandboxctl run`: everything bwrap does for a job, nothing the daemon adds. None
    without strace or a parked starter."""
    if not shutil.which("strace"):
        return None
    starters = [pid for pid in os.listdir("/proc") if pid.isdigit() and proc_field(pid, "PPid") == str(args.daemon_pid)
                and proc_field(pid, "Name") == "sandboxd-job-st"]
    if not starters:
        return None
    project = os.path.join(work, "floor")
    os.makedirs(project, exist_ok=True)
    os.chown(project, user.pw_uid, user.pw_gid)

    def as_user():
        os.setgroups(os.getgrouplist(user.pw_name, user.pw_gid))
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)

    def ctl(*words):
        return subprocess.run([args.sandboxctl, "--no-ask-password", *words], preexec_fn=as_user, cwd=project, check=True,
                              capture_output=True).stdout.decode().strip()

    sandbox = ctl("create", project)
    trace = os.path.join(work, "floor.strace")
    tracer = subprocess.Popen(["strace", "-qq", "-e", "trace=execve,read", "-e", "read=4", "-v", "-s", "4096", "-o", trace,
                               "-p", starters[0]], stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)  # attached
        ctl("run", sandbox, "--", "/bin/true")
    finally:
        tracer.terminate()
        tracer.wait()
        ctl("destroy", sandbox)
    argv, data = None, bytearray()
    with open(trace) as f:
        for line in f:
            if line.startswith("execve(") and argv is None:
                # execve("/usr/bin/bwrap", ["/usr/bin/bwrap", "--args", "4", "--", "...job-exec", "--", "/bin/true"], ...)
                words = line[line.index("[") + 1:line.index("]")]
                argv = [w.strip().strip('"') for w in words.split(", ")]
            elif line.startswith(" | ") and argv is not None:
                # " | 00000  2d 2d 72 6f 2d 62 69 6e  64 00 2f 00 2f 00 2d 2d  --ro-bind././.-- |"
                data += bytes.fromhex("".join(line[10:59].split()))
    os.remove(trace)
    if argv is None or not data:
        return None
    kept, skip = [], 0
    merged = re.compile(rb".*/run/" + sandbox.encode() + rb"/[0-9]+$")
    for word in bytes(data).rstrip(b"\0").split(b"\0"):
        if skip:
            skip -= 1
        elif word in (b"--json-status-fd", b"--block-fd"):
            skip = 1
        elif merged.match(word):
            # The sandbox's merged view is mounted in the daemon's namespace alone (and gone with
            # the sandbox): the project itself, bound the same way, costs bwrap the same.
            kept.append(project.encode())
        else:
            kept.append(word)
    return argv, b"\0".join(kept) + b"\0"


def proc_field(pid, name):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def timed_with_options(command, options, user):
    """`command` (bwrap --args N ...) with `options` read from a memory file passed as that N."""
    read_end = os.memfd_create("bwrap-args", 0)
    os.write(read_end, options)
    os.lseek(read_end, 0, os.SEEK_SET)
    argv = list(command)
    argv[argv.index("--args") + 1] = str(read_end)
    try:
        start = time.perf_counter()
        result = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=user.pw_dir,
                                pass_fds=(read_end,), check=False)
        elapsed = (time.perf_counter() - start) * 1000
    finally:
        os.close(read_end)
    if result.returncode != 0:
        raise SystemExit(f"the job's own bwrap failed ({result.returncode}): {result.stderr.decode()}")
    return elapsed


def bench_run(args, user, work, job_bwrap=None):
    """One sandbox, then `sandboxctl run -- /bin/true` interleaved with the bare bwrap run, and
    the first byte of `echo` through each (sandboxctl passes its own stdout to the job)."""
    project = os.path.join(work, "run")
    os.makedirs(project, exist_ok=True)
    ctl = args.sandboxctl
    _, out = timed([ctl, "--no-ask-password", "create", project], user, capture=True)
    sandbox = out.strip()
    times = {"bare": [], "run": [], "bare_first": [], "run_first": [], "floor": [], "client": []}
    try:
        for i in range(args.rounds + 3):
            b, _ = timed(BWRAP_BARE, user)
            if job_bwrap and i >= 3:
                times["floor"].append(timed_with_options(job_bwrap[0], job_bwrap[1], user))
                times["client"].append(timed([ctl, "--version"], user)[0])
            r, _ = timed([ctl, "--no-ask-password", "run", sandbox, "--", "/bin/true"], user)
            bf = first_byte_ms(BWRAP_BARE[:-1] + ["/bin/echo", "x"], user)
            rf = first_byte_ms([ctl, "--no-ask-password", "run", sandbox, "--", "/bin/echo", "x"], user)
            if i >= 3:
                for name, value in zip(("bare", "run", "bare_first", "run_first"), (b, r, bf, rf)):
                    times[name].append(value)
    finally:
        timed([ctl, "--no-ask-password", "destroy", sandbox], user)
    return times


EXTRA_HOMES = 300
EXTRA_SANDBOXES = 200  # the bench user's: MaxSandboxesPerUser is 256 by default
EXTRA_SOCKETS = 300
SOCKETS_DIR = "/run/sandboxd-bench-sockets"

# Run as root, apart from the bench (which gives up root for good): on "homes" makes the extra
# homes, on "sockets" binds the extra unix sockets (where a desktop's services bind theirs: in
# /run), on "none" takes both away; answers "ok" to each, and takes everything away when its
# stdin closes, however the bench ends.
HOMES_HELPER = f"""
import os, shutil, socket, sys
paths = ["/home/sandboxd-bench-extra-%03d" % i for i in range({EXTRA_HOMES})]
sockets = []
def remove():
    for path in paths:
        try:
            os.rmdir(path)
        except FileNotFoundError:
            pass
    while sockets:
        sockets.pop().close()
    shutil.rmtree("{SOCKETS_DIR}", ignore_errors=True)
try:
    for line in sys.stdin:
        remove()
        if line.strip() == "homes":
            for path in paths:
                os.makedirs(path, mode=0o700, exist_ok=True)
        elif line.strip() == "sockets":
            os.makedirs("{SOCKETS_DIR}", exist_ok=True)
            for i in range({EXTRA_SOCKETS}):
                bound = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                bound.bind("{SOCKETS_DIR}/s%03d" % i)
                bound.listen(1)
                sockets.append(bound)
        print("ok", flush=True)
finally:
    remove()
"""


def start_homes_helper():
    """The root helper that adds and removes the extra homes and sockets of bench_homes (started
    before the bench drops root)."""
    return subprocess.Popen([sys.executable, "-c", HOMES_HELPER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def bench_homes(args, user, work, helper):
    """`sandboxctl run SANDBOX -- /bin/true` with the host as it is, with EXTRA_HOMES more
    directories in /home (other users' homes, each hidden from jobs) and with EXTRA_SOCKETS more
    unix sockets bound in /run (each looked at by every job's start), interleaved: the helper
    makes and takes them away between the runs of a round. Issue 41: nothing per job grows with
    the host."""
    def host(command):
        helper.stdin.write(command + "\n")
        helper.stdin.flush()
        if helper.stdout.readline().strip() != "ok":
            raise SystemExit(f"the bench's extra {command} could not be made")

    project = os.path.join(work, "homes")
    os.makedirs(project, exist_ok=True)
    ctl = args.sandboxctl
    _, out = timed([ctl, "--no-ask-password", "create", project], user, capture=True)
    sandbox = out.strip()
    times = {"as_is": [], "more": [], "sockets": []}
    try:
        for i in range(args.rounds + 3):
            for variant, command in (("as_is", "none"), ("more", "homes"), ("sockets", "sockets")):
                host(command)
                t, _ = timed([ctl, "--no-ask-password", "run", sandbox, "--", "/bin/true"], user)
                if i >= 3:
                    times[variant].append(t)
        # More sandboxes held by the daemon, each with its overlay mounted (every job's bwrap
        # starts from a copy of the daemon's mounts): made once, too slow to interleave, so the
        # runs with them are compared with runs right after they are gone.
        others = []
        for n in range(EXTRA_SANDBOXES):
            root = os.path.join(work, "homes-others", str(n))
            os.makedirs(root, exist_ok=True)
            others.append(timed([ctl, "--no-ask-password", "create", root], user, capture=True)[1].strip())
        times["sandboxes"] = [timed([ctl, "--no-ask-password", "run", sandbox, "--", "/bin/true"], user)[0]
                              for _ in range(args.rounds)]
        for other in others:
            timed([ctl, "--no-ask-password", "destroy", other], user)
        times["after"] = [timed([ctl, "--no-ask-password", "run", sandbox, "--", "/bin/true"], user)[0]
                          for _ in range(args.rounds)]
    finally:
        host("none")
        timed([ctl, "--no-ask-password", "destroy", sandbox], user)
    return times


def name_owner_pid(name):
    """The pid of the process owning `name` on the bus, or 0 when nobody owns it."""
    result = subprocess.run(["gdbus", "call", "--system", "--dest", "org.freedesktop.DBus", "--object-path",
                             "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", name],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    if result.returncode != 0:
        return 0
    return int(result.stdout.decode().strip("()\n ,").split()[-1].rstrip(","))


def wait_for(predicate, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def bench_cold_start(args, user):
    """As root: sandboxd stopped, an activation file in the bus's service directory, then per
    round the time from a client's call (`sandboxctl list`, as the bench user) to its answer while
    the bus starts the daemon; the daemon's RSS once it is up and idle; then --idle-exit ends it.
    The warm figure is the same call answered by a running daemon."""
    daemon = args.daemon_command.split()
    services = os.path.join(args.bus_dir, "services")
    os.makedirs(services, exist_ok=True)
    with open(os.path.join(services, "org.sandboxd.Sandbox1.service"), "w") as f:
        f.write("[D-BUS Service]\nName=org.sandboxd.Sandbox1\nUser=root\n"
                f"Exec=/usr/bin/env {' '.join(daemon)} --idle-exit 1\n")
    subprocess.run(["gdbus", "call", "--system", "--dest", "org.freedesktop.DBus", "--object-path",
                    "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.ReloadConfig"],
                   stdout=subprocess.DEVNULL, check=True)
    os.kill(args.daemon_pid, 15)
    list_call = [args.sandboxctl, "--no-ask-password", "list"]
    as_user = dict(user=user.pw_uid, group=user.pw_gid, extra_groups=[], cwd=user.pw_dir,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    times = {"cold": [], "warm": [], "rss": []}
    rounds = max(5, args.rounds // 3)
    for i in range(rounds + 1):
        if not wait_for(lambda: name_owner_pid("org.sandboxd.Sandbox1") == 0, 20):
            raise SystemExit("sandboxd did not exit when idle")
        start = time.perf_counter()
        result = subprocess.run(list_call, **as_user, check=False)
        cold = (time.perf_counter() - start) * 1000
        if result.returncode != 0:
            raise SystemExit(f"sandboxctl list failed: {result.stderr.decode()}")
        start = time.perf_counter()
        subprocess.run(list_call, **as_user, check=True)
        warm = (time.perf_counter() - start) * 1000
        time.sleep(0.3)  # settled: what it holds between calls
        rss = memory_mib(name_owner_pid("org.sandboxd.Sandbox1"), "VmRSS")
        if i >= 1:
            times["cold"].append(cold)
            times["warm"].append(warm)
            times["rss"].append(rss)
    return times


def memory_mib(pid, field="VmHWM"):
    """A memory figure of process `pid` from /proc: VmHWM (the peak) or VmRSS (now)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


SECTIONS = ("crd", "run", "homes", "changes", "settle", "feed", "commit", "landing", "big", "decide", "try", "suspend", "many", "coldstart")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--user", required=True)
    parser.add_argument("--sandboxctl", required=True)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--commit-rounds", type=int, default=3)
    parser.add_argument("--daemon-pid", type=int, default=0)
    parser.add_argument("--landing-dir", help="a file system with no storage area (bench/run mounts one)")
    parser.add_argument("--bus-dir", help="the private bus's directory (its services/ is the activation directory)")
    parser.add_argument("--commit-floor", help="bench/commit_floor.cpp built (bench/run builds it)")
    parser.add_argument("--daemon-command", help="how bench/run started sandboxd (environment words first)")
    parser.add_argument("--only", action="append", choices=SECTIONS,
                        help="run only this part (repeatable); default: all of them")
    args = parser.parse_args()
    # coldstart stops the running daemon for good: it runs alone (bench/run runs it last).
    only = set(args.only or [section for section in SECTIONS if section != "coldstart"])
    if "coldstart" in only and len(only) > 1:
        parser.error("--only coldstart runs by itself: it stops the daemon the other parts use")
    user = pwd.getpwnam(args.user)
    work = os.path.join(user.pw_dir, "bench")
    os.makedirs(work, exist_ok=True)
    os.chown(work, user.pw_uid, user.pw_gid)

    print(f"sandboxd benchmarks, {args.rounds} rounds each after 3 warm-up rounds, interleaved; times in ms\n")
    mounts = bench_mount_pair(200) if "crd" in only else None  # as root, before dropping privileges
    # Last of all in effect (it stops the running daemon for good), but as root: before the drop.
    cold = bench_cold_start(args, user) if "coldstart" in only and args.bus_dir else None
    homes_helper = start_homes_helper() if "homes" in only else None  # /home is root's to change
    job_bwrap = capture_job_bwrap(args, user, work) if "run" in only and args.daemon_pid else None
    drop_to(user)

    def row(name, values, baseline=None):
        p50 = statistics.median(values)
        ratio = f"{p50 / statistics.median(baseline):6.2f}x" if baseline else "       "
        print(f"{name:<58} p50 {p50:8.2f}  p90 {percentile(values, 90):8.2f}  {ratio}", flush=True)

    floors = {}  # the pieces of the floors, in ms, as the sections measure them
    if "crd" in only:
        crd = bench_create_run_destroy(args, user, work)
        bare = crd["bare"]
        row("overlay mount(2)+umount pair (reference)", mounts)
        row("bare bwrap --unshare-net --unshare-pid /bin/true (baseline)", bare)
        row("sandboxctl create + run /bin/true + destroy (3 processes)", crd["total"], bare)
        print("   target: within 3x of the bare bwrap run")
        row("   of which: sandboxctl create (polkit check, validation, mount)", crd["create"])
        row("   of which: sandboxctl run -- /bin/true", crd["run"], bare)
        row("   of which: sandboxctl destroy", crd["destroy"])
        row("   floor: sandboxctl --version (client process start-up)", crd["client"])
        polkit = bench_polkit_check(args, user)
        row("   pkcheck of the create action (reference)", polkit["check"])
        row("   pkcheck --list-temp (start-up, connection, no check)", polkit["start"])
        floors["client"] = statistics.median(crd["client"])
        floors["bare"] = statistics.median(bare)
        floors["polkit"] = statistics.median(polkit["check"]) - statistics.median(polkit["start"])
        floors["mount"] = statistics.median(mounts)
        print(f"   polkit's answer (pkcheck less --list-temp): {floors['polkit']:.2f} ms")
    if "run" in only:
        runs = bench_run(args, user, work, job_bwrap)
        print()
        row("bare bwrap --unshare-net --unshare-pid /bin/true (baseline)", runs["bare"])
        row("sandboxctl run SANDBOX -- /bin/true", runs["run"], runs["bare"])
        print("   target: under 2x of the bare bwrap run")
        if runs["floor"]:
            row("   floor: the job's own bwrap options + job-exec, by hand", runs["floor"], runs["bare"])
            print(f"   what the daemon and client add to a run: {statistics.median(runs['run']) - statistics.median(runs['floor']):.2f} ms"
                  " (p50 of run minus p50 of the floor)")
            floor = statistics.median(runs["client"]) + statistics.median(runs["floor"])
            print(f"   floor of a run: a client start (sandboxctl --version) + the job's bwrap = {floor:.2f} ms, "
                  f"{floor / statistics.median(runs['bare']):.2f}x of bare bwrap, before any bus round trip (target 2x)")
        row("first byte: bare bwrap ... /bin/echo x", runs["bare_first"])
        row("first byte: sandboxctl run SANDBOX -- /bin/echo x", runs["run_first"], runs["bare_first"])
        if runs["floor"]:
            floors["job"] = statistics.median(runs["floor"])
        if "job" in floors and "client" in floors:
            # Three client processes cannot start faster than one, three times; the job's bwrap is
            # the run's own floor; a sandbox is an overlay mounted and unmounted, made only when
            # polkit says yes: what create + run + destroy cannot go below.
            floor = 3 * floors["client"] + floors["job"] + floors["mount"] + floors["polkit"]
            print(f"   floor of create + run + destroy: 3 client starts + the job's bwrap + a mount pair + polkit's "
                  f"answer = {floor:.2f} ms, {floor / floors['bare']:.2f}x of bare bwrap (target 3x)")
    if "homes" in only:
        homes = bench_homes(args, user, work, homes_helper)
        homes_helper.stdin.close()
        homes_helper.wait()
        print()
        row("sandboxctl run SANDBOX -- /bin/true, /home as it is (baseline)", homes["as_is"])
        row(f"sandboxctl run SANDBOX -- /bin/true, {EXTRA_HOMES} more homes in /home", homes["more"], homes["as_is"])
        row(f"sandboxctl run SANDBOX -- /bin/true, {EXTRA_SOCKETS} more sockets bound in /run", homes["sockets"], homes["as_is"])
        row(f"sandboxctl run SANDBOX -- /bin/true, {EXTRA_SANDBOXES} more sandboxes held", homes["sandboxes"], homes["after"])
        row("   the same once they are destroyed (its baseline)", homes["after"])
        print("   target: within 1.2x (nothing per job grows with the host)")
    if "changes" in only:
        changes = bench_changes(args, user, work)
        row("sandboxctl changes, 10 changed files in a 1,000-file root", changes[1000])
        row("sandboxctl changes, 10 changed files in a 100,000-file root", changes[100000], changes[1000])
        print("   target: the 100,000-file root within 1.5x of the 1,000-file root")
    if "settle" in only and args.daemon_pid:
        cpu, wall = bench_settle(args, user, work)
        print("\nsandboxctl run -- /bin/true in a sandbox holding N changes: the daemon's CPU (ms) for the run and its settling"
              " (each figure the mean of a batch of 10)")
        for n in SETTLE_SIZES:
            row(f"daemon CPU, {n:,} changes" + (" (baseline)" if n == SETTLE_SIZES[0] else ""), cpu[n],
                cpu[SETTLE_SIZES[0]] if n != SETTLE_SIZES[0] else None)
        print("   target: 100,000 changes within 2x of 10")
        print("sandboxctl run -- /bin/true, runs following each other without pause (wall, ms)")
        for n in SETTLE_SIZES:
            row(f"run, {n:,} changes" + (" (baseline)" if n == SETTLE_SIZES[0] else ""), wall[n],
                wall[SETTLE_SIZES[0]] if n != SETTLE_SIZES[0] else None)
        print("   target: 200,000 changes within 1.3x of 10")
    if "feed" in only:
        feed = bench_feed(args, user, work)
        print(f"\na job writing 100,000 files, with the live change feed and without ({args.commit_rounds} rounds)")
        row("sandboxctl run --no-live-feed (baseline)", feed["off"])
        row("sandboxctl run, the feed on", feed["on"], feed["off"])
        row("   the job's own loop, no feed (baseline)", feed["off_job"])
        row("   the job's own loop, the feed on", feed["on_job"], feed["off_job"])
        print("   target: the job no more than 10% slower (1.10x)")
    if "commit" in only:
        print(f"\ncommit of small files, a third new, two thirds replacing live ones ({args.commit_rounds} rounds)")
        for files in (1000, 5000, 10000):
            t = bench_commit(args, user, work, files)
            row(f"floor: exchange/rename of {files:,} files + syncfs", t["rename"])
            if t["safe"]:
                row("floor that survives a kill and can be undone (commit_floor)", t["safe"], t["rename"])
            row(f"sandboxctl commit --all, {files:,} files (journal, backups)", t["commit"], t["rename"])
            if files == 5000:
                print("   target: within 1.5x of the floor")
            if t["safe"]:
                print(f"   commit against the floor that survives a kill: "
                      f"{statistics.median(t['commit']) / statistics.median(t['safe']):.2f}x")
            row(f"cp -a, {files:,} files", t["cp"], t["rename"])
            row(f"rsync -a, {files:,} files", t["rsync"], t["rename"])
        print("   target: commit within 1.3x of the rename floor")
    if "landing" in only and args.landing_dir:
        print(f"\ncommit across file systems, through a landing area ({args.commit_rounds} rounds)")
        for files in (1000, 10000):
            t = bench_landing(args, user, work, files)
            row(f"cp -a, {files:,} files onto the other file system (floor)", t["cp"])
            row(f"sandboxctl commit --all, {files:,} files (landing area)", t["commit"], t["cp"])
            row(f"rsync -a, {files:,} files onto the other file system", t["rsync"], t["cp"])
        print("   no target: the issue's figures are for layers on the root's own file system")
    if "decide" in only:
        decide = bench_decide(args, user, work)
        print("\napprove of one 1 GiB file (issue 39: a decision made while a job runs is bound to its bytes)")
        row("openssl dgst -sha256 of the same bytes (floor)", decide["sha"])
        row("sandboxctl approve, no job running (fingerprint)", decide["idle"])
        row("sandboxctl approve while a job runs (bound: SHA-256)", decide["bound"], decide["sha"])
        print("   no target: the cost of binding is the digest, paid only while a job runs")
    if "big" in only:
        big = bench_big_file(args, user, work)
        print(f"\ncommit of one file ({args.commit_rounds} rounds)")
        row("rename(2) of a 2 GiB file (floor)", big["rename"])
        row("sandboxctl commit --all, one small file", big["small"])
        row("sandboxctl commit --all, one 2 GiB file", big["big"], big["small"])
        row("cp -a, one 2 GiB file", big["cp"], big["small"])
        print("   target: the 2 GiB file in O(1) (a rename, not a byte copy): as fast as the small one")
        edited = bench_edited_file(args, user, work)
        print(f"\ncommit of one live file the job rewrote one byte of, in place ({args.commit_rounds} rounds)")
        row("sandboxctl commit --all, a 1-byte file", edited["small"])
        row("sandboxctl commit --all, a 1 GiB file", edited["big"], edited["small"])
        print("   target: the 1 GiB file within 2x of the 1-byte one")
        row("sandboxctl run -- /bin/true after it, the 1-byte file", edited["run_small"])
        row("sandboxctl run -- /bin/true after it, the 1 GiB file", edited["run_big"], edited["run_small"])
    if "try" in only:
        tries = bench_try(args, user, work)
        print()
        row("bare bwrap --unshare-net --unshare-pid /bin/true (baseline)", tries["bare"])
        row("sandboxctl try -y -- /bin/true (one client process)", tries["try"], tries["bare"])
        print("   target: within 3x of the bare bwrap run (issue 41; issue 21's was under 25 ms)")
        if "job" in floors and "client" in floors:
            floor = floors["client"] + floors["job"] + floors["mount"] + floors["polkit"]
            print(f"   floor: 1 client start + the job's bwrap + a mount pair + polkit's answer = {floor:.2f} ms, "
                  f"{floor / statistics.median(tries['bare']):.2f}x of bare bwrap")
    if "suspend" in only:
        s = bench_suspend(args, user, work)
        print(f"\nsuspend and resume, an upper of 10,000 small files ({args.commit_rounds} rounds)")
        row("tar --zstd -cf of the same files (baseline)", s["tar_c"])
        row("sandboxctl suspend (archive, sync, free the layer)", s["suspend"], s["tar_c"])
        row("tar --zstd -xf of the same files (baseline)", s["tar_x"])
        row("sandboxctl resume (extract, sync, mount)", s["resume"], s["tar_x"])
    if "many" in only:
        m = bench_many(args, user, work)
        print(f"\n{len(m['create']):,} sandboxes over as many small directories")
        row("sandboxctl create (each)", m["create"])
        print(f"   p99 {percentile(m['create'], 99):8.2f} ms")
        row("sandboxctl list, with all of them", m["list"])
        print(f"sandboxd RSS with all of them: {m['rss']:.1f} MiB (before: {m['rss_before']:.1f} MiB; target: under 100 MiB)")
    if cold:
        print("\nD-Bus activation: sandboxd stopped, started by the bus for a call; --idle-exit ends it again")
        row("sandboxctl list answered by a running sandboxd (baseline)", cold["warm"])
        row("sandboxctl list starting sandboxd through activation", cold["cold"], cold["warm"])
        print("   target: cold start to the first answer under 100 ms")
        print(f"sandboxd RSS when up and idle: p50 {statistics.median(cold['rss']):.1f} MiB (target: under 10 MiB)")
    elif args.daemon_pid:
        print(f"\nsandboxd peak RSS over the whole run (VmHWM): {memory_mib(args.daemon_pid):.1f} MiB (target: under 64 MiB)")


if __name__ == "__main__":
    main()
