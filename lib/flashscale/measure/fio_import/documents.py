"""fio's output as users keep it, cut into the JSON documents fio wrote: the bytes of a file decoded, and each
document found with the text around it.

What users' files hold besides one clean JSON document, each seen in fio's own issue tracker or in how people save
output, and read here rather than refused:

- fio's messages before the JSON (``fio: io_u error ...``, ``fio: sprandom sets norandommap=1``, ``note: ...``):
  fio writes them to the stream the JSON goes to (axboe/fio#731, #1685, #2048). They are kept as the document's
  ``preamble``, and said.
- text after it: ``fio ... > out.json 2>&1`` puts fio's exit messages (``fio: file hash not empty on exit``) after
  the closing brace. Kept as ``postamble``, and said.
- fio's messages inside it, where a message from another thread landed while the JSON was written: lines that begin
  ``fio: `` are taken out when, and only when, the JSON does not read with them, and that is said.
- a wrapper's own words around fio's JSON, and its own JSON (``{"host": ...}``) or lines that begin with ``{`` but
  are no JSON (``{run 2 of 3}``, at most ``SKIPPED`` of them): text, said; a JSON object not fio's is not read.
- several documents in one file: a loop that appends each run (``fio ... >> all.json``). Each is read.
- fio's reports of one run while it runs (``--status-interval``): a whole document each time, its numbers counted
  from the run's start. Only the last, the whole run, is read (``runs``).
- ``nan``, ``-nan``, ``inf``: printf's words for a float fio could not compute, which JSON has no word for; read as
  NaN or infinity, only when the JSON does not read without.
- compressed files (gzip, xz, bzip2, by their magic bytes) and text with a byte-order mark: UTF-16 is what Windows
  PowerShell's ``>`` writes.
"""
from __future__ import annotations

import codecs
import json
import math
import re
from dataclasses import dataclass

from . import bounds
from .bounds import excerpt
from ...errors import FioError

BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))  # UTF-32 LE begins as UTF-16 LE does
# A float printf wrote that JSON has no word for, where a value goes: after ``:``, ``[`` or ``,``
_NOT_A_NUMBER = re.compile(r"(?<=[:\[,])(\s*)(-?)(nan|inf|infinity)\b", re.IGNORECASE)
FIO_OPENING = re.compile(r'\{\r?\n[ \t]{0,8}"fio version"')  # json.c's root object, "fio version" its first key
_MESSAGE = re.compile(r"^(?:fio|note|warning): .*\n?", re.MULTILINE)


@dataclass
class Document:
    """One JSON object fio wrote, the text before it (since the previous one) and after it (the last one's), and
    what had to be done to read it."""

    data: dict
    preamble: str = ""
    postamble: str = ""
    repaired: tuple[str, ...] = ()


def runs(outputs: list[dict]) -> list[tuple[dict, int]]:
    """The outputs that are runs of their own, each with how many outputs it stands for: consecutive outputs that
    are ``--status-interval`` reports of one run count as one, the last. A later output continues an earlier one when
    it has the same jobs, none of its counts fell, and its jobs had run for longer than the time between the two
    were written, or fio's ``elapsed`` says its process began before the earlier one was (``_began_before``): a run
    appended after another began after the first was written, so it cannot have. fio before
    2.2.5 wrote no time in its JSON: there, outputs whose jobs ran longer each time are one run's reports only when
    they come at fio's regular interval (``_regular``); normal output names its processes (``_pids``)."""
    chains: list[list[dict]] = []
    for data in outputs:
        if chains and _continues(chains[-1][-1], data):
            chains[-1].append(data)
        else:
            chains.append([data])
    kept: list[tuple[dict, int]] = []
    for chain in chains:
        if len(chain) > 1 and _untimed(chain[0]) and not _regular(chain):
            kept += [(data, 1) for data in chain]
        else:
            kept.append((chain[-1], len(chain)))
    return kept


def _untimed(data: dict) -> bool:
    return not data.get("_pids") and not isinstance(data.get("timestamp_ms"), int)


def _regular(chain: list[dict]) -> bool:
    """Whether outputs with no time (fio before 2.2.5) are reports at fio's --status-interval: three or more, each
    job's runtime growing by the same interval (within 10%, at least 100 ms) but into the last, the whole run's."""
    runtimes = [max([_counted(job, "runtime") for job in data.get("jobs") or [] if isinstance(job, dict)] or [0])
                for data in chain]
    steps = [b - a for a, b in zip(runtimes, runtimes[1:])][:-1]
    return len(chain) >= 3 and min(steps) >= REPORT_MS and max(steps) <= (1 + REGULAR) * min(steps)


REPORT_MS, REGULAR = 100, 0.1


def _continues(earlier: dict, later: dict) -> bool:
    first, then = earlier.get("jobs"), later.get("jobs")
    if not first or not then or len(first) != len(then):
        return False
    if earlier.get("_pids") or later.get("_pids"):  # normal output: the same processes, reported again
        return bool(later.get("_again")) and earlier.get("_pids") == later.get("_pids") and \
            _same_jobs(first, then, None)
    if _untimed(earlier) and _untimed(later):  # _regular decides, from the whole chain
        return _same_jobs(first, then, None) and _longer(first, then)
    if not isinstance(earlier.get("timestamp_ms"), int) or not isinstance(later.get("timestamp_ms"), int):
        return False
    gap = later["timestamp_ms"] - earlier["timestamp_ms"]
    return _same_jobs(first, then, gap) or (_began_before(then, gap) and _same_jobs(first, then, None))


def _began_before(jobs: list, gap_ms: int) -> bool:
    """Whether the fio that wrote ``jobs`` began before an output ``gap_ms`` earlier was written: its ``elapsed``
    (fio 2.2.9 on: the seconds since the process began, rounded up, ``calc_thread_status`` in eta.c) is a second or
    more beyond the gap. A run appended after another began after it was written: its elapsed is under the gap and a
    second. This holds where a job's runtime cannot: a job that ended soon after the earlier report."""
    elapsed = jobs[0].get("elapsed") if isinstance(jobs[0], dict) else None
    whole = isinstance(elapsed, int) and not isinstance(elapsed, bool)
    return whole and gap_ms >= 0 and elapsed * 1000 >= gap_ms + 1000


def _longer(first: list, then: list) -> bool:
    return all(_counted(b, "runtime") > _counted(a, "runtime") for a, b in zip(first, then))


def _same_jobs(first: list, then: list, gap_ms: int | None) -> bool:
    """Whether ``then``'s jobs are ``first``'s later on: the same names and groups, no count fallen, and (``gap_ms``
    between the two outputs) each job that had run by the earlier one run for longer than the gap since."""
    for a, b in zip(first, then):
        if not isinstance(a, dict) or not isinstance(b, dict) or a.get("jobname") != b.get("jobname") \
                or a.get("groupid") != b.get("groupid"):
            return False
        # a job's runtime (ms) counts its I/O from its start: longer than the gap, it began before the earlier one;
        # a job that had not begun then (a later stonewall group's) may have begun since
        begun = _counted(a, "runtime") > 0
        if gap_ms is not None and (gap_ms < 0 or (begun and not _counted(b, "runtime") > gap_ms)):
            return False
        if any(_counted(b, "io_bytes", side) < _counted(a, "io_bytes", side) for side in SIDES):
            return False
    return True


SIDES = ("read", "write", "trim")


def _counted(job: dict, name: str, *sides: str) -> float:
    """The largest of ``name`` over a job's ``sides`` (default all), 0 where absent."""
    values = [(job.get(side) or {}).get(name, 0) for side in sides or SIDES]
    return max([v for v in values if isinstance(v, (int, float)) and math.isfinite(v)] or [0])


def text_of(content: bytes, source: str = "fio output") -> tuple[str, list[str]]:
    """The text of a file's bytes, and how it was had: decompressed (by magic bytes, as a stream, no further than
    ``bounds.MAX_BYTES``), decoded by its byte-order mark, else as UTF-8 with undecodable bytes replaced.
    FioError naming ``source`` when a compressed file is damaged or expands past the limit."""
    how = []
    name = bounds.compression_of(content)
    if name is not None:
        try:
            content = bounds.decompressed(content)
        except FioError as exc:
            raise FioError(f"{source}: {exc}") from None
        how.append(f"{name}-compressed")
    for bom, encoding in BOMS:
        if content.startswith(bom):
            how.append(f"{encoding.upper().removesuffix('-SIG')} with a byte-order mark")
            return content.decode(encoding, errors="replace"), how
    return content.decode("utf-8", errors="replace"), how


def documents(text: str, source: str = "fio output") -> list[Document]:
    """Every JSON object in ``text`` that begins a line, in order, with the text between them. When one does not
    read as it is, the whole text again with fio's message lines taken out, or printf's nan and inf read, or both
    (each document then says so). FioError naming ``source`` when there is none, or one does not read even so
    (truncated: saying where it stops)."""
    if next_object(text, 0) is None:
        raise FioError(f"{source}: no JSON object in fio output: {excerpt(text)}")
    try:
        return _split(text, source)
    except FioError:
        for name, repair in REPAIRS:
            fixed = repair(text)
            if fixed == text:
                continue
            try:
                found = _split(fixed, source)
            except FioError:
                continue
            messages = _MESSAGE.findall(text) if "messages" in name else []
            lines = f"{len(messages)} line{'s' if len(messages) > 1 else ''}"
            said = name + (f" ({lines}, the first {excerpt(messages[0].strip())})" if messages else "")
            for document in found:
                document.repaired = (said,)
            return found
        raise


SKIPPED = 10  # the most lines beginning with { but no JSON object a file's text may hold


def _split(text: str, source: str) -> list[Document]:
    """The documents of ``text``. A line that begins with ``{`` but no JSON object (a wrapper's ``{run 2 of 3}``) is
    text, unless fio's own opening begins it, or ``SKIPPED`` such lines were passed already (each costs a parse: a
    file crafted of them costs ``SKIPPED`` parses at most); the first such error is raised when no document reads."""
    found: list[Document] = []
    position, before, errors = 0, "", []
    while True:
        start = next_object(text, position)
        if start is None:
            break
        before += text[position:start]
        try:
            data, end = _decode(text, start, source)
        except FioError as exc:
            if FIO_OPENING.match(text, start):
                raise
            errors.append(exc)
            if len(errors) > SKIPPED:
                raise errors[0] from None
            before, position = before + text[start], start + 1
            continue
        found.append(Document(data, preamble=before))
        position, before = end, ""
    if not found:
        raise errors[0] if errors else FioError(f"{source}: no JSON object in fio output: {excerpt(text)}")
    found[-1].postamble = before + text[position:]
    return found


def has_object(text: str) -> bool:
    """Whether ``text`` holds a JSON object where fio's would begin (``documents`` reads them)."""
    return next_object(text, 0) is not None


def next_object(text: str, position: int) -> int | None:
    """Where the next JSON object begins, at or after ``position``: a line that begins with ``{`` (the rest of a
    line already begun, after a document's closing brace, counts as a line), or fio's own opening, ``{`` then
    ``"fio version"`` first on the next line, wherever a message fio wrote at the same time left it on a line
    (``fio: cache i{``)."""
    index, found = position, None
    while index < len(text):
        if text[index] == "{" and (index == position or text[index - 1] == "\n"):
            found = index
            break
        newline = text.find("\n", index)
        if newline < 0:
            break
        index = newline + 1
    opening = FIO_OPENING.search(text, position, found if found is not None else len(text))
    return opening.start() if opening else found


def _decode(text: str, start: int, source: str) -> tuple[dict, int]:
    """The object beginning at ``start`` and where it ends."""
    try:
        data, end = json.JSONDecoder().raw_decode(text, start)
    except RecursionError:
        raise FioError(f"{source}: fio output is not valid JSON (nested too deep)") from None
    except json.JSONDecodeError as exc:
        stop = len(text.rstrip())
        if exc.pos >= stop or (not text.rstrip().endswith("}") and exc.msg != "Extra data"):
            raise FioError(f"{source}: fio output is not valid JSON (truncated: it stops at byte {stop} before the "
                           f"JSON closes; {exc})") from None
        raise FioError(f"{source}: fio output is not valid JSON ({exc})") from None
    except ValueError as exc:  # Python's own limit: an integer of more than 4300 digits
        raise FioError(f"{source}: fio output holds a number fio never writes ({excerpt(str(exc))})") from None
    if not isinstance(data, dict):
        raise FioError(f"{source}: fio output is a {type(data).__name__}, not a JSON object")
    return data, end


def _without_messages(text: str) -> str:
    return _MESSAGE.sub("", text)


def _numbers(text: str) -> str:
    def word(match: re.Match) -> str:
        space, minus, name = match.groups()
        return space + ("NaN" if name.lower() == "nan" else f"{minus}Infinity")
    return _NOT_A_NUMBER.sub(word, text)


REPAIRS = (("fio's messages inside the JSON taken out", _without_messages),
           ("nan and inf read as numbers", _numbers),
           ("fio's messages inside the JSON taken out; nan and inf read as numbers",
            lambda text: _numbers(_without_messages(text))))
