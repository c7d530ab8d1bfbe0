#include "attention/variant.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "attention/attention_variant.hpp"
#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "core/word_list.hpp"

namespace lava {

const AttnVariantInfo& variant_info(AttnVariant v) { return v->info(); }

bool supports_task(AttnVariant v, std::string_view task) { return has_word(v->info().tasks, task); }

bool reads_option(AttnVariant v, std::string_view option) { return has_word(v->info().options, option); }

std::vector<std::string> options_read(AttnVariant v) { return words_of(v->info().options); }

const char* likelihood_kind(AttnVariant v) {
  const AttnVariantInfo& info = variant_info(v);
  return info.latent ? "exact" : info.sampled ? "sampled" : "direct";
}

double valid_criterion(AttnVariant v, double nll, double elbo) {
  return variant_info(v).trains_likelihood ? -nll : elbo;
}

AttnVariantRegistry::AttnVariantRegistry(std::vector<AttnVariant> variants) : variants_(std::move(variants)) {
  std::set<std::string_view> names;
  for (AttnVariant v : variants_)
    if (!names.insert(v->info().name).second)
      throw std::logic_error(fmt::format("two attention variants are named {}", v->info().name));
}

std::vector<AttnVariant> AttnVariantRegistry::for_task(std::string_view task) const {
  std::vector<AttnVariant> out;
  for (AttnVariant v : variants_)
    if (supports_task(v, task)) out.push_back(v);
  return out;
}

AttnVariant AttnVariantRegistry::parse(std::string_view name, std::string_view task) const {
  for (AttnVariant v : variants_)
    if (name == v->info().name) {
      if (supports_task(v, task)) return v;
      throw UsageError(fmt::format("--attn {}: the {} task runs {}", quote_input(name), task, list(task)));
    }
  throw UsageError(fmt::format("--attn: {} is not one of {}", quote_input(name), list(task)));
}

std::string AttnVariantRegistry::list(std::string_view task) const {
  std::string s;
  for (AttnVariant v : for_task(task)) {
    if (!s.empty()) s += '|';
    s += v->info().name;
  }
  return s;
}

std::string AttnVariantRegistry::help(std::string_view task) const {
  std::string s;
  for (AttnVariant v : for_task(task)) s += fmt::format("  {:<14} {}\n", v->info().name, v->info().summary);
  return s;
}

void AttnVariantRegistry::to_metadata(AttnVariant v, std::string_view task,
                                      std::map<std::string, std::string>& meta) const {
  meta["attn"] = v->info().stored_as ? v->info().stored_as : v->info().name;
  for (AttnVariant w : for_task(task))
    if (w->info().flag) meta[w->info().flag] = std::to_string(int(w == v));
}

std::vector<AttnVariant> AttnVariantRegistry::flagged_on(AttnVariant v, std::string_view task) const {
  std::vector<AttnVariant> out;
  for (AttnVariant w : for_task(task))
    if (w->info().flag && w->info().stored_as && std::string_view(w->info().stored_as) == v->info().name)
      out.push_back(w);
  return out;
}

const char* AttnVariantRegistry::flag_of(AttnVariant w) { return w->info().flag; }

}  // namespace lava
