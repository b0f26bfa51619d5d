// A public header that no layer owns: tests/layering.cmake must refuse it.
#pragma once
