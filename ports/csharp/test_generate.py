"""ports/csharp/test_generate.py: the C# generator on small headers (each construct of
tendon_c.h's style, and what it must refuse) and its --check mode on a stale file.

    python3 ports/csharp/test_generate.py      exits 77 (skipped) without pycparser
"""
import io
import os
import shutil
import sys
import tempfile
import textwrap
import unittest
from contextlib import redirect_stderr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402

try:
    import pycparser  # noqa: F401
    SKIP = None
except ImportError:
    SKIP = "pycparser is not installed (Debian: apt-get install python3-pycparser)"


@unittest.skipIf(SKIP is not None, SKIP or "")
class Generator(unittest.TestCase):
    def header(self, text):
        root = tempfile.mkdtemp(prefix="tendon-generate-")
        self.addCleanup(shutil.rmtree, root)
        os.makedirs(os.path.join(root, "tendon"))
        path = os.path.join(root, "tendon", "t.h")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(textwrap.dedent(text))
        return path

    def generated(self, text):
        return generate.generate(self.header(text))

    def test_AStructIsSequentialWithPointersAsIntPtrAndIdsAsUlong(self):
        cs, layout = self.generated("""\
            #include <stdint.h>
            typedef uint64_t TId;
            typedef struct TVec { float x, y, z; } TVec;
            typedef struct TBinding {
              TId archetype;
              const TVec* points;
              int32_t point_count;
              double time;
              size_t bytes;
            } TBinding;
            """)
        self.assertIn("[StructLayout(LayoutKind.Sequential)]\n  public struct TVec {\n"
                      "    public float x;\n    public float y;\n    public float z;\n  }", cs)
        self.assertIn("    public ulong archetype;\n    public IntPtr points;  // const TVec*\n"
                      "    public int point_count;\n    public double time;\n    public UIntPtr bytes;\n", cs)
        self.assertIn('printf(" points=%zu", offsetof(TBinding, points));', layout)
        self.assertIn('printf("struct TBinding %zu", sizeof(TBinding));', layout)

    def test_EnumsGetTheirEvaluatedValuesAndAnonymousOnesBecomeConstants(self):
        cs, layout = self.generated("""\
            typedef enum TKind { T_A = 0, T_B, T_C = 5, T_D } TKind;
            enum { T_BIT0 = 1u << 0, T_BIT5 = 1u << 5, T_BOTH = T_BIT0 | T_BIT5 };
            #define T_THREAD 0xFFFFFFFFu
            """)
        self.assertIn("public enum TKind : int {\n    T_A = 0,\n    T_B = 1,\n    T_C = 5,\n    T_D = 6,\n  }", cs)
        self.assertIn("public const int T_BOTH = 33;", cs)
        self.assertIn("public const uint T_THREAD = 4294967295;", cs)
        self.assertIn('printf("enum TKind %zu\\n", sizeof(TKind));', layout)

    def test_FunctionPointersGetDelegatesAndStayIntPtrFields(self):
        cs, _ = self.generated("""\
            #include <stdint.h>
            typedef void TTaskFn(int32_t begin, int32_t end, void* context);
            typedef struct THooks {
              void* (*enqueue)(TTaskFn* task, int32_t count, void* user);
              void* user;
            } THooks;
            """)
        self.assertIn("public delegate void TTaskFn(int begin, int end, IntPtr context);", cs)
        self.assertIn("public delegate IntPtr enqueue_fn(IntPtr task, int count, IntPtr user);", cs)
        self.assertIn("public IntPtr enqueue;  // enqueue_fn: Marshal.GetFunctionPointerForDelegate", cs)

    def test_AFunctionPointerTypedefIsADelegateParameterAndAnIntPtrField(self):
        cs, _ = self.generated("""\
            #include <stdint.h>
            typedef struct TWorld TWorld;
            typedef struct TVec { float x, y, z; } TVec;
            typedef TVec (*TSampleFn)(double time, void* user);
            typedef struct TSampler { TSampleFn sample; void* user; } TSampler;
            int32_t t_set_sampler(TWorld* world, TSampleFn sample, void* user);
            """)
        self.assertIn("public delegate TVec TSampleFn(double time, IntPtr user);", cs)
        self.assertIn("public IntPtr sample;  // TSampleFn: Marshal.GetFunctionPointerForDelegate", cs)
        self.assertIn("public static extern int t_set_sampler(IntPtr world, TSampleFn sample, IntPtr user);", cs)
        self.assertIn("public static extern int t_set_sampler(IntPtr world, IntPtr sample, IntPtr user);", cs)

    def test_FunctionsComeTypedWithNullableAndRawOverloads(self):
        cs, _ = self.generated("""\
            #include <stdint.h>
            typedef struct TWorld TWorld;
            typedef struct TOptions { int32_t flag; } TOptions;
            typedef enum TResult { T_OK = 0 } TResult;
            TResult t_load(TWorld* world, const char* path, const TOptions* options, uint64_t* out);
            TResult t_create(TWorld** out);
            TOptions t_defaults(void);
            const char* t_error(void);
            """)
        extern = [line.strip() for line in cs.splitlines() if "static extern" in line]
        self.assertIn("public static extern TResult t_load(IntPtr world, byte[] path, ref TOptions options, "
                      "out ulong @out);", extern)
        self.assertIn("public static extern TResult t_load(IntPtr world, byte[] path, IntPtr options, "
                      "out ulong @out);", extern)
        self.assertIn("public static extern TResult t_load(IntPtr world, IntPtr path, IntPtr options, "
                      "IntPtr @out);", extern)
        self.assertIn("public static extern TResult t_create(out IntPtr @out);", extern)
        self.assertIn("public static extern TOptions t_defaults();", extern)
        self.assertIn("public static extern IntPtr t_error();", extern)
        self.assertEqual(len([e for e in extern if " t_load(" in e]), 3)
        self.assertIn('[DllImport(Library, CallingConvention = CallingConvention.Cdecl, EntryPoint = "t_load")]', cs)

    def test_AFixedArrayFieldMarshalsByValueAndCharsAreBytes(self):
        cs, layout = self.generated("""\
            #include <stdint.h>
            enum { T_NAME_SIZE = 16 };
            typedef struct TInfo { char name[T_NAME_SIZE]; float weights[4]; int32_t bone; } TInfo;
            """)
        self.assertIn("    [MarshalAs(UnmanagedType.ByValArray, SizeConst = 16)]\n    public byte[] name;\n"
                      "    [MarshalAs(UnmanagedType.ByValArray, SizeConst = 4)]\n    public float[] weights;\n"
                      "    public int bone;\n", cs)
        self.assertIn('printf(" weights=%zu", offsetof(TInfo, weights));', layout)

    def test_AnArrayOfPointersOrOfArraysIsRefusedNamingTheField(self):
        with self.assertRaisesRegex(generate.GeneratorError, r"TBad\.names: an array field that is not one"):
            self.generated("typedef struct TBad { const char* names[4]; } TBad;\n")
        with self.assertRaisesRegex(generate.GeneratorError, r"TBad\.grid: an array field that is not one"):
            self.generated("typedef struct TBad { float grid[4][4]; } TBad;\n")

    def test_AUnionIsRefused(self):
        with self.assertRaisesRegex(generate.GeneratorError, r"typedef TU: a union"):
            self.generated("typedef union TU { float f; int i; } TU;\n")

    def test_ABitFieldIsRefusedNamingTheField(self):
        with self.assertRaisesRegex(generate.GeneratorError, r"TB\.flag: a bit-field"):
            self.generated("typedef struct TB { unsigned int flag : 1; } TB;\n")

    def test_AVariadicFunctionIsRefused(self):
        with self.assertRaisesRegex(generate.GeneratorError, r"t_log: a variadic function"):
            self.generated("void t_log(const char* format, ...);\n")

    def test_CheckFailsWithADiffWhenTheCommittedFileIsStale(self):
        header = self.header("""\
            #include <stdint.h>
            typedef struct TVec { float x, y; } TVec;
            void t_f(TVec v);
            """)
        out_dir = tempfile.mkdtemp(prefix="tendon-generate-out-")
        self.addCleanup(shutil.rmtree, out_dir)
        self.assertEqual(generate.main(["--header", header, "--out-dir", out_dir]), 0)
        self.assertEqual(generate.main(["--header", header, "--out-dir", out_dir, "--check"]), 0)
        with open(header, "a", encoding="utf-8") as handle:
            handle.write("void t_g(int32_t count);\n")  # the header gains a function
        errors = io.StringIO()
        with redirect_stderr(errors):
            self.assertEqual(generate.main(["--header", header, "--out-dir", out_dir, "--check"]), 1)
        self.assertIn("+    public static extern void t_g(int count);", errors.getvalue())
        self.assertIn("Tendon.g.cs differ(s) from what", errors.getvalue())


if __name__ == "__main__":
    if SKIP is not None:
        print(f"test_generate: skipped: {SKIP}")
        sys.exit(77)
    unittest.main(verbosity=2)
