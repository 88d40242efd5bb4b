// tinker-local's tests use the temporary-directory helper every test program shares.
#pragma once

#include "support/temp_files.hpp"

namespace tinker::local::test {

using tinker::test::TempDir;

}  // namespace tinker::local::test
