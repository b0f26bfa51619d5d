"""tendon: Tendon's C ABI (include/tendon/tendon_c.h) from Python, through cffi.

What it does: reads tendon_c.h itself at import (tendon._header turns it into the plain
declarations cffi's cdef takes), so every struct, enum and function of the header is
there with no hand-written mirror, and opens libtendon_c in cffi's ABI mode (no compiler
needed). `ffi` is the cffi.FFI with the header's declarations; `lib` (loaded on first use)
has every tendon_* function and enum constant; `check(result)` turns a failed
TendonResult into a TendonError that carries the message, field and item the library
reported. Everything else is cffi's own API: `ffi.new("TendonWorldSettings*")`,
`ffi.new("TendonTransform[]", 4)`, `lib.tendon_world_step(world, 1 / 60, ffi.NULL)`.
What it does NOT do: wrap the API in classes, or own host buffers: as in C, what a
binding names (arrays made with ffi.new) must stay alive, kept in a Python variable,
until the instance is unbound.
Where things are found: the header from $TENDON_C_HEADER, else the path recorded at
`cmake --install` (tendon/_paths.py), else the source tree's include/ (this package
in ports/python). The library from $TENDON_C_LIBRARY (a file), else the recorded
install path, else the system's search (ldconfig, LD_LIBRARY_PATH) for "tendon_c".
Threading: as the C ABI (one thread at a time per world); tendon_last_error() is per
thread, so `check` must run on the thread of the failed call. Memory: cffi's.
"""
import os

import cffi

from ._header import HeaderError, read_declarations

__all__ = ["ffi", "lib", "load", "check", "TendonError", "HeaderError", "header_path", "library_path"]

_here = os.path.dirname(os.path.abspath(__file__))
try:
    from . import _paths  # written by cmake --install: where the header and library went
except ImportError:
    _paths = None


def _recorded(name):
    relative = getattr(_paths, name, None) if _paths is not None else None
    return os.path.normpath(os.path.join(_here, relative)) if relative else None


def header_path():
    """The tendon_c.h this package declares itself from."""
    env = os.environ.get("TENDON_C_HEADER")
    if env:
        return env
    recorded = _recorded("HEADER")
    if recorded and os.path.exists(recorded):
        return recorded
    return os.path.normpath(os.path.join(_here, "..", "..", "..", "include", "tendon", "tendon_c.h"))


def library_path():
    """The libtendon_c this package opens: a path, or the bare name for the system's search."""
    env = os.environ.get("TENDON_C_LIBRARY")
    if env:
        return env
    recorded = _recorded("LIBRARY")
    if recorded and os.path.exists(recorded):
        return recorded
    return "tendon_c"


def _make_ffi():
    path = header_path()
    if not os.path.exists(path):
        raise ImportError(f"tendon: the C header {path} does not exist; set TENDON_C_HEADER to tendon_c.h")
    made = cffi.FFI()
    made.cdef(read_declarations(path).cdef_text())
    return made


ffi = _make_ffi()
_lib = None


def load(path=None):
    """Opens libtendon_c (path, else library_path()) and returns its cffi library object.
    Raises OSError naming the path and how to point the package at the library."""
    global _lib
    target = path or library_path()
    try:
        opened = ffi.dlopen(target)
    except OSError as error:
        raise OSError(f"tendon: cannot open the C library '{target}' ({error}); set TENDON_C_LIBRARY to "
                      "libtendon_c.so's path, or add its directory to LD_LIBRARY_PATH") from None
    if path is None:
        _lib = opened
    return opened


def __getattr__(name):
    # `tendon.lib` opens the library on first use, so that `import tendon` works (for ffi,
    # for tools) on a machine where it is not installed yet.
    if name == "lib":
        return _lib if _lib is not None else load()
    raise AttributeError(f"module 'tendon' has no attribute '{name}'")


def _text(pointer):
    return ffi.string(pointer).decode("utf-8", "replace") if pointer != ffi.NULL else ""


class TendonError(Exception):
    """A call that returned a TendonResult other than TENDON_OK. `code` (the int),
    `name` (tendon_result_name: "parent_out_of_range"), `message`, `field` ("bones[3].parent")
    and `item` (the offending index or -1), as the library reported them."""

    def __init__(self, code, name, message, field, item):
        self.code, self.name, self.message, self.field, self.item = code, name, message, field, item
        where = f" (field {field})" if field else ""
        super().__init__(f"{name}{where}: {message}")


def check(result, library=None):
    """Returns None when result is TENDON_OK; otherwise raises TendonError with this
    thread's last error (call it right after the failing call, on the same thread)."""
    if result == 0:
        return None
    if library is None:
        library = __getattr__("lib")
    raise TendonError(int(result), _text(library.tendon_result_name(result)), _text(library.tendon_last_error()),
                      _text(library.tendon_last_error_field()), int(library.tendon_last_error_item()))
