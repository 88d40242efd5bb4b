// Fixture of the layer check test: the client may use api and http (through api).
#include "api/endpoints.hpp"
#include "client/session.hpp"
#include "http/client.hpp"
#include "session.hpp"
