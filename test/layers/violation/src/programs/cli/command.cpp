// Fixture of the layer check test: a command of the CLI reaching into the HTTP layer.
#include "programs/cli/command.hpp"
#include "http/client.hpp"
