#!/usr/bin/env python3
"""Keep the README's tour true: run its commands, compare (or rewrite) their output.

The tour is every ```console block between ``<!-- tour -->`` and
``<!-- /tour -->`` in README.md. A line starting with ``$ `` is a command;
the lines after it, up to the next command, are its output as a person sees
it in an 80-column terminal (colour aside). The commands run one after the
other in one bash, like a pasted script, inside a pseudo-terminal that tells
programs it is 80 columns wide; its output is rendered by a terminal emulator
(pyte), so progress bars and other terminal effects show as they would. The
emulator's screen is wider than 80 columns: a line a program prints longer
than that (a pipe's unwrapped output) stays one line, as the program wrote
it, instead of being folded where a real window would fold it. The sample
home is rendered into a fresh temporary folder instead of
``/tmp/agentdex-tour``.

    python scripts/readme_tour.py            # check: exit 1 and a diff when the README drifted
    python scripts/readme_tour.py --update   # rewrite the README's outputs from a fresh run
    python scripts/readme_tour.py --live DIR # just run the tour against DIR, printing as it goes

What is normalised before comparing, and nothing else: the temporary folder
(shown as ``/tmp/agentdex-tour``, and the md5 folder names Kimi derives from
paths in it), agentdex session ids (they hold the
creation time), timestamps later than the sample's pinned "now" (they come
from the real clock: session creation), the per-home index folder key,
trailing blank lines, and a ``meaning 0.NN`` similarity within
:data:`SIMILARITY_SLACK` of the README's (the int8 model's kernels round
differently on different CPUs: the README's 0.59 printed 0.61 on an AMD EPYC
build machine, 2026-11-27). A command must exit 0 unless its ```console block
shows an exit status (has an ``echo $?`` step).
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
SAMPLE = "/tmp/agentdex-tour"
BEGIN, END = "<!-- tour -->", "<!-- /tour -->"
COLUMNS, ROWS = 80, 4000
#: The emulator's width: wide enough that no line a program prints is folded.
SCREEN_COLUMNS = 2000
MARK = "@@agentdex-tour"
#: What must vary between runs (see the module docstring).
SESSION_ID = re.compile(r"\bs-\d{8}-\d{9}-[0-9a-f]{4}\b")
HOME_KEY = re.compile(r"(homes/[A-Za-z0-9_.-]+?-)[0-9a-f]{12}\b")
ISO_TIME = re.compile(r"\b(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z| UTC))")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SIMILARITY = re.compile(r"\bmeaning (\d\.\d\d)\b")
#: how far a printed similarity may move between CPUs (and still match the README)
SIMILARITY_SLACK = 0.05


@dataclass
class Step:
    command: str
    expected: list[str] = field(default_factory=list)
    #: index in the README's lines of the command line
    line: int = 0
    #: index just past its expected output
    end: int = 0
    #: the number of the ```console block it is in
    block: int = 0


def parse(text: str) -> list[Step]:
    """The tour's commands and expected outputs, in order, with where they are."""
    lines = text.split("\n")
    try:
        start, stop = lines.index(BEGIN), lines.index(END)
    except ValueError:
        raise SystemExit(f"readme_tour: README.md has no {BEGIN} ... {END} section") from None
    steps: list[Step] = []
    inside = False
    block = 0
    for number in range(start, stop):
        line = lines[number]
        if line.startswith("```"):
            inside = line.strip() == "```console"
            block += inside
            if not inside and steps and steps[-1].end == 0:
                steps[-1].end = number
            continue
        if not inside:
            continue
        if line.startswith("$ "):
            if steps and steps[-1].end == 0:
                steps[-1].end = number
            steps.append(Step(command=line[2:], line=number, block=block))
        elif steps:
            steps[-1].expected.append(line)
    return steps


def _script(steps: list[Step], sample: str) -> str:
    """The tour as one bash script; after each command a marker line with its status
    (``__mark`` returns that status again, so a following ``echo $?`` still sees it)."""
    body = [
        "set +e",
        f"__mark() {{ local s=$?; printf '\\n{MARK} %d %d@@\\n' \"$1\" $s; return $s; }}",
    ]
    for index, step in enumerate(steps):
        body.append(step.command.replace(SAMPLE, sample))
        body.append(f"__mark {index}")
    return "\n".join(body) + "\n"


def _sample_folder() -> Path:
    """A fresh ``/tmp/agentdex-XXXX``: as long as ``/tmp/agentdex-tour``, and alike up to
    its last four letters.

    Lines wrap at 80 columns and ids are cut to a prefix: a stand-in path of
    another length would wrap lines elsewhere, one of another start would show
    other prefixes. Off ``/tmp`` (no such folder) the system temp dir is used.
    """
    import secrets

    base = Path("/tmp") if Path("/tmp").is_dir() else Path(tempfile.gettempdir())
    for _ in range(100):
        candidate = base / ("agentdex-" + secrets.token_hex(2))
        if candidate.name == Path(SAMPLE).name:
            continue
        try:
            candidate.mkdir(mode=0o700)
        except FileExistsError:
            continue
        return candidate
    raise SystemExit("readme_tour: cannot make a temporary folder")


def _shims(folder: Path) -> dict[str, str]:
    """``python`` and ``agentdex`` of this checkout first on PATH (not a stale install)."""
    folder.mkdir(parents=True, exist_ok=True)
    python = folder / "python"
    python.symlink_to(sys.executable)
    agentdex = folder / "agentdex"
    agentdex.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m agentdex "$@"\n')
    agentdex.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{folder}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
    for var in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "PAGER"):
        env.pop(var, None)
    env["TERM"] = "xterm-256color"
    env["AGENTDEX_RESIDENT_EMBEDDER"] = "0"  # nothing of the tour outlives it
    return env


def run_terminal(script: str, env: dict[str, str], cwd: Path, timeout: float = 600) -> str:
    """Run ``script`` in bash inside an 80-column pseudo-terminal; the screen it leaves."""
    import fcntl
    import pty
    import select
    import struct
    import termios
    import time

    import pyte

    screen = pyte.Screen(SCREEN_COLUMNS, ROWS)
    stream = pyte.ByteStream(screen)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as handle:
        handle.write(script)
    proc = subprocess.Popen(
        ["bash", "--noprofile", "--norc", handle.name],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    deadline = time.monotonic() + timeout
    try:
        while True:
            if time.monotonic() > deadline:
                proc.kill()
                raise SystemExit("readme_tour: the tour did not finish in time")
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:
                    data = b""
                if not data:
                    break
                stream.feed(data)
            elif proc.poll() is not None:
                continue  # drain until the pty reports EOF
    finally:
        os.close(master)
        proc.wait()
        os.unlink(handle.name)
    return "\n".join(line.rstrip() for line in screen.display)


def _outputs(screen: str, count: int) -> tuple[list[list[str]], list[int]]:
    """Per step: its output lines and exit status, split at the markers."""
    outputs: list[list[str]] = [[] for _ in range(count)]
    statuses = [-1] * count
    current: list[str] = []
    for line in screen.split("\n"):
        found = re.fullmatch(rf"{MARK} (\d+) (\d+)@@", line.strip())
        if found:
            index = int(found.group(1))
            outputs[index], statuses[index] = _trim(current), int(found.group(2))
            current = []
        else:
            current.append(line)
    return outputs, statuses


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def normalise(lines: list[str], pinned_now: str) -> list[str]:
    """Make equal what must vary between runs (and only that)."""
    out = []
    for line in lines:
        line = ANSI.sub("", line)
        line = SESSION_ID.sub("s-YYYYMMDD-HHMMSSmmm-xxxx", line)
        line = HOME_KEY.sub(r"\1<key>", line)
        line = ISO_TIME.sub(lambda m: _clock(m.group(1), pinned_now), line)
        out.append(line.rstrip())
    return _trim(out)


def same_similarities(want: list[str], got: list[str]) -> list[str]:
    """``got`` with each ``meaning 0.NN`` within :data:`SIMILARITY_SLACK` of the one at the
    same place in ``want`` shown as ``want``'s (a line otherwise different stays different)."""
    out = []
    for index, line in enumerate(got):
        wanted = SIMILARITY.findall(want[index]) if index < len(want) else []
        found = SIMILARITY.findall(line)
        if wanted and len(wanted) == len(found):
            close = all(
                abs(float(a) - float(b)) <= SIMILARITY_SLACK + 1e-9
                for a, b in zip(wanted, found, strict=True)
            )
            if close:
                pieces = SIMILARITY.split(line)  # text, score, text, ...
                pieces[1::2] = [f"meaning {score}" for score in wanted]
                line = "".join(pieces)
        out.append(line)
    return out


def _clock(stamp: str, pinned_now: str) -> str:
    """A time later than the sample's pinned "now" came from the real clock."""
    as_iso = stamp.replace(" UTC", "Z").replace(" ", "T")
    return "<clock>" if as_iso > pinned_now else stamp


def _pinned_now() -> str:
    sys.path.insert(0, str(REPO / "examples"))
    try:
        import sample_home
    finally:
        sys.path.pop(0)
    return str(sample_home.SAMPLE_NOW)


@dataclass
class Result:
    steps: list[Step]
    actual: list[list[str]]
    statuses: list[int]
    text: str

    def problems(self) -> list[str]:
        """A readable report of every step whose output or status differs from the README."""
        pinned = _pinned_now()
        found = []
        for index, step in enumerate(self.steps):
            want = normalise(step.expected, pinned)
            got = same_similarities(want, normalise(self.actual[index], pinned))
            if want != got:
                diff = "\n".join(
                    difflib.unified_diff(want, got, "README.md", "actual", lineterm="", n=1)
                )
                found.append(f"line {step.line + 1}: $ {step.command}\n{diff}")
            shows_status = any(
                other.block == step.block and other.command.strip() == "echo $?"
                for other in self.steps
            )
            if self.statuses[index] != 0 and not shows_status:
                found.append(
                    f"line {step.line + 1}: $ {step.command}\n"
                    f"exited {self.statuses[index]} (a block that fails shows it: `echo $?`)"
                )
        return found

    def failures(self) -> list[str]:
        """Only the exit-status problems (what ``--update`` cannot fix)."""
        return [p for p in self.problems() if "\nexited " in p]

    def updated_readme(self) -> str:
        """README.md with every step's output replaced by this run's."""
        lines = self.text.split("\n")
        for index in reversed(range(len(self.steps))):
            step = self.steps[index]
            lines[step.line + 1 : step.end] = _trim(self.actual[index])
        return "\n".join(lines)


def _md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()


def _hashed_dirs() -> set[str]:
    """The home-relative paths the template names by md5 (``__MD5_HOME__src+shop``)."""
    found = set()
    for path in (REPO / "examples" / "home-template").rglob("*__MD5_HOME__*"):
        for part in re.findall(r"__MD5_HOME__([A-Za-z0-9_+-]*)", path.name):
            found.add("/".join(p for p in part.split("+") if p))
    return found


def run_tour(readme: Path = README) -> Result:
    """Render the sample home in a temporary folder and run the tour in a terminal."""
    text = readme.read_text(encoding="utf-8")
    steps = parse(text)
    folder = _sample_folder()
    sample = str(folder)
    try:
        with tempfile.TemporaryDirectory(prefix="agentdex-readme-") as tmp:
            env = _shims(Path(tmp) / "bin")
            screen = run_terminal(_script(steps, sample), env, REPO)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    screen = screen.replace(sample, SAMPLE).replace(folder.name, Path(SAMPLE).name)
    screen = screen.replace(
        sample.strip("/").replace("/", "-"), SAMPLE.strip("/").replace("/", "-")
    )
    for rel in _hashed_dirs():  # Kimi names folders after the md5 of a path in the home
        screen = screen.replace(_md5(f"{sample}/{rel}"), _md5(f"{SAMPLE}/{rel}"))
    actual, statuses = _outputs(screen, len(steps))
    return Result(steps, actual, statuses, text)


def run_live(dest: Path, readme: Path = README) -> int:
    """Run the tour's commands against ``dest`` with this process's stdio (no comparison)."""
    steps = parse(readme.read_text(encoding="utf-8"))
    # Each command is echoed first; the status of the one before is put back after the
    # echo, so the tour's `echo $?` shows agentdex's status, not printf's.
    script = ["set +e", "__status=0"]
    for step in steps:
        command = step.command.replace(SAMPLE, str(dest))
        script.append(f"printf '\\n$ %s\\n' {shlex.quote(command)}")
        script.append("(exit $__status)")
        script.append(command)
        script.append("__status=$?")
    if shutil.which("bash") is None:
        print("sample_home: the tour needs bash", file=sys.stderr)
        return 1
    # the tour prints straight, never waits, and leaves nothing running (no resident embedder)
    env = {**os.environ, "AGENTDEX_PAGER": "cat", "AGENTDEX_RESIDENT_EMBEDDER": "0"}
    return subprocess.run(
        ["bash", "-c", "\n".join(script)], cwd=REPO, check=False, env=env
    ).returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="rewrite README.md's outputs")
    parser.add_argument("--live", type=Path, metavar="DIR", help="run the tour against DIR")
    args = parser.parse_args()
    if args.live:
        return run_live(args.live.resolve())
    result = run_tour()
    if args.update:
        README.write_text(result.updated_readme(), encoding="utf-8")
        bad = result.failures()
        for problem in bad:
            print(problem, file=sys.stderr)
        print(f"README.md: {len(result.steps)} tour outputs rewritten")
        return 1 if bad else 0
    problems = result.problems()
    for problem in problems:
        print(problem + "\n", file=sys.stderr)
    if problems:
        print(
            "the README tour drifted: run python scripts/readme_tour.py --update", file=sys.stderr
        )
        return 1
    print(f"README tour: {len(result.steps)} commands, output as documented")
    return 0


if __name__ == "__main__":
    sys.exit(main())
