#!/usr/bin/env python3
"""Build one man page from its Markdown source in man/ (NAME.SECTION.md).

The source is a short Markdown page whose reference sections are not
written there but taken from where they are kept, so each fact has one
home:

    <!-- include docs/runtime.md "API in one table" -->
        the body of that section of the docs (up to the next heading of the
        same or a higher level), its sub-headings demoted to man subsections
    <!-- cairn-commands -->
        every `cairn` command and subcommand with its help line, read from
        the CLI's own argparse parser (python/cairn)

Relative links become plain text (a man page cannot follow them). The title
line comes from the file name. The result goes through go-md2man.

    manpage.py [--go-md2man PATH] [--version V] man/cairn-cc.1.md OUT
Run from the source root (paths in include lines are relative to it)."""
import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INCLUDE = re.compile(r'^<!--\s*include\s+(\S+)\s+"([^"]+)"\s*-->\s*$')
COMMANDS = re.compile(r"^<!--\s*cairn-commands\s*-->\s*$")
HEADING = re.compile(r"^(#+)\s+(.*?)\s*$")
LINK = re.compile(r"\[([^\]]+)\]\((?!https?:)[^)]*\)")


def fail(msg: str):
    sys.exit(f"manpage: {msg}")


def section_body(doc: Path, title: str, where: str) -> list[str]:
    """Lines of DOC's section TITLE without its heading; sub-headings shifted
    so that the section's children become level 2 (.SS)."""
    if not doc.is_file():
        fail(f"{where}: {doc} does not exist (fix the include line)")
    lines = doc.read_text().splitlines()
    fence = False
    start = level = None
    out = []
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else HEADING.match(line)
        if start is None:
            if m and m.group(2) == title:
                start, level = i, len(m.group(1))
            continue
        if m and len(m.group(1)) <= level:
            break
        if m:
            line = "#" * (len(m.group(1)) - level + 1) + " " + m.group(2)
        out.append(line)
    if start is None:
        fail(f"{where}: no heading \"{title}\" in {doc} (fix the include line or the heading)")
    return out


def cairn_commands() -> list[str]:
    """A table of the CLI's commands from its argparse parser."""
    import argparse as ap
    sys.dont_write_bytecode = True             # no __pycache__ in the source tree
    sys.path.insert(0, str(ROOT / "python"))
    from cairn.cli import build_parser
    rows = []

    def walk(parser, prefix):
        for action in parser._actions:
            if not isinstance(action, ap._SubParsersAction):
                continue
            helps = {c.dest: c.help for c in action._choices_actions}
            for name, sub in action.choices.items():
                full = f"{prefix} {name}"
                rows.append((full, helps.get(name) or sub.description or ""))
                walk(sub, full)

    walk(build_parser(), "cairn")
    if not rows:
        fail("the cairn CLI has no commands (python/cairn/commands)")
    out = ["| command | what |", "|---|---|"]
    bar = "\\|"
    out += [f"| `{c}` | {h.replace('|', bar)} |" for c, h in rows]
    return out


def render(src: Path, version: str) -> str:
    m = re.fullmatch(r"(.+)\.(\d\w*)\.md", src.name)
    if not m:
        fail(f"{src}: name it NAME.SECTION.md (e.g. cairn-cc.1.md)")
    page, section = m.groups()
    out = [f'% {page.upper()} {section} "" "cairn {version}" "cairn manual"', ""]
    for n, line in enumerate(src.read_text().splitlines(), 1):
        inc = INCLUDE.match(line)
        if inc:
            out += section_body(ROOT / inc.group(1), inc.group(2), f"{src}:{n}")
        elif COMMANDS.match(line):
            out += cairn_commands()
        else:
            out.append(line)
    return "\n".join(LINK.sub(r"\1", line) for line in out) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--go-md2man", default="go-md2man")
    p.add_argument("--version", default="0")
    p.add_argument("--markdown", action="store_true",
                   help="print the assembled Markdown instead of running go-md2man")
    p.add_argument("source", type=Path)
    p.add_argument("out", type=Path, nargs="?")
    args = p.parse_args()
    text = render(args.source, args.version)
    if args.markdown or args.out is None:
        sys.stdout.write(text)
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([args.go_md2man, "-out", str(args.out)], input=text, text=True)
    if r.returncode != 0:
        fail(f"{args.go_md2man} failed on {args.source} (exit {r.returncode})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
