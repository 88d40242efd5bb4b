// Fixture of the layer check test: the client may use api and http (through api).
#include "client/session.hpp"
#include "api/endpoints.hpp"
#include "http/client.hpp"
#include "session.hpp"
