#pragma once
// BLIS-style packed GEMM driver, generic over a micro-kernel Kn (SimdKernel<V, MR, NV>; float or double):
//   C[M×N] = beta·C + alpha · Â[M×K] · B̂[K×N]   (strides in GemmView).
// Cache roles as in BLIS (skx, mapped to row-major C): an Â block (mc rows × kc) in L3, a B̂ block (kc × nc
// columns) in L2, one MR×kc Â micro-panel in L1 while the kernel sweeps the B̂ block.
// Each thread packs everything it reads into its own buffers and owns a disjoint part of C, so a call has no
// barrier at all, only the fork and the join of its one parallel region (a barrier per k block made two threads
// collapse whenever another process held one of the two cores). The price is that each thread packs the shared
// operand itself: at most M·K (split_n) or N·K (split_m) extra copies, against M·N·K/threads multiply-adds.
//  * split_n (default): threads own contiguous ranges of NR-column strips of C. For each Â block and k block a
//    thread packs the Â block, then its strips nc columns at a time, and runs the kernel over them. With one Â
//    block and one k block (K ≤ kc) the threads take the groups of strips from a shared counter instead.
//    With few Â rows (LSTM steps, 64×2048×1024) the order flips to strip-major (one B̂ strip in L1, the small Â
//    block in L2) and the B rows of the next group are prefetched while this one computes, so B streams from
//    memory once, overlapped with the FMAs.
//  * split_m (N too narrow to share out): threads own ranges of MR-row panels; each packs the (narrow) B̂ block.
// Two operands skip packing: split_n reads full MR-row panels of a row-major Â (csa = 1) in place (packing would
// only transpose them; the kernel broadcasts from the rows directly) unless its rows are a multiple of 1 KiB apart,
// and a B̂ packed once for many calls (pack_b_whole, gemm.hpp's PackedB: a weight used at every time step) is read
// by every thread as it is.
// Determinism: kc blocks depend on K only (kc_for) and every C element is updated once per k block, in increasing
// k, by the same kernel, so the bits do not depend on the thread count or on which nest ran.
//
// Include only after <algorithm>, <cstring>, <omp.h> and gemm/gemm_view.hpp (ISA TUs compile this under
// #pragma GCC target, and nothing from the standard library may be first defined inside that region).
#ifndef LAVA_GEMM_ISA_TU
#error "gemm_packed.hpp is meant for the kernel translation units (gemm_avx2/avx512/generic.cpp) and tests"
#endif

#include "gemm/gemm_pack.hpp"

namespace lava::gemm_detail {
// Unnamed: every ISA translation unit gets its own copies, compiled for its own target (no shared COMDATs).
namespace {

// Cache blocking of one ISA (elements, not bytes).
struct PackedBlocking {
  int kc_max;          // k block bound (kc_for): an MR×kc Â and an NR×kc B̂ micro-panel fit in L1 together
  int mc;              // rows of an Â block (mc×kc, L3), multiple of MR
  int nc;              // columns of a B̂ block (kc×nc, L2), multiple of NR
  int few_a_panels;    // Â blocks of at most this many micro-panels (≤ L2) use the strip-major order
  int strip_group;     // strips packed together (and prefetched ahead) in strip-major order
};

// All of B̂ packed once, for the calls that share it (v.packed_b): k block by k block (kc_for(K)), and within a
// block every NR-column strip as pack_b_panel lays it out (kc, NR), zero-padded. Block pc starts at pc · strips · NR.
// The kernel then reads exactly the values a per-call pack would give it, so the results are the same bits.
// Split over (k block, group of 8 strips).   dst: K · strips · NR elements
template <class Kn, class T = typename Kn::T>
void pack_b_whole(const GemmView<T>& v, const PackedBlocking& bl, T* dst, bool parallel) {
  constexpr int NR = Kn::kNR, kGroup = 8;
  const int kc_blk = kc_for(v.K, bl.kc_max), strips = (v.N + NR - 1) / NR;
  const int k_blocks = (v.K + kc_blk - 1) / kc_blk, groups = (strips + kGroup - 1) / kGroup;
#pragma omp parallel for schedule(static) if (parallel)
  for (int t = 0; t < k_blocks * groups; ++t) {
    const int pc = t / groups * kc_blk, kc = std::min(kc_blk, v.K - pc), s0 = t % groups * kGroup;
    const int j0 = s0 * NR, ncols = std::min(v.N, (s0 + kGroup) * NR) - j0;
    pack_b_block<typename Kn::Vec, NR>(v, pc, kc, j0, ncols, dst + long(pc) * strips * NR + long(s0) * NR * kc);
  }
}

// A thread packs an aliasing row-major Â (see gemm_split_n) only when it runs the kernel over at least this many
// NR-column strips of C per Â panel, so that the copy costs at most a few per cent of the multiply-adds.
constexpr int kPackAStrips = 16;

// The split_n nest's choices for one call (see top), made before its threads start.
struct SplitNPlan {
  int kc_blk, a_panels, b_panels, block_panels;
  bool strip_major, in_place, prefetch, a_aliases;
  bool dynamic;  // threads take groups of strips from a shared counter instead of fixed ranges
  int group;     // strips per group
};

// Requires M, N, K ≥ 1.
template <class Kn, class T = typename Kn::T>
SplitNPlan plan_split_n(const GemmView<T>& v, const PackedBlocking& bl, bool parallel) {
  constexpr int MR = Kn::kMR, NR = Kn::kNR;
  SplitNPlan pl;
  const int kc_blk = pl.kc_blk = kc_for(v.K, bl.kc_max);
  const int a_panels = pl.a_panels = (v.M + MR - 1) / MR, b_panels = pl.b_panels = (v.N + NR - 1) / NR;
  const int block_panels = pl.block_panels = std::min(a_panels, bl.mc / MR);
  const bool strip_major = pl.strip_major = block_panels <= bl.few_a_panels;
  const int nc_group = strip_major ? bl.strip_group : bl.nc / NR;
  // With ≤ 2 Â micro-panels each strip is used at most twice: read full strips of a row-major B in place.
  pl.in_place = v.csb == 1 && a_panels <= 2 && !v.packed_b;
  pl.prefetch = strip_major && v.csb == 1 && !pl.in_place && !v.packed_b;
  // A row-major Â (csa == 1) is read in place by full panels: packing it would only transpose it. Except when its
  // rows are a multiple of 1 KiB apart (H = 256, 512, 1024): an L1 of 64 sets of 64 bytes maps addresses 4 KiB apart
  // to the same set, so the MR rows a panel reads at one k share at most 4 sets (1 set at 4 KiB apart) and evict one
  // another and the B̂ strip; a thread packs them when the copy is spread over enough strips of its own
  // (≥ kPackAStrips).
  pl.a_aliases = v.csa == 1 && (v.rsa * long(sizeof(T))) % 1024 == 0;
  // One Â block and one k block in panel-major order (the output layer's logits and [dW; db] products: K ≤ kc,
  // 240–257 rows): each C tile is then written by one kernel call, so the threads may take groups of nc columns
  // from a shared counter instead of fixed halves. A thread slowed by the hypervisor then does fewer groups instead
  // of holding the other at the join. Same kernel calls on the same data, so the same bits. Not for the small
  // strip-major products of the LSTM steps, whose few 4-strip groups leave a slowed thread little to hand over.
  // Only with at least 4 groups per thread: a narrower C (the 640×256×256 products of soft attention, 8 strips)
  // would be one group, run whole by one thread while the other waits, as slow on two threads as on one.
  pl.dynamic = parallel && !strip_major && a_panels <= block_panels && v.K <= kc_blk &&
               b_panels >= 4 * nc_group * omp_get_max_threads();
  // Shared groups are a third of nc wide: the join waits for the last group handed out, so its size is what one
  // thread idles at most (nc wide: 15 strips, 21 groups for 10,000 columns, and with an odd count one thread runs
  // the last group, 1/21 of the product, alone). A narrower group only reads the L2-resident Â panels more often.
  pl.group = pl.dynamic ? std::max(1, nc_group / 3) : nc_group;
  return pl;
}

// Thread tid's share (of nth) of the split_n nest of `pl`; every thread of the team calls it. next_group: the index
// of the next group of strips to hand out when the plan is dynamic (shared by the team, atomic capture; 0 before
// the first thread starts).
template <class Kn, class T = typename Kn::T>
void split_n_share(const GemmView<T>& v, const SplitNPlan& pl, int tid, int nth, int* next_group) {
  constexpr int MR = Kn::kMR, NR = Kn::kNR;
  const int kc_blk = pl.kc_blk, a_panels = pl.a_panels, b_panels = pl.b_panels, block_panels = pl.block_panels;
  const int group = pl.group;
  const bool strip_major = pl.strip_major, in_place = pl.in_place, prefetch = pl.prefetch;
  thread_local ScratchBuffer a_private, b_private;
  T* apack = static_cast<T*>(a_private.get(sizeof(T) * block_panels * MR * kc_blk));  // (panels, kc, MR)
  T* bpack = static_cast<T*>(b_private.get(sizeof(T) * group * NR * kc_blk));         // (group, kc, NR)
  const bool shared_groups = pl.dynamic && nth > 1;
  const int s_begin = shared_groups ? 0 : int(long(b_panels) * tid / nth);
  const int s_end = shared_groups ? b_panels : int(long(b_panels) * (tid + 1) / nth);
  const int my_strips = shared_groups ? b_panels / nth : s_end - s_begin;  // shared: about this many
  const bool a_in_place = v.csa == 1 && !(pl.a_aliases && my_strips >= kPackAStrips);
  for (int ib = 0; ib < a_panels && s_begin < s_end; ib += block_panels) {
    const int np = std::min(block_panels, a_panels - ib);
    for (int pc = 0; pc < v.K; pc += kc_blk) {
      const int kc = std::min(kc_blk, v.K - pc);
      for (int p = 0; p < np; ++p) {
        const int i0 = (ib + p) * MR, mr = std::min(MR, v.M - i0);
        if (!a_in_place || mr < MR)
          pack_a_panel<typename Kn::Vec, MR>(v, i0, mr, pc, kc, apack + long(p) * MR * kc);
      }
      for (int g = s_begin; g < s_end; g += group) {
        if (shared_groups) {  // groups go out in increasing order, so g + group ≥ s_end above means none are left
#pragma omp atomic capture
          g = (*next_group)++;
          g *= group;
          if (g >= s_end) break;
        }
        const int g_end = std::min(s_end, g + group);
        const int j0 = g * NR, ncols = std::min(v.N, g_end * NR) - j0;
        const bool partial_last = ncols % NR != 0;
        if (v.packed_b) {
          // packed once by pack_b_whole
        } else if (!in_place) {
          pack_b_block<typename Kn::Vec, NR>(v, pc, kc, j0, ncols, bpack);
        } else if (partial_last) {  // only the ragged last strip needs a zero-padded copy
          const int last = g_end - 1 - g;
          pack_b_panel<typename Kn::Vec, NR>(v, pc, kc, j0 + last * NR, ncols - last * NR,
                                             bpack + long(last) * NR * kc);
        }
        // The group this thread packs next: prefetch its B rows a slice per kernel call.
        int next_g = g + group, next_pc = pc, next_ib = ib;
        if (next_g >= s_end) {
          next_g = s_begin;
          next_pc = pc + kc_blk;
          if (next_pc >= v.K) next_pc = 0, next_ib = ib + block_panels;
        }
        const bool have_next = prefetch && next_ib < a_panels;
        const int next_k_end = std::min(v.K, next_pc + kc_blk);
        const int next_cols = std::min(v.N, std::min(s_end, next_g + group) * NR) - next_g * NR;
        const int calls = (g_end - g) * np;
        const int rows_per_call = have_next ? (next_k_end - next_pc + calls - 1) / calls : 0;

        const auto tile = [&](int p, int s) {
          const T* b = bpack + long(s - g) * NR * kc;
          long ldbk = NR;
          if (v.packed_b) {
            b = v.packed_b + long(pc) * b_panels * NR + long(s) * NR * kc;
          } else if (in_place && (s < g_end - 1 || !partial_last)) {
            b = v.B + long(pc) * v.rsb + s * NR;
            ldbk = v.rsb;
          }
          const int i0 = (ib + p) * MR, mr = std::min(MR, v.M - i0);
          const bool direct_a = a_in_place && mr == MR;
          Kn::run(kc, direct_a ? v.A + long(i0) * v.rsa + pc : apack + long(p) * MR * kc, b, ldbk,
                  v.C + long(i0) * v.ldc + s * NR, v.ldc, mr, std::min(NR, v.N - s * NR), v.alpha, v.beta, pc == 0,
                  direct_a ? v.rsa : 0);
        };
        if (strip_major) {
          int call = 0;
          for (int s = g; s < g_end; ++s)
            for (int p = 0; p < np; ++p, ++call) {
              if (rows_per_call > 0) {
                const int k0 = next_pc + call * rows_per_call;
                if (k0 < next_k_end)
                  prefetch_b_rows(v, k0, std::min(next_k_end, k0 + rows_per_call), next_g * NR, next_cols);
              }
              tile(p, s);
            }
        } else {
          for (int p = 0; p < np; ++p)
            for (int s = g; s < g_end; ++s) tile(p, s);
        }
      }
    }
  }
}

// split_n loop nest (see top). Requires M, N, K ≥ 1.
template <class Kn, class T = typename Kn::T>
void gemm_split_n(const GemmView<T>& v, const PackedBlocking& bl, bool parallel) {
  const SplitNPlan pl = plan_split_n<Kn>(v, bl, parallel);
  int next_group = 0;
#pragma omp parallel if (parallel)
  split_n_share<Kn>(v, pl, omp_get_thread_num(), omp_get_num_threads(), &next_group);
}

// split_m loop nest (see top). Requires M, N, K ≥ 1.
template <class Kn, class T = typename Kn::T>
void gemm_split_m(const GemmView<T>& v, const PackedBlocking& bl, bool parallel) {
  constexpr int MR = Kn::kMR, NR = Kn::kNR;
  const int kc_blk = kc_for(v.K, bl.kc_max);
  const int a_panels = (v.M + MR - 1) / MR, b_panels = (v.N + NR - 1) / NR;
  const int block_strips = std::min(b_panels, bl.nc / NR);
#pragma omp parallel if (parallel)
  {
    thread_local ScratchBuffer a_private, b_private;
    T* apack = static_cast<T*>(a_private.get(sizeof(T) * MR * kc_blk));                  // (kc, MR)
    T* bpack = static_cast<T*>(b_private.get(sizeof(T) * block_strips * NR * kc_blk));  // (strips, kc, NR)
    const int nth = omp_get_num_threads(), tid = omp_get_thread_num();
    const int p_begin = int(long(a_panels) * tid / nth), p_end = int(long(a_panels) * (tid + 1) / nth);
    for (int jb = 0; jb < b_panels && p_begin < p_end; jb += block_strips) {
      const int nb = std::min(block_strips, b_panels - jb);
      for (int pc = 0; pc < v.K; pc += kc_blk) {
        const int kc = std::min(kc_blk, v.K - pc);
        for (int s = 0; s < nb; ++s) {
          const int j0 = (jb + s) * NR;
          pack_b_panel<typename Kn::Vec, NR>(v, pc, kc, j0, std::min(NR, v.N - j0), bpack + long(s) * NR * kc);
        }
        for (int p = p_begin; p < p_end; ++p) {
          const int i0 = p * MR, mr = std::min(MR, v.M - i0);
          pack_a_panel<typename Kn::Vec, MR>(v, i0, mr, pc, kc, apack);
          for (int s = 0; s < nb; ++s) {
            const int j0 = (jb + s) * NR;
            Kn::run(kc, apack, bpack + long(s) * NR * kc, NR, v.C + long(i0) * v.ldc + j0, v.ldc, mr,
                    std::min(NR, v.N - j0), v.alpha, v.beta, pc == 0);
          }
        }
      }
    }
  }
}

// Whether a call takes split_m: with several threads, when N has too few strips to share out evenly and M shares
// out better (never with a B̂ packed once: split_m packs B̂ per call).
template <class Kn, class T = typename Kn::T>
bool takes_split_m(const GemmView<T>& v, int nth) {
  constexpr int MR = Kn::kMR, NR = Kn::kNR;
  const int a_panels = (v.M + MR - 1) / MR, b_panels = (v.N + NR - 1) / NR;
  // load of the busiest thread relative to a perfect split
  const double imbalance_n = double((b_panels + nth - 1) / nth) * nth / b_panels;
  const double imbalance_m = double((a_panels + nth - 1) / nth) * nth / a_panels;
  return nth > 1 && imbalance_m + 0.05 < imbalance_n && !v.packed_b;
}

// Splits over N unless takes_split_m. With v.pack_b_into set, packs B̂ instead.
template <class Kn, class T = typename Kn::T>
void gemm_packed(const GemmView<T>& v, const PackedBlocking& bl, bool parallel) {
  if (v.pack_b_into) {
    pack_b_whole<Kn>(v, bl, v.pack_b_into, parallel);
  } else if (takes_split_m<Kn>(v, parallel ? omp_get_max_threads() : 1)) {
    gemm_split_m<Kn>(v, bl, parallel);
  } else {
    gemm_split_n<Kn>(v, bl, parallel);
  }
}

// Two independent products (neither C overlaps the other call's operands or C), the bits of gemm_packed(v1) then
// gemm_packed(v2). When both split over threads in the split_n nest, they share one parallel region: each thread
// runs its share of one, then of the other, with no join between. The product with fixed shares goes first, so a
// thread that finishes its share early takes more of the other's strip groups from the shared counter: the output
// layer's dx = dlogits Wᵀ (K = V > kc, fixed halves) is evened out by [dW; db] += [x 1]ᵀ dlogits (shared groups)
// instead of one thread idling at dx's join while this VM runs the other vCPU slower.
template <class Kn, class T = typename Kn::T>
void gemm_packed_pair(const GemmView<T>& v1, const GemmView<T>& v2, const PackedBlocking& bl, bool parallel) {
  const int nth = omp_get_max_threads();
  if (!parallel || nth < 2 || v1.pack_b_into || v2.pack_b_into || takes_split_m<Kn>(v1, nth) ||
      takes_split_m<Kn>(v2, nth)) {
    gemm_packed<Kn>(v1, bl, parallel);
    gemm_packed<Kn>(v2, bl, parallel);
    return;
  }
  const SplitNPlan p1 = plan_split_n<Kn>(v1, bl, true), p2 = plan_split_n<Kn>(v2, bl, true);
  if (p1.dynamic && !p2.dynamic) {  // fixed shares first
    gemm_packed_pair<Kn>(v2, v1, bl, parallel);
    return;
  }
  int next_group1 = 0, next_group2 = 0;
#pragma omp parallel
  {
    const int tid = omp_get_thread_num(), team = omp_get_num_threads();
    split_n_share<Kn>(v1, p1, tid, team, &next_group1);
    split_n_share<Kn>(v2, p2, tid, team, &next_group2);
  }
}

}  // namespace
}  // namespace lava::gemm_detail
