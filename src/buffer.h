// Owning, 64-byte aligned float buffer whose allocation can fail without throwing or aborting:
// WebAssembly memory is finite and an out-of-memory must reach JavaScript as a RangeError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace wa {

class FloatBuffer {
 public:
  FloatBuffer() = default;
  FloatBuffer(const FloatBuffer&) = delete;
  FloatBuffer& operator=(const FloatBuffer&) = delete;
  FloatBuffer(FloatBuffer&& other) noexcept : data_(other.data_) { other.data_ = nullptr; }
  FloatBuffer& operator=(FloatBuffer&& other) noexcept {
    if (this != &other) {
      std::free(data_);
      data_ = other.data_;
      other.data_ = nullptr;
    }
    return *this;
  }
  ~FloatBuffer() { std::free(data_); }

  // False when the memory is not available (the buffer is then empty).
  bool allocate(std::size_t count) {
    std::free(data_);
    data_ = nullptr;
    if (count == 0) count = 1;
    if (count > SIZE_MAX / sizeof(float) - 16) return false;
    void* p = nullptr;
    if (posix_memalign(&p, 64, count * sizeof(float)) != 0) return false;
    data_ = static_cast<float*>(p);
    return true;
  }
  float* get() const { return data_; }

 private:
  float* data_ = nullptr;
};

}  // namespace wa
