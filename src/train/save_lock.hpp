#pragma once
// An exclusive lock on a run's --save path for the run's lifetime, so that two runs never mix their best models and
// resume states. The best-model file is replaced by rename (core/atomic_file.hpp), which would drop a lock held on
// its inode, so the lock is flock(2) on a file beside it, MODEL.lock, that holds the holder's PID. Taking it also
// proves at the start that MODEL's directory can be written, before any training time is spent.
#include <string>

namespace lava {

class SaveLock {
 public:
  SaveLock() = default;
  // Locks model_path + ".lock" ("" = no lock). Held by another process, or in a directory that cannot be
  // written: one InputError naming the path (and the holder's PID).
  explicit SaveLock(const std::string& model_path);
  ~SaveLock();  // removes the lock file and releases the lock
  const std::string& path() const { return path_; }  // the lock file ("" = none)
  SaveLock(const SaveLock&) = delete;
  SaveLock& operator=(const SaveLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace lava
