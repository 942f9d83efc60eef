// Stands for a GPU runtime (libcudart) in plugin_test.cpp: fake_plugin.cpp built with
// FAKE_NEEDS_RUNTIME links it, and the loader is not told where it is.
extern "C" int tilekit_fake_runtime_version() { return 1; }
