// ports/gltf/tinygltf_impl.cpp: tinygltf's implementation, compiled once, with the same
// configuration as every includer (ports/gltf/tinygltf.h). Built without Tendon's warning
// flags: it is a Debian package's code, not ours.
#define TINYGLTF_IMPLEMENTATION
#include "ports/gltf/tinygltf.h"
