// ports/csharp/host/Program.cs: a console host of Tendon's C ABI through the generated
// P/Invoke bindings (ports/csharp/Tendon.g.cs), compiled with Mono's mcs and run by CTest.
//
// What it does: checks every struct's size and field offsets and every enum's size against
// what the C compiler laid out (the file layout_check.g.c printed: the first argument),
// then does what the Python package's test does: a world from the defaults, a refusal and
// its field, a chain whose skinning palette is its model matrices times the inverse binds,
// and, when TENDON_SHARED_DATA holds Godette, a VRM avatar loaded, bound, stepped, with
// springs that swing. Prints "N passed, N failed" and exits 1 on a failure.
//   mono tendon-host.exe layout.txt        (libtendon_c.so on LD_LIBRARY_PATH)
// What it does NOT do: stand for a Unity project (see docs/csharp.md for that).
// Threading: one thread, as Unity's main thread would call it. Memory: the buffers a
// binding names are pinned (GCHandle) until the world is destroyed, as the C ABI requires.
using System;
using System.Collections.Generic;
using System.IO;
using System.Runtime.InteropServices;
using Tendon;

static class Program {
  static int passed_ = 0;
  static int failed_ = 0;
  static readonly List<GCHandle> pinned_ = new List<GCHandle>();

  static void Check(bool condition, string what) {
    if (condition) {
      ++passed_;
    } else {
      ++failed_;
      Console.Error.WriteLine("FAILED: " + what + " (last error: " + Native.String(Native.tendon_last_error()) + ")");
    }
  }

  // Pins an array for as long as the world may read or write it (the C ABI keeps pointers).
  static IntPtr Pin(object array) {
    var handle = GCHandle.Alloc(array, GCHandleType.Pinned);
    pinned_.Add(handle);
    return handle.AddrOfPinnedObject();
  }

  static TendonTransform At(float x, float y, float z) {
    var t = Native.tendon_transform_identity();
    t.translation.x = x;
    t.translation.y = y;
    t.translation.z = z;
    return t;
  }

  // The C compiler's layout (layout_check.g.c's output) against the marshaller's.
  static void CheckLayouts(string path) {
    var assembly = typeof(Native).Assembly;
    var seen = new HashSet<string>();
    foreach (var line in File.ReadAllLines(path)) {
      var parts = line.Split(' ');
      if (parts.Length < 3) continue;
      var type = assembly.GetType("Tendon." + parts[1]);
      if (type == null) {
        Check(false, parts[0] + " " + parts[1] + " has no C# type");
        continue;
      }
      seen.Add(parts[1]);
      long size = long.Parse(parts[2]);
      if (parts[0] == "enum") {
        Check(Marshal.SizeOf(Enum.GetUnderlyingType(type)) == size, "enum " + parts[1] + " is " + size + " bytes");
        continue;
      }
      Check(Marshal.SizeOf(type) == size,
            "struct " + parts[1] + ": C# " + Marshal.SizeOf(type) + " bytes, C " + size);
      int fields = 0;
      for (int i = 3; i < parts.Length; ++i) {
        var field = parts[i].Split('=');
        ++fields;
        if (type.GetField(field[0]) == null) {
          Check(false, parts[1] + "." + field[0] + " is in C but not in C#");
          continue;
        }
        long offset = (long)Marshal.OffsetOf(type, field[0]);
        Check(offset == long.Parse(field[1]),
              parts[1] + "." + field[0] + ": C# offset " + offset + ", C " + field[1]);
      }
      Check(type.GetFields().Length == fields, parts[1] + " has as many fields in C# as in C");
    }
    foreach (var type in assembly.GetTypes()) {
      bool generated = type.Namespace == "Tendon" && !type.IsNested && (type.IsEnum || (type.IsValueType && !type.IsPrimitive));
      if (generated) Check(seen.Contains(type.Name), type.Name + " is in the C layout list");
    }
    Check(seen.Count > 40, "the layout list names " + seen.Count + " types");
  }

  static float[] Identity() {
    var m = new float[16];
    m[0] = m[5] = m[10] = m[15] = 1;
    return m;
  }

  // Column-major 4x4 product a * b.
  static float[] Multiply(float[] a, int a_at, float[] b, int b_at) {
    var m = new float[16];
    for (int column = 0; column < 4; ++column)
      for (int row = 0; row < 4; ++row) {
        float sum = 0;
        for (int k = 0; k < 4; ++k) sum += a[a_at + 4 * k + row] * b[b_at + 4 * column + k];
        m[4 * column + row] = sum;
      }
    return m;
  }

  static void Chains(IntPtr world) {
    // Four bones 0.1 m apart under a root parent at (0, 2, 0).
    var bones = new TendonChainBone[4];
    for (int i = 0; i < 4; ++i) {
      bones[i].parent = i - 1;
      bones[i].rest_local = At(0, i == 0 ? 0 : -0.1f, 0);
    }
    var settings = new TendonChainArchetypeSettings();
    Native.tendon_chain_archetype_settings_defaults(ref settings);
    settings.bones = Pin(bones);
    settings.bone_count = 4;
    ulong archetype;
    Check(Native.tendon_build_chain_archetype(world, ref settings, out archetype) == TendonResult.TENDON_OK,
          "a chain archetype");
    bones[3].parent = 9;
    ulong refused;
    Check(Native.tendon_build_chain_archetype(world, ref settings, out refused) ==
              TendonResult.TENDON_ERROR_PARENT_OUT_OF_RANGE,
          "a parent out of range is refused");
    Check(Native.String(Native.tendon_last_error_field()) == "bones[3].parent", "the refusal names the field");
    Check(Native.tendon_last_error_item() == 3, "and the item");
    bones[3].parent = 2;

    var root = new TendonTransform[] { At(0, 2, 0) };
    var model = new TendonTransform[] { At(-1, 0, 0) };
    var animated = new TendonTransform[4];
    var output = new TendonTransform[4];
    var inverse_bind = new float[64];
    for (int k = 0; k < 4; ++k) {
      animated[k] = output[k] = bones[k].rest_local;
      // The rest pose in the model frame is a translation (1, 2 - 0.1 k, 0): its inverse.
      var inverse = Identity();
      inverse[12] = -1;
      inverse[13] = -(2 - 0.1f * k);
      Array.Copy(inverse, 0, inverse_bind, 16 * k, 16);
    }
    var matrices = new float[64];
    var palette = new float[64];
    var streams = new TendonPoseStream[2];
    for (int s = 0; s < 2; ++s) {
      Native.tendon_pose_stream_defaults(ref streams[s]);
      streams[s].layout = s == 0 ? TendonPoseLayout.TENDON_POSE_MODEL_MATRIX : TendonPoseLayout.TENDON_POSE_SKINNING_MATRIX;
      streams[s].@base = Pin(s == 0 ? matrices : palette);
      streams[s].element_count = 4;
      streams[s].model_world = Pin(model);
    }
    streams[1].inverse_bind = Pin(inverse_bind);
    streams[1].inverse_bind_count = 64;
    var binding = new TendonChainBinding();
    binding.archetype = archetype;
    binding.root_parent_world = Pin(root);
    binding.animated_local = Pin(animated);
    binding.animated_count = 4;
    binding.output_local = Pin(output);
    binding.output_count = 4;
    binding.pose_streams = Pin(streams);
    binding.pose_stream_count = 2;
    ulong chain;
    Check(Native.tendon_bind_chain(world, ref binding, out chain) == TendonResult.TENDON_OK && chain != 0, "a bound chain");
    var stats = new TendonFrameStats();
    for (int frame = 0; frame < 60; ++frame) {
      // root is pinned: writing the managed array is writing what the world reads.
      root[0].translation.x = 0.4f * (float)Math.Sin(0.1 * frame);
      Native.tendon_world_step(world, 1.0f / 60, ref stats);
    }
    Check(stats.frame == 60 && stats.simulated_chains == 1, "stats come back: frame " + stats.frame);
    var nodes = new TendonVec3[4];
    Check(Native.tendon_get_chain_node_positions(world, chain, out nodes[0], 4) == TendonResult.TENDON_OK, "node positions");
    for (int k = 0; k < 4; ++k) {
      Check(Math.Abs(matrices[16 * k + 12] - (nodes[k].x + 1)) < 0.02f, "bone " + k + "'s model matrix follows its node");
      var expected = Multiply(matrices, 16 * k, inverse_bind, 16 * k);
      float worst = 0;
      for (int i = 0; i < 16; ++i) worst = Math.Max(worst, Math.Abs(expected[i] - palette[16 * k + i]));
      Check(worst < 1e-4f, "bone " + k + "'s palette entry is model matrix * inverse bind (off by " + worst + ")");
    }
    Check(Math.Abs(palette[16 * 3 + 12]) > 1e-3f, "the swung tip's palette entry is not the identity");
    Check(Native.tendon_unbind_chain(world, chain) == TendonResult.TENDON_OK, "unbind");
    Check(Native.tendon_unbind_chain(world, chain) == TendonResult.TENDON_ERROR_STALE_HANDLE, "a stale handle is refused");
  }

  static void Godette(IntPtr world) {
    string data = Environment.GetEnvironmentVariable("TENDON_SHARED_DATA") ?? "";
    string path = Path.Combine(data, "vrm/godette/Godette_vrm_v4.vrm");
    if (data == "" || !File.Exists(path)) {
      Console.WriteLine("tendon-host: ../shared/data not found (TENDON_SHARED_DATA): the Godette part is skipped");
      return;
    }
    ulong kind;
    Check(Native.tendon_load_vrm_kind(world, Native.Utf8(path), IntPtr.Zero, out kind) == TendonResult.TENDON_OK,
          "Godette by path");
    Check(Native.tendon_vrm_kind_joint_count(world, kind) == 16, "Godette's 16 spring joints");
    var bytes = File.ReadAllBytes(path);
    ulong from_memory;
    Check(Native.tendon_load_vrm_kind_from_memory(world, bytes, (UIntPtr)bytes.Length, Native.Utf8("godette.vrm"),
                                                  IntPtr.Zero, out from_memory) == TendonResult.TENDON_OK,
          "Godette from memory");
    ulong missing;
    Check(Native.tendon_load_vrm_kind(world, Native.Utf8("/nonexistent/avatar.vrm"), IntPtr.Zero, out missing) !=
              TendonResult.TENDON_OK && Native.String(Native.tendon_last_error()).Contains("avatar.vrm"),
          "a missing file is refused by name");
    ulong avatar;
    Check(Native.tendon_bind_vrm_avatar(world, kind, At(3, 0, 0), out avatar) == TendonResult.TENDON_OK, "an avatar");
    TendonVrmAvatarBuffers buffers;
    Check(Native.tendon_vrm_avatar_buffers(world, avatar, out buffers) == TendonResult.TENDON_OK &&
              buffers.bone_count == 71, "its 71-bone buffers");
    int size = Marshal.SizeOf(typeof(TendonTransform));
    for (int frame = 0; frame < 60; ++frame) {
      var model = (TendonTransform)Marshal.PtrToStructure(buffers.model_world, typeof(TendonTransform));
      model.translation.x = 3 + 0.5f * (float)Math.Sin(0.2 * frame);
      Marshal.StructureToPtr(model, buffers.model_world, false);
      Native.tendon_world_step(world, 1.0f / 60, IntPtr.Zero);
    }
    int swung = 0;
    bool finite = true;
    for (int i = 0; i < buffers.bone_count; ++i) {
      var output = (TendonTransform)Marshal.PtrToStructure(buffers.output_local + i * size, typeof(TendonTransform));
      var animated = (TendonTransform)Marshal.PtrToStructure(buffers.animated_local + i * size, typeof(TendonTransform));
      if (Math.Abs(output.rotation.x - animated.rotation.x) > 1e-4f) ++swung;
      finite &= !float.IsNaN(output.rotation.w) && !float.IsInfinity(output.translation.x);
    }
    Check(swung >= 4, "the springs swing (" + swung + " bones off the animation)");
    Check(finite, "the outputs are finite");
    GodettesPalette(world, kind);
  }

  // Godette's body skin as a skinning palette written by Step.
  static void GodettesPalette(IntPtr world, ulong kind) {
    TendonVrmSkeleton skeleton;
    Check(Native.tendon_vrm_kind_skeleton(world, kind, out skeleton) == TendonResult.TENDON_OK &&
              skeleton.bone_count == 71, "Godette's skeleton");
    var skin = new TendonVrmSkin();
    for (int index = 0; index < Native.tendon_vrm_kind_skin_count(world, kind); ++index) {
      TendonVrmSkin candidate;
      Check(Native.tendon_vrm_kind_skin(world, kind, index, out candidate) == TendonResult.TENDON_OK, "skin " + index);
      if (candidate.joint_count > skin.joint_count) skin = candidate;  // the body's: the hair is in it
    }
    int joints = skin.joint_count, bones = skeleton.bone_count;
    Check(joints > 0, "Godette has a skin");
    if (joints == 0) return;
    var joint_bone = new int[joints];
    var skin_inverse = new float[16 * joints];
    var name_pointers = new IntPtr[bones];
    Marshal.Copy(skin.joints, joint_bone, 0, joints);
    Marshal.Copy(skin.inverse_binds, skin_inverse, 0, 16 * joints);
    Marshal.Copy(skeleton.names, name_pointers, 0, bones);
    // Per bone: its palette slot (-1 when it is no joint of the skin) and inverse bind.
    var element_of_bone = new int[bones];
    var inverse_bind = new float[16 * bones];
    for (int b = 0; b < bones; ++b) {
      element_of_bone[b] = -1;
      Array.Copy(Identity(), 0, inverse_bind, 16 * b, 16);
    }
    for (int j = 0; j < joints; ++j) {
      element_of_bone[joint_bone[j]] = j;
      Array.Copy(skin_inverse, 16 * j, inverse_bind, 16 * joint_bone[j], 16);
    }
    var palette = new float[16 * joints];
    var matrices = new float[16 * joints];
    var streams = new TendonPoseStream[2];
    for (int s = 0; s < 2; ++s) {
      Native.tendon_pose_stream_defaults(ref streams[s]);
      streams[s].layout = s == 0 ? TendonPoseLayout.TENDON_POSE_SKINNING_MATRIX : TendonPoseLayout.TENDON_POSE_MODEL_MATRIX;
      streams[s].@base = Pin(s == 0 ? palette : matrices);
      streams[s].element_count = joints;
      streams[s].element_of_bone = Pin(element_of_bone);
      streams[s].element_of_bone_count = bones;
    }
    streams[0].inverse_bind = Pin(inverse_bind);
    streams[0].inverse_bind_count = 16 * bones;
    var binding = new TendonVrmAvatarBinding();
    Native.tendon_vrm_avatar_binding_defaults(ref binding);
    binding.pose_streams = Pin(streams);  // model_world NULL: the avatar's model space
    binding.pose_stream_count = 2;
    ulong avatar;
    Check(Native.tendon_bind_vrm_avatar_with(world, kind, ref binding, out avatar) == TendonResult.TENDON_OK,
          "Godette bound with a skinning palette");
    TendonVrmAvatarBuffers buffers;
    Check(Native.tendon_vrm_avatar_buffers(world, avatar, out buffers) == TendonResult.TENDON_OK, "its buffers");
    Native.tendon_world_step(world, 1.0f / 60, IntPtr.Zero);
    var before = (float[])palette.Clone();
    for (int frame = 0; frame < 60; ++frame) {
      var model = (TendonTransform)Marshal.PtrToStructure(buffers.model_world, typeof(TendonTransform));
      model.translation.x = 0.5f * (float)Math.Sin(0.2 * frame);
      Marshal.StructureToPtr(model, buffers.model_world, false);
      Native.tendon_world_step(world, 1.0f / 60, IntPtr.Zero);
    }
    bool finite = true;
    foreach (var v in palette) finite &= !float.IsNaN(v) && !float.IsInfinity(v);
    Check(finite, "the palette is finite");
    float hair_moved = 0, worst = 0;
    for (int j = 0; j < joints; ++j) {
      if (Native.String(name_pointers[joint_bone[j]]).ToLowerInvariant().Contains("hair"))
        for (int i = 0; i < 16; ++i) hair_moved = Math.Max(hair_moved, Math.Abs(palette[16 * j + i] - before[16 * j + i]));
      var expected = Multiply(matrices, 16 * j, skin_inverse, 16 * j);
      for (int i = 0; i < 16; ++i) worst = Math.Max(worst, Math.Abs(expected[i] - palette[16 * j + i]));
    }
    Check(hair_moved > 1e-3f, "the hair's palette entries move with the simulated hair (" + hair_moved + ")");
    Check(worst < 1e-3f, "every palette entry is model matrix * inverse bind (off by " + worst + ")");
    streams[0].layout = (TendonPoseLayout)7;  // pinned: the next bind reads this
    ulong refused;
    Check(Native.tendon_bind_vrm_avatar_with(world, kind, ref binding, out refused) != TendonResult.TENDON_OK &&
              Native.String(Native.tendon_last_error_field()).Contains("layout"),
          "a bad stream layout is refused by field: " + Native.String(Native.tendon_last_error_field()));
  }

  static int Main(string[] args) {
    if (args.Length != 1) {
      Console.Error.WriteLine("usage: mono tendon-host.exe LAYOUT_FILE (the output of tendon_layout_check)");
      return 2;
    }
    CheckLayouts(args[0]);
    var settings = new TendonWorldSettings();
    Native.tendon_world_settings_defaults(ref settings);
    Check(Math.Abs(settings.fixed_hz - 60) < 1e-6 && settings.max_substeps == 3, "the defaults are WorldSettings'");
    settings.frame_budget_ms = float.NaN;
    IntPtr refused;
    Check(Native.tendon_world_create(ref settings, out refused) != TendonResult.TENDON_OK, "a NaN budget is refused");
    Check(Native.String(Native.tendon_last_error_field()) == "frame_budget_ms", "the refusal names the budget");
    settings.frame_budget_ms = 0;
    settings.max_distance = float.PositiveInfinity;
    settings.render_interpolation = 0;
    IntPtr world;
    Check(Native.tendon_world_create(ref settings, out world) == TendonResult.TENDON_OK && world != IntPtr.Zero, "a world");
    Chains(world);
    Godette(world);
    Native.tendon_world_destroy(world);
    foreach (var handle in pinned_) handle.Free();
    Console.WriteLine(passed_ + " passed, " + failed_ + " failed");
    return failed_ == 0 ? 0 : 1;
  }
}
