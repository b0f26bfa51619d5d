"""ports/python/tests/test_header.py: the header filter (tendon/_header.py) that turns
tendon_c.h into the declarations cffi's cdef and the C# generator parse.

Runs without cffi and without the library: `python3 -m unittest test_header` here.
"""
import os
import re
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tendon._header import HeaderError, read_declarations, strip_comments  # noqa: E402

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
HEADER = os.path.join(REPO, "include", "tendon", "tendon_c.h")


class HeaderFilter(unittest.TestCase):
    def write(self, files):
        """Writes {relative path: text} under a fresh include dir; returns the first's path."""
        root = tempfile.mkdtemp(prefix="tendon-header-")
        self.addCleanup(lambda: __import__("shutil").rmtree(root))
        first = None
        for relative, text in files.items():
            path = os.path.join(root, relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(textwrap.dedent(text))
            first = first or path
        return first

    def test_CommentsGoAndStringsStay(self):
        text = 'int a; // gone\n/* gone\n too */ int b; const char* s = "// kept /* kept */";\n'
        stripped = strip_comments(text)
        self.assertNotIn("gone", stripped)
        self.assertIn('"// kept /* kept */"', stripped)
        self.assertEqual(stripped.count("\n"), text.count("\n"), "a block comment keeps its newlines")

    def test_CplusplusBlocksFallAwayAndTheirElseBranchStays(self):
        path = self.write({"tendon/a.h": """\
            #ifndef GUARD_A
            #define GUARD_A
            #ifdef __cplusplus
            #include <cstdint>
            extern "C" {
            #else
            #include <stdint.h>
            #endif
            typedef struct P { int32_t x; } P;
            #ifdef __cplusplus
            }
            namespace tendon { using Q = P; }
            #endif
            #endif
            """})
        text = read_declarations(path).text
        self.assertNotIn("extern", text)
        self.assertNotIn("namespace", text)
        self.assertIn("typedef struct P { int32_t x; } P;", text)
        self.assertNotIn("#", text, "no preprocessor line is left for cdef")

    def test_AQuotedIncludeIsInlinedOnceAndASystemIncludeIsDropped(self):
        path = self.write({"tendon/top.h": """\
            #include <stddef.h>
            #include "tendon/inner.h"
            #include "tendon/inner.h"
            void f(Inner* inner);
            """, "tendon/inner.h": """\
            #pragma once
            typedef struct Inner { float v; } Inner;
            """})
        declarations = read_declarations(path)
        self.assertEqual(declarations.text.count("typedef struct Inner"), 1)
        self.assertLess(declarations.text.index("Inner {"), declarations.text.index("void f"),
                        "the included header's declarations come where it was included")
        self.assertEqual([os.path.basename(f) for f in declarations.files], ["top.h", "inner.h"])

    def test_AnEmptyExportMacroIsRemovedWhicheverPlatformBranchDefinesIt(self):
        path = self.write({"tendon/api.h": """\
            #if defined(_WIN32)
            #define API __declspec(dllexport)
            #elif defined(__GNUC__) || defined(__clang__)
            #define API __attribute__((visibility("default")))
            #else
            #define API
            #endif
            API int32_t tendon_f(void);
            int32_t tendon_api_count(void);
            """})
        text = read_declarations(path).text
        self.assertNotIn("API int32_t", text)
        self.assertIn("int32_t tendon_f(void);", text)
        self.assertIn("int32_t tendon_api_count(void);", text, "only the whole word API is removed")
        self.assertNotIn("__declspec", text)
        self.assertNotIn("visibility", text)

    def test_AnIntegerMacroBecomesADefineCffiAccepts(self):
        path = self.write({"tendon/d.h": """\
            #define THREAD 0xFFFFFFFFu
            #define COUNT (4)
            int32_t g(uint32_t worker);
            """})
        declarations = read_declarations(path)
        self.assertEqual(declarations.defines, [("THREAD", 0xFFFFFFFF), ("COUNT", 4)])
        self.assertTrue(declarations.cdef_text().startswith("#define THREAD 4294967295\n#define COUNT 4\n"))

    def test_AFunctionLikeMacroIsRefusedNamingTheFileAndLine(self):
        path = self.write({"tendon/m.h": "int a;\n#define SQUARE(x) ((x) * (x))\n"})
        with self.assertRaisesRegex(HeaderError, r"m\.h:2: #define SQUARE\(\.\.\.\) is a function-like macro"):
            read_declarations(path)

    def test_AMacroWithAnExpressionIsRefused(self):
        path = self.write({"tendon/m.h": "#define LIMIT (1 << 4)\n"})
        with self.assertRaisesRegex(HeaderError, r"m\.h:1: #define LIMIT \(1 << 4\): only empty and integer"):
            read_declarations(path)

    def test_AnUnclosedIfIsRefused(self):
        path = self.write({"tendon/u.h": "#ifdef __cplusplus\nint a;\n"})
        with self.assertRaisesRegex(HeaderError, r"u\.h: 1 #if block\(s\) not closed by #endif"):
            read_declarations(path)

    def test_AStrayEndifIsRefusedNamingTheLine(self):
        path = self.write({"tendon/e.h": "int a;\n#endif\n"})
        with self.assertRaisesRegex(HeaderError, r"e\.h:2: #endif without #if"):
            read_declarations(path)

    def test_AMissingIncludeIsRefusedNamingTheLine(self):
        path = self.write({"tendon/i.h": "\n#include \"tendon/absent.h\"\n"})
        with self.assertRaisesRegex(HeaderError, r"i\.h:2: #include \"tendon/absent.h\" is in none of"):
            read_declarations(path)

    def test_AnExternCOutsideACplusplusBlockIsRefused(self):
        path = self.write({"tendon/x.h": 'extern "C" {\nint a;\n}\n'})
        with self.assertRaisesRegex(HeaderError, r'extern "C" outside an #ifdef __cplusplus block'):
            read_declarations(path)

    def test_TheRealHeaderKeepsEveryExportedFunctionAndNoPreprocessorLine(self):
        with open(HEADER, encoding="utf-8") as handle:
            exported = set(re.findall(r"TENDON_C_API[^;(]*?\b(tendon_\w+)\s*\(", strip_comments(handle.read())))
        text = read_declarations(HEADER).text
        self.assertGreater(len(exported), 50)
        declared = set(re.findall(r"\b(tendon_\w+)\s*\(", text))
        self.assertEqual(exported - declared, set())
        self.assertNotIn("TENDON_C_API", text)
        self.assertFalse([line for line in text.splitlines() if line.lstrip().startswith("#")])
        self.assertIn("typedef struct TendonTaskHooks", text, "the included task_hooks.h is inlined")


if __name__ == "__main__":
    unittest.main()
