"""tendon/_header.py: tendon_c.h as plain C declarations, for cffi's cdef and the C# generator.

What it does: reads include/tendon/tendon_c.h and the Tendon headers it includes, and
returns the declarations a C compiler would see from a C (not C++) host on a platform
that defines no macro of its own: comments removed, `#include "tendon/..."` inlined once
each, `#if`/`#ifdef` blocks evaluated (`__cplusplus`, `_WIN32`, `__GNUC__` are undefined,
so `extern "C" {` and the C++ aliases fall away), object-like macros that expand to
nothing (TENDON_C_API) removed from the text, and integer macros (TENDON_CALLER_THREAD)
returned as (name, value) pairs. cffi's cdef and pycparser take no preprocessor line,
which is why this exists; it runs at import, so the bindings follow the header itself.
What it does NOT do: expand function-like macros or macros with other values (it refuses
them by name, so a header change that needs more is loud, not silently wrong), or read
system headers (<stdint.h> types are known to cffi; the C# generator declares them).
Threading: pure functions. Memory: the header text, a few tens of kilobytes.
"""
import os
import re

__all__ = ["HeaderError", "Declarations", "read_declarations", "strip_comments"]


class HeaderError(Exception):
    """The header uses something the filter does not handle: names the file, line and why."""


class Declarations:
    """What read_declarations found: `text` (C declarations, no preprocessor line) and
    `defines` (integer macros, in header order, as (name, int) pairs)."""

    def __init__(self, text, defines, files):
        self.text = text
        self.defines = defines
        self.files = files  # every header read, the top one first

    def cdef_text(self):
        """The declarations plus the integer macros as `#define NAME value` lines, the one
        preprocessor form cffi's cdef accepts (it exposes them as lib.NAME)."""
        defines = "".join(f"#define {name} {value}\n" for name, value in self.defines)
        return defines + self.text


_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_INT_LITERAL = re.compile(r"^\(?\s*(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*\s*\)?$")
_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)\s*(.*?)\s*$")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")


def strip_comments(text):
    """Replaces each comment with one space (a block comment keeps its newlines, so line
    numbers stay right); string and character literals are left alone."""

    def replace(match):
        token = match.group(0)
        if token.startswith("//"):
            return " "
        if token.startswith("/*"):
            return " " + "\n" * token.count("\n")
        return token

    return _COMMENT_OR_STRING.sub(replace, text)


def _join_continuations(text):
    return re.sub(r"\\\n", " ", text)


class _Condition:
    """A #if expression over `defined(NAME)`, `defined NAME`, integer literals, names (0
    when not an integer macro), !, &&, ||, ==, !=, parentheses: what headers' guards use."""

    _TOKEN = re.compile(r"\s*(defined|[A-Za-z_]\w*|0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|&&|\|\||==|!=|!|\(|\))")

    def __init__(self, expression, macros, where):
        self.tokens = []
        position = 0
        expression = expression.strip()
        while position < len(expression):
            match = self._TOKEN.match(expression, position)
            if not match:
                raise HeaderError(f"{where}: #if expression '{expression}' has a token the filter cannot evaluate "
                                  f"at '{expression[position:]}'")
            self.tokens.append(match.group(1))
            position = match.end()
        self.macros = macros
        self.where = where
        self.expression = expression
        self.index = 0

    def evaluate(self):
        value = self._or()
        if self.index != len(self.tokens):
            raise HeaderError(f"{self.where}: cannot evaluate #if expression '{self.expression}'")
        return value

    def _peek(self):
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def _take(self, expected=None):
        token = self._peek()
        if token is None or (expected is not None and token != expected):
            raise HeaderError(f"{self.where}: cannot evaluate #if expression '{self.expression}' "
                              f"(expected {expected or 'a term'})")
        self.index += 1
        return token

    def _or(self):
        value = self._and()
        while self._peek() == "||":
            self._take()
            right = self._and()
            value = 1 if (value or right) else 0
        return value

    def _and(self):
        value = self._equality()
        while self._peek() == "&&":
            self._take()
            right = self._equality()
            value = 1 if (value and right) else 0
        return value

    def _equality(self):
        value = self._unary()
        while self._peek() in ("==", "!="):
            operator = self._take()
            right = self._unary()
            value = 1 if ((value == right) == (operator == "==")) else 0
        return value

    def _unary(self):
        token = self._take()
        if token == "!":
            return 0 if self._unary() else 1
        if token == "(":
            value = self._or()
            self._take(")")
            return value
        if token == "defined":
            if self._peek() == "(":
                self._take("(")
                name = self._take()
                self._take(")")
            else:
                name = self._take()
            return 1 if name in self.macros else 0
        if token[0].isdigit():
            return int(token.rstrip("uUlL"), 0)
        if _IDENT.match(token):
            value = self.macros.get(token)
            return value if isinstance(value, int) else 0
        raise HeaderError(f"{self.where}: cannot evaluate #if expression '{self.expression}'")


def read_declarations(header_path, include_dirs=None):
    """The declarations of `header_path` (tendon_c.h) as a C host on no particular platform
    sees them. `include_dirs` are searched for `#include "..."` (default: the directory above
    the header's own `tendon/`, then the header's directory). Raises HeaderError naming the
    file and line of anything it cannot handle."""
    header_path = os.path.abspath(header_path)
    if include_dirs is None:
        here = os.path.dirname(header_path)
        include_dirs = [os.path.dirname(here), here]
    macros = {}  # name -> int value, or "" for an empty expansion
    defines = []
    included = []
    out = []

    def read_file(path):
        if path in included:
            return  # #pragma once, or its include guard: each header once
        included.append(path)
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as error:
            raise HeaderError(f"{path}: cannot be read ({error.strerror})") from None
        lines = _join_continuations(strip_comments(text)).split("\n")
        # Each entry: [taking this branch now, some branch already taken, the parent takes lines]
        stack = []
        for number, line in enumerate(lines, 1):
            where = f"{path}:{number}"
            active = all(frame[0] for frame in stack)
            directive = _DIRECTIVE.match(line)
            if directive is None:
                if active and line.strip():
                    out.append(line)
                continue
            keyword, rest = directive.group(1), directive.group(2)
            if keyword in ("if", "ifdef", "ifndef"):
                if keyword == "ifdef":
                    value = rest in macros
                elif keyword == "ifndef":
                    value = rest not in macros
                else:
                    value = bool(_Condition(rest, macros, where).evaluate()) if active else False
                stack.append([active and value, value, active])
            elif keyword in ("elif", "else"):
                if not stack:
                    raise HeaderError(f"{where}: #{keyword} without #if")
                frame = stack[-1]
                if frame[1]:
                    frame[0] = False
                else:
                    value = True if keyword == "else" else bool(_Condition(rest, macros, where).evaluate())
                    frame[0] = frame[2] and value
                    frame[1] = value
            elif keyword == "endif":
                if not stack:
                    raise HeaderError(f"{where}: #endif without #if")
                stack.pop()
            elif not active:
                continue
            elif keyword == "include":
                quoted = re.match(r'^"([^"]+)"$', rest)
                if quoted is None:
                    continue  # <stddef.h>, <stdint.h>: the consumer knows these types
                for directory in include_dirs:
                    candidate = os.path.join(directory, quoted.group(1))
                    if os.path.exists(candidate):
                        read_file(os.path.abspath(candidate))
                        break
                else:
                    raise HeaderError(f"{where}: #include \"{quoted.group(1)}\" is in none of {include_dirs}")
            elif keyword == "define":
                parts = re.match(r"^([A-Za-z_]\w*)(\(?)\s*(.*)$", rest)
                if parts is None:
                    raise HeaderError(f"{where}: cannot read #define {rest}")
                name, function_like, value = parts.group(1), parts.group(2), parts.group(3).strip()
                if function_like:
                    raise HeaderError(f"{where}: #define {name}(...) is a function-like macro, which the "
                                      "bindings cannot follow; declare a function or a constant instead")
                if value == "":
                    macros[name] = ""
                elif _INT_LITERAL.match(value):
                    number = int(_INT_LITERAL.match(value).group(1), 0)
                    macros[name] = number
                    defines.append((name, number))
                else:
                    raise HeaderError(f"{where}: #define {name} {value}: only empty and integer macros can be "
                                      "carried into the bindings")
            elif keyword in ("pragma", "error", "warning", "undef", "line"):
                if keyword == "undef":
                    macros.pop(rest, None)
                continue
            else:
                raise HeaderError(f"{where}: unknown directive #{keyword}")
        if stack:
            raise HeaderError(f"{path}: {len(stack)} #if block(s) not closed by #endif")

    read_file(header_path)
    text = "\n".join(out)
    # What the C++ branches leave behind when they fall away: nothing, if the header is
    # balanced; an `extern "C"` seen here means a C++-only line outside a __cplusplus block.
    if 'extern "C"' in text:
        raise HeaderError(f"{header_path}: extern \"C\" outside an #ifdef __cplusplus block")
    for name, value in macros.items():
        if value == "":
            text = re.sub(rf"\b{re.escape(name)}\b", "", text)
    for name, value in macros.items():
        if isinstance(value, int):
            text = re.sub(rf"\b{re.escape(name)}\b", str(value), text)
    return Declarations(text + "\n", defines, included)
