// The classic heuristics: random, first-fit, best-fit, spread (worst-fit), dot-product
// (Tetris alignment) and GPU packing. Each is a few lines; they are baselines for FGD.
#pragma once

#include <cstdint>

#include "libs/sched/policy.h"

namespace gpuaas::sched {

PolicyPtr MakeRandomPolicy(uint64_t seed);
PolicyPtr MakeFirstFitPolicy();
PolicyPtr MakeBestFitPolicy();
PolicyPtr MakeSpreadPolicy();
PolicyPtr MakeDotProductPolicy();
PolicyPtr MakeGpuPackingPolicy();

}  // namespace gpuaas::sched
