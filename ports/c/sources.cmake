# The C ABI's sources, one file per domain over c_port.h: the one list that the native
# library (ports/c/CMakeLists.txt) and the WebAssembly module (ports/wasm/CMakeLists.txt)
# both build, so a new domain file reaches both.
set(TENDON_C_SOURCES c_errors.cpp c_world.cpp c_trace.cpp c_device.cpp c_pose_streams.cpp c_chains.cpp
  c_debug_draw.cpp c_pendulums.cpp c_ragdolls.cpp c_drives.cpp c_static_world.cpp c_characters.cpp c_avatars.cpp
  c_assets.cpp c_host_bodies.cpp c_contact_events.cpp c_snapshot.cpp
  c_follow.cpp c_net_snapshot.cpp)
list(TRANSFORM TENDON_C_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
