"""flashscale's reference as Markdown, made from its code: what ``make reference-docs`` writes into the pages of
docs/ between their generated marks (``flashscale_docs.py`` finds the marks; this module says what goes between).
Each renderer takes the mark's arguments, the body of its comment and the page it lands on (relative to docs/, for
relative links that work on GitHub and on the site alike) and returns plain Markdown: GitHub shows it as the site
does. A renderer raises ``ReferenceMismatch`` where the page and the code disagree.

    parameters campaign|cluster|notebook   the parameter schema: campaigns.parameters.model
    notebook-parameters                    each notebook's own parameters, from its parameters cell
    command NAME                           one command's heading, usage, --help and options (flashscale: the top)
    columns                                the results table's columns: measure.results.ALL_COLUMNS
    ceilings                               the keys of analysis.prediction.ceilings.Ceilings; the body says what each means
    output COMMAND                         a flashscale command run on the checkout, with its output (body: lines)
    layers                                 the import contracts of pyproject.toml, every module and its docstring
    validation                             measured numbers (body: YAML rows), stored ones read through a command
    durations                              how long each target takes: docs/durations.yaml
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import re
import shlex
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
USAGE_WIDTH = 100  # a command's usage wrapped at this width, not the terminal's: the page is the same everywhere


class ReferenceMismatch(ValueError):
    """The page and the code disagree (a key the page does not explain, a command that is not one...)."""


def plain(text: object) -> str:
    """Plain text (a help string, a docstring) as Markdown that shows it as written: no ``<campaign>`` read as
    HTML, no ``*`` or ``_`` as emphasis, no ``[...]`` as a link."""
    return re.sub(r"([\\`*_\[\]<>#|~])", r"\\\1", str(text))


PAGE = re.compile(r"\bdocs/([\w/.-]+?\.md)(#[\w-]+)?")


def linked(text: str, here: Path) -> str:
    """Plain text whose docs/PAGE.md[#anchor] are links to those pages, relative to the page ``here`` lands on."""
    out, end = [], 0
    for found in PAGE.finditer(text):
        target = os.path.relpath(found[1], here.parent.as_posix() or ".")
        out += [plain(text[end:found.start()]), f"[{plain(found[0])}]({target}{found[2] or ''})"]
        end = found.end()
    return "".join(out) + plain(text[end:])


def prose(text: object, here: Path) -> str:
    """A docstring's or help string's text as Markdown: its ``literals`` as code, its docs/ pages as links, the rest
    ``plain``."""
    parts = re.split(r"``(.+?)``", str(text))
    return "".join(code(part) if i % 2 else linked(part, here) for i, part in enumerate(parts))


def cell(text: object) -> str:
    """Markdown made safe for one cell of a table: no pipe ends it, no newline breaks it."""
    return re.sub(r"(?<!\\)\|", r"\\|", " ".join(str(text).split()))


def code(text: object) -> str:
    """Text as inline code, however many backticks it holds."""
    text = str(text)
    ticks = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def table(header: list[str], rows: list[str]) -> str:
    return "\n".join(["| " + " | ".join(header) + " |", "|" + " --- |" * len(header), *rows])


def parameters(kind: str, body: str, here: Path) -> str:
    """The campaign parameters (``campaign``), those only a cluster has (``cluster``), or a notebook's own that the
    rules read (``notebook``): name, default, meaning, from the schema (``parameters.model``)."""
    from flashscale.campaigns import campaign, cluster, parameters as schema, rules

    fields = schema.model(campaign.PARTS).model_fields
    if kind == "cluster":
        fields = {n: i for n, i in schema.model(cluster.PARTS).model_fields.items() if n not in fields}
    if kind in ("campaign", "cluster"):
        return table(["parameter", "default", "meaning"], [
            f"| `{name}` | {code(repr(list(i.default) if isinstance(i.default, tuple) else i.default))} | "
            f"{cell(prose(i.description, here))} |" for name, i in fields.items()])
    if kind == "notebook":
        return table(["parameter", "meaning"], [f"| `{name}` | {cell(prose(meaning, here))} |"
                                                for name, meaning in rules.NOTEBOOK_PARAMETERS.items()])
    raise ReferenceMismatch(f"parameters: {kind!r} is none of campaign, cluster, notebook")


def notebook_parameters(args: str, body: str, here: Path) -> str:
    """Per notebook of notebooks/: the parameters its ``parameters`` cell declares that the schema does not (its
    own), with the cell's default and comment; the schema's are named, and the schema's table says what they mean."""
    import papermill
    from flashscale.campaigns import parameters as schema

    out = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        declared = papermill.inspect_notebook(str(path))
        own = {n: i for n, i in declared.items() if n not in schema.SCHEMA}
        taken = [n for n in declared if n in schema.SCHEMA]
        out += [f"**{path.stem}**: the schema's {', '.join(code(n) for n in taken) or 'none'}"
                + ("; its own:" if own else "; none of its own."), ""]
        if own:
            out += [table(["parameter", "default", "meaning"], [
                f"| `{n}` | {code(i['default'])} | {cell(prose(i['help'], here)) or '—'} |" for n, i in own.items()]),
                ""]
    return "\n".join(out).rstrip()


def commands() -> dict[str, argparse.ArgumentParser]:
    """The ``flashscale`` command's parser (as ``flashscale``) and each of its subcommands', by name."""
    from flashscale import cli

    top = cli.parser()
    (subs,) = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    return {"flashscale": top, **subs.choices}


def option_rows(parser: argparse.ArgumentParser, here: Path) -> list[str]:
    """One Markdown row per argument of ``parser``: how it is written, its default, what it means."""
    formatter = parser._get_formatter()
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        metavar = formatter._format_args(action, action.dest.upper()) if action.nargs != 0 else ""
        written = ", ".join(action.option_strings) + (f" {metavar}" if action.option_strings and metavar else "")
        written = written or formatter._metavar_formatter(action, action.dest)(1)[0]
        meaning = prose(formatter._expand_help(action), here) if action.help else ""
        if action.choices:
            meaning += f" (one of: {', '.join(map(str, action.choices))})"
        if action.required and action.option_strings:
            meaning += " (required)"
        default = "" if action.default in (None, False, [], argparse.SUPPRESS) or not action.option_strings \
            else code(action.default)
        rows.append(f"| {cell(code(written))} | {cell(default)} | {cell(meaning)} |")
    return rows


def command(name: str, body: str, here: Path) -> str:
    """One command's section: its heading (``## flashscale NAME``, GitHub's anchor ``flashscale-NAME``), its
    usage, what it does (its ``--help`` description) and every option, from ``cli.parser()``."""
    parsers = commands()
    if name not in parsers:
        raise ReferenceMismatch(f"command: {name!r} is no command; the commands are {', '.join(parsers)}")
    parser = parsers[name]
    heading = "flashscale" if name == "flashscale" else f"flashscale {name}"
    formatter = parser.formatter_class(prog=parser.prog, width=USAGE_WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    usage = formatter.format_help().strip()
    return "\n".join([f"## {heading}", "", f"```text\n{usage}\n```", "", prose(parser.description or "", here).strip(), "",
                      table(["argument", "default", "meaning"], option_rows(parser, here))])


def columns(args: str, body: str, here: Path) -> str:
    """Every column of the results table, its type and meaning (``results.ALL_COLUMNS``)."""
    from flashscale.measure import results

    return table(["column", "type", "meaning"], [f"| `{name}` | {kind} | {cell(prose(meaning, here))} |"
                                                 for name, (kind, meaning) in results.ALL_COLUMNS.items()])


def ceilings(args: str, body: str, here: Path) -> str:
    """The keys of ``Ceilings`` with their defaults; the body gives each key's meaning (``key: meaning`` lines), and
    a key the code has and the body does not (or the reverse) is a mismatch."""
    from flashscale.analysis.prediction.ceilings import Ceilings

    meanings, fields = yaml.safe_load(body) or {}, dataclasses.fields(Ceilings)
    keys = [f.name for f in fields]
    wrong = [f"{key!r} is " + ("a key of Ceilings that the page does not explain" if key in keys
                               else "no key of Ceilings") for key in sorted(set(keys) ^ set(meanings))]
    if wrong:
        raise ReferenceMismatch("ceilings: " + "; ".join(wrong))
    return table(["key", "default", "meaning"], [
        f"| `{f.name}` | {'—' if f.default is None else code(f.default)} | {cell(meanings[f.name])} |"
        for f in fields])


_OUTPUTS: dict[str, str] = {}


def flashscale_output(line: str) -> str:
    """What ``line`` (a ``flashscale ...`` command, paths relative to the checkout) prints, run in this process
    in the checkout, as into a file (no COLUMNS: a table fits 100 columns, whoever regenerates the page); a failure
    names the command. Each command runs once per process."""
    from flashscale import cli

    if line not in _OUTPUTS:
        argv = shlex.split(line)
        if argv[:1] != ["flashscale"]:
            raise ReferenceMismatch(f"{line!r} is not a flashscale command")
        out, err, here, columns = io.StringIO(), io.StringIO(), os.getcwd(), os.environ.pop("COLUMNS", None)
        try:
            os.chdir(ROOT)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = cli.main(argv[1:])
        finally:
            os.chdir(here)
            if columns is not None:
                os.environ["COLUMNS"] = columns
        if status:
            raise ReferenceMismatch(f"{line!r} exited {status}: {err.getvalue()[-500:]}")
        _OUTPUTS[line] = out.getvalue()
    return _OUTPUTS[line]


def output(line: str, body: str, here: Path) -> str:
    """A flashscale command and what it prints (body ``lines: REGEX``: only the lines that match)."""
    printed = flashscale_output(line).splitlines()
    pattern = (yaml.safe_load(body) or {}).get("lines")
    printed = [p for p in printed if re.search(pattern, p)] if pattern else printed
    return "\n".join(["```text", f"$ {line}", *(p.rstrip() for p in printed), "```"])


def measured(source: dict, where: str) -> str:
    """One number of a stored table, formatted: ``source`` names a ``command`` (whose --format csv output is read)
    or a ``file`` (CSV, relative to the checkout), the row (``row``: column -> value) and ``column``, and ``as``
    (a kind of measure.units.cell, default bandwidth; ``signed percent`` for an error)."""
    import pandas as pd
    from flashscale.measure import units

    found = pd.read_csv(io.StringIO(flashscale_output(source["command"])) if "command" in source
                        else ROOT / source["file"])
    for column, value in (source.get("row") or {}).items():
        found = found[found[column].astype(str) == str(value)]
    if len(found) != 1:
        raise ReferenceMismatch(f"{where}: {len(found)} rows match {source.get('row')} (one expected)")
    value, kind = found.iloc[0][source["column"]], source.get("as", "bandwidth")
    if kind == "signed percent":
        return units.percent(value, signed=True)
    return units.rate(value) if kind == "bandwidth" else units.cell(value, kind)


def validation(args: str, body: str, here: Path) -> str:
    """A table of measured numbers (a YAML list in the body, one mapping a row): ``what`` was measured, the
    ``number`` (or ``from``: read from stored data, see ``measured``), the ``command`` that measured it and
    ``data``: where its data lies."""
    out = []
    for i, row in enumerate(yaml.safe_load(body) or []):
        where = f"validation row {i + 1} ({row.get('what')!r})"
        if any(not row.get(k) for k in ("what", "command", "data")) or ("number" in row) == ("from" in row):
            raise ReferenceMismatch(f"{where}: needs what, command, data and one of number or from")
        number = measured(row["from"], where) if "from" in row else str(row["number"])
        out.append(f"| {cell(row['what'])} | {cell(number)} | {code(row['command'])} | {cell(row['data'])} |")
    return table(["what", "number", "measured by", "its data"], out)


def layers(args: str, body: str, here: Path) -> str:
    """The import contracts of pyproject.toml (``[tool.importlinter]``), each with its layers from the top, and
    every module of each layer of the first with the first sentence of its docstring: the package as it is."""
    import ast
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    text = []
    for contract in contracts:
        if "layers" in contract:
            said = " over ".join(code(layer) for layer in contract["layers"])
        elif contract["type"] == "independence":
            said = f"{', '.join(map(code, contract['modules']))} never import one another, even indirectly"
        else:
            said = (f"{', '.join(map(code, contract['source_modules']))} never imports "
                    f"{', '.join(map(code, contract['forbidden_modules']))}, even indirectly")
        text += [f"- **{plain(contract['name'])}**: {said}"]
    rows = []
    for layer in contracts[0]["layers"]:
        for name in (n.strip() for n in layer.split("|")):
            package = ROOT / "lib" / Path(*name.split("."))
            for path in sorted(package.rglob("*.py")) if package.is_dir() else [package.with_suffix(".py")]:
                if path.name in ("__init__.py", "__main__.py"):
                    continue
                module = ".".join(path.relative_to(ROOT / "lib").with_suffix("").parts)
                doc = " ".join((ast.get_docstring(ast.parse(path.read_text())) or "").split("\n\n")[0].split())
                doc = re.match(r"(.*?\.)(?:\s|$)", doc)[1] if re.search(r"\.(\s|$)", doc) else doc
                rows.append(f"| `{module}` | {cell(prose(doc, here))} |")
    return "\n".join([*text, "", table(["module", "what it is"], rows)])


def durations(args: str, body: str, here: Path) -> str:
    """How long each target takes (docs/durations.yaml): the figure every page, ``make help`` and runner states,
    and the measurement it comes from, or what it is estimated from where it was never timed."""
    rows = []
    for name, entry in yaml.safe_load((ROOT / "docs" / "durations.yaml").read_text()).items():
        took = entry.get("measured")
        said = [f"{took['took']} on {took['when']}: {took['how']}; from {took['source']}"] if took else []
        said += [("now estimated: " if took else "not timed, estimated: ") + entry["estimate"]] \
            if entry.get("estimate") else []
        rows.append(f"| {code(name) if name.startswith(('make ', 'tests/')) else name} | {entry['said']} | "
                    f"{cell(prose('; '.join(said), here))} |")
    return table(["what", "stated", "measured"], rows)


RENDERERS = {"parameters": parameters, "notebook-parameters": notebook_parameters, "command": command,
             "columns": columns, "ceilings": ceilings, "output": output, "layers": layers,
             "validation": validation, "durations": durations}
