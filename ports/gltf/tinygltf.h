// ports/gltf/tinygltf.h: how the importer includes tinygltf (Debian libtinygltf-dev, 2.7):
// no image decoding or writing (Tendon reads no textures), nlohmann-json from Debian, and
// its asserts off (tinygltf::Value::Get asserts on a type mismatch, where the importer
// relies on it answering a null value: a malformed file must be an error, never an abort).
// TINYGLTF_NO_FS: no file access of its own (its default reads through an ifstream, which
// links libc++'s iostreams); the importer hands it callbacks (gltf_import.cpp, ReadWholeFile).
#pragma once

#define TINYGLTF_NO_FS

#define TINYGLTF_NO_STB_IMAGE
#define TINYGLTF_NO_STB_IMAGE_WRITE
#define TINYGLTF_NO_EXTERNAL_IMAGE
#define TINYGLTF_USE_CPP14
#ifndef NDEBUG
#define TENDON_TINYGLTF_RESTORE_ASSERT
#define NDEBUG
#endif
#include <cassert>

#include <tiny_gltf.h>

#ifdef TENDON_TINYGLTF_RESTORE_ASSERT
#undef NDEBUG
#undef TENDON_TINYGLTF_RESTORE_ASSERT
#include <cassert>
#endif
