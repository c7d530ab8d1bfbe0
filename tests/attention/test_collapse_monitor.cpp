// The posterior-collapse warning (attention/collapse_monitor.hpp): the verdict's thresholds, one verdict per epoch,
// and `lava train` printing it for a q that starts on the prior and not for one that does not.
#include <doctest/doctest.h>

#include "attention/collapse_monitor.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

using namespace lava;

TEST_CASE("collapse monitor: KL below 0.01 nats/token and H(q) within 1% of H(p) over the epoch") {
  CollapseMonitor m;
  // Two batches, 100 tokens: KL 0.5/100 = 0.005, H(q) 180/100, H(p) 181/100 (0.55% apart): collapsed.
  m.add(0.2, 90, 90.5, 40);
  m.add(0.3, 90, 90.5, 60);
  CollapseVerdict v = m.end_epoch();
  CHECK(v.collapsed);
  CHECK(v.tokens == 100);
  CHECK(v.kl == doctest::Approx(0.005));
  CHECK(v.q_entropy == doctest::Approx(1.80));
  CHECK(v.prior_entropy == doctest::Approx(1.81));
  CHECK(collapse_warning(v, 3).find("epoch 3: q has collapsed onto the prior") != std::string::npos);
  // The next epoch starts from nothing: no tokens is no verdict.
  CHECK_FALSE(m.end_epoch().collapsed);
  // KL at the threshold: not collapsed.
  m.add(1.0, 180, 180, 100);
  CHECK_FALSE(m.end_epoch().collapsed);
  // KL small but q 2% sharper than p: not collapsed; 0.5% sharper: collapsed.
  m.add(0.1, 98, 100, 100);
  CHECK_FALSE(m.end_epoch().collapsed);
  m.add(0.1, 99.5, 100, 100);
  CHECK(m.end_epoch().collapsed);
}

TEST_CASE("collapse monitor: lava train warns when q starts on the prior, and not when it does not") {
  TempDir tmp("collapse");
  const std::string data = (tmp.dir / "synth").string();
  REQUIRE(run_lava("data synth --quiet --out " + data + " --train 64 --valid 16 --test 16").code == 0);
  const std::string train = "train --task nmt --data " + data + " --epochs 1 --emb-size 8 --hidden-size 8 "
                            "--attn-size 8 --inf-hidden 8 --batch-size 16 --format json --quiet --threads 1 ";
  // init 0.01: every score near 0, so q and p are both near uniform (KL ~ 1e-8, equal entropies).
  CliResult r = run_lava(train + "--attn var-enum --init 0.01");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("\"q_collapsed\":true") != std::string::npos);
  CHECK(r.err.find("q has collapsed onto the prior") != std::string::npos);
  CHECK(r.err_lines() == 1);
  // init 1: q and p far apart (KL about 0.09 nats/token).
  r = run_lava(train + "--attn var-enum --init 1");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("\"q_collapsed\":false") != std::string::npos);
  CHECK(r.err.find("collapsed") == std::string::npos);
  // No q, no verdict.
  r = run_lava(train + "--attn marginal --init 0.01");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("q_collapsed") == std::string::npos);
}
