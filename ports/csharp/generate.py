#!/usr/bin/env python3
"""ports/csharp/generate.py: C# P/Invoke bindings generated from include/tendon/tendon_c.h.

What it does: reads tendon_c.h through ports/python/tendon/_header.py (the same filter the
Python package uses), parses the declarations with pycparser, and writes
  ports/csharp/Tendon.g.cs       namespace Tendon: every struct as a
                                 [StructLayout(LayoutKind.Sequential)] struct, every enum,
                                 a delegate type per function pointer, and class Native
                                 with a [DllImport("tendon_c")] extern per function;
  ports/csharp/layout_check.g.c  a C program that prints sizeof and offsetof of every
                                 struct and enum, which the C# host compares with
                                 Marshal.SizeOf / Marshal.OffsetOf at run time.
Mapping: int32_t int, uint32_t uint, int64_t long, uint64_t ulong (the ids), float, double,
size_t UIntPtr, enums `: int`; every pointer in a struct is IntPtr (so structs stay
blittable: Unity's IL2CPP and `ref` passing need that; function pointer fields take
Marshal.GetFunctionPointerForDelegate of the generated delegate). Functions come in a
typed form (struct pointers as ref/out, `const char*` and `const void*` as byte[], opaque
handles as IntPtr) and, where they differ, one with the `const` struct inputs as IntPtr
(to pass NULL options) and a raw one with every pointer an IntPtr (to pass any NULL).
  python3 ports/csharp/generate.py           rewrites both files
  python3 ports/csharp/generate.py --check   exits 1, with a diff, when a committed file
                                             differs from what the header gives (CTest)
Fixed arrays in structs (char name[128]) are ByValArray fields (byte[] for char): such a
struct is not blittable, and the marshaller copies it in and out of each call.
What it does NOT do: handle unions, pointer or nested arrays, or bit-fields in structs, or
variadic functions: it refuses them naming the struct and field, so a header change that needs
more fails here, never silently.
Threading and memory: a script; nothing persists.
"""
import argparse
import difflib
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_repo = os.path.normpath(os.path.join(_here, "..", ".."))


def _load_header_module():
    # By path, not `import tendon`: the package's __init__ needs cffi, the generator does not.
    spec = importlib.util.spec_from_file_location("tendon_header_filter",
                                                  os.path.join(_repo, "ports", "python", "tendon", "_header.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class GeneratorError(Exception):
    """A declaration the generator cannot map: names it and why."""


# <stdint.h> and <stddef.h> as pycparser must know them (the filter drops system headers).
_STD_TYPES = {
    "int8_t": ("signed char", "sbyte"), "uint8_t": ("unsigned char", "byte"),
    "int16_t": ("short", "short"), "uint16_t": ("unsigned short", "ushort"),
    "int32_t": ("int", "int"), "uint32_t": ("unsigned int", "uint"),
    "int64_t": ("long long", "long"), "uint64_t": ("unsigned long long", "ulong"),
    "size_t": ("unsigned long", "UIntPtr"),
}
_C_BUILTINS = {
    ("float",): "float", ("double",): "double", ("int",): "int", ("unsigned", "int"): "uint",
    ("unsigned",): "uint", ("char",): "byte", ("signed", "char"): "sbyte", ("unsigned", "char"): "byte",
    ("void",): "void", ("short",): "short", ("unsigned", "short"): "ushort",
    ("long", "long"): "long", ("unsigned", "long", "long"): "ulong",
}
_CS_KEYWORDS = {"out", "ref", "in", "base", "params", "object", "string", "event", "fixed", "lock", "checked",
                "operator", "internal", "namespace", "this", "is", "as", "default", "delegate", "decimal"}


def _cs_name(name):
    return "@" + name if name in _CS_KEYWORDS else name


class _Model:
    """The header's declarations, in order: structs, opaque structs, enums, anonymous enum
    constants, typedefs of primitives and functions, functions."""

    def __init__(self, ast, defines):
        from pycparser import c_ast
        self.c_ast = c_ast
        self.items = []          # ("struct", name, fields) | ("enum", name, values) | ("consts", values)
        #                         | ("delegate", name, functype) | ("function", name, functype)
        self.structs = {}
        self.opaque = set()
        self.enums = {}
        self.aliases = {}        # typedef name -> C# primitive
        self.function_types = {}  # typedef name -> FuncDecl (typedef void TendonTaskFn(...))
        self.function_pointers = {}  # typedef name -> FuncDecl (typedef TendonVec3 (*TendonWindSampleFn)(...))
        self.constants = {}
        self.defines = defines
        for node in ast.ext:
            self._declaration(node)

    def _evaluate(self, node, where):
        c_ast = self.c_ast
        if isinstance(node, c_ast.Constant):
            return int(node.value.rstrip("uUlL"), 0)
        if isinstance(node, c_ast.ID):
            if node.name in self.constants:
                return self.constants[node.name]
            raise GeneratorError(f"{where}: '{node.name}' is not a constant declared before it")
        if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+", "~"):
            value = self._evaluate(node.expr, where)
            return {"-": -value, "+": value, "~": ~value}[node.op]
        if isinstance(node, c_ast.BinaryOp):
            left, right = self._evaluate(node.left, where), self._evaluate(node.right, where)
            operations = {"+": lambda: left + right, "-": lambda: left - right, "*": lambda: left * right,
                          "<<": lambda: left << right, ">>": lambda: left >> right, "|": lambda: left | right,
                          "&": lambda: left & right, "^": lambda: left ^ right}
            if node.op in operations:
                return operations[node.op]()
        raise GeneratorError(f"{where}: an enum value the generator cannot evaluate")

    def _enum_values(self, enum, where):
        values = []
        next_value = 0
        for enumerator in enum.values.enumerators if enum.values else []:
            value = self._evaluate(enumerator.value, f"{where}.{enumerator.name}") if enumerator.value else next_value
            self.constants[enumerator.name] = value
            values.append((enumerator.name, value))
            next_value = value + 1
        return values

    def _declaration(self, node):
        c_ast = self.c_ast
        if isinstance(node, c_ast.Typedef):
            name, inner = node.name, node.type
            if name in _STD_TYPES:
                return
            if isinstance(inner, c_ast.TypeDecl) and isinstance(inner.type, c_ast.Struct):
                struct = inner.type
                if struct.decls is None:
                    if struct.name in self.structs:
                        return
                    self.opaque.add(name)
                    return
                self._struct(name, struct)
            elif isinstance(inner, c_ast.TypeDecl) and isinstance(inner.type, c_ast.Enum):
                self.enums[name] = self._enum_values(inner.type, name)
                self.items.append(("enum", name, self.enums[name]))
            elif isinstance(inner, c_ast.TypeDecl) and isinstance(inner.type, c_ast.Union):
                raise GeneratorError(f"typedef {name}: a union, which the C# bindings do not map")
            elif isinstance(inner, c_ast.TypeDecl) and isinstance(inner.type, c_ast.IdentifierType):
                self.aliases[name] = self._primitive(inner.type.names, name)
            elif isinstance(inner, c_ast.FuncDecl):
                self.function_types[name] = inner
                self.items.append(("delegate", name, inner))
            elif isinstance(inner, c_ast.PtrDecl) and isinstance(inner.type, c_ast.FuncDecl):
                self.function_pointers[name] = inner.type
                self.items.append(("delegate", name, inner.type))
            else:
                raise GeneratorError(f"typedef {name}: a kind of typedef the generator does not map")
        elif isinstance(node, c_ast.Decl):
            if isinstance(node.type, c_ast.FuncDecl):
                self.items.append(("function", node.name, node.type))
            elif isinstance(node.type, c_ast.Enum) and node.name is None:
                values = self._enum_values(node.type, "an anonymous enum")
                self.items.append(("consts", None, values))
            elif isinstance(node.type, c_ast.Struct) and node.type.decls is None:
                return  # a forward declaration
            else:
                raise GeneratorError(f"declaration {node.name or '(anonymous)'}: not a function, enum or typedef "
                                     "(a global variable cannot be bound)")
        else:
            raise GeneratorError(f"a top-level {type(node).__name__} the generator does not map")

    def _primitive(self, names, where):
        names = tuple(n for n in names if n not in ("const", "volatile"))
        if len(names) == 1 and names[0] in _STD_TYPES:
            return _STD_TYPES[names[0]][1]
        if len(names) == 1 and names[0] in self.aliases:
            return self.aliases[names[0]]
        if names in _C_BUILTINS:
            return _C_BUILTINS[names]
        raise GeneratorError(f"{where}: the C type '{' '.join(names)}' has no C# mapping")

    def _struct(self, name, struct):
        c_ast = self.c_ast
        fields = []
        for decl in struct.decls:
            where = f"{name}.{decl.name}"
            if decl.bitsize is not None:
                raise GeneratorError(f"{where}: a bit-field, which has no portable C# layout")
            kind = decl.type
            if isinstance(kind, c_ast.ArrayDecl):
                # A fixed array (char name[128]) marshals by value: the struct is then not
                # blittable, and the marshaller copies it in and out of a call.
                if kind.dim is None or not isinstance(kind.type, c_ast.TypeDecl):
                    raise GeneratorError(f"{where}: an array field that is not one fixed-size array of values")
                count = self._evaluate(kind.dim, where)
                names, _ = _type_names(kind.type)
                element = "byte" if names and names[-1] == "char" else self.value_type(kind.type, where)
                fields.append((decl.name, f"{element}[]", ("array", count)))
                continue
            if isinstance(kind, c_ast.PtrDecl) and isinstance(kind.type, c_ast.FuncDecl):
                fields.append((decl.name, "IntPtr", ("callback", kind.type)))
            elif isinstance(kind, c_ast.PtrDecl):
                fields.append((decl.name, "IntPtr", ("pointer", self._pointee(kind))))
            elif self.function_pointer_name(kind):
                fields.append((decl.name, "IntPtr", ("callback_type", self.function_pointer_name(kind))))
            else:
                fields.append((decl.name, self.value_type(kind, where), None))
        self.structs[name] = fields
        self.items.append(("struct", name, fields))

    def _pointee(self, ptr):
        """A pointer's target as C text, for the field's comment (written here, not by
        pycparser's CGenerator, so that the output is the same whatever pycparser's version)."""
        c_ast = self.c_ast
        target = ptr.type
        stars = ""
        while isinstance(target, c_ast.PtrDecl):
            stars += "*"
            target = target.type
        if isinstance(target, c_ast.TypeDecl) and isinstance(target.type, c_ast.IdentifierType):
            quals = " ".join(target.quals or [])
            return (quals + " " if quals else "") + " ".join(target.type.names) + stars
        return "?" + stars

    def function_pointer_name(self, kind):
        """The typedef name when `kind` is a function pointer typedef (TendonWindSampleFn)."""
        c_ast = self.c_ast
        if isinstance(kind, c_ast.TypeDecl) and isinstance(kind.type, c_ast.IdentifierType):
            name = " ".join(kind.type.names)
            return name if name in self.function_pointers else None
        return None

    def value_type(self, kind, where, delegates=False):
        """The C# type of a non-pointer C type. A function pointer typedef is its delegate
        type where `delegates` (a typed function parameter), else IntPtr."""
        c_ast = self.c_ast
        if self.function_pointer_name(kind):
            return self.function_pointer_name(kind) if delegates else "IntPtr"
        if isinstance(kind, c_ast.TypeDecl):
            inner = kind.type
            if isinstance(inner, c_ast.IdentifierType):
                name = " ".join(inner.names)
                if name in self.structs or name in self.enums:
                    return name
                if name in self.opaque:
                    raise GeneratorError(f"{where}: the opaque type {name} by value")
                return self._primitive(inner.names, where)
            if isinstance(inner, (c_ast.Struct, c_ast.Enum)) and inner.name:
                return inner.name
        raise GeneratorError(f"{where}: a C type the generator does not map")


def _type_names(kind):
    """The identifier names and whether const, of a TypeDecl (for pointer targets)."""
    from pycparser import c_ast
    if isinstance(kind, c_ast.TypeDecl) and isinstance(kind.type, c_ast.IdentifierType):
        return kind.type.names, "const" in (kind.quals or [])
    return None, False


def _parameters(model, name, func, typed, inputs_as_pointers=False):
    """C# parameters of a function, as declarations ("ref TendonWorldSettings settings").
    typed: struct pointers as ref/out, strings and byte buffers as byte[], else IntPtr;
    inputs_as_pointers (with typed): `const T*` struct inputs as IntPtr, so that one can be
    NULL (the options of tendon_load_vrm_kind) while the rest stays typed."""
    from pycparser import c_ast
    params = []
    for index, param in enumerate(func.args.params if func.args else []):
        if isinstance(param, c_ast.EllipsisParam):
            raise GeneratorError(f"{name}: a variadic function cannot be bound")
        kind = param.type
        if isinstance(kind, c_ast.TypeDecl) and isinstance(kind.type, c_ast.IdentifierType) \
                and kind.type.names == ["void"] and param.name is None:
            continue  # (void)
        pname = _cs_name(param.name or f"arg{index}")
        where = f"{name}({param.name or index})"
        if isinstance(kind, c_ast.PtrDecl):
            cs = "IntPtr"
            if typed:
                cs = _typed_pointer(model, kind, param.name, where)
                if inputs_as_pointers and cs.startswith("ref "):
                    cs = "IntPtr"
            params.append(f"{cs} {pname}")
        elif isinstance(kind, c_ast.ArrayDecl):
            raise GeneratorError(f"{where}: an array parameter; declare it as a pointer")
        else:
            params.append(f"{model.value_type(kind, where, delegates=typed)} {pname}")
    return params


def _typed_pointer(model, ptr, pname, where):
    from pycparser import c_ast
    target = ptr.type
    if isinstance(target, c_ast.PtrDecl):
        inner_names, _ = _type_names(target.type)
        # T** out: a handle the call returns (tendon_world_create's TendonWorld**).
        if pname == "out" and inner_names and " ".join(inner_names) in model.opaque:
            return "out IntPtr"
        return "IntPtr"
    if isinstance(target, c_ast.FuncDecl):
        return "IntPtr"
    names, const = _type_names(target)
    if names is None:
        return "IntPtr"
    joined = " ".join(names)
    if joined in model.opaque:
        return "IntPtr"
    if joined in model.function_types:
        return joined  # TendonTaskFn*: the delegate marshals as the function's pointer
    if joined == "char" and const:
        return "byte[]"  # UTF-8, NUL-terminated: Native.Utf8(text)
    if joined == "void":
        return "byte[]" if const else "IntPtr"
    cs = model.value_type(target, where)
    if pname == "out" and not const:
        return f"out {cs}"
    return f"ref {cs}"


def _return_type(model, name, func):
    from pycparser import c_ast
    kind = func.type
    if isinstance(kind, c_ast.PtrDecl):
        return "IntPtr"
    return model.value_type(kind, f"{name}(return)")


def _delegate(model, name, func):
    params = _parameters(model, name, func, typed=False)
    return (f"  [UnmanagedFunctionPointer(CallingConvention.Cdecl)]\n"
            f"  public delegate {_return_type(model, name, func)} {name}({', '.join(params)});\n")


def render_csharp(model, header_label):
    out = []
    out.append(f"// <auto-generated>\n// Tendon.g.cs: P/Invoke bindings generated from {header_label} by\n"
               "// ports/csharp/generate.py. Do not edit: run `python3 ports/csharp/generate.py`, and commit the\n"
               "// result; CTest's Bindings.CSharpFileIsWhatTheHeaderGenerates fails when it is stale.\n"
               "// </auto-generated>\n")
    out.append("using System;\nusing System.Runtime.InteropServices;\n\nnamespace Tendon {\n")
    for kind, name, payload in model.items:
        if kind == "enum":
            base = "int" if all(-2**31 <= v < 2**31 for _, v in payload) else "uint"
            out.append(f"  public enum {name} : {base} {{\n")
            out.extend(f"    {value_name} = {value},\n" for value_name, value in payload)
            out.append("  }\n\n")
        elif kind == "struct":
            out.append(f"  [StructLayout(LayoutKind.Sequential)]\n  public struct {name} {{\n")
            for field, cs, extra in payload:
                if extra and extra[0] == "callback":
                    delegate_name = f"{field}_fn"
                    params = _parameters(model, f"{name}.{field}", extra[1], typed=False)
                    out.append(f"    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]\n"
                               f"    public delegate {_return_type(model, name, extra[1])} {delegate_name}"
                               f"({', '.join(params)});\n")
                    out.append(f"    public IntPtr {_cs_name(field)};  // {delegate_name}: "
                               "Marshal.GetFunctionPointerForDelegate\n")
                elif extra and extra[0] == "array":
                    out.append(f"    [MarshalAs(UnmanagedType.ByValArray, SizeConst = {extra[1]})]\n"
                               f"    public {cs} {_cs_name(field)};\n")
                elif extra and extra[0] == "callback_type":
                    out.append(f"    public IntPtr {_cs_name(field)};  // {extra[1]}: "
                               "Marshal.GetFunctionPointerForDelegate\n")
                elif extra and extra[0] == "pointer":
                    out.append(f"    public IntPtr {_cs_name(field)};  // {extra[1]}*\n")
                else:
                    out.append(f"    public {cs} {_cs_name(field)};\n")
            out.append("  }\n\n")
        elif kind == "delegate":
            out.append(_delegate(model, name, payload) + "\n")
    # iOS and WebGL link native plugins statically: P/Invoke names the executable itself.
    out.append("  public static class Native {\n"
               "#if (UNITY_IOS || UNITY_WEBGL) && !UNITY_EDITOR\n"
               "    public const string Library = \"__Internal\";\n"
               "#else\n"
               "    public const string Library = \"tendon_c\";  // libtendon_c.so, tendon_c.dll, libtendon_c.dylib\n"
               "#endif\n\n")
    for name, value in model.defines:
        out.append(f"    public const {'uint' if value >= 2**31 else 'int'} {name} = {value};\n")
    for kind, name, payload in model.items:
        if kind == "consts":
            for value_name, value in payload:
                out.append(f"    public const {'uint' if value >= 2**31 else 'int'} {value_name} = {value};\n")
    out.append("\n")
    for kind, name, payload in model.items:
        if kind != "function":
            continue
        returns = _return_type(model, name, payload)
        variants = []
        for params in (_parameters(model, name, payload, typed=True),
                       _parameters(model, name, payload, typed=True, inputs_as_pointers=True),
                       _parameters(model, name, payload, typed=False)):
            signature = [p.rsplit(" ", 1)[0] for p in params]
            if signature not in [[p.rsplit(" ", 1)[0] for p in v] for v in variants]:
                variants.append(params)
        for params in variants:
            out.append(f"    [DllImport(Library, CallingConvention = CallingConvention.Cdecl, EntryPoint = \"{name}\")]\n"
                       f"    public static extern {returns} {name}({', '.join(params)});\n")
    out.append(
        "\n    // A const char* argument: the text as UTF-8 with its terminating NUL.\n"
        "    public static byte[] Utf8(string text) {\n"
        "      if (text == null) return null;\n"
        "      var bytes = new byte[System.Text.Encoding.UTF8.GetByteCount(text) + 1];\n"
        "      System.Text.Encoding.UTF8.GetBytes(text, 0, text.Length, bytes, 0);\n"
        "      return bytes;\n    }\n\n"
        "    // A const char* result (tendon_last_error, tendon_result_name...) as a string.\n"
        "    public static string String(IntPtr text) {\n"
        "      if (text == IntPtr.Zero) return \"\";\n"
        "      int length = 0;\n"
        "      while (Marshal.ReadByte(text, length) != 0) ++length;\n"
        "      var bytes = new byte[length];\n"
        "      Marshal.Copy(text, bytes, 0, length);\n"
        "      return System.Text.Encoding.UTF8.GetString(bytes);\n    }\n\n"
        "    // A fixed char array field (NUL-terminated UTF-8) as a string.\n"
        "    public static string String(byte[] text) {\n"
        "      if (text == null) return \"\";\n"
        "      int length = Array.IndexOf(text, (byte)0);\n"
        "      return System.Text.Encoding.UTF8.GetString(text, 0, length < 0 ? text.Length : length);\n"
        "    }\n  }\n}\n")
    return "".join(out)


def render_layout_c(model, header_label):
    out = [f"/* layout_check.g.c: generated from {header_label} by ports/csharp/generate.py; do not edit.\n"
           " * Prints each struct's size and field offsets and each enum's size, as this C compiler lays\n"
           " * them out, one line each (\"struct NAME SIZE FIELD=OFFSET ...\", \"enum NAME SIZE\"): the C# host\n"
           " * compares them with Marshal.SizeOf and Marshal.OffsetOf. */\n",
           "#include <stddef.h>\n#include <stdio.h>\n\n#include \"tendon/tendon_c.h\"\n\nint main(void) {\n"]
    for kind, name, payload in model.items:
        if kind == "struct":
            out.append(f"  printf(\"struct {name} %zu\", sizeof({name}));\n")
            out.extend(f"  printf(\" {field}=%zu\", offsetof({name}, {field}));\n" for field, _, _ in payload)
            out.append("  printf(\"\\n\");\n")
        elif kind == "enum":
            out.append(f"  printf(\"enum {name} %zu\\n\", sizeof({name}));\n")
    out.append("  return 0;\n}\n")
    return "".join(out)


def generate(header):
    """(Tendon.g.cs text, layout_check.g.c text) for the header at `header`."""
    from pycparser import c_parser
    header_filter = _load_header_module()
    declarations = header_filter.read_declarations(header)
    prelude = "".join(f"typedef {c} {name};\n" for name, (c, _) in _STD_TYPES.items())
    try:
        ast = c_parser.CParser().parse(prelude + declarations.text, filename=os.path.basename(header))
    except Exception as error:  # pycparser's ParseError, with the line of the filtered text
        raise GeneratorError(f"{header}: pycparser cannot parse the filtered declarations: {error}") from None
    model = _Model(ast, declarations.defines)
    label = os.path.relpath(header, _repo) if header.startswith(_repo) else os.path.basename(header)
    label = label.replace(os.sep, "/")
    return render_csharp(model, label), render_layout_c(model, label)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--header", default=os.path.join(_repo, "include", "tendon", "tendon_c.h"))
    parser.add_argument("--out-dir", default=_here, help="where Tendon.g.cs and layout_check.g.c are")
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on a difference")
    args = parser.parse_args(argv)
    try:
        import pycparser  # noqa: F401
    except ImportError:
        print("generate.py: skipped: pycparser is not installed (Debian: apt-get install python3-pycparser)")
        return 77
    try:
        outputs = dict(zip(("Tendon.g.cs", "layout_check.g.c"), generate(os.path.abspath(args.header))))
    except Exception as error:
        print(f"generate.py: {error}", file=sys.stderr)
        return 2
    stale = []
    for file_name, text in outputs.items():
        path = os.path.join(args.out_dir, file_name)
        if args.check:
            try:
                with open(path, encoding="utf-8") as handle:
                    committed = handle.read()
            except OSError:
                committed = ""
            if committed != text:
                stale.append(path)
                diff = difflib.unified_diff(committed.splitlines(True), text.splitlines(True),
                                            f"{file_name} (committed)", f"{file_name} (from the header)")
                sys.stderr.writelines(list(diff)[:60])
        else:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
    if stale:
        print(f"generate.py: {', '.join(stale)} differ(s) from what {args.header} gives: run "
              "`python3 ports/csharp/generate.py` and commit the result", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
