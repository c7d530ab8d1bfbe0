#include "core/arena.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

namespace lava {

namespace {
constexpr size_t kHugePage = size_t(2) << 20;
size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }
}  // namespace

char* Arena::allocate_block(size_t bytes) {
  size_t align = bytes >= kHugePage ? kHugePage : 64;
  void* p = std::aligned_alloc(align, round_up(bytes, align));
  if (!p) throw std::bad_alloc();
  if (align == kHugePage) madvise(p, round_up(bytes, align), MADV_HUGEPAGE);
  return static_cast<char*>(p);
}

void Arena::free_block(Block b) { std::free(b.data); }

Arena::~Arena() {
  for (Block b : blocks_) free_block(b);
}

void Arena::add_block(size_t min_bytes) {
  size_t size = blocks_.empty() ? first_block_ : blocks_.back().size * 2;
  while (size < min_bytes) size *= 2;
  blocks_.push_back({allocate_block(size), size});
}

void* Arena::alloc(size_t bytes, size_t align) {
  if (bytes == 0) bytes = 1;
  for (;;) {
    if (current_ < blocks_.size()) {
      size_t start = round_up(used_, align);
      if (start + bytes <= blocks_[current_].size) {
        used_ = start + bytes;
        return blocks_[current_].data + start;
      }
      if (current_ + 1 < blocks_.size()) {  // a later block kept from an earlier step
        ++current_;
        used_ = 0;
        continue;
      }
    }
    add_block(bytes + align);
    current_ = blocks_.size() - 1;
    used_ = 0;
  }
}

void Arena::reset() {
  if (blocks_.size() > 1) {  // consolidate: next step fits in one block and allocates nothing
    size_t total = capacity();
    for (Block b : blocks_) free_block(b);
    blocks_.clear();
    blocks_.push_back({allocate_block(total), total});
  }
  current_ = 0;
  used_ = 0;
}

size_t Arena::capacity() const {
  size_t total = 0;
  for (Block b : blocks_) total += b.size;
  return total;
}

}  // namespace lava
