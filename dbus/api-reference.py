#!/usr/bin/env python3
"""Writes sandboxd's D-Bus API reference, one Markdown document, from the interface XML.

Usage: api-reference.py [-o OUTPUT] XML...

The XML in dbus/ is the single source of the API, and its comments are the API's documentation:
the comment before <node> (or before an <interface>) describes the interface, and the comment
right before each <method>, <signal> and <property> describes that member. A member without
its own comment is an error (exit status 1, naming the member and its file), so the reference
can never silently leave a member out. Standard library only.
"""

import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

PROGRAM = "api-reference.py"
KINDS = (("method", "Methods"), ("signal", "Signals"), ("property", "Properties"))
# Annotations that say how sandboxd implements a member, not what a caller sees.
IMPLEMENTATION_ANNOTATIONS = {"org.freedesktop.DBus.Method.Async"}


class CommentKeepingBuilder(ET.TreeBuilder):
    """A TreeBuilder that keeps comments in the tree, and also those before the root element,
    which TreeBuilder drops (it has no element to attach them to)."""

    def __init__(self):
        super().__init__(insert_comments=True)
        self.depth = 0
        self.prolog_comments = []

    def start(self, tag, attrs):
        self.depth += 1
        return super().start(tag, attrs)

    def end(self, tag):
        self.depth -= 1
        return super().end(tag)

    def comment(self, text):
        element = super().comment(text)
        if self.depth == 0:
            self.prolog_comments.append(text)
        return element


class MissingComments(Exception):
    def __init__(self, problems):
        super().__init__("\n".join(problems))
        self.problems = problems


def parse(path):
    builder = CommentKeepingBuilder()
    parser = ET.XMLParser(target=builder)
    with open(path, "rb") as f:
        parser.feed(f.read())
    root = parser.close()
    return root, builder.prolog_comments


def is_comment(node):
    return node.tag is ET.Comment


def commented_children(parent):
    """(element, the comment right before it or None) for each child element of `parent`.
    "Right before" means no element comes between them; the nearest comment counts."""
    pending = None
    for child in parent:
        if is_comment(child):
            pending = child.text
            continue
        yield child, pending
        pending = None


def paragraphs(comment):
    """The comment's text as Markdown paragraphs: the XML wraps lines for the source, so the
    lines of each blank-line-separated block are joined into one."""
    blocks, lines = [], []
    for line in (comment or "").splitlines():
        line = line.strip()
        if line:
            lines.append(line)
        elif lines:
            blocks.append(" ".join(lines))
            lines = []
    if lines:
        blocks.append(" ".join(lines))
    return [escape_markdown(block) for block in blocks]


def escape_markdown(text):
    """Escapes what Markdown would take for markup outside `code spans`: <id> would be an HTML
    tag, *.conf emphasis. Code spans are left as written."""
    parts = re.split(r"(`[^`]*`)", text)
    for i in range(0, len(parts), 2):
        part = parts[i].replace("\\", "\\\\")
        part = re.sub(r"([<>*])", r"\\\1", part)
        part = re.sub(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", r"\\_", part)
        parts[i] = part
    return "".join(parts)


def signature(member, kind):
    """The member in the style of `gdbus introspect`: one argument a line, direction, D-Bus
    type and name, the types aligned."""
    name = member.get("name")
    if kind == "property":
        access = {"read": "readonly", "write": "writeonly", "readwrite": "readwrite"}.get(member.get("access"), member.get("access"))
        return f"{access} {member.get('type')} {name};"
    args = [a for a in member if not is_comment(a) and a.tag == "arg"]
    if not args:
        return f"{name} ();"
    rows = []
    for index, arg in enumerate(args):
        direction = "" if kind == "signal" else (arg.get("direction") or "in").upper()
        rows.append((direction, arg.get("type"), arg.get("name") or f"arg_{index}"))
    dir_width = max(len(r[0]) for r in rows)
    type_width = max(len(r[1]) for r in rows)
    indent = " " * (len(name) + 2)
    lines = []
    for i, (direction, dbus_type, arg_name) in enumerate(rows):
        text = (f"{direction:<{dir_width}} " if dir_width else "") + f"{dbus_type:<{type_width}} {arg_name}"
        end = ");" if i == len(rows) - 1 else ","
        lines.append((f"{name} (" if i == 0 else indent) + text + end)
    return "\n".join(lines)


def annotations(member):
    return [(a.get("name"), a.get("value")) for a in member
            if not is_comment(a) and a.tag == "annotation" and a.get("name") not in IMPLEMENTATION_ANNOTATIONS]


def describe_file(path, display):
    """Markdown for every interface of one XML file; raises MissingComments."""
    root, prolog_comments = parse(path)
    interfaces = list(commented_children(root)) if root.tag == "node" else []
    interfaces = [(i, c) for i, c in interfaces if i.tag == "interface"]
    problems, out = [], []
    if not interfaces:
        problems.append(f"{display}: no <interface> in <node>")
    for interface, comment in interfaces:
        iface = interface.get("name")
        # The comment before <node> describes the file's interface when it holds just one.
        if comment is None and len(interfaces) == 1 and prolog_comments:
            comment = prolog_comments[-1]
        if comment is None:
            problems.append(f"{display}: interface {iface} has no comment before <node> or <interface> describing it")
        out.append(f"## {iface}\n")
        out.extend(p + "\n" for p in paragraphs(comment))
        members = list(commented_children(interface))
        for kind, heading in KINDS:
            of_kind = [(m, c) for m, c in members if m.tag == kind]
            if not of_kind:
                continue
            out.append(f"### {heading}\n")
            for member, member_comment in of_kind:
                name = member.get("name")
                if member_comment is None or not member_comment.strip():
                    problems.append(f"{display}: {kind} {name} of {iface} has no comment right before it")
                out.append(f"#### {name}\n")
                out.append("```\n" + signature(member, kind) + "\n```\n")
                if kind == "property":
                    out.append(f"Type `{member.get('type')}`, access `{member.get('access')}`.\n")
                for annotation, value in annotations(member):
                    label = "EmitsChangedSignal" if annotation == "org.freedesktop.DBus.Property.EmitsChangedSignal" else annotation
                    out.append(f"{label}: `{value}`.\n")
                out.extend(p + "\n" for p in paragraphs(member_comment))
    if problems:
        raise MissingComments(problems)
    return out


def main(argv):
    arguments = argparse.ArgumentParser(prog=PROGRAM, description="Markdown reference of sandboxd's D-Bus API from its interface XML")
    arguments.add_argument("-o", "--output", help="file to write (default: stdout)")
    arguments.add_argument("xml", nargs="+", help="interface XML files, in the order the reference lists them")
    options = arguments.parse_args(argv)

    out = [
        "# sandboxd D-Bus API reference\n",
        "<!-- Generated by dbus/api-reference.py from the interface XML; edit the XML, not this file. -->\n",
        "sandboxd owns the bus name `org.sandboxd.Sandbox1` on the system bus (on the session bus in user mode). "
        "Errors carry the names `org.sandboxd.Sandbox1.Error.` + `NotFound`, `InvalidPath`, `InvalidArgument`, "
        "`Overlap`, `Conflict`, `QuotaExceeded`, `Busy` or `InvalidState`, with a message naming the object and "
        "path; an unexpected failure is `org.freedesktop.DBus.Error.Failed`, and an authorization refusal is "
        "`org.freedesktop.DBus.Error.AccessDenied`, or `org.freedesktop.DBus.Error.InteractiveAuthorizationRequired` "
        "when polkit would ask for a password the caller did not allow it to ask for. "
        "The interface XML itself is installed in `/usr/share/dbus-1/interfaces/`.\n",
    ]
    problems = []
    for path in options.xml:
        display = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
        try:
            out.extend(describe_file(path, display))
        except MissingComments as e:
            problems.extend(e.problems)
        except (OSError, ET.ParseError) as e:
            problems.append(f"{display}: {e}")
    if problems:
        for problem in problems:
            print(f"{PROGRAM}: {problem}", file=sys.stderr)
        return 1
    text = "\n".join(out)
    if options.output:
        # Written whole or not at all: a failed run leaves no half reference for the build to install.
        temporary = options.output + ".tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temporary, options.output)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
