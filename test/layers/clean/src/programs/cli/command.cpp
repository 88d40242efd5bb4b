// Fixture of the layer check test: the CLI includes its own headers and public ones.
#include "programs/cli/command.hpp"
#include <tinker/rest_client.hpp>
