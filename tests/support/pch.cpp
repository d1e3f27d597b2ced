// The translation unit that builds the tests' shared precompiled headers (tests/CMakeLists.txt).
