#!/bin/sh
# follow-sandbox.sh PROJECT: what a desktop app does with sandboxd, over D-Bus with gdbus alone.
#
# It creates a sandbox over PROJECT, runs a job in it with its output captured, follows the job
# and the sandbox's change set through their signals, reads the changes and their diff,
# approves and commits them, and destroys the sandbox, printing what an app would show.
# docs/desktop-app.md explains it step by step. Needs: gdbus (libglib2.0-bin), sed, grep, awk
# and coreutils. The commit asks polkit (org.sandboxd.sandbox1.commit), which may ask you.
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 PROJECT-DIRECTORY" >&2
    exit 2
fi
project=$(cd "$1" && pwd -P)

tmp=$(mktemp -d)
monitors=
sandbox=
cleanup() {
    code=$?
    # shellcheck disable=SC2086 # a list of pids
    [ -z "$monitors" ] || kill $monitors 2>/dev/null || true
    rm -rf "$tmp"
    if [ "$code" -ne 0 ] && [ -n "$sandbox" ]; then
        echo "follow-sandbox: failed; the sandbox stays: sandboxctl destroy ${sandbox##*/}" >&2
    fi
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# A GVariant text string: the path in single quotes, its backslashes and quotes escaped.
gvariant_string() {
    printf "'%s'" "$(printf '%s' "$1" | sed "s/[\\\\']/\\\\&/g")"
}

# The object path of a reply such as "(objectpath '/org/sandboxd/Sandbox1/job/7',)".
object_path() {
    sed -n "s/^(objectpath '\(.*\)',)\$/\1/p"
}

# Starts `gdbus monitor` on object $1 into a FIFO that file descriptor $2 reads, and returns once
# it is subscribed: gdbus prints "The name ... is owned by ..." after the bus answered a call
# it made after adding its match rule, so no signal can slip by unseen from then on.
start_monitor() {
    mkfifo "$tmp/signals-$2"
    gdbus monitor --system --dest org.sandboxd.Sandbox1 --object-path "$1" >"$tmp/signals-$2" &
    monitors="$monitors $!"
    eval "exec $2<\"\$tmp/signals-$2\""
    while read -r line <&"$2"; do
        case $line in "The name "*) return 0 ;; esac
    done
    echo "follow-sandbox: gdbus monitor $1 ended" >&2
    return 1
}

# Job.ReadOutput's bytes ("([byte 0x68, 0x69],)") as text.
bytes_to_text() {
    LC_ALL=C awk '{
        while (match($0, /0x[0-9a-f][0-9a-f]/)) {
            h = substr($0, RSTART + 2, 2)
            printf "%c", (index("0123456789abcdef", substr(h, 1, 1)) - 1) * 16 + index("0123456789abcdef", substr(h, 2, 1)) - 1
            $0 = substr($0, RSTART + RLENGTH)
        }
    }'
}

# Prints the job's captured output from byte $offset on and moves $offset past it.
read_output() {
    while :; do
        reply=$(gdbus call --system --dest org.sandboxd.Sandbox1 --object-path "$job" \
            --method org.sandboxd.Sandbox1.Job.ReadOutput "$offset" 65536)
        count=$(printf '%s\n' "$reply" | grep -o '0x[0-9a-f][0-9a-f]' | wc -l)
        [ "$count" -gt 0 ] || return 0
        printf '%s\n' "$reply" | bytes_to_text | sed 's/^/  | /'
        offset=$((offset + count))
    done
}

# Waits for the sandbox's next ChangeSetChanged signal and prints it, and the live feed
# (ChangesSeen: what a running job changes, as it happens) and Progress signals that came
# before it. An app's main loop would show those at once; this script reads them in order.
next_change_set() {
    while read -r line <&4; do
        case $line in
            *.ChangeSetChanged\ *)
                echo "signal: ChangeSetChanged, $(printf '%s\n' "$line" | sed 's/.*(uint32 \([0-9]*\),)$/\1/') change(s)"
                return 0
                ;;
            *.ChangesSeen\ *)
                echo "signal: ChangesSeen"
                printf '%s\n' "$line" | grep -o "(\(uint32 \)\{0,1\}[0-9]*, '[^']*', '[a-z-]*')" |
                    sed "s/^(\(uint32 \)\{0,1\}[0-9]*, '\([^']*\)', '\([a-z-]*\)')\$/  \3 \2/"
                ;;
            *.Progress\ *)
                echo "signal: Progress $(printf '%s\n' "$line" | sed 's/.*Progress //')"
                ;;
        esac
    done
    echo "follow-sandbox: the sandbox's signals ended" >&2
    return 1
}

# 1. A sandbox over the project.
reply=$(gdbus call --system --dest org.sandboxd.Sandbox1 --object-path /org/sandboxd/Sandbox1 \
    --method org.sandboxd.Sandbox1.Manager.CreateSandbox "[$(gvariant_string "$project")]" '{}' 0)
sandbox=$(printf '%s\n' "$reply" | object_path)
echo "sandbox: $sandbox over $project"

# 2. Follow its change set from now on.
start_monitor "$sandbox" 4

# 3. A job with no streams passed: its output is captured, to be read with Job.ReadOutput.
reply=$(gdbus call --system --dest org.sandboxd.Sandbox1 --object-path "$sandbox" \
    --method org.sandboxd.Sandbox1.Sandbox.Run \
    "['sh', '-c', 'echo building in \$PWD; sleep 1; echo made by a job >> follow-sandbox.txt; ls; sleep 1; echo done']" \
    "''" '{}' '{}' '{}' 0)
job=$(printf '%s\n' "$reply" | object_path)
echo "job: $job"

# 4. Follow the job: subscribe first, then read what is there, then wait for the next signal.
start_monitor "$job" 5
offset=0
read_output
status=$(gdbus call --system --dest org.sandboxd.Sandbox1 --object-path "$job" \
    --method org.sandboxd.Sandbox1.Job.GetStatus)
case $status in *"'state': <'finished'>"*) finished=yes ;; *) finished= ;; esac
while [ -z "$finished" ]; do
    read -r line <&5 || { echo "follow-sandbox: the job's signals ended" >&2; exit 1; }
    case $line in
        *.OutputAvailable\ *) echo "signal: OutputAvailable, $(printf '%s\n' "$line" | sed 's/.*(uint64 \([0-9]*\),)$/\1/') bytes captured" ;;
        *.Finished\ *) echo "signal: Finished $(printf '%s\n' "$line" | sed 's/.*Finished //')"; finished=yes ;;
    esac
    read_output
done
status=$(gdbus call --system --dest org.sandboxd.Sandbox1 --object-path "$job" \
    --method org.sandboxd.Sandbox1.Job.GetStatus)
exit_status=$(printf '%s\n' "$status" | sed -n "s/.*'exit_status': <\([-0-9]*\)>.*/\1/p")
reason=$(printf '%s\n' "$status" | sed -n "s/.*'reason': <'\([a-z]*\)'>.*/\1/p")
echo "job finished: exit status $exit_status ($reason)"

# 5. The job changed the sandbox: its ChangeSetChanged signal comes after Finished.
next_change_set

# 6. The change set: one (root, path, kind, details) per change.
reply=$(gdbus call --system --dest org.sandboxd.Sandbox1 --object-path "$sandbox" \
    --method org.sandboxd.Sandbox1.Sandbox.GetChanges)
echo "changes:"
printf '%s\n' "$reply" | grep -o "(\(uint32 \)\{0,1\}[0-9]*, '[^']*', '[a-z-]*'" |
    sed "s/^(\(uint32 \)\{0,1\}[0-9]*, '\([^']*\)', '\([a-z-]*\)'\$/  \3 \2/"

# 6b. GetChanges answers in one message, so it holds at most 10,000 changes; ListChanges takes
#     any number: it writes them to a file descriptor, one JSON object per line.
gdbus call --system --dest org.sandboxd.Sandbox1 --object-path "$sandbox" \
    --method org.sandboxd.Sandbox1.Sandbox.ListChanges 3 3>"$tmp/changes" >/dev/null
echo "listed:"
sed 's/^/  /' "$tmp/changes"

# 7. The diff streams through a file descriptor: gdbus passes its fd 3, a file here.
gdbus call --system --dest org.sandboxd.Sandbox1 --object-path "$sandbox" \
    --method org.sandboxd.Sandbox1.Sandbox.Diff '[]' 3 '{}' 3>"$tmp/diff" >/dev/null
echo "diff:"
sed 's/^/  /' "$tmp/diff"

# 8. Approve every change (flag 2), then commit the approved ones. Flag 1 lets polkit ask the
#    user (the desktop's polkit agent shows the dialog), so allow a person time to answer.
reply=$(gdbus call --system --dest org.sandboxd.Sandbox1 --object-path "$sandbox" \
    --method org.sandboxd.Sandbox1.Sandbox.Approve '[]' 2)
echo "approved: $(printf '%s\n' "$reply" | sed 's/^(uint32 \([0-9]*\),)$/\1/')"
next_change_set
reply=$(gdbus call --system --dest org.sandboxd.Sandbox1 --object-path "$sandbox" --timeout 600 \
    --method org.sandboxd.Sandbox1.Sandbox.Commit '[]' 1)
echo "committed: $(printf '%s\n' "$reply" | sed 's/^(uint32 \([0-9]*\),.*/\1/')"
next_change_set

# 9. Done with it.
gdbus call --system --dest org.sandboxd.Sandbox1 --object-path "$sandbox" \
    --method org.sandboxd.Sandbox1.Sandbox.Destroy >/dev/null
echo "destroyed: $sandbox"
sandbox=
