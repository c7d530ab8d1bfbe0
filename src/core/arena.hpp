#pragma once
// A bump allocator for per-step memory (Stan's stack_alloc, llm.c's single activation block).
//   alloc(): pointer bump inside the current block; a new block (twice the last) only when full.
//   reset(): forget everything; if the step needed more than one block, the blocks are replaced by one block of the
//            total size, so from the second step on a step of the same shape never touches malloc.
//   mark()/rewind(): nested scratch use (evaluation, gradient-check probes).
// Memory is 64-byte aligned; large blocks ask for transparent huge pages, since first-touching fresh 4 KiB pages is
// the dominant cost of a step otherwise (style.md, "why the arena matters").
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lava {

class Arena {
 public:
  explicit Arena(size_t first_block_bytes = size_t(1) << 20) : first_block_(first_block_bytes) {}
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  void* alloc(size_t bytes, size_t align = 64);
  template <class T>
  T* alloc_array(size_t n) {
    return static_cast<T*>(alloc(n * sizeof(T), alignof(T) > 64 ? alignof(T) : 64));
  }

  struct Mark {
    size_t block;
    size_t used;
  };
  Mark mark() const { return {current_, used_}; }
  void rewind(Mark m) {
    current_ = m.block;
    used_ = m.used;
  }
  void reset();
  size_t capacity() const;
  size_t block_count() const { return blocks_.size(); }

 private:
  struct Block {
    char* data;
    size_t size;
  };
  void add_block(size_t min_bytes);
  static char* allocate_block(size_t bytes);
  static void free_block(Block b);

  std::vector<Block> blocks_;
  size_t current_ = 0;  // index of the block being filled
  size_t used_ = 0;     // bytes used in blocks_[current_]
  size_t first_block_;
};

}  // namespace lava
