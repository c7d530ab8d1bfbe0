// lava bench gemm: GEMM throughput against the FMA peak and OpenBLAS measured in the same run.
// lava bench train: training steps of the translation model (tokens/s, GFLOP/s, peak memory) for the PyTorch peer.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "data/vocab.hpp"
#include "gemm/gemm_bench.hpp"
#include "tasks/nmt/train_bench.hpp"

namespace lava {

namespace {

// Splits `text` at `sep` into positive whole numbers, appended to `out`; false if an item is not one (getline drops a
// trailing empty item: "8," is {8}).
bool split_positive_ints(const std::string& text, char sep, std::vector<int>& out) {
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, sep)) {
    try {
      size_t used = 0;
      const int v = std::stoi(item, &used);
      if (used != item.size() || v < 1) return false;
      out.push_back(v);
    } catch (const std::logic_error&) {
      return false;
    }
  }
  return true;
}

// "256,512" -> {256, 512}
std::vector<int> parse_int_list(const CommandLine& cl, const std::string& name) {
  std::vector<int> out;
  if (!split_positive_ints(cl.get_string(name), ',', out))
    cl.fail(fmt::format("--{}: {} is not a list of positive whole numbers", name, quote_input(cl.get_string(name))));
  if (out.empty()) cl.fail("--" + name + " is empty");
  return out;
}

// --shapes: a comma-separated list of MxNxK (C is M×N, inner dimension K), each a positive whole number.
std::vector<std::array<int, 3>> parse_shape_list(const CommandLine& cl, const std::string& name) {
  std::vector<std::array<int, 3>> out;
  const std::string text = cl.get_string(name);
  if (!text.empty() && text.back() == ',') cl.fail(fmt::format("--{}: {} ends with a comma", name, quote_input(text)));
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    std::vector<int> dims;
    if (!split_positive_ints(item, 'x', dims) || dims.size() != 3 || item.back() == 'x')
      cl.fail(fmt::format("--{}: {} is not MxNxK (three positive whole numbers joined by x)", name, quote_input(item)));
    out.push_back({dims[0], dims[1], dims[2]});
  }
  if (out.empty()) cl.fail("--" + name + " is empty");
  return out;
}

int bench_gemm(int argc, char** argv) {
  CommandLine cl("bench gemm", "lava bench gemm [options]",
                 "Times lava's float GEMM on square sizes, the LSTM-step shapes 64x2048x1024 and the output-layer\n"
                 "shapes 1920x20000x512 (NN, NT, TN), with each thread count; reports GFLOP/s, the ratio to the FMA\n"
                 "peak, and the ratio to OpenBLAS when libopenblas.so.0 can be loaded (OPENBLAS_CORETYPE is unset\n"
                 "while it loads, so that it picks its best kernels for this CPU; their name is printed; LAVA itself\n"
                 "never needs OpenBLAS). The packed_* columns time the same product with op(B) packed once\n"
                 "beforehand, as training packs a weight read at every time step. kernel_loop_ratio is LAVA's\n"
                 "micro-kernel alone, on operands hot in L1, over the FMA peak: the most a GEMM built on it reaches\n"
                 "here (sampled after all the GEMMs). On several threads the FMA peak and the kernel loop are the sum\n"
                 "of the threads' own rates (each runs to a common deadline). Each of --repeats rounds samples the\n"
                 "FMA peak, LAVA, LAVA packed and OpenBLAS in turn (each sample >= 20 ms, after a warm-up); every\n"
                 "figure is the median of its samples. --shapes adds shapes of your own, in NN, NT and TN; e.g. the\n"
                 "enumerated output layer's products of one chunk (lava bench train --attn marginal: 240 rows,\n"
                 "H = 256, V = 10,000): --shapes 240x10000x256,240x256x10000,257x10000x240 (logits, dx, [dW; db]).\n"
                 "error_ratio checks every product timed (LAVA's, packed and OpenBLAS's) at 64 entries of C against\n"
                 "a double-precision reference, over the rounding bound of a float dot product of length k: a row\n"
                 "above 1 computed a wrong product, and the command then exits 1.");
  cl.options().add_options()                                                                           //
      ("sizes", po::value<std::string>()->default_value("256,512,1024,2048"), "square sizes, comma-separated")  //
      ("thread-counts", po::value<std::string>()->default_value("1,2"), "thread counts, comma-separated")        //
      ("repeats", po::value<std::string>()->default_value("5"), "rounds of samples per case (median)")             //
      ("quick", po::bool_switch(), "square sizes only, no LSTM or output-layer shapes")  //
      ("shapes", po::value<std::string>(), "also MxNxK,... (NN, NT, TN), e.g. 240x10000x256");
  if (!cl.parse(argc, argv)) return 0;
  const std::vector<int> sizes = parse_int_list(cl, "sizes"), threads = parse_int_list(cl, "thread-counts");
  const int repeats = int(cl.get_int("repeats", 1, 1000));
  const std::vector<std::array<int, 3>> own_shapes =
      cl.vm().count("shapes") ? parse_shape_list(cl, "shapes") : std::vector<std::array<int, 3>>{};
  std::vector<GemmBenchRow> rows;
  std::vector<std::array<int, 3>> squares;
  for (int s : sizes) squares.push_back({s, s, s});
  rows = run_gemm_bench(squares, threads, {"NN"}, repeats);
  if (!cl.vm()["quick"].as<bool>()) {
    for (auto shape : {std::array<int, 3>{64, 2048, 1024}, std::array<int, 3>{1920, 20000, 512}}) {
      auto more = run_gemm_bench({shape}, threads, {"NN", "NT", "TN"}, repeats);
      rows.insert(rows.end(), more.begin(), more.end());
    }
  }
  for (const std::array<int, 3>& shape : own_shapes) {
    auto more = run_gemm_bench({shape}, threads, {"NN", "NT", "TN"}, repeats);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  // The micro-kernel's own ceiling, once per thread count after every GEMM (so that it cannot disturb them).
  std::map<int, double> kernel_loop_ratio;
  for (int t : threads) kernel_loop_ratio[t] = measure_kernel_loop_ratio(t, repeats);
  Table t;
  t.add_column("m").add_column("n").add_column("k").add_column("trans").add_column("threads");
  t.add_column("gflops", ".1f").add_column("peak_ratio", ".3f").add_column("openblas_gflops", ".1f");
  t.add_column("openblas_ratio", ".3f").add_column("packed_gflops", ".1f").add_column("packed_openblas_ratio", ".3f");
  t.add_column("kernel_loop_ratio", ".3f").add_column("error_ratio", ".3f");
  // Which kernels ran: in the header of the table for people, in every row of json and csv.
  const bool table = cl.common().format == OutputFormat::table;
  const std::string kernel = gemm_kernel_name(), ob_core = openblas_core_name();
  if (!table) t.add_column("kernel").add_column("openblas_kernel");
  for (const GemmBenchRow& r : rows) {
    const bool ob = r.openblas_gflops > 0;
    std::vector<Cell> cells{double(r.m), double(r.n), double(r.k), r.trans, double(r.threads), r.gflops, r.peak_ratio,
                            ob ? Cell(r.openblas_gflops) : Cell("n/a"),
                            ob ? Cell(r.gflops / r.openblas_gflops) : Cell("n/a"), r.packed_gflops,
                            ob ? Cell(r.packed_gflops / r.openblas_gflops) : Cell("n/a"),
                            kernel_loop_ratio.at(r.threads), r.error_ratio};
    if (!table) cells.insert(cells.end(), {Cell(kernel), ob ? Cell(ob_core) : Cell("n/a")});
    t.add_row(cells);
  }
  if (table)
    std::printf("kernel: %s; OpenBLAS kernel: %s\n", kernel.c_str(),
                ob_core.empty() ? "n/a (libopenblas.so.0 not found)" : ob_core.c_str());
  t.print(stdout, cl.common().format);
  for (const GemmBenchRow& r : rows)
    if (!(r.error_ratio <= 1)) {
      std::fprintf(stderr, "lava bench gemm: %dx%dx%d %s on %d threads: C is off the double-precision reference by "
                   "%.3g times the rounding bound\n", r.m, r.n, r.k, r.trans.c_str(), r.threads, r.error_ratio);
      return 1;
    }
  return 0;
}

// The per-op profile of `lava bench train --profile`: one row per op kind, then the totals, all per step.
void print_profile(const TrainBenchResult& r, int threads, OutputFormat format) {
  using op_profile::Phase;
  const double per_step_ms = 1e3 / r.profile_steps;
  struct Row {
    const op_profile::KindTotals* k;
    double ms[op_profile::kPhases], total_ms;
  };
  std::vector<Row> rows;
  double sum_ms = 0, phase_ms[op_profile::kPhases] = {}, gemm_ms = 0, gemm_flops = 0, omp_ms = 0, imbalance_ms = 0;
  double regions = 0, split_ms = 0;
  for (const op_profile::KindTotals& k : r.profile) {
    Row row{&k, {}, 0};
    for (int p = 0; p < op_profile::kPhases; ++p) {
      const op_profile::PhaseTotals& t = k.phase[p];
      row.ms[p] = t.seconds * per_step_ms;
      row.total_ms += row.ms[p];
      phase_ms[p] += row.ms[p];
      gemm_ms += t.gemm_seconds * per_step_ms, gemm_flops += t.gemm_flops;
      omp_ms += t.omp_overhead * per_step_ms, imbalance_ms += t.omp_imbalance * per_step_ms;
      regions += double(t.omp_regions), split_ms += t.omp_split_seconds * per_step_ms;
    }
    sum_ms += row.total_ms;
    rows.push_back(row);
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.total_ms > b.total_ms; });
  Table t;
  t.add_column("event").add_column("op").add_column("forward_ms", ".2f").add_column("backward_ms", ".2f");
  t.add_column("update_ms", ".2f").add_column("ms", ".2f").add_column("share", ".3f").add_column("calls", ".0f");
  t.add_column("gemm_ms", ".2f").add_column("gemm_gflops", ".1f").add_column("omp_regions", ".0f");
  t.add_column("omp_overhead_ms", ".2f").add_column("omp_imbalance_ms", ".2f").add_column("split_ms", ".2f");
  for (const Row& row : rows) {
    double calls = 0, g_s = 0, g_f = 0, reg = 0, over = 0, imb = 0, split = 0;
    for (const op_profile::PhaseTotals& p : row.k->phase)
      calls += double(p.calls), g_s += p.gemm_seconds, g_f += p.gemm_flops, reg += double(p.omp_regions),
          over += p.omp_overhead, imb += p.omp_imbalance, split += p.omp_split_seconds;
    t.add_row({"profile", row.k->name, row.ms[int(Phase::forward)], row.ms[int(Phase::backward)],
               row.ms[int(Phase::update)], row.total_ms, row.total_ms / sum_ms, calls / r.profile_steps,
               g_s * per_step_ms, g_s > 0 ? 1e-9 * g_f / g_s : 0.0, reg / r.profile_steps, over * per_step_ms,
               imb * per_step_ms, split * per_step_ms});
  }
  const auto kind_ms = [&](int kind) {
    for (const Row& row : rows)
      if (row.k->id == kind) return row.total_ms;
    return 0.0;
  };
  Table totals;
  totals.add_column("event").add_column("what").add_column("ms", ".2f").add_column("share", ".3f");
  const auto add = [&](const char* what, double ms) { totals.add_row({"profile_total", what, ms, ms / sum_ms}); };
  add("step (sum of the rows)", sum_ms);
  add("forward", phase_ms[int(Phase::forward)]);
  add("backward", phase_ms[int(Phase::backward)]);
  add("update (Adam, clipping)", phase_ms[int(Phase::update)]);
  add("GEMM (all ops)", gemm_ms);
  add("tape", kind_ms(op_profile::kKindTape));
  add("outside ops (model code)", kind_ms(op_profile::kKindOutside));
  add("OpenMP overhead (wake, join)", omp_ms);
  add("OpenMP imbalance", imbalance_ms);
  add("in work that splits over threads", split_ms);
  add("profiled step (median)", 1e3 * r.profile_step_seconds);
  add("unprofiled step (median)", 1e3 * r.step_seconds);
  // Amdahl: with a share p of the step in work that splits (the rest runs on one thread however many there are),
  // n threads take at least (1 − p) + p / n of it, so the step scales by at most 1 / ((1 − p) + p / n). Measured on
  // one thread, p is that bound's p; on more, the split work has already shrunk and p understates it.
  const double p = sum_ms > 0 ? split_ms / sum_ms : 0;
  if (format == OutputFormat::table) {
    std::printf("\nprofile: %d steps after the timed ones, per step; %.0f OpenMP regions a step; GEMM at %.1f GFLOP/s\n",
                r.profile_steps, regions / r.profile_steps, gemm_ms > 0 ? 1e-6 * gemm_flops / r.profile_steps / gemm_ms : 0);
    if (threads == 1)
      std::printf("%.1f %% of the step in work that splits over threads: Amdahl's bound on 2 threads %.2fx\n", 100 * p,
                  1 / ((1 - p) + p / 2));
  }
  t.print(stdout, format);
  if (format == OutputFormat::table) std::printf("\n");
  totals.print(stdout, format);
}

int bench_train(int argc, char** argv) {
  CommandLine cl("bench train", "lava bench train --attn VARIANT [options]",
                 "Times training steps (forward, backward, clipping, Adam, as lava train) of the translation model on\n"
                 "random tokens: --batch-size pairs, every source --src-len words, every target --tgt-len predicted\n"
                 "tokens. Reports the median over --steps timed steps after --warmup steps: target tokens/s, the GEMM\n"
                 "work of a step (2MNK summed, almost all of its arithmetic), GFLOP/s and its ratio to the FMA peak\n"
                 "measured in the same run, the share of that work in GEMM calls split over threads\n"
                 "(gemm_threaded_share; the rest ran whole on one thread), and the process's peak resident memory.\n"
                 "The output_* columns are the output layer alone (the enumerated layer of the enumerating variants):\n"
                 "its GEMM work per step, its GFLOP/s over its whole wall time (exp and log-sum-exp included), that\n"
                 "over the FMA peak, and its share of the step time. kernel_loop_gflops is the GEMM's micro-kernel\n"
                 "alone on operands hot in L1, with the same threads, measured right after the FMA peak: no GEMM\n"
                 "built on it runs faster, so of_kernel_loop (gflops over it) is the share of that ceiling the whole\n"
                 "step reaches. On several threads the FMA peak and kernel_loop_gflops are the sum of the threads'\n"
                 "own rates (each runs to a common deadline: the ceiling of work shared from a counter).\n"
                 "tools/bench-torch.py times the same network in PyTorch; `make bench` runs both.\n"
                 "The GEMM work (every column from gflop_per_step to output_step_share) is counted only by the\n"
                 "profiling build (make PROFILE=1: build/prof/lava); the product build prints n/a there.\n"
                 "--init-model MODEL (a lava train --task nmt model file) times the steps of that network from its\n"
                 "trained parameters instead of a uniform init: the variant, its hyperparameters (--alpha) and every\n"
                 "size come from the file (so --attn, --emb-size, --hidden-size, --attn-size, --inf-hidden and\n"
                 "--vocab may not be given), the tokens are still random words of its vocabularies, and dropout is\n"
                 "off as without it. With --data DIR as well, the steps visit in turn the batches of one epoch of\n"
                 "lava train (--batch-size pairs of similar lengths, --seed's order) over DIR's valid split, encoded\n"
                 "with the model's vocabularies, without the pairs over --max-len tokens a side (0: all; give the\n"
                 "model's own); --src-len and --tgt-len may not be given, and tokens_per_s and step_ms are then all\n"
                 "the timed tokens over all the timed time and its mean step. A trained model's attention on random\n"
                 "words is not its attention on sentences, and a dense variant pays for padding that batches of\n"
                 "mixed lengths would exaggerate. The sparse variants' cost follows their support, which shrinks\n"
                 "as a model learns; support is the mean support size per target token over the timed steps (n/a\n"
                 "for the other variants).\n\n"
                 "--profile (profiling build only) then runs --steps more steps with every op timed (steady_clock readings around each op's\n"
                 "forward call and each backward record; off, no clock is read and the bits are the same) and prints\n"
                 "one row per op kind (\"event\":\"profile\" in json), per step, largest first: forward_ms,\n"
                 "backward_ms, update_ms (Adam with clipping), their sum ms and its share of the step; calls (forward\n"
                 "calls and backward records); gemm_ms (wall time in gemm calls, packing included) and\n"
                 "gemm_gflops; omp_regions opened, omp_overhead_ms (each region's wall time less its longest thread:\n"
                 "waking the team, the join; a region opened by a gemm counts in gemm_ms too) and omp_imbalance_ms\n"
                 "(the longest thread less the mean), split_ms (time in work that splits over threads when there\n"
                 "are several: regions with no false `if`, and GEMM calls large enough, on one thread too). Times\n"
                 "are exclusive: a nested op or the tape's bookkeeping is not in its caller's row.\n"
                 "\"tape\" is node creation (values, zeroed gradients), records, reset and\n"
                 "the backward loop; \"outside ops\" is the model's code between ops. A second table\n"
                 "(\"event\":\"profile_total\") sums GEMM, tape, OpenMP and the phases over all ops, with the\n"
                 "profiled and unprofiled median step (their ratio is the profile's own cost), and split_ms summed\n"
                 "(\"in work that splits over threads\"): on one thread its share p bounds the two-thread scaling by\n"
                 "1 / ((1 - p) + p/2) (Amdahl; printed above the table), since the rest runs on one thread however\n"
                 "many there are.");
  cl.options().add_options()                                                                   //
      ("attn", po::value<std::string>()->default_value(variant_info(AttnVariant()).name),
       attn_variant_list("nmt").c_str())  //
      ("emb-size", po::value<std::string>()->default_value("256"), "word embedding size")      //
      ("hidden-size", po::value<std::string>()->default_value("256"), "encoder memory and decoder state size")  //
      ("attn-size", po::value<std::string>()->default_value("256"), "MLP scorer hidden size")  //
      ("inf-hidden", po::value<std::string>()->default_value("256"), "inference network BiLSTM size")  //
      ("vocab", po::value<std::string>()->default_value("10000"), "vocabulary size (both sides)")  //
      ("batch-size", po::value<std::string>()->default_value("32"), "sentence pairs per step")      //
      ("src-len", po::value<std::string>()->default_value("20"), "source words per sentence")       //
      ("tgt-len", po::value<std::string>()->default_value("20"), "predicted target tokens per sentence")  //
      ("steps", po::value<std::string>()->default_value("10"), "timed steps (median)")              //
      ("warmup", po::value<std::string>()->default_value("2"), "untimed steps first")          //
      ("init-model", po::value<std::string>(), "start from this trained translation model (sizes from it)")  //
      ("data", po::value<std::string>(), "with --init-model: time real pairs of this corpus's valid split")  //
      ("max-len", po::value<std::string>()->default_value("0"), "with --data: longest pair, tokens a side (0: all)")  //
      ("profile", po::bool_switch(), "then --steps more steps under the per-op profile (tables below)");
  if (!cl.parse(argc, argv)) return 0;
  TrainBenchOptions o;
  o.profile = cl.vm()["profile"].as<bool>();
  if (o.profile && !op_profile::kBuilt)
    cl.fail("--profile needs the profiling build: make PROFILE=1, then build/prof/lava bench train --profile");
  try {
    o.attn = parse_attn_variant(cl.get_string("attn"), "nmt");
  } catch (const UsageError& e) {
    cl.fail(e.what());
  }
  o.emb = int(cl.get_int("emb-size", 1, 65536));
  o.hidden = int(cl.get_int("hidden-size", 2, 65536));
  if (o.hidden % 2) cl.fail("--hidden-size must be even (two encoder directions)");
  o.attn_size = int(cl.get_int("attn-size", 1, 65536));
  o.inf_hidden = int(cl.get_int("inf-hidden", 2, 65536));
  if (o.inf_hidden % 2) cl.fail("--inf-hidden must be even (two directions)");
  o.vocab = int(cl.get_int("vocab", Vocab::kNumSpecial + 1, 10000000));
  o.batch = int(cl.get_int("batch-size", 1, 100000));
  o.src_len = int(cl.get_int("src-len", 1, 10000));
  o.tgt_len = int(cl.get_int("tgt-len", 1, 10000));
  o.steps = int(cl.get_int("steps", 1, 100000));
  o.warmup = int(cl.get_int("warmup", 0, 100000));
  o.seed = cl.common().seed;
  if (cl.has("init-model")) {
    o.init_model = cl.get_string("init-model");
    for (const char* set_by_model : {"attn", "emb-size", "hidden-size", "attn-size", "inf-hidden", "vocab"})
      if (cl.has(set_by_model)) cl.fail(fmt::format("--{}: --init-model's file sets it", set_by_model));
  }
  if (cl.has("data")) {
    if (o.init_model.empty()) cl.fail("--data needs --init-model (the vocabularies come from the model file)");
    o.data = cl.get_string("data");
    for (const char* set_by_data : {"src-len", "tgt-len"})
      if (cl.has(set_by_data)) cl.fail(fmt::format("--{}: --data's pairs set it", set_by_data));
    o.max_len = int(cl.get_int("max-len", 0, 10000));
  } else if (cl.has("max-len")) {
    cl.fail("--max-len goes with --data");
  }
  const TrainBenchResult r = run_train_bench(o);
  const int threads = omp_get_max_threads();
  const double peak = measure_fma_peak_gflops(threads), kernel_loop = measure_kernel_loop_gflops(threads);
  Table t;
  t.add_column("attn").add_column("threads").add_column("tokens_per_s", ".0f").add_column("step_ms", ".1f");
  t.add_column("gflop_per_step", ".2f").add_column("gflops", ".1f").add_column("peak_gflops", ".1f");
  t.add_column("peak_ratio", ".3f").add_column("kernel_loop_gflops", ".1f").add_column("of_kernel_loop", ".3f");
  t.add_column("gemm_threaded_share", ".3f");
  t.add_column("output_gflop_per_step", ".2f").add_column("output_gflops", ".1f");
  t.add_column("output_peak_ratio", ".3f").add_column("output_step_share", ".3f");
  t.add_column("peak_rss_mb", ".0f").add_column("objective_per_token", ".4f").add_column("support", ".2f");
  // GEMM work is counted by a profiling build only: the product build's cells say n/a rather than 0.
  const auto work = [&](double x) { return r.gemm_work_counted ? Cell(x) : Cell("n/a"); };
  t.add_row({r.attn_name, double(threads), r.tokens_per_s, 1e3 * r.step_seconds, work(r.gflop_per_step),
             work(r.gflops), peak, work(r.gflops / peak), kernel_loop, work(r.gflops / kernel_loop),
             work(r.gemm_threaded_share), work(r.output_gflop_per_step), work(r.output_gflops),
             work(r.output_gflops / peak), work(r.output_step_share), r.peak_rss_mb, r.objective_per_token,
             r.sparse ? Cell(r.support_per_token) : Cell("n/a")});
  t.print(stdout, cl.common().format);
  if (o.profile) print_profile(r, threads, cl.common().format);
  return 0;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::printf(
        "usage: lava bench gemm|train [options]\n\n"
        "  gemm   GEMM GFLOP/s vs the FMA peak and OpenBLAS, same run\n"
        "  train  training steps of the translation model on random tokens: tokens/s, GFLOP/s, peak memory\n");
    return argc < 2 ? 2 : 0;
  }
  const std::string what = argv[1];
  if (what == "gemm") return bench_gemm(argc - 1, argv + 1);
  if (what == "train") return bench_train(argc - 1, argv + 1);
  throw UsageError("lava bench: unknown benchmark '" + what + "' (gemm, train)");
}

}  // namespace lava
