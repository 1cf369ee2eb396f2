#!/usr/bin/env python3
"""Big text diffs (run through bench/text): for a log of each size with 5 lines edited far apart,
what sandboxd-text-helper's diff, hunk count and merge of two hunks cost (wall time and the
helper's peak RSS), beside `git diff --no-index` of the same two files. The helper is run the
way sandboxd runs it (a CBOR request on stdin, the directories and the output as fds), without
the daemon: nothing else runs. Times are medians of --rounds runs, interleaved with git's; RSS
is the largest of them (/usr/bin/time's "Maximum resident set size")."""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

EDITS = 5
LINE = "2024-05-{day:02d}T{h:02d}:{m:02d}:{s:02d}.{us:06d} INFO worker-{w} request {n} served in {ms} ms\n"


def size_arg(text):
    units = {"K": 1 << 10, "M": 1000 ** 2, "G": 1000 ** 3}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def cbor(value):
    """The little of CBOR a helper request needs (helper_request.h)."""
    def head(major, n):
        if n < 24:
            return bytes([major << 5 | n])
        for extra, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
            if n < 1 << (8 * size):
                return bytes([major << 5 | extra]) + n.to_bytes(size, "big")
        raise ValueError(n)
    if isinstance(value, bool):
        return b"\xf5" if value else b"\xf4"
    if isinstance(value, int):
        return head(0, value) if value >= 0 else head(1, -1 - value)
    if isinstance(value, str):
        data = value.encode()
        return head(3, len(data)) + data
    if isinstance(value, (list, tuple)):
        return head(4, len(value)) + b"".join(cbor(v) for v in value)
    if isinstance(value, dict):
        return head(5, len(value)) + b"".join(cbor(k) + cbor(v) for k, v in value.items())
    raise TypeError(value)


def make_log(path, size):
    """A log of `size` bytes of distinct lines (as a real one: a timestamp and a request number)."""
    with open(path, "w") as out:
        written, n = 0, 0
        while written < size:
            chunk = []
            for _ in range(20000):
                t = n // 7
                chunk.append(LINE.format(day=1 + t // 86400 % 28, h=t // 3600 % 24, m=t // 60 % 60, s=t % 60,
                                         us=n * 7919 % 1000000, w=n % 16, n=n, ms=n * 31 % 997))
                n += 1
            text = "".join(chunk)
            out.write(text[:size - written] if written + len(text) > size else text)
            written += len(text)
        out.write("\n")  # the last line whole


def edit_copy(old, new, size):
    """`new`: `old` with EDITS lines far apart rewritten, shorter (git shows files over
    core.bigFileThreshold as binary only when their sizes differ: of two of the same size it
    reads both whole to compare them first, and then diffs them as text, whatever their size)."""
    cuts = []
    with open(old, "rb") as f:
        for k in range(1, EDITS + 1):
            f.seek(size * k // (EDITS + 1))
            f.readline()  # to the next line start
            start = f.tell()
            cuts.append((start, start + len(f.readline())))
    with open(old, "rb") as src, open(new, "wb") as dst:
        done = 0
        for k, (start, end) in enumerate(cuts, 1):
            copy_range(src, dst, done, start)
            dst.write(f"EDITED line {k}\n".encode())
            done = end
        copy_range(src, dst, done, os.fstat(src.fileno()).st_size)


def copy_range(src, dst, begin, end):
    dst.flush()
    while begin < end:
        begin += os.copy_file_range(src.fileno(), dst.fileno(), end - begin, begin)


def measure(argv, stdin=b"", pass_fds=()):
    """Runs argv under /usr/bin/time; returns (seconds, peak RSS in MiB, exit status, stderr).
    The RSS is time's report on its own child: a child of this python process would count the
    python process too (a process's peak RSS includes what it had before exec), so the small
    time program stands between."""
    with tempfile.NamedTemporaryFile("r") as report:
        start = time.monotonic()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", report.name, *argv], input=stdin,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, pass_fds=pass_fds)
        seconds = time.monotonic() - start
        rss_kib = int(report.read().strip().splitlines()[-1])
    return seconds, rss_kib / 1024, proc.returncode, proc.stderr.decode(errors="replace")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--helper", required=True, help="sandboxd-text-helper to run")
    parser.add_argument("--dir", default=None, help="where to make the files (default: a new directory in /var/tmp)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("sizes", nargs="*", default=["15M", "100M", "500M", "1G"])
    args = parser.parse_args()

    rows = []
    for size_text in args.sizes:
        size = size_arg(size_text)
        base = tempfile.mkdtemp(prefix="sandboxd-bench-text.", dir=args.dir or "/var/tmp")
        try:
            for side in ("lower", "upper"):
                os.mkdir(os.path.join(base, side))
            old, new = os.path.join(base, "lower", "big.log"), os.path.join(base, "upper", "big.log")
            print(f"{size_text}: making the files", file=sys.stderr)
            make_log(old, size)
            edit_copy(old, new, size)
            lower = os.open(os.path.join(base, "lower"), os.O_PATH | os.O_DIRECTORY)
            upper = os.open(os.path.join(base, "upper"), os.O_PATH | os.O_DIRECTORY)
            out_path = os.path.join(base, "diff.out")
            change = {"path": "big.log", "kind": "modified", "old_type": "file", "new_type": "file",
                      "old_mode": 0o644, "new_mode": 0o644}
            root = {"live_fd": 3, "upper_fd": 4, "prefix": "", "changes": [change], "renames": [], "only_hunks": {}}
            figures = {name: ([], []) for name in ("diff", "hunks", "merge", "git")}
            shown = None
            for _ in range(args.rounds):
                out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                request = cbor({"op": "diff", "roots": [root], "output_fd": 5})
                figures_add(figures["diff"], measure([args.helper, "diff"], request, (lower, upper, out)), "diff")
                os.close(out)
                with open(out_path, "rb") as f:
                    text = f.read()
                shown = "binary" if b"\nBinary files " in text else f"{text.count(b'@@ -')} hunks"
                figures_add(figures["hunks"], measure([args.helper, "hunks"], cbor({"op": "hunks", "roots": [root]}),
                                                      (lower, upper)), "hunks")
                if shown != "binary":
                    merged = os.path.join(base, "merged")
                    out = os.open(merged, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
                    request = cbor({"live_fd": 3, "upper_fd": 4, "output_fd": 5, "path": "big.log", "hunks": [2, 4]})
                    figures_add(figures["merge"], measure([args.helper, "merge"], request, (lower, upper, out)), "merge")
                    os.close(out)
                    os.unlink(merged)
                git = ["git", "diff", "--no-index", "--no-color", "--no-ext-diff", old, new]
                figures_add(figures["git"], measure(git), "git", ok=(0, 1))
            git_out = subprocess.run(["git", "diff", "--no-index", old, new], stdout=subprocess.PIPE).stdout
            git_shown = "binary" if b"\nBinary files " in git_out else f"{git_out.count(b'@@ -')} hunks"
            os.close(lower)
            os.close(upper)
            rows.append((size_text, size, shown, git_shown, figures))
        finally:
            shutil.rmtree(base, ignore_errors=True)
    print_table(rows)


def figures_add(figure, result, name, ok=(0,)):
    seconds, rss, status, err = result
    if status not in ok:
        raise SystemExit(f"{name} failed (exit {status}): {err.strip()}")
    figure[0].append(seconds)
    figure[1].append(rss)


def print_table(rows):
    def cell(figure):
        if not figure[0]:
            return "-"
        return f"{statistics.median(figure[0]) * 1000:,.0f} ms, {max(figure[1]):,.1f} MiB"
    print("| file | sandboxd shows | diff: time, peak RSS | hunks | merge of 2 hunks | git shows | "
          "git diff --no-index |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for size_text, size, shown, git_shown, figures in rows:
        print(f"| {size_text} ({size / (1 << 20):,.0f} MiB) | {shown} | {cell(figures['diff'])} | {cell(figures['hunks'])} | "
              f"{cell(figures['merge'])} | {git_shown} | {cell(figures['git'])} |")


if __name__ == "__main__":
    main()
