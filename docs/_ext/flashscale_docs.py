"""Directives that render flashscale's reference from its code when the site is built, so no page can drift from
what the code does. Each renders Markdown (parsed by MyST) or a literal block; each warns when the code and the
page disagree, and the tests build the site with every warning an error.

    {flashscale-parameters} campaign|cluster|notebook   the parameter schema: campaigns.parameters.model
    {flashscale-notebook-parameters}                    each notebook's own parameters, from its parameters cell
    {flashscale-commands}                               every command's usage and every option, from cli.parser()
    {flashscale-columns}                                the results table's columns: measure.results.ALL_COLUMNS
    {flashscale-ceilings}                               the ceiling keys of analysis.ceilings.Ceilings; its body
                                                        says what each key means, and every key must be said
    {flashscale-output} COMMAND                         a flashscale command run on the checkout, with its output
    {flashscale-layers}                                 the import contracts of pyproject.toml, every module with
                                                        the first sentence of its docstring
    {flashscale-validation}                             a table of measured numbers, each with its command and
                                                        where its data lies; a number from a stored file is read
                                                        from it (through the command that reads it) at build time
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
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]
logger = logging.getLogger(__name__)


def plain(text: object) -> str:
    """Plain text (a help string, a docstring) as Markdown that shows it as written: no ``<campaign>`` read as
    HTML, no ``*`` or ``_`` as emphasis, no ``[...]`` as a link."""
    return re.sub(r"([\\`*_\[\]<>#|~])", r"\\\1", str(text))


PAGE = re.compile(r"\bdocs/([\w/.-]+?\.md(?:#[\w-]+)?)")


def linked(text: str) -> str:
    """Plain text whose docs/PAGE.md[#anchor] are links to those pages of the site."""
    parts = PAGE.split(text)
    return "".join(f"[docs/{part}](/{part})" if i % 2 else plain(part) for i, part in enumerate(parts))


def prose(text: object) -> str:
    """A docstring's or help string's text as Markdown: its ``literals`` as code, its docs/ pages as links, the rest
    ``plain``."""
    parts = re.split(r"``(.+?)``", str(text))
    return "".join(code(part) if i % 2 else linked(part) for i, part in enumerate(parts))


def cell(text: object) -> str:
    """Markdown made safe for one cell of a table: no pipe ends it, no newline breaks it."""
    return re.sub(r"(?<!\\)\|", r"\\|", " ".join(str(text).split()))


def code(text: object) -> str:
    """Text as inline code, however many backticks it holds."""
    text = str(text)
    ticks = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


class MarkdownDirective(SphinxDirective):
    """A directive whose output is Markdown, parsed as the page around it is."""

    def markdown(self, text: str) -> list[nodes.Node]:
        holder = nodes.container()
        self.state.nested_parse(StringList(text.splitlines(), source=self.get_source_info()[0]),
                                self.content_offset, holder)
        return holder.children

    def problem(self, message: str) -> list[nodes.Node]:
        logger.warning(message, location=self.get_location())
        return []


class Parameters(MarkdownDirective):
    """The campaign parameters (``campaign``), those only a cluster has (``cluster``), or a notebook's own that the
    rules read (``notebook``): name, default, meaning, from the schema (``parameters.model``, as its ``markdown``
    gives them, each meaning shown as written)."""

    required_arguments = 1

    def run(self):
        from flashscale.campaigns import campaign, cluster, parameters, rules

        kind = self.arguments[0]
        fields = parameters.model(campaign.PARTS).model_fields
        if kind == "cluster":
            fields = {n: i for n, i in parameters.model(cluster.PARTS).model_fields.items() if n not in fields}
        if kind in ("campaign", "cluster"):
            rows = [f"| `{name}` | {code(repr(list(i.default) if isinstance(i.default, tuple) else i.default))} | "
                    f"{cell(prose(i.description))} |" for name, i in fields.items()]
            return self.markdown("\n".join(["| parameter | default | meaning |", "| --- | --- | --- |", *rows]))
        if kind == "notebook":
            rows = [f"| `{name}` | {cell(prose(meaning))} |" for name, meaning in rules.NOTEBOOK_PARAMETERS.items()]
            return self.markdown("\n".join(["| parameter | meaning |", "| --- | --- |", *rows]))
        return self.problem(f"flashscale-parameters: {kind!r} is none of campaign, cluster, notebook")


class NotebookParameters(MarkdownDirective):
    """Per notebook of notebooks/: the parameters its ``parameters`` cell declares that the schema does not (its
    own), with the cell's default and comment; the schema's are named, and the schema's table says what they mean."""

    def run(self):
        import papermill
        from flashscale.campaigns import parameters

        out = []
        for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
            declared = papermill.inspect_notebook(str(path))
            own = {n: i for n, i in declared.items() if n not in parameters.SCHEMA}
            schema = [n for n in declared if n in parameters.SCHEMA]
            out.append(f"**{path.stem}**: the schema's {', '.join(code(n) for n in schema) or 'none'}"
                       + ("; its own:" if own else "; none of its own."))
            if own:
                out += ["", "| parameter | default | meaning |", "| --- | --- | --- |"]
                out += [f"| `{n}` | {code(i['default'])} | {cell(prose(i['help'])) or '—'} |" for n, i in own.items()]
            out.append("")
        return self.markdown("\n".join(out))


def subcommands(top: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parsers of the command's subcommands, by name."""
    (subs,) = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(subs.choices)


def option_rows(parser: argparse.ArgumentParser) -> list[str]:
    """One Markdown row per argument of ``parser``: how it is written, its default, what it means."""
    formatter = parser._get_formatter()
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        metavar = formatter._format_args(action, action.dest.upper()) if action.nargs != 0 else ""
        written = ", ".join(action.option_strings) + (f" {metavar}" if action.option_strings and metavar else "")
        written = written or formatter._metavar_formatter(action, action.dest)(1)[0]
        meaning = prose(formatter._expand_help(action)) if action.help else ""
        if action.choices:
            meaning += f" (one of: {', '.join(map(str, action.choices))})"
        if action.required and action.option_strings:
            meaning += " (required)"
        default = "" if action.default in (None, False, [], argparse.SUPPRESS) or not action.option_strings \
            else code(action.default)
        rows.append(f"| {cell(code(written))} | {cell(default)} | {cell(meaning)} |")
    return rows


class Commands(MarkdownDirective):
    """Every command: a section each (``flashscale NAME``) with its usage, what it does (its ``--help``
    description) and every option, from ``cli.parser()``; first ``flashscale`` itself. The body, a
    YAML mapping of a command's name to Markdown, adds that text to its section; a name that is no command warns."""

    has_content = True

    def run(self):
        from flashscale import cli

        top, about = cli.parser(), yaml.safe_load("\n".join(self.content)) or {}
        for name in sorted(set(about) - set(subcommands(top))):
            self.problem(f"flashscale-commands: {name!r} is no command; the commands are {', '.join(subcommands(top))}")
        text = []
        for name, parser in {"": top, **subcommands(top)}.items():
            usage = parser.format_usage().removeprefix("usage: ").strip()
            text += [f"## flashscale {name}".rstrip(), "", f"```text\n{usage}\n```", "",
                     prose(parser.description or ""),
                     "", "| argument | default | meaning |", "| --- | --- | --- |", *option_rows(parser), "",
                     about.get(name, ""), ""]
        holder = nodes.container()
        self.state.nested_parse(StringList(text, source=self.get_source_info()[0]), self.content_offset, holder,
                                match_titles=True)
        return holder.children


class Columns(MarkdownDirective):
    """Every column of the results table, its type and meaning (``results.ALL_COLUMNS``, as its
    ``schema_markdown`` gives them, each meaning shown as written)."""

    def run(self):
        from flashscale.measure import results

        rows = [f"| `{name}` | {kind} | {cell(prose(meaning))} |"
                for name, (kind, meaning) in results.ALL_COLUMNS.items()]
        return self.markdown("\n".join(["| column | type | meaning |", "| --- | --- | --- |", *rows]))


class CeilingKeys(MarkdownDirective):
    """The keys of ``Ceilings`` with their defaults; the body gives each key's meaning (``key: meaning`` lines), and
    a key the code has and the body does not (or the reverse) is a warning."""

    has_content = True

    def run(self):
        from flashscale.analysis.ceilings import Ceilings

        meanings = yaml.safe_load("\n".join(self.content)) or {}
        keys = [f.name for f in dataclasses.fields(Ceilings)]
        for key in sorted(set(keys) ^ set(meanings)):
            self.problem(f"flashscale-ceilings: {key!r} is " + ("a key of Ceilings that the page does not explain"
                                                                if key in keys else "no key of Ceilings"))
        defaults = {f.name: f.default for f in dataclasses.fields(Ceilings)}
        rows = [f"| `{k}` | {'—' if defaults[k] is None else code(defaults[k])} | {cell(meanings.get(k, ''))} |"
                for k in keys]
        return self.markdown("\n".join(["| key | default | meaning |", "| --- | --- | --- |", *rows]))


_OUTPUTS: dict[str, str] = {}


def flashscale_output(command: str) -> str:
    """What ``command`` (a ``flashscale ...`` line, paths relative to the checkout) prints, run in this process
    in the checkout; a failure is an error that names the command. Each command runs once per build."""
    from flashscale import cli

    if command not in _OUTPUTS:
        argv = shlex.split(command)
        if argv[:1] != ["flashscale"]:
            raise ValueError(f"{command!r} is not a flashscale command")
        out, err, here = io.StringIO(), io.StringIO(), os.getcwd()
        try:
            os.chdir(ROOT)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = cli.main(argv[1:])
        finally:
            os.chdir(here)
        if status:
            raise ValueError(f"{command!r} exited {status}: {err.getvalue()[-500:]}")
        _OUTPUTS[command] = out.getvalue()
    return _OUTPUTS[command]


class Output(MarkdownDirective):
    """A flashscale command and what it prints, run when the site is built (``:lines:``: only the lines that
    match this regular expression)."""

    required_arguments = 1
    final_argument_whitespace = True
    option_spec = {"lines": str}

    def run(self):
        command = self.arguments[0]
        try:
            printed = flashscale_output(command).splitlines()
        except (ValueError, OSError) as exc:
            return self.problem(f"flashscale-output: {exc}")
        if "lines" in self.options:
            printed = [line for line in printed if re.search(self.options["lines"], line)]
        block = nodes.literal_block("", "\n".join([f"$ {command}", *printed]), language="text")
        return [block]


def measured(source: dict, where: str) -> str:
    """One number of a stored table, formatted: ``source`` names a ``command`` (whose --format csv output is read)
    or a ``file`` (CSV, relative to the checkout), the row (``row``: column -> value) and ``column``, and ``as``
    (a kind of measure.units.cell, default bandwidth; ``signed percent`` for an error)."""
    import pandas as pd
    from flashscale.measure import units

    if "command" in source:
        table = pd.read_csv(io.StringIO(flashscale_output(source["command"])))
    else:
        table = pd.read_csv(ROOT / source["file"])
    rows = table
    for column, value in (source.get("row") or {}).items():
        rows = rows[rows[column].astype(str) == str(value)]
    if len(rows) != 1:
        raise ValueError(f"{where}: {len(rows)} rows match {source.get('row')} (one expected)")
    value, kind = rows.iloc[0][source["column"]], source.get("as", "bandwidth")
    if kind == "signed percent":
        return units.percent(value, signed=True)
    if kind == "bandwidth":
        return units.rate(value)
    return units.cell(value, kind)


class Validation(MarkdownDirective):
    """A table of measured numbers (a YAML list in the body, one mapping a row): ``what`` was measured, the
    ``number`` (or ``from``: read from stored data at build time, see ``measured``), the ``command`` that measured
    it and ``data``: where its data lies."""

    has_content = True

    def run(self):
        rows = yaml.safe_load("\n".join(self.content)) or []
        out = ["| what | number | measured by | its data |", "| --- | --- | --- | --- |"]
        for i, row in enumerate(rows):
            where = f"flashscale-validation row {i + 1} ({row.get('what')!r})"
            missing = [k for k in ("what", "command", "data") if not row.get(k)]
            if missing or ("number" in row) == ("from" in row):
                return self.problem(f"{where}: needs what, command, data and one of number or from")
            try:
                number = measured(row["from"], where) if "from" in row else str(row["number"])
            except (ValueError, KeyError, OSError) as exc:
                return self.problem(f"{where}: {exc}")
            out.append(f"| {cell(row['what'])} | {cell(number)} | {code(row['command'])} | {cell(row['data'])} |")
        return self.markdown("\n".join(out))


class Layers(MarkdownDirective):
    """The import contracts of pyproject.toml (``[tool.importlinter]``), each with its layers from the top, and
    every module of each layer of the first with the first sentence of its docstring: the package as it is."""

    def run(self):
        import ast
        import tomllib

        contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
        text = []
        for contract in contracts:
            said = (" over ".join(code(layer) for layer in contract["layers"]) if "layers" in contract else
                    f"{', '.join(map(code, contract['source_modules']))} never imports "
                    f"{', '.join(map(code, contract['forbidden_modules']))}, even indirectly")
            text += [f"- **{plain(contract['name'])}**: {said}"]
        text += ["", "| module | what it is |", "| --- | --- |"]
        for layer in contracts[0]["layers"]:
            for name in (n.strip() for n in layer.split("|")):
                package = ROOT / "lib" / Path(*name.split("."))
                files = sorted(package.rglob("*.py")) if package.is_dir() else [package.with_suffix(".py")]
                for path in files:
                    if path.name in ("__init__.py", "__main__.py"):
                        continue
                    module = ".".join(path.relative_to(ROOT / "lib").with_suffix("").parts)
                    doc = " ".join((ast.get_docstring(ast.parse(path.read_text())) or "").split("\n\n")[0].split())
                    doc = re.match(r"(.*?\.)(?:\s|$)", doc)[1] if re.search(r"\.(\s|$)", doc) else doc
                    text.append(f"| `{module}` | {cell(prose(doc))} |")
        return self.markdown("\n".join(text))


def setup(app):
    for name, directive in {"flashscale-parameters": Parameters, "flashscale-notebook-parameters": NotebookParameters,
                            "flashscale-commands": Commands, "flashscale-columns": Columns,
                            "flashscale-ceilings": CeilingKeys, "flashscale-output": Output,
                            "flashscale-validation": Validation, "flashscale-layers": Layers}.items():
        app.add_directive(name, directive)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}
