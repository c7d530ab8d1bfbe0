// The op profile (core/op_profile.hpp, lava bench train --profile): it changes no bits, files each op's forward and
// backward time under the op, counts the op's GEMM work exactly, sees every OpenMP region through the
// GOMP_parallel wrapper, and its rows add up to the wall time they cut. The profile exists in the profiling build
// only (make PROFILE=1 test), so these run there and are reported skipped elsewhere.
#include <doctest/doctest.h>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "autodiff/ops.hpp"
#include "core/json.hpp"
#include "core/op_profile.hpp"
#include "core/rng.hpp"
#include "gemm/gemm.hpp"
#include "support/cli_runner.hpp"
#include "support/skip_unless.hpp"

using namespace lava;

#if LAVA_PROFILE

namespace {
// loss = Σ tanh(x W) over x (64, 96), W (96, 80), with 2^16 more tanh elements (c) so that one op splits over threads.
struct SmallGraph {
  std::vector<float> x, W, c, dW;
  float loss = 0;
  SmallGraph() : x(64 * 96), W(96 * 80), c(1 << 16) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 13) - 6) / 16.f;
    for (size_t i = 0; i < W.size(); ++i) W[i] = float(int(i % 7) - 3) / 32.f;
    for (size_t i = 0; i < c.size(); ++i) c[i] = float(int(i % 11) - 5) / 8.f;
  }
  void run() {
    Tape<float> tape;
    std::vector<float> grad(W.size(), 0.f);
    const Var<float> xv = tape.input(Shape{64, 96}, x.data());
    const Var<float> Wv = tape.external(Shape{96, 80}, W.data(), grad.data());
    const Var<float> cv = tape.input(Shape{int64_t(c.size())}, c.data(), true);
    const Var<float> l = add(sum_all(tanh(matmul(xv, Wv))), sum_all(tanh(cv)));
    tape.backward(l);
    loss = l.item();
    dW = grad;
  }
};

const op_profile::KindTotals* find_kind(const std::vector<op_profile::KindTotals>& ts, const std::string& name) {
  for (const op_profile::KindTotals& k : ts)
    if (k.name == name) return &k;
  return nullptr;
}
}  // namespace

TEST_CASE("op profile: the same bits on and off; each op's calls, GEMM work and regions filed under it") {
  SmallGraph plain, profiled;
  plain.run();
  const unsigned long long flops_before = gemm_flop_count();
  const auto t0 = std::chrono::steady_clock::now();
  op_profile::start();
  profiled.run();
  op_profile::stop();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double flops = double(gemm_flop_count() - flops_before);
  CHECK(std::memcmp(&plain.loss, &profiled.loss, sizeof(float)) == 0);
  CHECK(std::memcmp(plain.dW.data(), profiled.dW.data(), sizeof(float) * plain.dW.size()) == 0);

  const std::vector<op_profile::KindTotals> ts = op_profile::totals();
  using P = op_profile::Phase;
  const op_profile::KindTotals* mm = find_kind(ts, "matmul");
  REQUIRE(mm != nullptr);
  CHECK(mm->phase[int(P::forward)].calls == 1);
  CHECK(mm->phase[int(P::backward)].calls == 1);
  // Forward x W: 2·64·80·96; backward only dW = xᵀ dY (x needs no gradient): the same work again.
  CHECK(mm->phase[int(P::forward)].gemm_flops == 2.0 * 64 * 80 * 96);
  CHECK(mm->phase[int(P::backward)].gemm_flops == 2.0 * 64 * 80 * 96);
  CHECK(mm->phase[int(P::forward)].gemm_flops + mm->phase[int(P::backward)].gemm_flops == flops);
  CHECK(mm->phase[int(P::forward)].gemm_seconds > 0);
  CHECK(mm->phase[int(P::forward)].gemm_seconds <= mm->phase[int(P::forward)].seconds);
  const op_profile::KindTotals* th = find_kind(ts, "tanh");
  REQUIRE(th != nullptr);
  CHECK(th->phase[int(P::forward)].calls == 2);
  CHECK(th->phase[int(P::backward)].calls == 2);
  // tanh of 2^16 elements opens a region each way (split or not: an `if` that is false still calls the runtime).
  CHECK(th->phase[int(P::forward)].omp_regions >= 1);
  CHECK(th->phase[int(P::backward)].omp_regions >= 1);
  CHECK(th->phase[int(P::forward)].gemm_flops == 0);
  const op_profile::KindTotals* tape = find_kind(ts, "tape");
  REQUIRE(tape != nullptr);
  CHECK(tape->phase[int(P::forward)].calls >= 8);  // every node made, every record appended
  // Exclusive pieces of the wall time between start() and stop(): they add up to no more than it, and to most of it.
  double sum = 0;
  for (const op_profile::KindTotals& k : ts)
    for (const op_profile::PhaseTotals& p : k.phase) sum += p.seconds;
  CHECK(sum <= wall);
  CHECK(sum >= 0.5 * wall);
  CHECK_FALSE(op_profile::active());
}

namespace {
// One region over x opened with `if (splits)`: x[i] = sin(x[i]) + 1.
void region(std::vector<double>& x, bool splits) {
#pragma omp parallel for schedule(static) if (splits)
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(x[i]) + 1;
}
}  // namespace

TEST_CASE("op profile: work that splits over threads is told from work that cannot, on any team size") {
  std::vector<double> x(1 << 14, 0.5);
  for (const int threads : {1, 2}) {
    CAPTURE(threads);
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<float> a(128 * 128, 0.5f), c(128 * 128);
    op_profile::start();
    {
      const op_profile::Scope scope(op_profile::kind_id("regions"), op_profile::Phase::forward);
      for (const bool splits : {true, false, true, true, false}) region(x, splits);
    }
    {  // 128³ multiply-adds: split on two threads, worth splitting on one
      const op_profile::Scope scope(op_profile::kind_id("large gemm"), op_profile::Phase::forward);
      gemm<float>(false, false, 128, 128, 128, 1.f, a.data(), 128, a.data(), 128, 0.f, c.data(), 128);
    }
    {  // 8³: never split
      const op_profile::Scope scope(op_profile::kind_id("small gemm"), op_profile::Phase::forward);
      gemm<float>(false, false, 8, 8, 8, 1.f, a.data(), 8, a.data(), 8, 0.f, c.data(), 8);
    }
    op_profile::stop();
    omp_set_num_threads(saved);
    const std::vector<op_profile::KindTotals> ts = op_profile::totals();
    const op_profile::KindTotals* k = find_kind(ts, "regions");
    REQUIRE(k != nullptr);
    const op_profile::PhaseTotals& t = k->phase[int(op_profile::Phase::forward)];
    CHECK(t.omp_regions == 5);
    CHECK(t.omp_split_regions == 3);  // an `if (true)` region on one thread still counts: more threads could share it
    CHECK(t.omp_split_seconds > 0);
    CHECK(t.omp_split_seconds <= t.seconds);  // their wall time, inside the scope's
    // A gemm files its own time as split when it is worth splitting, on one thread too, and its regions add none.
    const op_profile::PhaseTotals& large = find_kind(ts, "large gemm")->phase[int(op_profile::Phase::forward)];
    CHECK(large.gemm_seconds > 0);
    CHECK(large.omp_split_seconds == large.gemm_seconds);
    const op_profile::PhaseTotals& small = find_kind(ts, "small gemm")->phase[int(op_profile::Phase::forward)];
    CHECK(small.gemm_seconds > 0);
    CHECK(small.omp_split_seconds == 0);
  }
}

TEST_CASE("matmul: a batch of small products (a decoder step's attention) splits in one region, same bits") {
  // The context of one soft-attention decoder step: 32 products (1×20)·(20×256), 2^17.3 multiply-adds in all, with
  // both gradients. The products are shared out over the threads in one region each way (as the profile sees it:
  // on one thread too, since more threads could share it), and give the bits of each product made alone.
  constexpr int B = 32, S = 20, H = 256;
  std::vector<float> p(B * S), e(B * S * H);
  CounterRng rng(11, 0);
  for (size_t i = 0; i < p.size(); ++i) p[i] = float(rng.normal(i));
  for (size_t i = 0; i < e.size(); ++i) e[i] = float(rng.normal(p.size() + i));
  // Σ ctx ⊙ w, with w fixed, so that the gradients differ by element; returns ctx, dp and de.
  const auto run = [&](bool batched) {
    Tape<float> tape;
    const Var<float> pv = tape.input(Shape{B, 1, S}, p.data(), true), ev = tape.input(Shape{B, S, H}, e.data(), true);
    Var<float> ctx;
    if (batched) {
      ctx = matmul(pv, ev, false, false);
    } else {
      std::vector<Var<float>> rows;
      for (int b = 0; b < B; ++b) {
        const Var<float> pb = reshape(slice(pv, 0, b, 1), Shape{1, S}), eb = reshape(slice(ev, 0, b, 1), Shape{S, H});
        rows.push_back(reshape(matmul(pb, eb, false, false), Shape{1, 1, H}));
      }
      ctx = concat(rows.data(), B, 0);
    }
    tape.backward(sum_all(mul(ctx, tape.input(Shape{B, 1, H}, e.data()))));
    std::vector<float> out(ctx.val(), ctx.val() + ctx.numel());
    out.insert(out.end(), pv.grad(), pv.grad() + pv.numel());
    out.insert(out.end(), ev.grad(), ev.grad() + ev.numel());
    return out;
  };
  const std::vector<float> alone = run(false);
  for (const int threads : {1, 2}) {
    CAPTURE(threads);
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    op_profile::start();
    const std::vector<float> batched = run(true);
    op_profile::stop();
    omp_set_num_threads(saved);
    CHECK(std::memcmp(batched.data(), alone.data(), alone.size() * sizeof(float)) == 0);
    const std::vector<op_profile::KindTotals> ts = op_profile::totals();
    const op_profile::KindTotals* mm = find_kind(ts, "matmul");
    REQUIRE(mm != nullptr);
    for (const op_profile::Phase phase : {op_profile::Phase::forward, op_profile::Phase::backward}) {
      CHECK(mm->phase[int(phase)].omp_regions == 1);
      CHECK(mm->phase[int(phase)].omp_split_regions == 1);
    }
  }
}

TEST_CASE("op profile: lava bench train --profile prints one row per op kind and totals that add up") {
  const std::string args =
      "bench train --attn var-enum --format json -q --emb-size 8 --hidden-size 8 --attn-size 8 --inf-hidden 8 "
      "--vocab 40 --batch-size 2 --src-len 3 --tgt-len 3 --steps 2 --warmup 1";
  const CliResult with = run_lava(args + " --profile"), without = run_lava(args);
  REQUIRE(with.code == 0);
  REQUIRE(without.code == 0);
  std::vector<JsonValue> rows;
  size_t start = 0;
  while (start < with.out.size()) {
    const size_t end = with.out.find('\n', start);
    rows.push_back(parse_json(with.out.substr(start, end - start), "stdout"));
    start = end == std::string::npos ? with.out.size() : end + 1;
  }
  REQUIRE(rows.size() > 3);
  // The first row is the benchmark's own, unchanged by the profiled steps that run after it.
  CHECK(rows[0].at("objective_per_token").number() ==
        parse_json(without.out, "stdout").at("objective_per_token").number());
  double share = 0, ms = 0, step_ms = -1;
  bool saw_output_layer = false, saw_adam = false;
  for (const JsonValue& r : rows) {
    const JsonValue* event = r.find("event");
    if (!event) continue;
    if (event->str() == "profile") {
      share += r.at("share").number();
      ms += r.at("ms").number();
      CHECK(r.at("ms").number() ==
            doctest::Approx(r.at("forward_ms").number() + r.at("backward_ms").number() + r.at("update_ms").number()));
      saw_output_layer |= r.at("op").str() == "enumerated_output_objective";
      saw_adam |= r.at("op").str() == "adam (clip + update)" && r.at("update_ms").number() > 0;
    } else if (event->str() == "profile_total" && r.at("what").str() == "step (sum of the rows)") {
      step_ms = r.at("ms").number();
    }
  }
  CHECK(share == doctest::Approx(1.0));
  CHECK(step_ms == doctest::Approx(ms));
  CHECK(saw_output_layer);
  CHECK(saw_adam);
}

#else

TEST_CASE("op profile: the profile's own tests (profiling build only)" * skip_unless_profiling_build()) {}

#endif
