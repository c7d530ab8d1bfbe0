#pragma once
// An attention variant as the rest of LAVA sees it: a handle on one object of the registry (attention/registry.cpp),
// the properties tasks and commands read from it, and the registry's queries. What a variant computes is its
// interface, attention/attention_variant.hpp; each variant, or family of them, is one file under attention/variants/.
// Task code asks a variant about a behaviour (a property below), never about its name.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/paper_row.hpp"

namespace lava {

class AttentionVariant;

struct AttnVariantInfo {
  const char* name;     // the --attn word
  const char* summary;  // the random object and the estimator, one line, for --help
  const char* tasks = "nmt vqa";  // the tasks whose models run it, space-separated
  // The variant options (cli/variant_options.cpp; names without "--", space-separated) that its objective,
  // evaluation, parameters or model file read: a command that is given one this list lacks refuses it, since it
  // would have no effect (a researcher asking for --alpha 1.5 with --attn marginal did not run 1.5-entmax). One it
  // reads only under another option's value says when not in AttentionVariant::option_unread.
  const char* options = "";
  bool uses_q = false;   // trains an inference network q(z | x, y)
  bool latent = false;   // z is a latent variable: test likelihood is the exact marginal by enumeration
  bool sampled = false;  // a continuous latent: likelihood estimated by importance sampling (--eval-samples)
  // The validation figure: log p(y|x) when the variant trains the likelihood itself, else the bound it trains.
  bool trains_likelihood = false;
  bool attends = true;   // false: no scorer, f sees a fixed uniform average of the memory
  bool kmax = true;      // test-time K-max attention renormalises the weights over their top K
  // Decoding reads the prior p (true) or log attention_weights (false); the latter may sum to 1 or not.
  bool decodes_prior = true, weights_normalised = true;
  // --warm-start: first the exact marginal for p and f, and q toward their posterior (attention_objective).
  bool marginal_warm_start = false;
  bool moving_baseline = false;  // the model keeps a moving-average reward baseline that the trainer updates
  bool crosscheck = false;       // tools/torch_reference.py recomputes it (`make crosscheck`)
  bool sparse = false;  // a sparse p or q: training and evaluation report the mean support size ("support")
  // A variant that model files store as another's name plus a flag key set to "1" (the other's files carry "0").
  const char* stored_as = nullptr;
  const char* flag = nullptr;
  PaperRow paper = {};  // the paper's row it reproduces, which `lava report --tables paper` prints beside it
};

// A handle on a registered variant; copies compare equal when they name the same one.
class AttnVariant {
 public:
  AttnVariant();  // --attn's default
  AttnVariant(const AttentionVariant& v) : v_(&v) {}  // implicit: a registered variant object is a variant
  const AttentionVariant& operator*() const { return *v_; }
  const AttentionVariant* operator->() const { return v_; }
  bool operator==(const AttnVariant&) const = default;

 private:
  const AttentionVariant* v_;
};

// The variants by name, in the order of --help and the tables. Names must be distinct (std::logic_error).
class AttnVariantRegistry {
 public:
  explicit AttnVariantRegistry(std::vector<AttnVariant> variants);
  const std::vector<AttnVariant>& all() const { return variants_; }
  std::vector<AttnVariant> for_task(std::string_view task) const;
  // UsageError naming --attn when the word is unknown or the task does not run it.
  AttnVariant parse(std::string_view name, std::string_view task) const;
  std::string list(std::string_view task) const;  // "none|soft|marginal|..."
  std::string help(std::string_view task) const;  // one line per variant

  // The model file's "attn" entry and flags (AttnVariantInfo::stored_as), and the variant they name; flag_set
  // reads one flag of the file.
  void to_metadata(AttnVariant v, std::string_view task, std::map<std::string, std::string>& meta) const;
  template <class FlagSet>
  AttnVariant from_metadata(std::string_view attn, std::string_view task, const FlagSet& flag_set) const {
    const AttnVariant v = parse(attn, task);
    for (AttnVariant w : flagged_on(v, task))
      if (flag_set(flag_of(w))) return w;
    return v;
  }

 private:
  std::vector<AttnVariant> flagged_on(AttnVariant v, std::string_view task) const;
  static const char* flag_of(AttnVariant w);
  std::vector<AttnVariant> variants_;
};

const AttnVariantRegistry& attn_registry();  // every variant LAVA has

const AttnVariantInfo& variant_info(AttnVariant v);
bool supports_task(AttnVariant v, std::string_view task);
// Whether `option` (a name without "--") is one of the variant options v reads (AttnVariantInfo::options).
bool reads_option(AttnVariant v, std::string_view option);
std::vector<std::string> options_read(AttnVariant v);  // those options, in the order the variant lists them

// How a variant's reported likelihood is obtained: "exact" (enumerated marginal), "direct" (a deterministic
// attention's log f) or "sampled" (importance-weighted estimate).
const char* likelihood_kind(AttnVariant v);

// The validation figure (larger is better) that selects the best checkpoint and drives learning-rate decay: the
// bound the variant trains, per token or question — log p(y|x) for the variants that train the likelihood itself,
// the ELBO otherwise (the Jensen bound for hard attention).
double valid_criterion(AttnVariant v, double nll, double elbo);

// The registry's queries for one task.
inline AttnVariant parse_attn_variant(std::string_view name, std::string_view task) {
  return attn_registry().parse(name, task);
}
inline std::string attn_variant_list(std::string_view task) { return attn_registry().list(task); }
inline std::string attn_variant_help(std::string_view task) { return attn_registry().help(task); }

}  // namespace lava
