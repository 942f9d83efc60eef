// The plugin loader (src/backend.cpp): a good plugin loads and its exceptions are caught as
// tilekit::Error by the program; a plugin of another interface version, or one whose runtime
// library is missing, is refused with the reason; the build's own plugin backends (cuda, hip)
// are listed whether or not they load here.
#include <gtest/gtest.h>

#include <string>

#include "plugin.hpp"
#include "tilekit/config.hpp"
#include "tilekit/tilekit.hpp"

using namespace tilekit;

TEST(Plugin, LoadsAndItsErrorsAreTilekitErrors) {
  std::string why;
  auto be = detail::load_plugin_file("fake", TILEKIT_FAKE_PLUGIN, why);
  ASSERT_NE(be, nullptr) << why;
  EXPECT_EQ(be->name(), "fake");
  EXPECT_TRUE(be->available());
  try {
    be->allocate(64);
    ADD_FAILURE() << "the fake plugin's allocate did not throw";
  } catch (const DeviceError& e) {
    EXPECT_STREQ(e.what(), "fake device: cannot allocate 64 bytes");
  }
  EXPECT_THROW(be->allocate(1), Error);
}

TEST(Plugin, RefusesAnotherInterfaceVersion) {
  std::string why;
  EXPECT_EQ(detail::load_plugin_file("fake", TILEKIT_FAKE_PLUGIN_ABI, why), nullptr);
  EXPECT_NE(why.find("built for plugin interface 999"), std::string::npos) << why;
  EXPECT_NE(why.find("rebuild the plugin"), std::string::npos) << why;
}

TEST(Plugin, MissingRuntimeGivesTheLoadersReason) {
  std::string why;
  EXPECT_EQ(detail::load_plugin_file("fake", TILEKIT_FAKE_PLUGIN_NORUNTIME, why), nullptr);
  EXPECT_NE(why.find("libtilekit_fake_runtime.so: cannot open shared object file"), std::string::npos) << why;
}

TEST(Plugin, RefusesAPluginWithAnotherName) {
  std::string why;
  EXPECT_EQ(detail::load_plugin_file("cuda", TILEKIT_FAKE_PLUGIN, why), nullptr);
  EXPECT_NE(why.find("it calls itself 'fake'"), std::string::npos) << why;
}

TEST(Plugin, NotAPlugin) {
  std::string why;
  EXPECT_EQ(detail::load_plugin_file("fake", TILEKIT_FAKE_RUNTIME_LIBRARY, why), nullptr);
  EXPECT_NE(why.find("is not a tilekit backend plugin"), std::string::npos) << why;
}

// The build's plugin backends are in the registry, loaded or not: unavailable ones say why
// and refuse work with a tilekit::Error (thrown by the plugin when it loaded: no GPU here).
TEST(Plugin, BuildPluginsAreListedWithTheirState) {
  const std::string plugins = TILEKIT_PLUGIN_BACKENDS;
  if (plugins.empty()) GTEST_SKIP() << "this build has no plugin backends";
  for (std::size_t start = 0; start < plugins.size();) {
    const std::size_t end = std::min(plugins.find(',', start), plugins.size());
    const std::string name = plugins.substr(start, end - start);
    start = end + 1;
    Backend* be = find_backend(name);
    ASSERT_NE(be, nullptr) << name;
    EXPECT_EQ(be->name(), name);
    if (!be->available()) {
      EXPECT_FALSE(be->unavailable_reason().empty()) << name;
      EXPECT_THROW(be->allocate(16), Error) << name;
      EXPECT_THROW(backend(name), Error) << name;
    }
  }
}
