"""Safe YAML reading that keeps line numbers.

PyYAML's safe loader gives plain Python data without positions. For clear error messages we compose the node
tree ourselves (safe constructors only) and return :class:`Located` mappings/lists that remember the line and
column of every key and item. They behave like ``dict``/``list`` so loaders can use them naturally and ask
``data.line_of(key)`` / ``data.item_line(i)`` when they need to report a problem.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping, TypeGuard

import yaml

from core.base.errors import ConfigError, read_text_file

__all__ = ["LocatedDict", "LocatedList", "load_yaml", "loads_yaml", "dump_yaml", "expect", "yaml_type_name",
           "is_mapping", "is_list"]


class LocatedDict(dict):
    """A dict that remembers the source line/column of itself and each key (1-based)."""

    file: str | None = None
    line: int | None = None
    col: int | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.key_pos: dict[Any, tuple[int, int]] = {}

    def line_of(self, key: Any) -> int | None:
        pos = self.key_pos.get(key)
        return pos[0] if pos else self.line

    def error(self, message: str, key: Any = None) -> ConfigError:
        """Build a :class:`ConfigError` located at ``key`` (or at this mapping)."""
        line: int | None
        col: int | None
        if key is not None and key in self.key_pos:
            line, col = self.key_pos[key]
        else:
            line, col = self.line, self.col
        return ConfigError(message, self.file, line, col)


class LocatedList(list):
    """A list that remembers the source line/column of itself and each item (1-based)."""

    file: str | None = None
    line: int | None = None
    col: int | None = None

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.item_pos: list[tuple[int, int]] = []

    def item_line(self, i: int) -> int | None:
        return self.item_pos[i][0] if 0 <= i < len(self.item_pos) else self.line

    def error(self, message: str, index: int | None = None) -> ConfigError:
        line: int | None
        col: int | None
        if index is not None and 0 <= index < len(self.item_pos):
            line, col = self.item_pos[index]
        else:
            line, col = self.line, self.col
        return ConfigError(message, self.file, line, col)


def is_mapping(value: Any) -> TypeGuard[LocatedDict]:
    """``isinstance(value, dict)``, typed for readers of parsed YAML data: every mapping :func:`loads_yaml` builds
    is a :class:`LocatedDict`, whose ``error`` locates their messages. A plain dict passes as well and reads the
    same while it holds no problem."""
    return isinstance(value, dict)


def is_list(value: Any) -> TypeGuard[LocatedList]:
    """``isinstance(value, list)``, typed as the :class:`LocatedList` of parsed YAML data (see :func:`is_mapping`)."""
    return isinstance(value, list)


#: How many values aliases (``*name``) and merge keys (``<<:``) may add to a document beyond the values written
#: in it. Legitimate configs reuse a few blocks; nested aliases can otherwise expand exponentially ("billion
#: laughs": a few hundred bytes that would take minutes and gigabytes to build).
MAX_ALIAS_EXPANSION = 10_000


def _distinct_nodes(root: yaml.Node) -> int:
    """Number of distinct nodes of a composed document (aliases point at the same node; cycles are fine)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                stack.extend((k, v))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return len(seen)


class _Builder:
    def __init__(self, file: str | None, limit: int | None = None) -> None:
        self.file = file
        self._scalar = yaml.SafeLoader("")  # only used for its safe scalar constructors
        self._open: set[int] = set()  # nodes being built (an alias to one of them is a cycle)
        self._built = 0
        self._limit = limit

    def _enter(self, node: yaml.Node, line: int, col: int) -> None:
        if id(node) in self._open:
            raise ConfigError("recursive YAML alias: this value contains itself (an alias *name inside the "
                              "value anchored as &name)", self.file, line, col)
        self._open.add(id(node))

    def build(self, node: yaml.Node) -> Any:
        line, col = node.start_mark.line + 1, node.start_mark.column + 1
        self._built += 1
        if self._limit is not None and self._built > self._limit:
            raise ConfigError(f"YAML aliases expand to too many values (more than {MAX_ALIAS_EXPANSION} beyond "
                              f"those written in the file); write the values out or use fewer nested aliases",
                              self.file, line, col)
        if isinstance(node, yaml.MappingNode):
            self._enter(node, line, col)
            explicit = sum(1 for k, _ in node.value if k.tag != "tag:yaml.org,2002:merge")
            try:
                self._scalar.flatten_mapping(node)
            except yaml.MarkedYAMLError as exc:  # e.g. "<<: 5" (a merge key needs a mapping or list of them)
                mark = exc.problem_mark or exc.context_mark
                raise ConfigError(f"YAML merge key error: {exc.problem or exc.context}", self.file,
                                  mark.line + 1 if mark else line, mark.column + 1 if mark else col) from None
            except RecursionError:
                raise ConfigError("recursive YAML merge key: a mapping merges itself (<<: *name inside the "
                                  "mapping anchored as &name)", self.file, line, col) from None
            out = LocatedDict()
            out.file, out.line, out.col = self.file, line, col
            merged = len(node.value) - explicit  # flatten_mapping puts the merged pairs first
            own: set = set()
            for j, (knode, vnode) in enumerate(node.value):
                key = self.build(knode)
                if isinstance(key, (dict, list)):
                    raise ConfigError("mapping keys must be scalars", self.file, knode.start_mark.line + 1,
                                      knode.start_mark.column + 1)
                if j >= merged:  # written keys must be unique; they override merged ones (YAML merge key)
                    if key in own:
                        raise ConfigError(f"duplicate key {key!r}", self.file, knode.start_mark.line + 1,
                                          knode.start_mark.column + 1)
                    own.add(key)
                out[key] = self.build(vnode)
                out.key_pos[key] = (knode.start_mark.line + 1, knode.start_mark.column + 1)
            self._open.discard(id(node))
            return out
        if isinstance(node, yaml.SequenceNode):
            self._enter(node, line, col)
            out_l = LocatedList()
            out_l.file, out_l.line, out_l.col = self.file, line, col
            for item in node.value:
                out_l.append(self.build(item))
                out_l.item_pos.append((item.start_mark.line + 1, item.start_mark.column + 1))
            self._open.discard(id(node))
            return out_l
        # Scalars: the safe loader's resolver already tagged the node; construct with safe constructors only.
        try:
            return self._scalar.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as exc:
            raise ConfigError(f"unsupported YAML value: {exc.problem}", self.file, line, col) from None
        except Exception as exc:  # noqa: BLE001 - PyYAML's constructors raise ValueError, IndexError, KeyError,
            # AttributeError... for explicitly tagged scalars they cannot read (a timestamp that is no date, an
            # empty !!int); every one is a bad value at this position
            raise ConfigError(f"invalid YAML value {node.value!r}: {exc}", self.file, line, col) from None


#: Longest YAML text accepted (characters). Configuration files are hand-written or moderate generated maps
#: (the bundled ones are under 15 kB; a generated 747x747 city is 123 kB, 1023x1023 228 kB); PyYAML composes
#: pure-Python at about 65-300 kB/s depending on load, so this bounds the wait for any answer to a few seconds.
#: Documented in docs/formats.md.
MAX_YAML_CHARS = 400_000
#: Deepest nesting of YAML collections accepted (the formats nest at most 4 levels); deeper is refused at the
#: line and column where the limit is crossed, before Python's recursion limit is reached.
MAX_YAML_DEPTH = 100


def _depth_loader(fname: str | None) -> type:
    """A SafeLoader subclass whose composer refuses nesting deeper than :data:`MAX_YAML_DEPTH`, located."""

    class _Loader(yaml.SafeLoader):
        _depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self._depth += 1
            try:
                if self._depth > MAX_YAML_DEPTH:
                    mark = self.peek_event().start_mark
                    raise ConfigError(f"YAML nesting is too deep (more than {MAX_YAML_DEPTH} levels)", fname,
                                      mark.line + 1, mark.column + 1)
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def compose_mapping_node(self, anchor: Any) -> yaml.MappingNode:
            """PyYAML's composer, plus: a repeated text key is refused as soon as it is read (the builder
            would find it only after composing the whole file)."""
            start = self.get_event()
            tag = start.tag
            if tag is None or tag == "!":
                tag = self.resolve(yaml.MappingNode, None, start.implicit)
            node = yaml.MappingNode(tag, [], start.start_mark, None, flow_style=start.flow_style)
            if anchor is not None:
                self.anchors[anchor] = node
            seen: set[str] = set()
            while not self.check_event(yaml.MappingEndEvent):
                key = self.compose_node(node, None)
                if isinstance(key, yaml.ScalarNode) and key.tag == "tag:yaml.org,2002:str":
                    if key.value in seen:
                        raise ConfigError(f"duplicate key {key.value!r}", fname, key.start_mark.line + 1,
                                          key.start_mark.column + 1)
                    seen.add(key.value)
                node.value.append((key, self.compose_node(node, key)))
            node.end_mark = self.get_event().end_mark
            return node

    return _Loader


#: What is most likely missing when PyYAML gives up inside one of these constructs.
_MISSING = {"flow sequence": "a closing ']'", "flow mapping": "a closing '}'", "quoted scalar": "a closing quote"}


def _context_note(context: str, start: Any, problem: Any) -> str:
    """A note like `` (the flow sequence started at line 34, column 9; is a closing ']' missing?)``: where the
    construct PyYAML was reading began. The problem is often found many lines later (an unclosed ``[`` is only
    noticed at the next key that cannot be in a list), so the start is where to look."""
    what = context
    for prefix in ("while parsing ", "while scanning "):
        if what.startswith(prefix):
            what = what[len(prefix):]
    if what.startswith(("a ", "an ")):
        what = what.split(" ", 1)[1]
    where = (f"line {start.line + 1}, column {start.column + 1}" if start.line != problem.line
             else f"column {start.column + 1} of this line")
    missing = next((m for k, m in _MISSING.items() if what.endswith(k)), None)
    return f" (the {what} started at {where}" + (f"; is {missing} missing?)" if missing else ")")


def loads_yaml(text: str, file: str | Path | None = None) -> Any:
    """Parse YAML text safely, returning Located containers. Raises :class:`ConfigError` with a position."""
    fname = str(file) if file is not None else None
    if len(text) > MAX_YAML_CHARS:
        raise ConfigError(f"YAML text too long ({len(text)} characters; the limit is {MAX_YAML_CHARS})", fname, 1, 1)
    try:
        node = yaml.compose(text, Loader=_depth_loader(fname))
    except RecursionError:  # pragma: no cover - the depth limit stops nesting first
        raise ConfigError("YAML nesting is too deep", fname) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        col = mark.column + 1 if mark else None
        message = f"YAML syntax error: {exc.problem or exc.context}"
        if exc.problem and exc.context and exc.context_mark is not None and exc.problem_mark is not None:
            message += _context_note(exc.context, exc.context_mark, exc.problem_mark)
        raise ConfigError(message, fname, line, col) from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not accept: locate it from its offset
        pos = int(exc.position)
        line = text.count("\n", 0, pos) + 1
        col = pos - (text.rfind("\n", 0, pos) + 1) + 1
        raise ConfigError(f"YAML error: unacceptable character {exc.character!r}", fname, line, col) from None
    except yaml.YAMLError as exc:  # pragma: no cover - defensive
        raise ConfigError(f"YAML error: {exc}", fname) from None
    if node is None:
        return None
    builder = _Builder(fname, _distinct_nodes(node) + MAX_ALIAS_EXPANSION)
    try:
        return builder.build(node)
    except RecursionError:
        raise ConfigError("YAML nesting is too deep", fname) from None
    except yaml.MarkedYAMLError as exc:  # any other YAML problem found while building: located, never a traceback
        mark = exc.problem_mark or exc.context_mark
        raise ConfigError(f"YAML error: {exc.problem or exc.context}", fname, mark.line + 1 if mark else None,
                          mark.column + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"YAML error: {exc}", fname) from None


def load_yaml(path: str | Path) -> Any:
    """Read and safely parse a YAML file (see :func:`loads_yaml`)."""
    p = Path(path)
    text = read_text_file(p, MAX_YAML_CHARS, ConfigError, "YAML file")
    return loads_yaml(text, p)


def dump_yaml(data: Any) -> str:
    """Serialise plain data (dict/list/scalars) as block-style YAML, keeping key order."""

    def plain(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [plain(v) for v in x]
        if hasattr(x, "item") and callable(x.item):  # numpy scalar
            return x.item()
        return x

    return yaml.safe_dump(plain(data), sort_keys=False, default_flow_style=None, allow_unicode=True)


def type_word(value: Any, words: Mapping[type, str]) -> str:
    """The word of the first type in ``words`` (in its order: bool before int) that ``value`` is an instance of,
    else the type's own name; for messages about plain data."""
    for kind, word in words.items():
        if isinstance(value, kind):
            return word
    return type(value).__name__


_YAML_WORDS = {type(None): "nothing (null)", bool: "a boolean", dict: "a mapping", list: "a list", str: "text",
               int: "an integer", float: "a number"}


def yaml_type_name(value: Any) -> str:
    """The YAML word for a value's type, for messages (never our internal container class names)."""
    return type_word(value, _YAML_WORDS)


def reject_unknown_keys(container: LocatedDict, allowed: Iterable[str], where: str | None = None, *,
                        listed: str = "allowed") -> None:
    """Raise a located :class:`ConfigError` at the first key of ``container`` not in ``allowed`` (a typo in a
    config must not be silently ignored); the message lists the ``allowed`` keys in the order given."""
    allowed = tuple(allowed)
    for key in container:
        if key not in allowed:
            raise container.error(f"unknown key {key!r}" + (f" in {where}" if where else "")
                                  + f" ({listed}: {', '.join(allowed)})", key)


def check_format_header(data: LocatedDict, allowed: Iterable[str], where: str, kind: str, version: int) -> None:
    """The top of a file in one of our formats: no key outside ``allowed`` (``where``: "the city map") and its
    ``version`` (default: the current one) equal to ``version``; a located :class:`ConfigError` otherwise."""
    reject_unknown_keys(data, allowed, where)
    found = expect(data, "version", int, required=False, default=version)
    if found != version:
        raise data.error(f"unsupported {kind} format version {found} (this program reads version {version})",
                         "version")


def expect(container: LocatedDict, key: str, types: type | tuple[type, ...], *, required: bool = True,
           default: Any = None, what: str | None = None) -> Any:
    """Fetch ``container[key]`` checking its type; raise a located :class:`ConfigError` otherwise.

    ``bool`` is never accepted where ``int``/``float`` is asked for (YAML ``yes`` is not a number).
    """
    if not isinstance(container, dict):
        raise ConfigError(f"expected a mapping holding {key!r}")
    if key not in container:
        if required:
            raise container.error(f"missing required key {key!r}" + (f" in {what}" if what else ""))
        return default
    value = container[key]
    tt = types if isinstance(types, tuple) else (types,)
    numeric = any(t in (int, float) for t in tt)
    if (isinstance(value, bool) and numeric and bool not in tt) or not isinstance(value, tt):
        names = " or ".join(t.__name__ for t in tt)
        raise container.error(f"{key!r} must be {names}, got {yaml_type_name(value)} {value!r}", key)
    return value
