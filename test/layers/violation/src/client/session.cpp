// Fixture of the layer check test: the client layer may use the HTTP layer below it.
#include "http/client.hpp"
