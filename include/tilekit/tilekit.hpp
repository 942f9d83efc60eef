// Umbrella header: everything a user of tilekit needs.
#pragma once

#include "tilekit/backend.hpp"
#include "tilekit/gemm_host.hpp"
#include "tilekit/matrix.hpp"
#include "tilekit/ops.hpp"
#include "tilekit/types.hpp"
#include "tilekit/version.hpp"
