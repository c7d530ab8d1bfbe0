#include "nn/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <set>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/json.hpp"
#include "core/quote_input.hpp"
#include "core/read_file.hpp"

namespace lava {

// The format is little-endian; we copy float bytes verbatim, which is only right on a little-endian host.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

namespace {

constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // the reference implementation's limit (100 MB)

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";  // by hand: fmt::join on int64 trips a false -Wstringop-overflow in g++ 12 + fmt 9
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

void save_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  JsonValue header = JsonValue::object();
  if (!metadata.empty()) {
    JsonValue meta = JsonValue::object();
    for (const auto& [k, v] : metadata) meta.set(k, JsonValue(v));
    header.set("__metadata__", std::move(meta));
  }
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const NamedTensor& t : tensors) {
    LAVA_CHECK(t.name != "__metadata__" && names.insert(t.name).second, "bad or duplicate tensor name \"{}\"", t.name);
    int64_t numel = 1;
    JsonValue shape = JsonValue::array();
    for (int64_t d : t.shape) {
      LAVA_CHECK(d >= 0, "tensor \"{}\": negative dimension in shape {}", t.name, shape_str(t.shape));
      numel *= d;
      shape.push_back(JsonValue(double(d)));
    }
    LAVA_CHECK(uint64_t(numel) == t.data.size(), "tensor \"{}\": shape {} has {} values, data has {}", t.name,
               shape_str(t.shape), numel, t.data.size());
    JsonValue offsets = JsonValue::array();
    offsets.push_back(JsonValue(double(offset)));
    offset += 4 * t.data.size();
    offsets.push_back(JsonValue(double(offset)));
    JsonValue entry = JsonValue::object();
    entry.set("dtype", JsonValue("F32"));
    entry.set("shape", std::move(shape));
    entry.set("data_offsets", std::move(offsets));
    header.set(t.name, std::move(entry));
  }
  std::string json = to_json(header);
  json.resize((json.size() + 7) / 8 * 8, ' ');  // data starts 8-byte aligned
  write_file_atomic(path, [&](std::FILE* f) {
    uint64_t n = json.size();  // little-endian host (static_assert above)
    std::fwrite(&n, 8, 1, f);
    std::fwrite(json.data(), 1, json.size(), f);
    for (const NamedTensor& t : tensors)
      if (!t.data.empty()) std::fwrite(t.data.data(), 4, t.data.size(), f);
  });
}

SafetensorsFile parse_safetensors(std::string_view bytes, const std::string& path) {
  auto fail = [&](const std::string& what) { return input_error(path, 0, what); };
  if (bytes.size() < 8)
    throw fail(fmt::format("not a safetensors file: {} bytes, the 8-byte header length is missing", bytes.size()));
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);  // little-endian host
  if (n > bytes.size() - 8 || n > kMaxHeaderBytes)
    throw fail(fmt::format("not a safetensors file (or truncated): header length {} but the file has {} bytes", n,
                           bytes.size()));
  const std::string_view data = bytes.substr(8 + n);

  SafetensorsFile out;
  JsonValue header = parse_json(bytes.substr(8, n), path);  // also rejects duplicate names
  if (!header.is_object()) throw fail("safetensors header is not a JSON object");
  struct Span {
    uint64_t begin, end;
    size_t tensor;
  };
  std::vector<Span> spans;
  for (const auto& [name, entry] : header.members()) {
    if (name == "__metadata__") {
      for (const auto& [k, v] : entry.members()) out.metadata[k] = v.str();
      continue;
    }
    std::string dtype;
    NamedTensor t;
    t.name = name;
    const std::string shown = quote_input(name, '"');  // a key may hold anything: escaped and cut
    int64_t begin = 0, end = 0;
    try {  // the entry's JSON; these messages name the key, we add the tensor
      dtype = entry.at("dtype").str();
      for (const JsonValue& d : entry.at("shape").items()) t.shape.push_back(d.as_int());
      const JsonValue& offsets = entry.at("data_offsets");
      if (offsets.size() != 2) throw input_error(path, offsets.line(), "data_offsets must be [begin, end]");
      begin = offsets[0].as_int();
      end = offsets[1].as_int();
    } catch (const InputError& e) {
      throw InputError(fmt::format("{} (in tensor {})", e.what(), shown));
    }
    if (dtype != "F32")
      throw fail(fmt::format("tensor {} has dtype {}; only F32 is supported (convert with tensor.float())", shown, quote_input(dtype)));
    uint64_t numel = 1;
    bool overflow = false;
    for (int64_t dim : t.shape) {
      if (dim < 0) throw fail(fmt::format("tensor {}: negative dimension in shape {}", shown, shape_str(t.shape)));
      overflow |= __builtin_mul_overflow(numel, uint64_t(dim), &numel);
    }
    if (begin < 0 || end < begin || uint64_t(end) > data.size())
      throw fail(fmt::format("tensor {}: data_offsets [{}, {}] out of range (data is {} bytes)", shown, begin, end,
                             data.size()));
    if (overflow || numel != uint64_t(end - begin) / 4 || (end - begin) % 4 != 0)
      throw fail(fmt::format("tensor {}: shape {} does not match data_offsets [{}, {}] ({} bytes of F32)", shown,
                             shape_str(t.shape), begin, end, end - begin));
    spans.push_back({uint64_t(begin), uint64_t(end), out.tensors.size()});
    out.tensors.push_back(std::move(t));
  }
  // The tensors must tile [0, data.size()) exactly: sorted by begin, each starts where the last ended.
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t covered = 0;
  for (const Span& s : spans) {
    const std::string shown = quote_input(out.tensors[s.tensor].name, '"');
    if (s.begin < covered) throw fail(fmt::format("tensor {}: data_offsets overlap another tensor", shown));
    if (s.begin > covered) throw fail(fmt::format("tensor {}: data_offsets leave a hole before byte {}", shown, s.begin));
    covered = s.end;
  }
  if (covered != data.size())
    throw fail(fmt::format("{} trailing bytes after the last tensor (corrupt file?)", data.size() - covered));
  for (const Span& s : spans) {
    auto& values = out.tensors[s.tensor].data;
    values.resize((s.end - s.begin) / 4);
    if (!values.empty()) std::memcpy(values.data(), data.data() + s.begin, s.end - s.begin);
  }
  return out;
}

SafetensorsFile load_safetensors(const std::string& path) { return parse_safetensors(read_file(path, kModelLimit), path); }

}  // namespace lava
