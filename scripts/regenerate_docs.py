"""Rewrite the generated blocks of the docs by running the commands named in them.

A figure quoted in the docs must be one a command regenerates. A generated
block names its command in an HTML comment at the start of a line and ends
with a closing comment on a line of its own::

    <!-- generated: examples/validation/tables_invariant.py -->
    ```
    ... the command's standard output, written by this script ...
    ```
    <!-- end generated -->

``<!-- generated markdown: CMD -->`` inserts the output as it is (for scripts
that print markdown tables) instead of inside a code fence. The command is a
Python script of the repository and its arguments; it runs with this
interpreter from the repository root, and its standard output replaces the
block. The line above the output records the date, the machine, its load
average before the run and the versions, so that a reader knows where a
timing was measured.

    .venv/bin/python scripts/regenerate_docs.py docs/benchmarks.md          # every block (make bench)
    .venv/bin/python scripts/regenerate_docs.py docs/validation.md --only tables_invariant
    .venv/bin/python scripts/regenerate_docs.py docs/benchmarks.md --command "benchmarks/noise.py"
    .venv/bin/python scripts/regenerate_docs.py docs/*.md --list             # what would run
    .venv/bin/python scripts/regenerate_docs.py docs/benchmarks.md --unreferenced benchmarks

``--unreferenced DIR`` then runs every script of DIR that no block names
(their output goes to the terminal only), so that ``make bench`` still runs
every benchmark while their sections move to generated blocks.

``--from-log LOG --command CMD`` writes the standard output a run of CMD
already saved in LOG into CMD's block instead of running it again: for runs
of an hour or more (10^8 records), made once on a quiet machine with
``CMD > LOG``. The line above the output then says that it comes from a
saved log and when the log was written; the run's own lines (``uptime``,
machine) are its record of the load.

    .venv/bin/python benchmarks/distributed.py --records 100000000 ... > /tmp/run.log
    .venv/bin/python scripts/regenerate_docs.py docs/benchmarks.md \
        --command "benchmarks/distributed.py --records 100000000 ..." --from-log /tmp/run.log

A command that fails leaves its block as it was, and the run exits 1 after
the other blocks. A command that succeeds but prints nothing (a benchmark
against a peer tool that is not installed here) leaves it as it was too. The file is rewritten atomically after each block, so an
interrupted run keeps what it finished.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(
    r"^(?P<open><!-- generated(?P<markdown> markdown)?: (?P<command>[^\n]*?) -->\n)"
    r"(?P<body>.*?)"
    r"^(?P<close><!-- end generated -->)$",
    re.S | re.M,
)


@dataclass(frozen=True)
class Block:
    """One generated block of a document."""

    path: Path
    command: str
    markdown: bool
    occurrence: int = 0

    @property
    def argv(self) -> list[str]:
        """The command as arguments, the script first."""
        return shlex.split(self.command)

    @property
    def script(self) -> Path:
        """The script the block runs, relative to the repository root."""
        return ROOT / self.argv[0]


def blocks(path: Path) -> list[Block]:
    """Every generated block of ``path``, in order."""
    text = path.read_text(encoding="utf-8")
    seen: dict[str, int] = {}
    out = []
    for m in BLOCK.finditer(text):
        command = m.group("command").strip()
        out.append(Block(path, command, bool(m.group("markdown")), seen.get(command, 0)))
        seen[command] = seen.get(command, 0) + 1
    return out


def _versions() -> str:
    import numpy
    import pandas

    from sdckit import __version__

    return (
        f"sdckit {__version__}, Python {platform.python_version()}, numpy {numpy.__version__}, "
        f"pandas {pandas.__version__}"
    )


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def _stamp(load_before: float) -> str:
    return (
        f"{dt.date.today().isoformat()}, {platform.machine()} with {os.cpu_count()} cores "
        f"(load average {load_before:.1f} before the run, {_load():.1f} after), {_versions()}"
    )


def _body(block: Block, output: str, head: str) -> str:
    if block.markdown:
        return f"{head}:\n\n{output.rstrip()}\n\n"
    return f"{head}:\n\n```\n{output.rstrip()}\n```\n"


def _write(path: Path, text: str) -> None:
    """Replace ``path`` atomically, keeping its permissions."""
    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def regenerate(block: Block, index: int) -> bool:
    """Run one block's command and write its output into the document; False when it failed."""
    if not block.script.is_file():
        print(f"{block.path}: no script {block.argv[0]} (block {index + 1})", file=sys.stderr)
        return False
    print(f"{block.path.name}: running {block.command}", file=sys.stderr, flush=True)
    load_before = _load()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *block.argv], cwd=ROOT, capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        print(
            f"{block.path.name}: {block.command} failed (exit {done.returncode}); block kept\n"
            f"{done.stderr[-2000:]}",
            file=sys.stderr,
        )
        return False
    if not done.stdout.strip():
        # a benchmark against a peer tool that is not installed says why on stderr only
        print(
            f"{block.path.name}: {block.command} printed nothing; block kept\n"
            f"{done.stderr[-2000:]}",
            file=sys.stderr,
        )
        return True
    head = f"`.venv/bin/python {block.command}` on {_stamp(load_before)}; took {seconds:.0f} s"
    return _replace(block, _body(block, done.stdout, head))


def _replace(block: Block, body: str) -> bool:
    """Write ``body`` into ``block``; False when the block is gone from its document.

    The block is found again by its command (the document may have been edited
    while the command ran): the same occurrence of the same command as when
    the run started.
    """
    text = block.path.read_text(encoding="utf-8")
    same = [m for m in BLOCK.finditer(text) if m.group("command").strip() == block.command]
    if block.occurrence >= len(same):
        print(
            f"{block.path.name}: block {block.command!r} is gone; output dropped", file=sys.stderr
        )
        return False
    m = same[block.occurrence]
    _write(
        block.path, text[: m.start()] + m.group("open") + body + m.group("close") + text[m.end() :]
    )
    return True


def from_log(block: Block, log: Path) -> bool:
    """Write the output of a run of ``block``'s command saved in ``log`` into its block."""
    output = log.read_text(encoding="utf-8")
    if not output.strip():
        print(f"{block.path.name}: {log} is empty; block kept", file=sys.stderr)
        return False
    written = dt.datetime.fromtimestamp(log.stat().st_mtime, tz=dt.UTC)
    head = (
        f"`.venv/bin/python {block.command}`, output of a run saved in a log written "
        f"{written:%Y-%m-%d %H:%M} UTC and inserted by `scripts/regenerate_docs.py --from-log` "
        f"({platform.machine()} with {os.cpu_count()} cores, {_versions()}; the run's own "
        "lines give its load)"
    )
    return _replace(block, _body(block, output, head))


def main(argv: list[str] | None = None) -> int:
    """Run the generated blocks of the given documents."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("docs", nargs="+", type=Path)
    parser.add_argument("--only", help="Only blocks whose command contains this text.")
    parser.add_argument("--command", help="Only blocks whose command is exactly this.")
    parser.add_argument("--list", action="store_true", help="List the blocks; run nothing.")
    parser.add_argument(
        "--unreferenced", type=Path, help="Also run the scripts of this folder no block names."
    )
    parser.add_argument(
        "--from-log",
        type=Path,
        help="Write this saved output of a run of --command into its block instead of running it.",
    )
    args = parser.parse_args(argv)
    if args.from_log is not None:
        if not args.command:
            parser.error("--from-log needs --command: the exact command of the block it fills")
        if not args.from_log.is_file():
            parser.error(f"--from-log: no file {args.from_log}")
        matches = [b for path in args.docs for b in blocks(path) if b.command == args.command]
        if len(matches) != 1:
            parser.error(
                f"--from-log: {len(matches)} blocks have the command {args.command!r}; need one"
            )
        return 0 if from_log(matches[0], args.from_log) else 1
    ok = True
    named: set[Path] = set()
    for path in args.docs:
        for index, block in enumerate(blocks(path)):
            named.add(block.script.resolve())
            if args.only and args.only not in block.command:
                continue
            if args.command and args.command != block.command:
                continue
            if args.list:
                print(f"{path}: {block.command}")
                continue
            ok = regenerate(block, index) and ok
    if args.unreferenced is not None:
        for script in sorted((ROOT / args.unreferenced).glob("*.py")):
            if script.name.startswith("_") or script.resolve() in named:
                continue
            if args.list:
                print(f"(not in a block) {script.relative_to(ROOT)}")
                continue
            print(f"running {script.relative_to(ROOT)} (no generated block)", file=sys.stderr)
            ok = (
                subprocess.run([sys.executable, str(script)], cwd=ROOT, check=False).returncode == 0
                and ok
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
