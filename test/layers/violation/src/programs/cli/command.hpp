// Fixture of the layer check test.
#pragma once
