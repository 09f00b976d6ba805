"""Config files for train.py and the Janus benchmark: stacked ``--config`` files with ``${...}``, one-line errors.

Both CLIs are jsonargparse parsers in ``omegaconf+`` mode: ``--config A --config B`` merges B over A (then
the command line over both), and only then are ``${key}`` interpolations resolved, so a key set by a later
file (``run: ...`` in an override) changes every path that refers to it in an earlier one. ``${key}`` is
absolute from the top of the config file (for train.py: of the ``fit`` section).

A bad config (an unknown key, a value of the wrong type, a missing file) ends in one line that names the key
and the file that set it, e.g. ``configs/mine.yaml: model.net.colour: unknown key; known: alpha, ...``.

The configs are installed with the package (``configs/*.yaml`` of the checkout are the files; a wheel carries
them as ``sam_model/configs/``, see setup.py): ``--config adapt.yaml`` (or ``configs/adapt.yaml``) names the
installed file when no such file exists where the command runs (:func:`resolve_configs`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PARSER_MODE = "omegaconf+"


def use_interpolation() -> None:
    """Let config files write ``${run}`` for a key at their top level (jsonargparse's own default would ask
    for a path relative to where the reference sits, such as ``${....run}``). A jsonargparse setting for
    this process, made when a CLI starts (never at import). Without omegaconf (an install older than this
    module) the CLI ends in one line that says how to install it, not in jsonargparse's trace."""
    import importlib.util

    from jsonargparse import set_parsing_settings

    from sam_model.io import SAMFileError

    if importlib.util.find_spec("omegaconf") is None:
        raise SAMFileError("the config parser needs omegaconf (for ${...} in stacked --config files): "
                           "pip install -e . (or pip install omegaconf)")

    set_parsing_settings(omegaconf_absolute_to_relative_paths=True)


def installed_configs_dir() -> Path | None:
    """The folder of the installed configs: ``sam_model/configs`` in a wheel, ``configs/`` beside the package
    in a checkout (an editable install); None when neither exists."""
    import sam_model

    package = Path(sam_model.__file__).resolve().parent
    for folder in (package / "configs", package.parent / "configs"):
        if folder.is_dir() and any(folder.glob("*.yaml")):
            return folder
    return None


def installed_configs() -> list[str]:
    """The file names of the installed configs (``adapt.yaml``, ``demo.yaml``, ...)."""
    folder = installed_configs_dir()
    return sorted(p.name for p in folder.glob("*.yaml")) if folder else []


def resolve_config(value: str) -> str:
    """``value`` of a ``--config``: the file itself when it exists; else, for a bare name (``adapt``,
    ``adapt.yaml``) or one under ``configs/``, the installed config of that name. A bare name that names none
    is a one-line error listing the installed configs; any other missing path is left to the parser's error."""
    from sam_model.io import SAMFileError

    p = Path(value)
    if p.exists() or value.lstrip().startswith(("{", "[")):  # an existing file, or an inline YAML config
        return value
    if str(p.parent) not in (".", "configs"):
        return value
    folder = installed_configs_dir()
    for name in (p.name, p.name + ".yaml"):
        if folder is not None and (folder / name).is_file():
            return str(folder / name)
    names = ", ".join(installed_configs()) or "none (reinstall sam_model)"
    raise SAMFileError(f"--config {value}: no such file here and no installed config of that name; "
                       f"installed: {names}")


def resolve_configs(argv: Sequence[str]) -> list[str]:
    """``argv`` with every ``--config``/``-c`` value resolved by :func:`resolve_config`."""
    out, args = [], list(argv)
    for i, a in enumerate(args):
        if i > 0 and args[i - 1] in ("--config", "-c"):
            a = resolve_config(a)
        elif a.startswith("--config="):
            a = "--config=" + resolve_config(a.split("=", 1)[1])
        out.append(a)
    return out


def config_files(argv: Sequence[str]) -> list[str]:
    """The files given with ``--config F``, ``--config=F`` or ``-c F``, in order (later ones win)."""
    out, args = [], list(argv)
    for i, a in enumerate(args):
        if a in ("--config", "-c") and i + 1 < len(args):
            out.append(args[i + 1])
        elif a.startswith("--config="):
            out.append(a.split("=", 1)[1])
    return out


def _lookup(data: Any, key: str) -> bool:
    """Whether the dotted ``key`` is set in a config mapping (``init_args`` levels may be left out; a list
    matches when one of its items has the rest of the key)."""
    if not key:
        return True
    part, _, rest = key.partition(".")
    if isinstance(data, list):
        return any(_lookup(item, key) for item in data)
    if not isinstance(data, dict):
        return False
    if part in data:
        return _lookup(data[part], rest)
    return isinstance(data.get("init_args"), dict) and _lookup(data["init_args"], key)


def repeated_key(text: str) -> str | None:
    """Where a YAML config gives one key twice in one mapping (``line N: key 'x' ...``), or None. Why: YAML
    loaders keep the last of the two silently, so a run trains with whichever came last where the writer meant
    one of them (a key pasted below its old value); the parser never sees the first."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = loader.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise _Repeated(f"line {key_node.start_mark.line + 1}: key {key!r} is given twice in one "
                                f"mapping (first on line {seen[key]}); keep one")
            seen.setdefault(key, key_node.start_mark.line + 1)
        return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    try:
        yaml.load(text, Loader=Loader)  # noqa: S506 - a SafeLoader subclass: constructs plain data only
    except _Repeated as err:
        return str(err)
    except yaml.YAMLError:
        return None  # the parser's own message names a YAML error
    return None


class _Repeated(Exception):
    """A key given twice (repeated_key)."""


def where(key: str, argv: Sequence[str], prefix: str = "") -> str:
    """Which input set ``key``: the command line, else the last config file that has it, else ''."""
    import yaml

    if any(a == f"--{k}" or a.startswith((f"--{k}=", f"--{k}+")) for a in argv for k in (key, prefix + key)):
        return "command line"  # applied after every file
    for path in reversed(config_files(argv)):
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            continue
        if _lookup(data, key):
            return path
    return ""


def _known(parser: Any, parent: str, cls: str = "") -> list[str]:
    """The keys accepted directly under ``parent`` ('' = the top level), or the parameters of class ``cls``."""
    try:
        if cls:
            import dataclasses
            import importlib
            import inspect

            module, _, name = cls.rpartition(".")
            obj = getattr(importlib.import_module(module), name)
            if dataclasses.is_dataclass(obj):
                return sorted(f.name for f in dataclasses.fields(obj))
            return sorted(p for p in inspect.signature(obj).parameters if p not in ("self", "args", "kwargs"))
        defaults = parser.get_defaults(skip_validation=True)
        node = defaults.get(parent) if parent else defaults
        return sorted(k for k in vars(node) if not k.startswith("_")) if node is not None else []
    except Exception:  # noqa: BLE001 - the list is a courtesy; the error line stands without it
        return []


def _expected(text: str) -> str:
    names = [a or b for a, b in re.findall(r"Expected a (?:<class '([^']+)'>|(typing\.[^\n.]+))", text)]
    return " or ".join(dict.fromkeys(n for n in names if n != "NoneType"))


def _block(text: str, start: int) -> str:
    """The lines after position ``start`` indented deeper than the line that holds it."""
    line_start = text.rfind("\n", 0, start) + 1
    indent = len(text[line_start:start]) - len(text[line_start:start].lstrip())
    out = []
    for line in text[start:].split("\n")[1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        out.append(line)
    return "\n".join(out)


def _diagnose(text: str, parser: Any = None, parent: str = "") -> tuple[str, str]:
    """(key below ``parent``, what is wrong) from a jsonargparse message."""
    m = re.search(r'Parser key "([^"]+)"', text)
    key = m.group(1) if m else ""
    nested = re.search(r"Problem with given class_path '([^']+)':", text)
    if nested:  # the message of the class given there, one level down
        inner = _block(text, nested.start())
        sub, problem = _diagnose(inner, None, "")
        if problem == "unknown key":
            known = _known(None, "", nested.group(1))
            problem += f"; known in {nested.group(1).rpartition('.')[2]}: {', '.join(known)}" if known else ""
        return ".".join(k for k in (key, sub) if k), problem
    unknown = re.search(r"(?:Group '([^']+)' does not accept option '([^']+)')|(?:(?:Option|Key) '([^']+)' is not "
                        r"accepted)|(?:Subcommand '[^']+' does not accept option '([^']+)')", text)
    if unknown:
        if unknown.group(4):  # jsonargparse 4.5x: the option's whole dotted key
            group, _, name = unknown.group(4).rpartition(".")
        else:
            group, name = (unknown.group(1) or "", unknown.group(2)) if unknown.group(2) else ("", unknown.group(3))
        full = ".".join(k for k in (key, group, name) if k)
        owner = ".".join(k for k in (parent, key, group) if k)
        known = _known(parser, owner) if parser is not None else []
        cap = 24
        listed = ", ".join(known[:cap]) + (", ... (see --help)" if len(known) > cap else "")
        return full, "unknown key" + (f"; known{' in ' + owner if owner else ''}: {listed}" if known else "")
    given = re.search(r"(?:Given|Got) value: (.*)", text)
    expected = _expected(text)
    if expected or given:
        value = given.group(1).strip() if given else ""
        return key, f"expected {expected or 'another value'}" + (f", got {value!r}" if value else "")
    rest = text.split("\n", 1)[1] if m and "\n" in text else text
    return key, " ".join(rest.split())


def explain(message: str, argv: Sequence[str], parser: Any = None, prefix: str = "") -> str:
    """One line for a jsonargparse error ``message``: ``FILE: KEY: what is wrong``.

    ``argv``: the arguments the parser was given (to find which file set the key); ``parser``: to list the
    keys known where an unknown one was found; ``prefix``: the subcommand (``fit.``) that keys in the
    message may carry.
    """
    text = message.strip()
    if text.lower().startswith("unrecognized arguments"):
        return f"command line: {text.splitlines()[0]} (see --help for every option)"
    files = config_files(argv)
    if "File does not exist" in text or "Unable to load config" in text:
        bad = next((f for f in files if not Path(f).is_file()), "")
        return f"--config {bad}: no such file" if bad else " ".join(text.split())
    if text.startswith("Problems parsing config"):
        import yaml

        for f in files:
            try:
                yaml.safe_load(Path(f).read_text(encoding="utf-8"))
            except yaml.YAMLError as exc:
                return f"{f}: not valid YAML: {' '.join(str(exc).split())}"
            except OSError:
                continue
        return " ".join(text.split())
    key, problem = _diagnose(text, parser)
    key = key[len(prefix):] if prefix and key.startswith(prefix) else key
    source = where(key, argv, prefix) if key else ""
    return f"{source + ': ' if source else ''}{key + ': ' if key else ''}{problem}{_quote_hint(key, argv)}"


def _quote_hint(key: str, argv: Sequence[str]) -> str:
    """A list given on the command line whose items hold commas (``--gates [mmt(0.9,-0.6,0)]``) is split at
    them by YAML: say to quote each item."""
    args = list(argv)
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name != f"--{key}" or not key:
            continue
        value = value if eq else (args[i + 1] if i + 1 < len(args) else "")
        items = value.strip()[1:-1] if value.strip().startswith("[") else ""
        if "(" in items and "," in items and '"' not in items and "'" not in items:
            quoted = ",".join(f'"{part.strip()}"' for part in re.findall(r"[^,()]+\([^)]*\)|[^,]+", items))
            return f"; YAML splits a list item at its commas: quote each item, e.g. --{key} '[{quoted}]'"
    return ""


def explain_interpolation(exc: Exception, argv: Sequence[str], prefix: str = "") -> str:
    """One line for an omegaconf error met while resolving ``${...}``: the key that holds it and its file."""
    full = str(getattr(exc, "full_key", "") or "")
    key = full[len(prefix):] if prefix and full.startswith(prefix) else full
    msg = str(exc).split("\n")[0].replace("'.", "'")
    source = where(key, argv, prefix) if key else ""
    return f"{source + ': ' if source else ''}{key + ': ' if key else ''}{msg}"
