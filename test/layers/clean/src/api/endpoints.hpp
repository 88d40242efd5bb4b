// Fixture of the layer check test.
#pragma once
#include "http/client.hpp"
