// The lane forms of the K-quant scale searches (model/kquant_search.h) against the scalar references: every
// lane must give the scalar call's bits (levels, scale, min), on Gaussian groups of several magnitudes and
// on the early-exit and edge cases (all equal, all zero, all positive, one outlier, tiny values), mixed
// across lanes so that an early-exit lane sits next to searching ones.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "model/kquant_search.h"

namespace qc::kquant {
namespace {

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// One group of n values of case `kind` (see the file comment).
std::vector<float> group(std::mt19937& rng, int n, int kind) {
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> g(static_cast<size_t>(n));
  const float scale = std::pow(10.f, static_cast<float>(static_cast<int>(rng() % 9)) - 4.f);
  for (float& v : g) v = normal(rng) * scale;
  switch (kind % 8) {
    case 0:  // all equal, negative (make_qkx2_quants' max == min exit)
      for (float& v : g) v = -0.25f;
      break;
    case 1:  // all zero (both exits)
      for (float& v : g) v = 0.f;
      break;
    case 2:  // all positive
      for (float& v : g) v = std::fabs(v) + scale;
      break;
    case 3:  // one outlier
      g[rng() % g.size()] = 50.f * scale;
      break;
    case 4:  // below GROUP_MAX_EPS
      for (float& v : g) v *= 1e-17f;
      break;
    case 5:  // few distinct values
      for (float& v : g) v = static_cast<float>(static_cast<int>(rng() % 3)) * scale;
      break;
    default:  // Gaussian
      break;
  }
  return g;
}

TEST(KQuantSearch, Qkx2LanesGiveTheScalarBitsInEveryLane) {
  struct Params {
    int nmax;
    float rmin, rdelta;
    int nstep;
  };
  const Params params[] = {{15, -1.f, 0.1f, 20}, {31, -0.5f, 0.1f, 15}};  // Q4_K, Q5_K
  std::mt19937 rng(7);
  const int n = 32;
  for (const Params& p : params) {
    for (int trial = 0; trial < 3000; ++trial) {
      std::vector<float> x(n * kSearchLanes), w(n * kSearchLanes);
      std::vector<std::vector<float>> groups, weights;
      for (int k = 0; k < kSearchLanes; ++k) {
        // a quarter of the trials mixes edge cases into the lanes; the rest are Gaussian
        groups.push_back(group(rng, n, trial % 4 == 0 ? static_cast<int>(rng() % 8) : 7));
        std::vector<float> wk(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) wk[i] = 0.1f + std::fabs(groups[k][i]);
        weights.push_back(wk);
        for (int i = 0; i < n; ++i) {
          x[i * kSearchLanes + k] = groups[k][i];
          w[i * kSearchLanes + k] = wk[i];
        }
      }
      std::vector<uint8_t> L(n * kSearchLanes);
      float scale[kSearchLanes], the_min[kSearchLanes];
      make_qkx2_quants_lanes(n, p.nmax, x.data(), w.data(), L.data(), scale, the_min, p.rmin, p.rdelta,
                             p.nstep);
      for (int k = 0; k < kSearchLanes; ++k) {
        uint8_t Ls[32], Laux[32];
        float min_s = 0;
        const float scale_s = make_qkx2_quants(n, p.nmax, groups[k].data(), weights[k].data(), Ls, &min_s,
                                               Laux, p.rmin, p.rdelta, p.nstep);
        ASSERT_EQ(bits(scale[k]), bits(scale_s)) << "nmax " << p.nmax << " trial " << trial << " lane " << k;
        ASSERT_EQ(bits(the_min[k]), bits(min_s)) << "nmax " << p.nmax << " trial " << trial << " lane " << k;
        for (int i = 0; i < n; ++i)
          ASSERT_EQ(L[i * kSearchLanes + k], Ls[i]) << "trial " << trial << " i " << i;
      }
    }
  }
}

TEST(KQuantSearch, QxLanesGiveTheScalarBitsInEveryLane) {
  std::mt19937 rng(11);
  const int n = 16;
  for (int trial = 0; trial < 6000; ++trial) {
    std::vector<float> x(n * kSearchLanes);
    std::vector<std::vector<float>> groups;
    for (int k = 0; k < kSearchLanes; ++k) {
      groups.push_back(group(rng, n, trial % 4 == 0 ? static_cast<int>(rng() % 8) : 7));
      for (int i = 0; i < n; ++i) x[i * kSearchLanes + k] = groups[k][i];
    }
    std::vector<int8_t> L(n * kSearchLanes);
    float scale[kSearchLanes];
    make_qx_quants_lanes(n, 32, x.data(), L.data(), scale);
    for (int k = 0; k < kSearchLanes; ++k) {
      int8_t Ls[16];
      const float scale_s = make_qx_quants(n, 32, groups[k].data(), Ls);
      ASSERT_EQ(bits(scale[k]), bits(scale_s)) << "trial " << trial << " lane " << k;
      for (int i = 0; i < n; ++i)
        ASSERT_EQ(L[i * kSearchLanes + k], Ls[i]) << "trial " << trial << " i " << i;
    }
  }
}

}  // namespace
}  // namespace qc::kquant
