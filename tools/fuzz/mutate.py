"""Input mutation for the loader fuzzer: text mutations that know YAML and rule files a little, byte mutations,
and structured mutations of NPZ/ZIP archives (the ``.npy`` headers and ``meta.json`` inside).

Why mutation instead of generation: the seeds are real files (configs/, a recorded episode, policy weights), so a
few edits give inputs that get deep into a loader; the edits favour what typically breaks loaders (huge or negative
numbers, deep nesting, invalid UTF-8, NUL characters, ``..`` paths, aliases, huge repeats, crafted array shapes).
Every input is a pure function of ``(seed, family, index)`` so any crash can be regenerated from its index.
"""
from __future__ import annotations

import io
import json
import random
import re
import struct
import zipfile

__all__ = ["mutate_text", "mutate_bytes", "mutate_npz", "rng_for"]

NUMBERS = ["0", "-1", "1", "-0", "2", "255", "256", "65535", "65536", "40000", "-40000", "2147483647", "2147483648",
           "-2147483649", "9223372036854775807", "9223372036854775808", "18446744073709551616", "1e308", "1e309",
           "-1e309", "1e-320", ".nan", ".inf", "-.inf", "nan", "inf", "1" * 40, "9" * 400, "7" * 5000, "0x7fffffff",
           "0o777", "1_000_000", "3.5", "-3.5", "1e3", "00012", "+5", "1:30"]
STRINGS = ["", "~", "null", "true", "false", "[]", "{}", "'", '"', "\\", "\x00", "\x00x", "../../x.yaml",
           "../" * 40 + "x", "/etc/passwd", "/dev/null", "a" * 300, "a/" * 3000, "é", "日本", "\t", "\r", "\r\n",
           "\u2028", "\ufeff", "&a x", "*a", "*nope", "<<: *a", "!!python/object/apply:os.system ['true']",
           "!!binary AAAA", "!!int", "!!float 'x'", "!!set {a, b}", "!!omap [a: 1]", "? ", "- ", ": ", "#", "%YAML 1.1",
           "---", "...", "|", ">", "@", "`", "%", "{{", "]]", "\x7f", "\x1b[31m", "Not(", ":-", "#task", "reward=",
           "#section", "Stop", "X", "_", "IsCar(X)", "project.yaml", "episodes/main.npz", "mode.yaml"]
BAD_BYTES = [b"\xff", b"\xfe\xff", b"\xc3", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80", b"\x00",
             b"\xef\xbb\xbf"]
DTYPES = ["<i8", "<i4", "<f8", "<f4", "|u1", "|b1", "|i1", ">i8", "<u8", "|O", "<U8", "|S4", "|V8", "<c16", "<M8[s]",
          "[('a', '<i4')]", "<f2", "x", "", "<i8 ", "object"]
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUM = re.compile(r"-?\d+(?:\.\d+)?")


def rng_for(seed: int, family: str, index: int) -> random.Random:
    """The random source of one input (string seeds are hashed the same way in every run)."""
    return random.Random(f"{seed}:{family}:{index}")


def _big(rng: random.Random, small: list[int], huge: list[int]) -> int:
    """A size: usually one of ``small``; one time in 40 one of ``huge`` (huge inputs are slow to reject, so they
    are kept rare enough for 10,000 inputs per family to run in minutes)."""
    return rng.choice(huge) if rng.random() < 0.025 else rng.choice(small)


def _nest(rng: random.Random) -> str:
    k = _big(rng, [8, 50, 200, 1000], [5000, 20000])
    kind = rng.randrange(4)
    if kind == 0:
        return "[" * k + "]" * k
    if kind == 1:
        return "{a: " * k + "1" + "}" * k
    if kind == 2:
        return "".join(" " * (2 * i) + "- \n" for i in range(min(k, 2000)))
    return "Not(" * k + "IsCar(X)" + ")" * k


def _aliases(rng: random.Random) -> str:
    depth = _big(rng, [2, 3, 4, 5], [8, 11])
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, depth):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def mutate_text(text: str, rng: random.Random, others: list[str], vocab: list[str]) -> str:
    """One text mutation (``others``: the other seeds, for splicing; ``vocab``: words of the format)."""
    op = rng.randrange(17)
    n = len(text)
    pos = rng.randrange(n + 1)
    if op == 0:                                   # a number becomes an interesting one
        nums = list(_NUM.finditer(text))
        if nums:
            m = rng.choice(nums)
            return text[:m.start()] + rng.choice(NUMBERS) + text[m.end():]
        return text[:pos] + rng.choice(NUMBERS) + text[pos:]
    if op == 1:                                   # a word becomes another word of the format
        words = list(_WORD.finditer(text))
        if words and vocab:
            m = rng.choice(words)
            return text[:m.start()] + rng.choice(vocab) + text[m.end():]
    if op == 2:
        return text[:pos] + rng.choice(STRINGS) + text[pos:]
    if op == 3 and n:                             # delete a span
        end = min(n, pos + rng.choice([1, 2, 5, 20, 200]))
        return text[:pos] + text[end:]
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    if op == 4:                                   # repeat a line (a list item: many items)
        return "\n".join(lines[:i] + [lines[i]] * _big(rng, [2, 3, 10, 100], [2000, 20000]) + lines[i + 1:])
    if op == 5 and len(lines) > 1:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines)
    if op == 6:
        return "\n".join(lines[:i] + lines[i + 1:])
    if op == 7:                                   # indentation
        lines[i] = (" " * rng.choice([1, 2, 4]) + lines[i]) if rng.random() < 0.6 else lines[i].lstrip()
        return "\n".join(lines)
    if op == 8:
        return text[:pos] + _nest(rng) + text[pos:]
    if op == 9:
        return _aliases(rng) + text if rng.random() < 0.5 else text[:pos] + "*a5" + text[pos:]
    if op == 10:                                  # a value after "key:" becomes an interesting scalar
        keys = list(re.finditer(r":[ \t]+([^\n,}\]]+)", text))
        if keys:
            m = rng.choice(keys)
            value = rng.choice(NUMBERS + STRINGS)
            return text[:m.start(1)] + value + text[m.end(1):]
    if op == 11 and others:                       # splice with another seed
        other = rng.choice(others)
        return text[:pos] + other[rng.randrange(len(other) + 1):]
    if op == 12:
        return text[:pos]
    if op == 13:                                  # a line repeated with growing indentation
        return "\n".join(lines[:i] + [" " * k + lines[i].lstrip() for k in range(0, 40, 2)] + lines[i + 1:])
    if op == 14:                                  # a very long token
        return text[:pos] + rng.choice(["x", "9", "é", " ", "("]) * _big(rng, [10, 300, 5000], [200_000, 2_000_000]) \
            + text[pos:]
    if op == 15:
        return text[:pos] + rng.choice(["\t", "\r", "\x00", "\x0c", "\u0085", "\ufffe"]) + text[pos:]
    return text.replace(rng.choice(vocab) if vocab else "a", rng.choice(STRINGS), 1)


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """One byte-level mutation: bit flip, interesting byte, insertion of bytes invalid in UTF-8, deletion,
    duplication, truncation or overwriting with a 1/2/4/8-byte extreme integer."""
    b = bytearray(data)
    n = len(b)
    op = rng.randrange(7)
    pos = rng.randrange(n) if n else 0
    if op == 0 and n:
        b[pos] ^= 1 << rng.randrange(8)
    elif op == 1 and n:
        b[pos] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, 0x0A, 0x22, 0x5C])
    elif op == 2:
        b[pos:pos] = rng.choice(BAD_BYTES)
    elif op == 3 and n:
        del b[pos:pos + rng.choice([1, 4, 16, 256])]
    elif op == 4 and n:
        chunk = b[pos:pos + rng.choice([4, 32, 512])]
        b[pos:pos] = chunk * rng.choice([1, 4, 64])
    elif op == 5 and n:
        del b[rng.randrange(n):]
    elif n >= 8:
        size = rng.choice([1, 2, 4, 8])
        value = rng.choice([0, -1, 2 ** (8 * size - 1) - 1, -(2 ** (8 * size - 1)), 0x7FFF, 1 << 20])
        fmt = {1: "<b", 2: "<h", 4: "<i", 8: "<q"}[size]
        value = max(min(value, 2 ** (8 * size - 1) - 1), -(2 ** (8 * size - 1)))
        pos = min(pos, n - size)
        b[pos:pos + size] = struct.pack(fmt, value)
    return bytes(b)


def _npy_parts(member: bytes) -> tuple[bytes, str, bytes] | None:
    """(magic+version, header text, data) of a ``.npy`` member, or None."""
    if len(member) < 10 or not member.startswith(b"\x93NUMPY"):
        return None
    major = member[6]
    if major == 1:
        hlen = struct.unpack("<H", member[8:10])[0]
        start = 10
    else:
        if len(member) < 12:
            return None
        hlen = struct.unpack("<I", member[8:12])[0]
        start = 12
    header = member[start:start + hlen].decode("latin-1")
    return member[:8], header, member[start + hlen:]


def _npy_join(magic: bytes, header: str, data: bytes, rng: random.Random) -> bytes:
    raw = header.encode("latin-1", "replace")
    if rng.random() < 0.85:   # usually a consistent length field, so numpy reads the crafted header
        pad = (64 - (10 + len(raw) + 1) % 64) % 64
        raw = raw.rstrip(b"\n") + b" " * pad + b"\n"
    if len(raw) < 65536 and magic[6] == 1:
        return magic + struct.pack("<H", len(raw)) + raw + data
    return magic[:6] + b"\x02\x00" + struct.pack("<I", len(raw)) + raw + data


def _mutate_header(header: str, rng: random.Random) -> str:
    op = rng.randrange(6)
    if op == 0:                                       # shapes: negative, huge, more or fewer dimensions, 0-d
        shape = rng.choice(["()", "(0,)", "(-1,)", "(-5, 3)", "(9223372036854775807,)", "(4294967296, 4294967296)",
                            "(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,"
                            " 1, 1, 1)", "(3,)", "(2, 2)", "(100000000,)", "(1" + "0" * 30 + ",)", "('a',)", "None",
                            "(3.5,)"])
        return re.sub(r"'shape': \([^)]*\)", f"'shape': {shape}", header)
    if op == 1:
        return re.sub(r"'descr': '[^']*'", f"'descr': {rng.choice(DTYPES)!r}", header)
    if op == 2:
        return header.replace("False", rng.choice(["True", "1", "None", "'x'"]))
    if op == 3:                                       # numbers inside the shape change
        nums = list(re.finditer(r"\d+", header))
        if nums:
            m = rng.choice(nums)
            return header[:m.start()] + rng.choice(NUMBERS[:20]) + header[m.end():]
    if op == 4:
        return header[:rng.randrange(len(header) + 1)]
    return header.replace("}", rng.choice([", 'extra': 1}", ", 'shape': (1,)}", "} }", "}" + "(" * 500]), 1)


def _json_leaf_mutation(value, rng: random.Random, depth: int = 0):
    """Replace one value somewhere in a JSON document by an interesting one."""
    extremes = [None, True, -1, 0, 2 ** 63, -(2 ** 63), 10 ** 400, 1e308, "x", "", [], {}, [[[[[]]]]],
                "a" * 10000, [0] * 1000, {"a": 1}, float("nan") if rng.random() < 0.1 else 1.5]
    if isinstance(value, dict) and value and depth < 6:
        key = rng.choice(sorted(value, key=str))
        out = dict(value)
        if rng.random() < 0.3:
            out[key] = rng.choice(extremes)
        elif rng.random() < 0.1:
            del out[key]
        else:
            out[key] = _json_leaf_mutation(value[key], rng, depth + 1)
        return out
    if isinstance(value, list) and value and depth < 6:
        out = list(value)
        i = rng.randrange(len(out))
        op = rng.random()
        if op < 0.2:
            del out[i]
        elif op < 0.3:
            out.append(out[i])
        else:
            out[i] = _json_leaf_mutation(out[i], rng, depth + 1)
        return out
    return rng.choice(extremes)


def _deep_json(rng: random.Random) -> str:
    k = rng.choice([100, 1000, 100000])
    return "[" * k + "]" * k if rng.random() < 0.5 else '{"a":' * k + "1" + "}" * k


def mutate_npz(data: bytes, rng: random.Random) -> bytes:
    """One structured mutation of an NPZ/ZIP archive (falls back to a byte mutation when it is no archive)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            members = [(i.filename, zf.read(i)) for i in zf.infolist()]
    except Exception:  # noqa: BLE001 - an already mutated, broken archive
        return mutate_bytes(data, rng)
    if not members or rng.random() < 0.15:
        return mutate_bytes(data, rng)
    idx = rng.randrange(len(members))
    name, body = members[idx]
    op = rng.randrange(8)
    if name.endswith(".json") and op < 4:
        try:
            doc = json.loads(body)
            if rng.random() < 0.15:
                body = _deep_json(rng).encode()
            else:
                body = json.dumps(_json_leaf_mutation(doc, rng)).encode()
        except (ValueError, RecursionError):
            body = mutate_bytes(body, rng)
    elif op < 4:
        parts = _npy_parts(body)
        if parts is not None and op < 3:
            magic, header, arr = parts
            body = _npy_join(magic, _mutate_header(header, rng), arr, rng)
        else:
            body = mutate_bytes(body, rng)
    elif op == 4:
        members.pop(idx)
        body = None
    elif op == 5:
        members.append((rng.choice([name, name + "x", "../" + name, "meta.json", "a/b.npy", name.upper()]), body))
    elif op == 6:
        body = body[: rng.randrange(len(body) + 1)]
    else:
        body = mutate_bytes(body, rng)
    if body is not None:
        members[idx] = (name, body)
    out = io.BytesIO()
    compression = zipfile.ZIP_STORED if rng.random() < 0.9 else rng.choice([zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2,
                                                                             zipfile.ZIP_LZMA])
    with zipfile.ZipFile(out, "w", compression=compression) as zf:
        for n, b in members:
            zf.writestr(n, b)
    raw = out.getvalue()
    return mutate_bytes(raw, rng) if rng.random() < 0.1 else raw
