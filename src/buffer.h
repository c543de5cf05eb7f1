// Owning, 64-byte aligned buffers whose allocation can fail without throwing or aborting:
// WebAssembly memory is finite and an out-of-memory must reach JavaScript as a RangeError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace wa {

template <class T>
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  AlignedBuffer(AlignedBuffer&& other) noexcept : data_(other.data_) { other.data_ = nullptr; }
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept {
    if (this != &other) {
      std::free(data_);
      data_ = other.data_;
      other.data_ = nullptr;
    }
    return *this;
  }
  ~AlignedBuffer() { std::free(data_); }

  // False when the memory is not available (the buffer is then empty).
  bool allocate(std::size_t count) {
    release();
    if (count == 0) count = 1;
    if (count > SIZE_MAX / sizeof(T) - 16) return false;
    void* p = nullptr;
    if (posix_memalign(&p, 64, count * sizeof(T)) != 0) return false;
    data_ = static_cast<T*>(p);
    return true;
  }
  void release() {
    std::free(data_);
    data_ = nullptr;
  }
  T* get() const { return data_; }

 private:
  T* data_ = nullptr;
};

using FloatBuffer = AlignedBuffer<float>;
using DoubleBuffer = AlignedBuffer<double>;
using ByteBuffer = AlignedBuffer<std::uint8_t>;

}  // namespace wa
